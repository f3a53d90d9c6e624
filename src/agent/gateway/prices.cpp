#include "agent/gateway/prices.h"

#include <fmt/format.h>

#include <toml++/toml.h>

#include <cstdlib>
#include <stdexcept>

#include "core/data_dir.h"

namespace kb::gateway {
namespace fs = std::filesystem;

fs::path default_price_table() {
  if (const char* p = std::getenv("KBENCH_PRICES"); p && *p) return p;
  const fs::path shipped = data_dir() / "prices/models.toml";
  return fs::exists(shipped) ? shipped : fs::path();
}

PriceTable PriceTable::load(const fs::path& file) {
  toml::table doc;
  try {
    doc = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw std::invalid_argument(fmt::format("{}:{}:{}: {}", file.string(), e.source().begin.line, e.source().begin.column,
                                            std::string(e.description())));
  }
  PriceTable t;
  t.file_ = file;
  for (const auto& [key, _] : doc)
    if (key.str() != "models")
      throw std::invalid_argument(fmt::format("{}: unknown top-level key '{}' (expected [models.\"NAME\"] tables)", file.string(),
                                              key.str()));
  const toml::table* models = doc["models"].as_table();
  if (!models || models->empty())
    throw std::invalid_argument(fmt::format("{}: no [models.\"NAME\"] tables", file.string()));
  for (const auto& [name, node] : *models) {
    const std::string where = fmt::format("{}: models.\"{}\"", file.string(), name.str());
    const toml::table* m = node.as_table();
    if (!m) throw std::invalid_argument(where + ": expected a table");
    ModelPrice p;
    auto number = [&](const char* field, bool required) -> std::optional<double> {
      const toml::node* n = m->get(field);
      if (!n) {
        if (required) throw std::invalid_argument(fmt::format("{}.{}: missing (US dollars per million tokens)", where, field));
        return std::nullopt;
      }
      std::optional<double> v = n->value<double>();
      if (!v || *v < 0)
        throw std::invalid_argument(fmt::format("{}.{}: expected a non-negative number of dollars per million tokens", where, field));
      return v;
    };
    for (const auto& [k, _] : *m) {
      const std::string_view f = k.str();
      if (f != "input" && f != "output" && f != "cache_read" && f != "cache_write" && f != "source")
        throw std::invalid_argument(fmt::format("{}.{}: unknown field (known: input, output, cache_read, cache_write, source)",
                                                where, f));
    }
    p.input = *number("input", true);
    p.output = *number("output", true);
    p.cache_read = number("cache_read", false);
    p.cache_write = number("cache_write", false);
    const auto source = m->get("source") ? m->get("source")->value<std::string>() : std::nullopt;
    if (!source || source->find_first_not_of(" \t") == std::string::npos)
      throw std::invalid_argument(where + ".source: missing; every price must say where it was taken from (a URL and date)");
    p.source = *source;
    t.models_[std::string(name.str())] = p;
  }
  return t;
}

const ModelPrice* PriceTable::find(const std::string& model) const {
  auto it = models_.find(model);
  return it == models_.end() ? nullptr : &it->second;
}

Cost PriceTable::cost(const Usage& u, const std::vector<std::string>& models) const {
  Cost c;
  if (u.cost_usd) {
    c.usd = u.cost_usd;
    c.source = "provider (usage.cost)";
    return c;
  }
  const ModelPrice* p = nullptr;
  std::string model;
  for (const auto& m : models)
    if (!m.empty() && (p = find(m))) {
      model = m;
      break;
    }
  if (!p) {
    std::string names;
    for (const auto& m : models)
      if (!m.empty()) names += (names.empty() ? "'" : ", '") + m + "'";
    c.note = file_.empty() ? "no price table (--prices) and no provider-reported cost"
                           : fmt::format("model {} not in the price table {}", names.empty() ? "(none named)" : names, file_.string());
    return c;
  }
  const int64_t cr = u.cache_read_tokens.value_or(0), cw = u.cache_write_tokens.value_or(0);
  if (cr > 0 && !p->cache_read) {
    c.note = fmt::format("{}: models.\"{}\" has no cache_read price, and the exchange read {} cached tokens", file_.string(),
                         model, cr);
    return c;
  }
  if (cw > 0 && !p->cache_write) {
    c.note = fmt::format("{}: models.\"{}\" has no cache_write price, and the exchange wrote {} tokens to the cache",
                         file_.string(), model, cw);
    return c;
  }
  c.usd = (static_cast<double>(u.input_tokens.value_or(0)) * p->input + static_cast<double>(u.output_tokens.value_or(0)) * p->output +
           static_cast<double>(cr) * p->cache_read.value_or(0) + static_cast<double>(cw) * p->cache_write.value_or(0)) /
          1e6;
  c.source = fmt::format("{} [models.\"{}\"] ({})", file_.string(), model, p->source);
  return c;
}

}  // namespace kb::gateway
