// Ceilings: key lookup, JSON form, and the hardware/*.toml datasheet loader.
#include "target/ceilings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string_view>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace kb {

const std::vector<std::string>& compute_keys() {
  static const std::vector<std::string> keys = {"fp64",    "fp32",    "fp64_tc", "tf32_tc", "bf16_tc",
                                                "fp16_tc", "fp8_tc",  "int8_tc", "fp4_tc"};
  return keys;
}

const std::vector<std::string>& memory_keys() {
  static const std::vector<std::string> keys = {"dram"};
  return keys;
}

namespace {

std::string join_keys(const std::map<std::string, Ceiling>& m) {
  if (m.empty()) return "(none)";
  std::string out;
  for (const auto& [k, v] : m) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

const Ceiling& lookup(const Ceilings& c, const std::map<std::string, Ceiling>& m, const char* kind,
                      const std::string& key) {
  auto it = m.find(key);
  if (it == m.end())
    throw std::out_of_range(fmt::format("{} has no {} ceiling '{}'; {} keys present: {}",
                                        c.name.empty() ? c.id : c.name + " (" + c.id + ")", kind, key,
                                        kind, join_keys(m)));
  return it->second;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return out;
}

}  // namespace

const Ceiling& Ceilings::compute_peak(const std::string& key) const {
  return lookup(*this, compute, "compute", key);
}

const Ceiling& Ceilings::memory_peak(const std::string& key) const {
  return lookup(*this, memory, "memory", key);
}

// ---------------------------------------------------------------------------------------------
// JSON: values in SI units (FLOP/s, B/s), so the document needs no unit field.

nlohmann::json to_json(const Ceilings& c) {
  auto entry = [](const Ceiling& v) { return nlohmann::json{{"value", v.value}, {"source", v.source}}; };
  auto table = [&](const std::map<std::string, Ceiling>& m) {
    nlohmann::json t = nlohmann::json::object();
    for (const auto& [k, v] : m) t[k] = entry(v);
    return t;
  };
  nlohmann::json unmeasured = nlohmann::json::object();
  for (const auto& [k, why] : c.unmeasured) unmeasured[k] = why;
  return {{"id", c.id},
          {"name", c.name},
          {"measured", c.measured},
          {"compute", table(c.compute)},
          {"memory", table(c.memory)},
          {"measured_compute", table(c.measured_compute)},
          {"measured_memory", table(c.measured_memory)},
          {"unmeasured", unmeasured},
          {"launch_floor", c.launch_floor ? entry(*c.launch_floor) : nlohmann::json(nullptr)}};
}

Ceilings ceilings_from_json(const nlohmann::json& j) {
  auto fail = [](const std::string& where, const std::string& what) {
    throw std::runtime_error("ceilings JSON: " + where + ": " + what);
  };
  if (!j.is_object()) fail("(document)", "expected an object");
  Ceilings c;
  auto str = [&](const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) fail(key, "missing or not a string");
    return it->get<std::string>();
  };
  c.id = str("id");
  c.name = str("name");
  auto m = j.find("measured");
  if (m == j.end() || !m->is_boolean()) fail("measured", "missing or not a boolean");
  c.measured = m->get<bool>();
  // One {value, source} entry at `where`; `what` names a positive value ("rate", "time in seconds").
  auto entry = [&](const std::string& where, const nlohmann::json& e, const char* what) {
    if (!e.is_object()) fail(where, "expected an object {value, source}");
    auto v = e.find("value");
    if (v == e.end() || !v->is_number()) fail(where + ".value", "missing or not a number");
    double value = v->get<double>();
    if (!std::isfinite(value) || value <= 0) fail(where + ".value", fmt::format("{} is not a positive {}", value, what));
    auto s = e.find("source");
    if (s == e.end() || !s->is_string() || s->get<std::string>().empty()) fail(where + ".source", "missing or empty");
    return Ceiling{value, s->get<std::string>()};
  };
  auto table = [&](const char* name, std::map<std::string, Ceiling>& out, bool optional = false) {
    auto t = j.find(name);
    if (optional && t == j.end()) return;
    if (t == j.end() || !t->is_object()) fail(name, "missing or not an object");
    for (const auto& [key, e] : t->items()) out[key] = entry(std::string(name) + "." + key, e, "rate");
  };
  table("compute", c.compute);
  table("memory", c.memory);
  // Optional: documents (and cache files) written before measured figures existed lack them.
  table("measured_compute", c.measured_compute, /*optional=*/true);
  table("measured_memory", c.measured_memory, /*optional=*/true);
  if (auto u = j.find("unmeasured"); u != j.end()) {
    if (!u->is_object()) fail("unmeasured", "not an object {key: reason}");
    for (const auto& [key, why] : u->items()) {
      if (!why.is_string() || why.get<std::string>().empty()) fail("unmeasured." + key, "missing or empty reason");
      c.unmeasured[key] = why.get<std::string>();
    }
  }
  if (auto f = j.find("launch_floor"); f != j.end() && !f->is_null())
    c.launch_floor = entry("launch_floor", *f, "time in seconds");
  return c;
}

Ceilings with_measurement(Ceilings datasheet, const Ceilings& measurement) {
  datasheet.measured_compute = measurement.compute;
  datasheet.measured_memory = measurement.memory;
  datasheet.unmeasured = measurement.unmeasured;
  datasheet.launch_floor = measurement.launch_floor;
  return datasheet;
}

bool measurement_failed_somewhere(const Ceilings& measurement) {
  return std::any_of(measurement.unmeasured.begin(), measurement.unmeasured.end(),
                     [](const auto& kv) { return kv.second.rfind("failed:", 0) == 0; });
}

// ---------------------------------------------------------------------------------------------
// hardware/<id>.toml

namespace {

struct Unit {
  const char* name;
  double scale;      // to FLOP/s (or integer op/s) or B/s
  bool memory;       // a bandwidth unit
  bool integer_ops;  // TOP/s: integer operations, only for integer keys
};

// Units are spelled as the datasheets print them, with "/s" to keep rate and count apart.
constexpr Unit kUnits[] = {
    {"GFLOP/s", 1e9, false, false}, {"TFLOP/s", 1e12, false, false}, {"PFLOP/s", 1e15, false, false},
    {"TOP/s", 1e12, false, true},   {"POP/s", 1e15, false, true},     {"GB/s", 1e9, true, false},
    {"TB/s", 1e12, true, false},
};

std::string unit_list(bool memory, bool integer_key) {
  std::string out;
  for (const auto& u : kUnits)
    if (u.memory == memory && (memory || u.integer_ops == integer_key)) out += (out.empty() ? "" : ", ") + std::string(u.name);
  return out;
}

class SpecReader {
 public:
  explicit SpecReader(std::filesystem::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what, const toml::node* at = nullptr) const {
    std::string where = file_.string();
    if (at && at->source().begin.line > 0) where += fmt::format(":{}", at->source().begin.line);
    throw HardwareError(fmt::format("{}: {}: {}", where, key, what));
  }

  HardwareSpec read() {
    toml::table root;
    try {
      root = toml::parse_file(file_.string());
    } catch (const toml::parse_error& e) {
      throw HardwareError(fmt::format("{}:{}:{}: TOML syntax error: {}", file_.string(), e.source().begin.line,
                                      e.source().begin.column, e.description()));
    }

    static const std::set<std::string> allowed = {"id", "name", "arch", "match", "exclude", "compute", "memory"};
    for (const auto& [k, node] : root)
      if (!allowed.count(std::string(k.str())))
        fail(std::string(k.str()), "unknown top-level key; expected one of id, name, arch, match, exclude, compute, memory",
             &node);

    HardwareSpec spec;
    spec.file = file_;
    const std::string stem = file_.stem().string();
    Ceilings& c = spec.ceilings;
    c.measured = false;
    c.id = required_string(root, "id");
    if (c.id != stem) fail("id", fmt::format("'{}' must equal the file name stem '{}'", c.id, stem), root.get("id"));
    c.name = required_string(root, "name");
    spec.arch = required_string(root, "arch");
    if (spec.arch.rfind("sm_", 0) != 0)
      fail("arch", fmt::format("'{}' is not a CUDA architecture name like \"sm_90a\"", spec.arch), root.get("arch"));
    spec.match = string_list(root, "match", /*required=*/true);
    spec.exclude = string_list(root, "exclude", /*required=*/false);

    read_table(root, "compute", compute_keys(), /*memory=*/false, c.compute);
    read_table(root, "memory", memory_keys(), /*memory=*/true, c.memory);
    // Every GPU has CUDA-core FP32 and DRAM; problems default to these keys (deck/problem.h).
    if (!c.compute.count("fp32")) fail("compute.fp32", "missing; every GPU needs its FP32 (non-tensor) ceiling");
    if (!c.memory.count("dram")) fail("memory.dram", "missing; every GPU needs its DRAM bandwidth");
    return spec;
  }

 private:
  std::string required_string(const toml::table& t, const char* key) const {
    const toml::node* n = t.get(key);
    if (!n) fail(key, "missing required key (a string)");
    auto v = n->value<std::string>();
    if (!n->is_string() || !v || v->empty()) fail(key, "must be a non-empty string", n);
    return *v;
  }

  std::vector<std::string> string_list(const toml::table& t, const char* key, bool required) const {
    const toml::node* n = t.get(key);
    if (!n) {
      if (required) fail(key, "missing required key (an array of device-name substrings)");
      return {};
    }
    const toml::array* a = n->as_array();
    if (!a) fail(key, "must be an array of strings", n);
    if (required && a->empty()) fail(key, "must name at least one device-name substring", n);
    std::vector<std::string> out;
    for (size_t i = 0; i < a->size(); ++i) {
      const toml::node& e = *a->get(i);
      auto v = e.value<std::string>();
      if (!e.is_string() || !v || v->empty()) fail(fmt::format("{}[{}]", key, i), "must be a non-empty string", &e);
      out.push_back(*v);
    }
    return out;
  }

  void read_table(const toml::table& root, const char* name, const std::vector<std::string>& vocabulary,
                  bool memory, std::map<std::string, Ceiling>& out) const {
    const toml::node* n = root.get(name);
    if (!n) fail(name, "missing required table");
    const toml::table* t = n->as_table();
    if (!t) fail(name, "must be a table", n);
    for (const auto& [k, entry] : *t) {
      const std::string key(k.str());
      const std::string path = std::string(name) + "." + key;
      if (std::find(vocabulary.begin(), vocabulary.end(), key) == vocabulary.end())
        fail(path, fmt::format("unknown {} key; expected one of {}", name, join(vocabulary)), &entry);
      const toml::table* e = entry.as_table();
      if (!e) fail(path, "must be a table { value = <number>, unit = \"...\", source = \"...\" }", &entry);
      for (const auto& [ek, ev] : *e) {
        std::string_view s = ek.str();
        if (s != "value" && s != "unit" && s != "source")
          fail(path + "." + std::string(s), "unknown key; an entry has value, unit and source", &ev);
      }

      const toml::node* vn = e->get("value");
      if (!vn) fail(path + ".value", "missing", &entry);
      double value = 0;
      if (vn->is_integer())
        value = static_cast<double>(vn->as_integer()->get());
      else if (vn->is_floating_point())
        value = vn->as_floating_point()->get();
      else
        fail(path + ".value", "must be a number", vn);
      if (!std::isfinite(value) || value <= 0)
        fail(path + ".value", fmt::format("{} is not a positive rate", value), vn);

      const bool integer_key = key.rfind("int", 0) == 0;
      const toml::node* un = e->get("unit");
      if (!un) fail(path + ".unit", fmt::format("missing; expected one of {}", unit_list(memory, integer_key)), &entry);
      auto unit = un->value<std::string>();
      if (!un->is_string() || !unit) fail(path + ".unit", "must be a string", un);
      const Unit* found = nullptr;
      for (const auto& u : kUnits)
        if (*unit == u.name && u.memory == memory && (memory || u.integer_ops == integer_key)) found = &u;
      if (!found)
        fail(path + ".unit", fmt::format("unknown unit '{}' for this key; expected one of {}", *unit,
                                         unit_list(memory, integer_key)),
             un);

      const toml::node* sn = e->get("source");
      if (!sn) fail(path + ".source", "missing; every ceiling names the document (and table/page) it comes from", &entry);
      auto source = sn->value<std::string>();
      if (!sn->is_string() || !source || source->find_first_not_of(" \t") == std::string::npos)
        fail(path + ".source", "must be a non-empty string naming the document", sn);

      out[key] = Ceiling{value * found->scale, *source};
    }
  }

  std::filesystem::path file_;
};

}  // namespace

std::vector<HardwareSpec> load_hardware(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw HardwareError(fmt::format("{}: not a directory (expected hardware/*.toml)", dir.string()));
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".toml") files.push_back(e.path());
  std::sort(files.begin(), files.end());  // id == stem, so this sorts by id
  std::vector<HardwareSpec> specs;
  specs.reserve(files.size());
  for (const auto& f : files) specs.push_back(SpecReader(f).read());
  return specs;
}

const HardwareSpec* match_hardware(const std::vector<HardwareSpec>& specs, std::string_view device_name) {
  const std::string name = lower(device_name);
  auto occurs = [&](const std::vector<std::string>& subs) {
    return std::any_of(subs.begin(), subs.end(),
                       [&](const std::string& s) { return name.find(lower(s)) != std::string::npos; });
  };
  for (const auto& spec : specs)
    if (occurs(spec.match) && !occurs(spec.exclude)) return &spec;
  return nullptr;
}

}  // namespace kb
