// Loading and validating a sweep file (format: docs/sweeps.md). Unknown keys are errors (a
// misspelt key would otherwise silently fall back to its default); every error names the file,
// the line and column, the key path and what was expected.
#include "sweep/sweep_spec.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <set>
#include <toml++/toml.h>

#include "agent/adapter.h"
#include "agent/budget.h"
#include "agent/gateway/gateway.h"
#include "agent/gateway/prices.h"
#include "agent/gateway/replay.h"
#include "core/self_executable.h"
#include "deck/level.h"
#include "deck/problem.h"
#include "store/results_db.h"
#include "store/run_dir.h"
#include "store/run_index.h"
#include "target/target.h"

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

class Reader {
 public:
  explicit Reader(fs::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const toml::node* n, const std::string& key, const std::string& what) const {
    std::string where = file_.empty() ? "command line" : file_.string();
    if (n && n->source().begin.line) where += fmt::format(":{}:{}", n->source().begin.line, n->source().begin.column);
    throw SweepError(fmt::format("{}: {}: {}", where, key, what));
  }

  static std::string shown(const toml::node& n) {
    std::ostringstream s;
    if (n.is_string()) s << '"' << *n.value<std::string>() << '"';
    else if (n.is_table()) s << "a table";
    else if (n.is_array()) s << "an array";
    else if (auto i = n.value<int64_t>(); n.is_integer() && i) s << *i;
    else if (auto d = n.value<double>(); n.is_floating_point() && d) s << *d;
    else if (auto b = n.value<bool>(); n.is_boolean() && b) s << (*b ? "true" : "false");
    else s << "a value of another type";
    return s.str();
  }

  void known_keys(const toml::table& t, const std::string& path, std::initializer_list<std::string_view> keys) const {
    for (const auto& [k, v] : t)
      if (std::find(keys.begin(), keys.end(), k.str()) == keys.end()) {
        std::string list;
        for (auto x : keys) list += (list.empty() ? "" : ", ") + std::string(x);
        fail(&v, path.empty() ? std::string(k.str()) : path + "." + std::string(k.str()), "unknown key (known: " + list + ")");
      }
  }

  std::optional<std::string> str(const toml::table& t, const std::string& path, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_string()) fail(n, join(path, key), "expected a string, found " + shown(*n));
    return *n->value<std::string>();
  }
  std::optional<int64_t> integer(const toml::table& t, const std::string& path, std::string_view key, int64_t min) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_integer()) fail(n, join(path, key), "expected an integer, found " + shown(*n));
    const int64_t v = *n->value<int64_t>();
    if (v < min) fail(n, join(path, key), fmt::format("expected an integer >= {}, found {}", min, v));
    return v;
  }
  std::optional<double> number(const toml::table& t, const std::string& path, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_number()) fail(n, join(path, key), "expected a number, found " + shown(*n));
    const double v = *n->value<double>();
    if (!(v > 0)) fail(n, join(path, key), fmt::format("expected a positive number, found {}", v));
    return v;
  }
  std::optional<bool> boolean(const toml::table& t, const std::string& path, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_boolean()) fail(n, join(path, key), "expected true or false, found " + shown(*n));
    return *n->value<bool>();
  }
  std::optional<std::vector<std::string>> strings(const toml::table& t, const std::string& path, std::string_view key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_array()) fail(n, join(path, key), "expected an array of strings, found " + shown(*n));
    std::vector<std::string> out;
    for (const auto& e : *n->as_array()) {
      if (!e.is_string()) fail(&e, join(path, key), "expected an array of strings, found an element " + shown(e));
      out.push_back(*e.value<std::string>());
    }
    return out;
  }
  std::optional<std::chrono::milliseconds> duration(const toml::table& t, const std::string& path, std::string_view key) const {
    const auto s = str(t, path, key);
    if (!s) return std::nullopt;
    try {
      return parse_duration(*s);
    } catch (const std::invalid_argument& e) {
      fail(t.get(key), join(path, key), std::string("expected a duration such as \"45m\", \"90s\" or \"1h30m\": ") + e.what());
    }
  }
  fs::path path_of(const std::string& p) const {
    const fs::path x(p);
    return x.is_absolute() || file_.empty() ? x : file_.parent_path() / x;
  }
  const fs::path& file() const { return file_; }

  static std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }

 private:
  fs::path file_;
};

// "replay:FILE" paths are taken from the sweep file's folder.
std::string resolve_gateway(const Reader& r, const std::string& spec) {
  if (spec.rfind("replay:", 0) == 0) return "replay:" + fs::absolute(r.path_of(spec.substr(7))).lexically_normal().string();
  return spec;
}

Entrant read_entrant(const Reader& r, const toml::table& t, const std::string& path) {
  r.known_keys(t, path, {"label", "agent", "model", "effort", "gateway", "gateway_key_env", "provider_order", "max_tokens",
                         "max_cost", "command", "agent_bin", "ro_bind", "max_turns", "allow_unpriced"});
  Entrant e;
  e.agent = r.str(t, path, "agent").value_or("");
  if (e.agent.empty()) r.fail(&t, path + ".agent", "required (claude-code, codex, opencode, gemini, kimi, kbench or generic)");
  e.model = r.str(t, path, "model").value_or("");
  if (e.model.empty()) r.fail(&t, path + ".model", "required (the model the agent uses)");
  e.effort = r.str(t, path, "effort").value_or("");
  e.label = r.str(t, path, "label").value_or(entrant_label(e.agent, e.model, e.effort));
  if (const auto g = r.str(t, path, "gateway")) {
    if (g->rfind("replay:", 0) != 0 && g->rfind("forward:", 0) != 0)
      r.fail(t.get("gateway"), path + ".gateway", "expected \"replay:FILE\" or \"forward:URL\", found \"" + *g + "\"");
    e.gateway = resolve_gateway(r, *g);
  }
  e.gateway_key_env = r.str(t, path, "gateway_key_env").value_or("");
  e.provider_order = r.strings(t, path, "provider_order").value_or(std::vector<std::string>{});
  e.max_tokens = r.integer(t, path, "max_tokens", 1);
  e.max_cost_usd = r.number(t, path, "max_cost");
  e.command = r.str(t, path, "command").value_or("");
  if (e.agent == "generic" && e.command.empty()) r.fail(&t, path + ".command", "required for agent \"generic\"");
  e.agent_bin = r.str(t, path, "agent_bin").value_or("");
  e.ro_bind = r.strings(t, path, "ro_bind").value_or(std::vector<std::string>{});
  if (auto m = r.integer(t, path, "max_turns", 1)) e.max_turns = static_cast<int>(*m);
  e.allow_unpriced = r.boolean(t, path, "allow_unpriced").value_or(false);
  if (!e.provider_order.empty() && e.gateway.rfind("forward:", 0) != 0)
    r.fail(t.get("provider_order"), path + ".provider_order", "needs gateway = \"forward:URL\" (providers are pinned upstream)");
  return e;
}

std::string sha256_hex(const std::string& s) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), md, &n, EVP_sha256(), nullptr);
  std::string out;
  for (unsigned int i = 0; i < n; ++i) out += fmt::format("{:02x}", md[i]);
  return out;
}

double seconds(std::chrono::milliseconds d) { return static_cast<double>(d.count()) / 1000.0; }

// `levels = [1, 2]`: KernelBench v3's levels (deck/level.h). Strings are refused with a pointer
// to `decks`, which is where the names that `levels` took before v3's levels came ("hard") go now.
std::vector<int> read_levels(const Reader& r, const toml::node& n) {
  const std::string expected =
      fmt::format("an array of KernelBench v3 levels, integers from {} to {}", kMinLevel, kMaxLevel);
  if (!n.is_array()) r.fail(&n, "levels", "expected " + expected + ", found " + Reader::shown(n));
  std::vector<int> out;
  for (const auto& e : *n.as_array()) {
    if (e.is_string())
      r.fail(&e, "levels", fmt::format("expected {}, found {}; a deck's name goes in decks = [{}]", expected,
                                       Reader::shown(e), Reader::shown(e)));
    if (!e.is_integer() || *e.value<int64_t>() < kMinLevel || *e.value<int64_t>() > kMaxLevel)
      r.fail(&e, "levels", "expected " + expected + ", found " + Reader::shown(e));
    out.push_back(static_cast<int>(*e.value<int64_t>()));
  }
  return out;
}

}  // namespace

SweepSpec load_sweep(const fs::path& file, const SweepOverrides& o, const std::vector<Problem>& deck) {
  SweepSpec s;
  toml::table root;
  if (!file.empty()) {
    if (!fs::is_regular_file(file)) throw SweepError(file.string() + ": no such sweep file");
    s.file = fs::absolute(file).lexically_normal();
    try {
      root = toml::parse_file(file.string());
    } catch (const toml::parse_error& e) {
      throw SweepError(fmt::format("{}:{}:{}: TOML syntax error: {}", file.string(), e.source().begin.line,
                                   e.source().begin.column, e.description()));
    }
  }
  const Reader r(s.file);
  r.known_keys(root, "",
               {"name", "entrants", "problems", "decks", "levels", "trials", "budget", "grace", "target", "gpu", "check_only",
                "sandbox", "network", "executor", "retry", "db", "runs_dir", "prices"});
  s.name = o.name.empty() ? r.str(root, "", "name").value_or("") : o.name;
  if (s.name.empty()) {
    if (s.file.empty()) throw SweepError("--name: required when no sweep file is given (the sweep's id, used to resume it)");
    s.name = s.file.stem().string();
  }
  if (s.name != path_component(s.name))
    r.fail(root.get("name"), "name", "expected letters, digits, '.', '+' and '-' only (it names files), found \"" + s.name + "\"");

  // Entrants: the file's [[entrants]], or --agents x --models.
  if (const toml::node* n = root.get("entrants")) {
    if (!n->is_array_of_tables()) r.fail(n, "entrants", "expected [[entrants]] tables");
    size_t i = 0;
    for (const auto& e : *n->as_array()) s.entrants.push_back(read_entrant(r, *e.as_table(), fmt::format("entrants[{}]", i++)));
  }
  if (!o.agents.empty() || !o.models.empty()) {
    if (o.agents.empty() || o.models.empty()) throw SweepError("--agents and --models go together (every agent x every model)");
    s.entrants.clear();
    for (const auto& a : o.agents)
      for (const auto& m : o.models) {
        Entrant e;
        e.agent = a;
        e.model = m;
        e.label = entrant_label(a, m, "");
        s.entrants.push_back(e);
      }
  }
  if (s.entrants.empty()) r.fail(nullptr, "entrants", "at least one entrant is required ([[entrants]] or --agents/--models)");
  std::set<std::string> labels;
  for (size_t i = 0; i < s.entrants.size(); ++i)
    if (!labels.insert(s.entrants[i].label).second)
      r.fail(nullptr, fmt::format("entrants[{}].label", i),
             "\"" + s.entrants[i].label + "\" names two entrants; give each a distinct label");

  // Problems: names or "all", and/or decks, and/or v3 levels; the union of them all.
  std::vector<std::string> names;
  std::vector<std::string> decks;
  std::vector<int> levels;
  if (const toml::node* n = root.get("problems")) {
    if (n->is_string()) names = {*n->value<std::string>()};
    else names = r.strings(root, "", "problems").value();
  }
  if (auto d = r.strings(root, "", "decks")) decks = *d;
  if (const toml::node* n = root.get("levels")) levels = read_levels(r, *n);
  // --problem / --deck / --level replace the file's whole selection.
  if (!o.problems.empty() || !o.decks.empty() || !o.levels.empty()) {
    names = o.problems;
    decks = o.decks;
    levels = o.levels;
    for (int lv : levels)
      if (lv < kMinLevel || lv > kMaxLevel)
        throw SweepError(fmt::format("--level {}: expected KernelBench v3's level, an integer from {} to {}", lv,
                                     kMinLevel, kMaxLevel));
  }
  auto known = [&] {
    std::string k;
    for (const auto& p : deck) k += (k.empty() ? "" : ", ") + p.name;
    return k;
  };
  std::set<std::string> chosen;
  for (const auto& nm : names) {
    if (nm == "all") {
      for (const auto& p : deck) chosen.insert(p.name);
      continue;
    }
    if (std::none_of(deck.begin(), deck.end(), [&](const Problem& p) { return p.name == nm; }))
      r.fail(root.get("problems"), "problems", "unknown problem \"" + nm + "\" (known: " + known() + ", or \"all\")");
    chosen.insert(nm);
  }
  // A deck or level that selects nothing is a mistake worth stopping for: the sweep would quietly
  // lack the problems it was written for.
  for (const auto& dk : decks) {
    bool any = false;
    for (const auto& p : deck)
      if (p.deck == dk) chosen.insert(p.name), any = true;
    if (!any) {
      std::set<std::string> ds;
      for (const auto& p : deck) ds.insert(p.deck);
      std::string k;
      for (const auto& x : ds) k += (k.empty() ? "" : ", ") + x;
      const std::string what = "no problem of deck \"" + dk + "\" (decks: " + k + ")";
      if (!o.decks.empty()) throw SweepError("--deck " + dk + ": " + what);
      r.fail(root.get("decks"), "decks", what);
    }
  }
  for (int lv : levels) {
    bool any = false;
    for (const auto& p : deck)
      if (p.level == lv) chosen.insert(p.name), any = true;
    if (!any) {
      std::set<int> ls;
      for (const auto& p : deck)
        if (p.level) ls.insert(*p.level);
      std::string k;
      for (int x : ls) k += (k.empty() ? "" : ", ") + std::to_string(x);
      const std::string what =
          fmt::format("no problem of level {} in the deck (levels present: {})", lv, k.empty() ? "none" : k);
      if (!o.levels.empty()) throw SweepError(fmt::format("--level {}: {}", lv, what));
      r.fail(root.get("levels"), "levels", what);
    }
  }
  for (const auto& p : deck)
    if (chosen.count(p.name)) {
      s.problems.push_back(p.name);
      if (p.level) s.problem_levels[p.name] = *p.level;
    }
  if (s.problems.empty()) r.fail(nullptr, "problems", "at least one problem is required (names, \"all\", decks or levels)");

  s.trials = static_cast<int>(o.trials.value_or(r.integer(root, "", "trials", 1).value_or(1)));
  if (s.trials < 1) throw SweepError(fmt::format("--trials {}: must be 1 or more", s.trials));
  if (auto d = r.duration(root, "", "budget")) s.budget = *d, s.budget_given = true;
  if (auto d = r.duration(root, "", "grace")) s.grace = *d;
  if (!o.budget.empty()) {
    try {
      s.budget = parse_duration(o.budget);
      s.budget_given = true;
    } catch (const std::invalid_argument& e) {
      throw SweepError(std::string("--budget: ") + e.what());
    }
  }
  s.target = o.target.empty() ? r.str(root, "", "target").value_or("auto") : o.target;
  if (s.target != "host" && s.target != "cuda" && s.target != "auto")
    r.fail(root.get("target"), "target", "expected \"host\", \"cuda\" or \"auto\", found \"" + s.target + "\"");
  s.gpu = r.str(root, "", "gpu").value_or("");
  s.check_only = o.check_only || r.boolean(root, "", "check_only").value_or(false);
  s.sandbox = !o.no_sandbox && r.boolean(root, "", "sandbox").value_or(true);
  s.network = r.boolean(root, "", "network").value_or(true);

  if (const toml::node* n = root.get("executor")) {
    if (!n->is_table()) r.fail(n, "executor", "expected a table [executor]");
    const toml::table& t = *n->as_table();
    r.known_keys(t, "executor", {"kind", "gpus", "agents_per_gpu", "concurrency", "slurm"});
    s.executor = r.str(t, "executor", "kind").value_or("local");
    if (const toml::node* g = t.get("gpus")) {
      if (!g->is_array()) r.fail(g, "executor.gpus", "expected an array of GPU indices, found " + Reader::shown(*g));
      for (const auto& x : *g->as_array()) {
        if (!x.is_integer() || *x.value<int64_t>() < 0) r.fail(&x, "executor.gpus", "expected GPU indices (integers >= 0)");
        s.gpus.push_back(static_cast<int>(*x.value<int64_t>()));
      }
    }
    s.agents_per_gpu = static_cast<int>(r.integer(t, "executor", "agents_per_gpu", 1).value_or(1));
    s.concurrency = static_cast<int>(r.integer(t, "executor", "concurrency", 1).value_or(0));
    if (const toml::node* sl = t.get("slurm")) {
      if (!sl->is_table()) r.fail(sl, "executor.slurm", "expected a table [executor.slurm]");
      const toml::table& st = *sl->as_table();
      r.known_keys(st, "executor.slurm", {"partition", "account", "qos", "margin", "extra_args", "max_parallel"});
      s.slurm.partition = r.str(st, "executor.slurm", "partition").value_or("");
      s.slurm.account = r.str(st, "executor.slurm", "account").value_or("");
      s.slurm.qos = r.str(st, "executor.slurm", "qos").value_or("");
      if (auto d = r.duration(st, "executor.slurm", "margin")) s.slurm.margin = *d;
      s.slurm.extra_args = r.strings(st, "executor.slurm", "extra_args").value_or(std::vector<std::string>{});
      s.slurm.max_parallel = static_cast<int>(r.integer(st, "executor.slurm", "max_parallel", 0).value_or(0));
    }
  }
  if (!o.executor.empty()) s.executor = o.executor;
  if (s.executor != "local" && s.executor != "slurm")
    r.fail(root.get("executor"), "executor.kind", "expected \"local\" or \"slurm\", found \"" + s.executor + "\"");
  if (!o.gpus.empty()) s.gpus = o.gpus;
  if (o.agents_per_gpu) s.agents_per_gpu = *o.agents_per_gpu;
  if (o.concurrency) s.concurrency = *o.concurrency;
  if (s.agents_per_gpu < 1) throw SweepError("--agents-per-gpu: must be 1 or more");
  if (const toml::node* n = root.get("retry")) {
    if (!n->is_table()) r.fail(n, "retry", "expected a table [retry]");
    r.known_keys(*n->as_table(), "retry", {"infra_retries"});
    s.infra_retries = static_cast<int>(r.integer(*n->as_table(), "retry", "infra_retries", 0).value_or(2));
  }
  if (!o.db.empty()) s.db = o.db;
  else if (auto d = r.str(root, "", "db")) s.db = r.path_of(*d);
  else s.db = default_results_db();
  if (!o.runs_dir.empty()) s.runs_dir = o.runs_dir;
  else if (auto d = r.str(root, "", "runs_dir")) s.runs_dir = r.path_of(*d);
  else s.runs_dir = (s.db.parent_path().empty() ? fs::path(".") : s.db.parent_path()) / "runs";
  if (auto p = r.str(root, "", "prices")) s.prices = r.path_of(*p);
  s.db = fs::absolute(s.db).lexically_normal();
  s.runs_dir = fs::absolute(s.runs_dir).lexically_normal();
  return s;
}

void check_sweep_runnable(const SweepSpec& s, const std::vector<Problem>& deck) {
  const std::string where = s.file.empty() ? std::string("sweep") : s.file.string();
  std::unique_ptr<Target> target;
  try {
    target = make_target(s.target);
  } catch (const std::invalid_argument& e) {
    throw SweepError(fmt::format("{}: target: {}", where, e.what()));
  }
  for (const auto& name : s.problems) {
    const auto p = std::find_if(deck.begin(), deck.end(), [&](const Problem& x) { return x.name == name; });
    if (!p->supports(target->name()))
      throw SweepError(fmt::format("{}: problems: {} does not support the {} target (it supports: {})", where, name,
                                   target->name(), fmt::join(p->targets, ", ")));
  }
  if (!s.gpu.empty()) {
    const std::string device = target->device_description();
    if (device.find(s.gpu) == std::string::npos)
      throw SweepError(fmt::format("{}: gpu: the sweep asks for \"{}\" but this machine's {} device is \"{}\"", where, s.gpu,
                                   target->name(), device));
  }
  gateway::PriceTable prices;
  const fs::path price_file = s.prices.empty() ? gateway::default_price_table() : s.prices;
  try {
    if (!price_file.empty()) prices = gateway::PriceTable::load(price_file);
  } catch (const std::invalid_argument& e) {
    throw SweepError(fmt::format("{}: prices: {}", where, e.what()));
  }
  for (size_t i = 0; i < s.entrants.size(); ++i) {
    const Entrant& e = s.entrants[i];
    const std::string key = fmt::format("{}: entrants[{}] ({})", where, i, e.label);
    try {
      AdapterOptions ao;
      ao.command = e.command;
      ao.agent_bin = e.agent_bin;
      ao.read_only = {e.ro_bind.begin(), e.ro_bind.end()};
      ao.kbench_binary = self_executable();
      (void)make_adapter(e.agent, ao);
    } catch (const std::invalid_argument& ex) {
      throw SweepError(fmt::format("{}: agent: {}", key, ex.what()));
    }
    if (!e.gateway.empty()) {
      try {
        const auto g = gateway::parse_gateway_spec(e.gateway);
        if (g.mode == gateway::GatewayOptions::Mode::replay)
          (void)gateway::ReplayScript::load(g.replay_file, {{"workspace", "/workspace"}});
      } catch (const std::invalid_argument& ex) {
        throw SweepError(fmt::format("{}: gateway: {}", key, ex.what()));
      }
    }
    if (!e.allow_unpriced && !prices.find(e.model))
      throw SweepError(fmt::format("{}: model: \"{}\" is not in the price table {}, so its cost could not be known; add its "
                                   "prices with their source (docs/sweeps.md, \"Prices\"), fix the model name, or set "
                                   "allow_unpriced = true on the entrant",
                                   key, e.model, price_file.empty() ? "(none found)" : price_file.string()));
  }
}

json sweep_to_json(const SweepSpec& s) {
  json ents = json::array();
  for (const auto& e : s.entrants) {
    json j = {{"label", e.label},       {"agent", e.agent},       {"model", e.model},         {"effort", e.effort},
              {"gateway", e.gateway},   {"gateway_key_env", e.gateway_key_env},           {"provider_order", e.provider_order},
              {"command", e.command},   {"agent_bin", e.agent_bin}, {"ro_bind", e.ro_bind}, {"allow_unpriced", e.allow_unpriced}};
    j["max_tokens"] = e.max_tokens ? json(*e.max_tokens) : json(nullptr);
    j["max_cost"] = e.max_cost_usd ? json(*e.max_cost_usd) : json(nullptr);
    j["max_turns"] = e.max_turns ? json(*e.max_turns) : json(nullptr);
    ents.push_back(j);
  }
  json j = {{"name", s.name},
          {"file", s.file.string()},
          {"entrants", ents},
          {"problems", s.problems},
          {"trials", s.trials},
          {"budget_seconds", seconds(s.budget)},
          {"grace_seconds", seconds(s.grace)},
          {"target", s.target},
          {"gpu", s.gpu},
          {"check_only", s.check_only},
          {"sandbox", s.sandbox},
          {"network", s.network},
          {"executor", {{"kind", s.executor}, {"gpus", s.gpus}, {"agents_per_gpu", s.agents_per_gpu}, {"concurrency", s.concurrency}}},
          {"slurm",
           {{"partition", s.slurm.partition},
            {"account", s.slurm.account},
            {"qos", s.slurm.qos},
            {"margin_seconds", seconds(s.slurm.margin)},
            {"extra_args", s.slurm.extra_args},
            {"max_parallel", s.slurm.max_parallel}}},
          {"retry", {{"infra_retries", s.infra_retries}}},
          {"prices", s.prices.string()}};
  // Written only when it decides something, so that the plans (and hashes) of sweeps without
  // levelled problems read as they did before levels: resuming them is not refused.
  if (!s.budget_given && !s.problem_levels.empty()) {
    json by_problem = json::object();
    for (const auto& [name, level] : s.problem_levels) by_problem[name] = seconds(cell_budget(s, name));
    j["level_budget_seconds"] = by_problem;
  }
  return j;
}

std::chrono::milliseconds cell_budget(const SweepSpec& s, const std::string& problem) {
  if (s.budget_given) return s.budget;
  const auto it = s.problem_levels.find(problem);
  return it == s.problem_levels.end() ? s.budget : std::chrono::milliseconds(level_defaults(it->second).wall_clock);
}

std::chrono::milliseconds longest_cell_budget(const SweepSpec& s) {
  std::chrono::milliseconds longest{0};
  for (const auto& p : s.problems) longest = std::max(longest, cell_budget(s, p));
  return s.problems.empty() ? s.budget : longest;
}

std::string sweep_plan_hash(const SweepSpec& s) {
  json j = sweep_to_json(s);
  // What decides the cells and how each is run; where and how fast they run may change on resume.
  for (const char* k : {"file", "executor", "slurm", "retry", "gpu"}) j.erase(k);
  return sha256_hex(j.dump());
}

}  // namespace kb
