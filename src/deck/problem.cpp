// Loading and validating problems/<id>/problem.toml (format: docs/problem-format.md).
//
// Every rejection is a SpecError of the form
//   <file>:<line>:<column>: <key path>: <what was expected>, found <what was there>
// so a problem author can jump to the spot and knows what to write instead. Unknown keys are
// errors (a misspelt optional key would otherwise silently fall back to its default), and they
// are checked before missing ones so that a typo is reported as the typo it is.
#include "deck/problem.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/tensor.h"
#include "deck/level.h"

namespace kb {
namespace {

namespace fs = std::filesystem;
using Keys = std::vector<std::string_view>;

constexpr std::string_view kTargets[] = {"host", "cuda"};
constexpr std::string_view kComputePeaks[] = {"fp64",    "fp32",    "fp64_tc", "tf32_tc", "bf16_tc",
                                              "fp16_tc", "fp8_tc",  "int8_tc", "fp4_tc"};
constexpr std::string_view kMemoryPeaks[] = {"dram"};

template <class Range>
std::string join_list(const Range& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + std::string(i);
  return s.empty() ? "(none)" : s;
}

template <class Range>
bool contains(const Range& items, std::string_view x) {
  return std::find(std::begin(items), std::end(items), x) != std::end(items);
}

std::string key_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}
std::string index_path(const std::string& parent, size_t i) { return fmt::format("{}[{}]", parent, i); }

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Levenshtein distance, for "did you mean" hints on misspelt keys.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "sm_" + digits + an optional a/f suffix: sm_80, sm_90a, sm_100f.
bool is_cuda_arch(std::string_view s) {
  if (s.size() < 4 || s.substr(0, 3) != "sm_") return false;
  std::string_view digits = s.substr(3);
  if (digits.back() == 'a' || digits.back() == 'f') digits.remove_suffix(1);
  return !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "batch=32 vocab=4096"
std::string dims_text(const std::vector<std::string>& names, const std::vector<int64_t>& values) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i)
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", names[i], values[i]);
  return s;
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

// "an integer (5)", "a string ("abc")", "a table": what a node holds, for "found ..." phrases.
std::string describe(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: {
      std::string s = n.as_string()->get();
      if (s.size() > 40) s = s.substr(0, 37) + "...";
      return "a string (\"" + s + "\")";
    }
    case toml::node_type::integer: return fmt::format("an integer ({})", n.as_integer()->get());
    case toml::node_type::floating_point: {
      // "2.0", not "2": the point of saying so is that it is a float where an integer was wanted.
      const double v = n.as_floating_point()->get();
      if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("a float ({:.1f})", v);
      return fmt::format("a float ({})", v);
    }
    case toml::node_type::boolean: return n.as_boolean()->get() ? "a boolean (true)" : "a boolean (false)";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

// The three tensor lists with their key names, for checks that span them.
using TensorLists = std::array<std::pair<const char*, const std::vector<TensorSpec>*>, 3>;
TensorLists tensor_lists(const Problem& p) {
  return {{{"inputs", &p.inputs}, {"weights", &p.weights}, {"outputs", &p.outputs}}};
}

// Reads one parsed problem.toml into a Problem, failing with the file and key path on anything off.
class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  Problem load(const toml::table& top, const fs::path& dir, const std::string& folder) const;

 private:
  std::string file_;

  [[noreturn]] void fail(const toml::source_region& at, const std::string& path, const std::string& msg) const {
    std::string where = file_;
    if (at.begin.line > 0) where += fmt::format(":{}:{}", at.begin.line, at.begin.column);
    throw SpecError(fmt::format("{}: {}: {}", where, path, msg));
  }
  [[noreturn]] void fail(const toml::node& at, const std::string& path, const std::string& msg) const {
    fail(at.source(), path, msg);
  }
  [[noreturn]] void mismatch(const toml::node& at, const std::string& path, std::string_view expected) const {
    fail(at, path, fmt::format("expected {}, found {}", expected, describe(at)));
  }

  void check_keys(const toml::table& t, const std::string& path, const Keys& allowed) const;
  const toml::node& need(const toml::table& t, const std::string& path, std::string_view key,
                         std::string_view expected) const;

  std::string string_of(const toml::node& n, const std::string& path, std::string_view expected = "a string") const;
  double number_of(const toml::node& n, const std::string& path, std::string_view expected = "a number") const;
  int64_t integer_of(const toml::node& n, const std::string& path, std::string_view expected = "an integer") const;
  const toml::table& table_of(const toml::node& n, const std::string& path, std::string_view expected = "a table") const;
  const toml::array& array_of(const toml::node& n, const std::string& path, std::string_view expected) const;
  std::vector<std::string> strings_of(const toml::node& n, const std::string& path) const;

  void load_header(const toml::table& top, Problem& p, const std::string& folder) const;
  void load_dims(const toml::table& top, Problem& p) const;
  std::vector<TensorSpec> load_tensors(const toml::table& top, std::string_view key, bool output,
                                       const Problem& p) const;
  std::vector<Expr> load_shape(const toml::node& n, const std::string& path, const Problem& p) const;
  Expr load_expr(const toml::node& n, const std::string& path, const Problem& p) const;
  InitSpec load_init(const toml::node& n, const std::string& path) const;
  Tolerance load_tolerance(const toml::node& n, const std::string& path) const;
  void load_shapes(const toml::table& top, Problem& p) const;
  ShapeCase load_shape_case(const toml::table& t, const std::string& path, const Problem& p) const;
  void load_cost(const toml::table& top, Problem& p) const;
  void load_seeds(const toml::table& top, Problem& p) const;
  void load_policy(const toml::table& top, Problem& p) const;
  void load_baseline(const toml::table& top, Problem& p) const;
  void check_cases(const toml::table& top, const Problem& p) const;
};

void Loader::check_keys(const toml::table& t, const std::string& path, const Keys& allowed) const {
  for (const auto& [key, value] : t) {
    if (contains(allowed, key.str())) continue;
    std::string hint;
    for (auto a : allowed)
      if (edit_distance(key.str(), a) <= 2) hint = fmt::format(" (did you mean '{}'?)", a);
    fail(key.source(), key_path(path, key.str()),
         fmt::format("unknown key; expected one of: {}{}", join_list(allowed), hint));
  }
}

const toml::node& Loader::need(const toml::table& t, const std::string& path, std::string_view key,
                               std::string_view expected) const {
  if (const toml::node* n = t.get(key)) return *n;
  fail(t.source(), key_path(path, key), fmt::format("required key is missing; expected {}", expected));
}

std::string Loader::string_of(const toml::node& n, const std::string& path, std::string_view expected) const {
  if (!n.is_string()) mismatch(n, path, expected);
  return n.as_string()->get();
}

double Loader::number_of(const toml::node& n, const std::string& path, std::string_view expected) const {
  double v = 0;
  if (n.is_integer()) v = static_cast<double>(n.as_integer()->get());
  else if (n.is_floating_point()) v = n.as_floating_point()->get();
  else mismatch(n, path, expected);
  if (!std::isfinite(v)) mismatch(n, path, fmt::format("{} (finite)", expected));
  return v;
}

int64_t Loader::integer_of(const toml::node& n, const std::string& path, std::string_view expected) const {
  if (!n.is_integer()) mismatch(n, path, expected);
  return n.as_integer()->get();
}

const toml::table& Loader::table_of(const toml::node& n, const std::string& path, std::string_view expected) const {
  if (!n.is_table()) mismatch(n, path, expected);
  return *n.as_table();
}

const toml::array& Loader::array_of(const toml::node& n, const std::string& path, std::string_view expected) const {
  if (!n.is_array()) mismatch(n, path, expected);
  return *n.as_array();
}

std::vector<std::string> Loader::strings_of(const toml::node& n, const std::string& path) const {
  std::vector<std::string> out;
  const toml::array& a = array_of(n, path, "an array of strings");
  for (size_t i = 0; i < a.size(); ++i) {
    std::string s = string_of(*a.get(i), index_path(path, i), "a non-empty string");
    if (s.empty()) mismatch(*a.get(i), index_path(path, i), "a non-empty string");
    out.push_back(std::move(s));
  }
  return out;
}

// --- name, deck, level, description, targets --------------------------------------------------------

void Loader::load_header(const toml::table& top, Problem& p, const std::string& folder) const {
  const toml::node& name = need(top, "", "name", fmt::format("the folder name \"{}\"", folder));
  p.name = string_of(name, "name", fmt::format("the folder name \"{}\" as a string", folder));
  if (p.name != folder)
    fail(name, "name", fmt::format("expected the folder name \"{}\", found \"{}\"; a problem's name must equal "
                                   "its folder's name (rename one of them)", folder, p.name));
  p.deck = string_of(need(top, "", "deck", "the deck's name, such as \"hard\" or \"example\""), "deck",
                     "a non-empty string such as \"hard\"");
  if (p.deck.empty()) mismatch(*top.get("deck"), "deck", "a non-empty string such as \"hard\"");
  if (const toml::node* level = top.get("level")) {
    const std::string expected = fmt::format("KernelBench v3's level, an integer from {} to {}", kMinLevel, kMaxLevel);
    // Until the v3 levels came, `level` held the deck's name: say where that name goes now.
    if (level->is_string())
      fail(*level, "level", fmt::format("expected {}, found {}; a deck's name goes in `deck = \"{}\"`", expected,
                                        describe(*level), level->as_string()->get()));
    const int64_t v = integer_of(*level, "level", expected);
    if (v < kMinLevel || v > kMaxLevel) mismatch(*level, "level", expected);
    p.level = static_cast<int>(v);
  }
  p.description = string_of(need(top, "", "description", "a string describing the problem"), "description");

  const toml::node& targets = need(top, "", "targets", "a non-empty array drawn from: host, cuda");
  p.targets = strings_of(targets, "targets");
  if (p.targets.empty()) fail(targets, "targets", "expected a non-empty array drawn from: host, cuda, found []");
  for (size_t i = 0; i < p.targets.size(); ++i) {
    const std::string path = index_path("targets", i);
    if (!contains(kTargets, p.targets[i]))
      mismatch(*targets.as_array()->get(i), path, "one of: " + join_list(kTargets));
    if (std::find(p.targets.begin(), p.targets.begin() + i, p.targets[i]) != p.targets.begin() + i)
      fail(*targets.as_array()->get(i), path, fmt::format("\"{}\" is listed twice; list each target once", p.targets[i]));
  }
}

void Loader::load_dims(const toml::table& top, Problem& p) const {
  const toml::node& dims = need(top, "", "dims", "an array of dim names, e.g. [\"M\", \"N\", \"K\"]");
  p.dims = strings_of(dims, "dims");
  for (size_t i = 0; i < p.dims.size(); ++i) {
    const std::string path = index_path("dims", i);
    if (!is_identifier(p.dims[i]))
      mismatch(*dims.as_array()->get(i), path, "an identifier (letters, digits, '_'; not starting with a digit)");
    if (std::find(p.dims.begin(), p.dims.begin() + i, p.dims[i]) != p.dims.begin() + i)
      fail(*dims.as_array()->get(i), path, fmt::format("dim \"{}\" is listed twice; dim names must be unique", p.dims[i]));
  }
}

// --- tensors ------------------------------------------------------------------------------------

Expr Loader::load_expr(const toml::node& n, const std::string& path, const Problem& p) const {
  Expr e;
  try {
    if (n.is_integer()) e = Expr::parse(std::to_string(n.as_integer()->get()));
    else if (n.is_floating_point()) e = Expr::parse(fmt::format("{}", n.as_floating_point()->get()));
    else e = Expr::parse(string_of(n, path, "a number or an expression string such as \"2 * M * N\""));
  } catch (const ExprError& err) {
    fail(n, path, fmt::format("invalid expression: {}", err.what()));
  }
  for (const auto& name : e.names())
    if (!contains(p.dims, name))
      fail(n, path, fmt::format("expected an expression over the dims ({}), found \"{}\" which refers to '{}', "
                                "not a dim", join_list(p.dims), e.text(), name));
  return e;
}

std::vector<Expr> Loader::load_shape(const toml::node& n, const std::string& path, const Problem& p) const {
  const toml::array& a = array_of(n, path, "an array of dim names, integers or expressions, e.g. [\"M\", 64]");
  std::vector<Expr> shape;
  for (size_t i = 0; i < a.size(); ++i) {
    const toml::node& e = *a.get(i);
    const std::string ipath = index_path(path, i);
    if (e.is_integer() && e.as_integer()->get() < 1) mismatch(e, ipath, "a positive integer");
    if (!e.is_integer() && !e.is_string())
      mismatch(e, ipath, "a dim name, a positive integer or an expression string such as \"K / 2\"");
    shape.push_back(load_expr(e, ipath, p));
  }
  return shape;
}

InitSpec Loader::load_init(const toml::node& n, const std::string& path) const {
  const toml::table& t = table_of(n, path, "a table such as { dist = \"normal\", mean = 0.0, std = 1.0 }");
  InitSpec init;
  const toml::node& dist_node = need(t, path, "dist", "one of: uniform, normal, generator");
  const std::string dist = string_of(dist_node, key_path(path, "dist"), "one of: uniform, normal, generator");
  auto num = [&](std::string_view key, double fallback) {
    const toml::node* v = t.get(key);
    return v ? number_of(*v, key_path(path, key)) : fallback;
  };
  if (dist == "uniform") {
    check_keys(t, path, {"dist", "low", "high"});
    init.kind = InitSpec::Kind::uniform;
    init.low = num("low", init.low);
    init.high = num("high", init.high);
    if (init.low >= init.high)
      fail(t.source(), path, fmt::format("uniform needs low < high, found low = {}, high = {}",
                                         number_text(init.low), number_text(init.high)));
  } else if (dist == "normal") {
    check_keys(t, path, {"dist", "mean", "std"});
    init.kind = InitSpec::Kind::normal;
    init.mean = num("mean", init.mean);
    init.std = num("std", init.std);
    if (init.std <= 0) mismatch(*t.get("std"), key_path(path, "std"), "a standard deviation > 0");
  } else if (dist == "generator") {
    init.kind = InitSpec::Kind::generator;
    const std::string gpath = key_path(path, "generator");
    const toml::node& g = need(t, path, "generator", "the name of a registered input generator");
    init.generator = string_of(g, gpath, "a generator name (an identifier)");
    if (!is_identifier(init.generator)) mismatch(g, gpath, "a generator name (an identifier)");
    // Every other key is a numeric parameter handed to the generator.
    for (const auto& [key, value] : t) {
      if (key.str() == "dist" || key.str() == "generator") continue;
      init.params[std::string(key.str())] = number_of(value, key_path(path, key.str()), "a number (generator parameter)");
    }
  } else {
    mismatch(dist_node, key_path(path, "dist"), "one of: uniform, normal, generator");
  }
  return init;
}

Tolerance Loader::load_tolerance(const toml::node& n, const std::string& path) const {
  const toml::table& t = table_of(n, path, "a table such as { rtol = 1e-5, atol = 1e-7 }");
  check_keys(t, path, {"atol", "rtol", "max_ulp", "rel_l2", "source"});
  Tolerance tol;
  auto criterion = [&](std::string_view key) -> std::optional<double> {
    const toml::node* v = t.get(key);
    if (!v) return std::nullopt;
    const double x = number_of(*v, key_path(path, key), "a number >= 0");
    if (x < 0) mismatch(*v, key_path(path, key), "a number >= 0");
    return x;
  };
  tol.atol = criterion("atol");
  tol.rtol = criterion("rtol");
  tol.max_ulp = criterion("max_ulp");
  tol.rel_l2 = criterion("rel_l2");
  if (const toml::node* s = t.get("source")) tol.source = string_of(*s, key_path(path, "source"));
  if (!tol.atol && !tol.rtol && !tol.max_ulp && !tol.rel_l2)
    fail(t.source(), path, "expected at least one criterion: atol, rtol, max_ulp or rel_l2, found none");
  return tol;
}

std::vector<TensorSpec> Loader::load_tensors(const toml::table& top, std::string_view key, bool output,
                                             const Problem& p) const {
  std::vector<TensorSpec> out;
  const toml::node* n = top.get(key);
  if (!n) {
    if (key == "weights") return out;  // the only optional tensor list
    fail(top.source(), std::string(key), fmt::format("required key is missing; expected at least one [[{}]] section", key));
  }
  const auto expected = fmt::format("an array of tables ([[{}]] sections)", key);
  const toml::array& a = array_of(*n, std::string(key), expected);
  if (a.empty() && key != "weights") fail(*n, std::string(key), fmt::format("expected at least one [[{}]] section, found none", key));
  const Keys allowed = output            ? Keys{"name", "dtype", "shape", "tolerance", "comparator"}
                       : key == "inputs" ? Keys{"name", "dtype", "shape", "init", "perturb"}
                                         : Keys{"name", "dtype", "shape", "init"};
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string path = index_path(std::string(key), i);
    const toml::table& t = table_of(*a.get(i), path, expected);
    check_keys(t, path, allowed);
    TensorSpec s;
    const toml::node& name = need(t, path, "name", "a tensor name");
    s.name = string_of(name, key_path(path, "name"), "a tensor name (an identifier)");
    if (!is_identifier(s.name)) mismatch(name, key_path(path, "name"), "a tensor name (an identifier)");
    const toml::node& dtype = need(t, path, "dtype", "a dtype name: " + dtype_names());
    auto parsed = parse_dtype(string_of(dtype, key_path(path, "dtype"), "a dtype name: " + dtype_names()));
    if (!parsed) mismatch(dtype, key_path(path, "dtype"), "a dtype name: " + dtype_names());
    s.dtype = *parsed;
    s.shape = load_shape(need(t, path, "shape", "an array such as [\"M\", \"K\"]"), key_path(path, "shape"), p);
    if (output) {
      s.tolerance = load_tolerance(need(t, path, "tolerance", "a table with atol, rtol, max_ulp or rel_l2"),
                                   key_path(path, "tolerance"));
      if (const toml::node* c = t.get("comparator")) {
        s.comparator = string_of(*c, key_path(path, "comparator"), "a comparator name (an identifier)");
        if (!is_identifier(s.comparator)) mismatch(*c, key_path(path, "comparator"), "a comparator name (an identifier)");
      }
    } else if (const toml::node* init = t.get("init")) {
      s.init = load_init(*init, key_path(path, "init"));
    }
    if (const toml::node* pert = t.get("perturb")) {
      constexpr std::string_view kExpected = "\"swap\" (the default: two pairs of elements swapped in every row before "
                                             "each timed call) or \"none\" (left as generated: indices, offsets, tables "
                                             "whose structure a swap would break)";
      const std::string v = string_of(*pert, key_path(path, "perturb"), kExpected);
      if (v != "swap" && v != "none") mismatch(*pert, key_path(path, "perturb"), kExpected);
      s.perturb = v == "swap";
    }
    out.push_back(std::move(s));
  }
  return out;
}

// --- shapes -------------------------------------------------------------------------------------

ShapeCase Loader::load_shape_case(const toml::table& t, const std::string& path, const Problem& p) const {
  Keys allowed(p.dims.begin(), p.dims.end());
  allowed.push_back("label");
  allowed.push_back("init");
  check_keys(t, path, allowed);
  ShapeCase c;
  for (const auto& dim : p.dims) {
    const std::string dpath = key_path(path, dim);
    const toml::node* v = t.get(dim);
    if (!v)
      fail(t.source(), dpath, fmt::format("required key is missing; every shape case must give every dim ({})",
                                          join_list(p.dims)));
    const int64_t x = integer_of(*v, dpath, "a positive integer");
    if (x < 1) mismatch(*v, dpath, "a positive integer");
    c.dims.push_back(x);
  }
  if (const toml::node* l = t.get("label")) c.label = string_of(*l, key_path(path, "label"));
  if (const toml::node* init = t.get("init")) {
    const std::string ipath = key_path(path, "init");
    std::vector<std::string> names;
    for (const auto* list : {&p.inputs, &p.weights})
      for (const auto& s : *list) names.push_back(s.name);
    for (const auto& [key, value] : table_of(*init, ipath, "a table of per-tensor overrides, e.g. init.x = {...}")) {
      const std::string tpath = key_path(ipath, key.str());
      if (!contains(names, key.str()))
        fail(key.source(), tpath, fmt::format("expected the name of an input or weight ({}), found '{}'",
                                              join_list(names), key.str()));
      c.init[std::string(key.str())] = load_init(value, tpath);
    }
  }
  return c;
}

void Loader::load_shapes(const toml::table& top, Problem& p) const {
  const auto expected = "an array of tables ([[shapes]] sections, one per shape case)";
  const toml::array& a = array_of(need(top, "", "shapes", expected), "shapes", expected);
  if (a.empty()) fail(*top.get("shapes"), "shapes", "expected at least one [[shapes]] section, found none");
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string path = index_path("shapes", i);
    p.shapes.push_back(load_shape_case(table_of(*a.get(i), path, expected), path, p));
  }
}

// --- cost, seeds, policy ------------------------------------------------------------------------

void Loader::load_cost(const toml::table& top, Problem& p) const {
  const toml::table& t = table_of(need(top, "", "cost", "a [cost] table with flops, bytes and regime"), "cost");
  check_keys(t, "cost", {"flops", "bytes", "regime", "compute_peak", "memory_peak"});
  p.flops = load_expr(need(t, "cost", "flops", "an expression over the dims"), "cost.flops", p);
  p.bytes = load_expr(need(t, "cost", "bytes", "an expression over the dims"), "cost.bytes", p);
  const toml::node& regime = need(t, "cost", "regime", "\"memory\" or \"compute\"");
  const std::string r = string_of(regime, "cost.regime", "\"memory\" or \"compute\"");
  if (r == "memory") p.regime = Regime::memory;
  else if (r == "compute") p.regime = Regime::compute;
  else mismatch(regime, "cost.regime", "\"memory\" or \"compute\"");
  if (const toml::node* c = t.get("compute_peak")) {
    p.compute_peak = string_of(*c, "cost.compute_peak", "one of: " + join_list(kComputePeaks));
    if (!contains(kComputePeaks, p.compute_peak)) mismatch(*c, "cost.compute_peak", "one of: " + join_list(kComputePeaks));
  }
  if (const toml::node* m = t.get("memory_peak")) {
    p.memory_peak = string_of(*m, "cost.memory_peak", "one of: " + join_list(kMemoryPeaks));
    if (!contains(kMemoryPeaks, p.memory_peak)) mismatch(*m, "cost.memory_peak", "one of: " + join_list(kMemoryPeaks));
  }
}

void Loader::load_seeds(const toml::table& top, Problem& p) const {
  const toml::table& t = table_of(need(top, "", "seeds", "a [seeds] table with check and secret"), "seeds");
  check_keys(t, "seeds", {"check", "secret"});
  const auto expected = "an array of at least 3 distinct non-negative integers";
  const toml::node& check = need(t, "seeds", "check", expected);
  const toml::array& a = array_of(check, "seeds.check", expected);
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string path = index_path("seeds.check", i);
    const int64_t s = integer_of(*a.get(i), path, "a non-negative integer");
    if (s < 0) mismatch(*a.get(i), path, "a non-negative integer");
    for (size_t j = 0; j < i; ++j)
      if (p.check_seeds[j] == static_cast<uint64_t>(s))
        fail(*a.get(i), path, fmt::format("seed {} repeats seeds.check[{}]; expected {}", s, j, expected));
    p.check_seeds.push_back(static_cast<uint64_t>(s));
  }
  if (a.size() < 3) fail(check, "seeds.check", fmt::format("expected {}, found {} seed{}", expected, a.size(), a.size() == 1 ? "" : "s"));
  if (const toml::node* s = t.get("secret")) {
    const int64_t n = integer_of(*s, "seeds.secret", "an integer >= 1");
    if (n < 1 || n > 1'000'000) mismatch(*s, "seeds.secret", "an integer from 1 to 1000000");
    p.secret_seeds = static_cast<int>(n);
  }
}

void Loader::load_policy(const toml::table& top, Problem& p) const {
  const toml::node* n = top.get("policy");
  if (!n) return;
  const toml::table& t = table_of(*n, "policy");
  check_keys(t, "policy", {"allowed_libraries", "forbidden", "forbidden_torch", "required_instructions", "determinism"});
  if (const toml::node* a = t.get("allowed_libraries")) p.allowed_libraries = strings_of(*a, "policy.allowed_libraries");
  if (const toml::node* d = t.get("determinism")) {
    const auto* v = d->as_string();
    if (!v || (v->get() != "bitwise" && v->get() != "tolerance"))
      mismatch(*d, "policy.determinism", "\"bitwise\" or \"tolerance\"");
    p.bitwise_deterministic = v->get() == "bitwise";
  }
  if (const toml::node* f = t.get("forbidden")) {
    p.forbidden = strings_of(*f, "policy.forbidden");
    // Every pattern must be a valid regex: one that silently became something else (a literal)
    // once branded honest solutions reward_hack.
    for (size_t i = 0; i < p.forbidden.size(); ++i) {
      try {
        (void)std::regex(p.forbidden[i], std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        const toml::node& at = f->as_array() && i < f->as_array()->size() ? *f->as_array()->get(i) : *f;
        fail(at, fmt::format("policy.forbidden[{}]", i),
             fmt::format("'{}' is not a valid ECMAScript regex ({}); escape its special characters (\\. \\( \\[) to "
                         "match them literally",
                         p.forbidden[i], e.what()));
      }
    }
  }
  if (const toml::node* f = t.get("forbidden_torch")) {
    p.forbidden_torch = strings_of(*f, "policy.forbidden_torch");
    // Names are matched exactly against the attributes and names of Python source: anything but an
    // identifier ("torch.topk", "topk(") would never match, and silently forbid nothing.
    for (size_t i = 0; i < p.forbidden_torch.size(); ++i) {
      const std::string& name = p.forbidden_torch[i];
      const bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                              name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
                                  std::string::npos &&
                              name.find_first_not_of('_') != std::string::npos;
      if (!identifier) {
        const toml::node& at = f->as_array() && i < f->as_array()->size() ? *f->as_array()->get(i) : *f;
        fail(at, fmt::format("policy.forbidden_torch[{}]", i),
             fmt::format("expected a torch function name such as \"topk\" or \"softmax\" (a Python identifier, "
                         "without module or parentheses), found '{}'",
                         name));
      }
    }
  }
  if (const toml::node* r = t.get("required_instructions")) {
    const std::string path = "policy.required_instructions";
    for (const auto& [arch, list] : table_of(*r, path, "a table of arch = [SASS classes], e.g. { sm_90a = [\"QGMMA\"] }")) {
      const std::string apath = key_path(path, arch.str());
      // A misspelt arch would never match the GPU, silently disabling the check.
      const std::string_view s = arch.str();
      if (!is_cuda_arch(s)) fail(arch.source(), apath, fmt::format("expected a CUDA arch such as sm_90a or sm_100, found '{}'", s));
      auto classes = strings_of(list, apath);
      // Classes are matched exactly against cuobjdump's upper-case opcodes (eval/sass.h): "qgmma" or
      // "QGMMA.64x8x32" would never match and fail every solution.
      for (const auto& c : classes)
        if (c.empty() || c.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string::npos ||
            !(c[0] >= 'A' && c[0] <= 'Z'))
          fail(list, apath, fmt::format("expected SASS instruction classes as cuobjdump prints them, upper case with no "
                                        "modifiers (e.g. \"QGMMA\", \"HMMA\", \"UTCQMMA\"), found '{}'", c));
      p.required_instructions[std::string(s)] = std::move(classes);
    }
  }
}

// [baseline]: the vendor-library reference line (baseline.cu / baseline.cpp in the folder).
void Loader::load_baseline(const toml::table& top, Problem& p) const {
  const toml::node* n = top.get("baseline");
  if (!n) return;
  const toml::table& t = table_of(*n, "baseline");
  check_keys(t, "baseline", {"description", "libraries", "synchronizes"});
  if (const toml::node* d = t.get("description")) {
    if (!d->is_string()) fail(*d, "baseline.description", "expected a string naming the library implementation");
    p.baseline_description = **d->as_string();
  }
  if (const toml::node* l = t.get("libraries")) {
    p.baseline_libraries = strings_of(*l, "baseline.libraries");
    for (const auto& lib : p.baseline_libraries)
      if (lib.empty() || lib.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+") != std::string::npos)
        fail(*l, "baseline.libraries", fmt::format("expected library names to link as -l<name> (e.g. \"cublasLt\"), found '{}'", lib));
  }
  if (const toml::node* sy = t.get("synchronizes")) {
    if (!sy->is_boolean())
      fail(*sy, "baseline.synchronizes", "expected true or false (true: the baseline waits for the device inside kb_run)");
    p.baseline_synchronizes = **sy->as_boolean();
  }
}

// Evaluates every tensor shape and the cost formulas in every shape case, so that a formula that
// divides by zero or a shape like "K / 2" with an odd K is reported at load time, not mid-run.
void Loader::check_cases(const toml::table& top, const Problem& p) const {
  const toml::table& cost = *top.get("cost")->as_table();
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    const ShapeCase& c = p.shapes[i];
    for (const auto* list : {&p.inputs, &p.weights, &p.outputs})
      for (const auto& t : *list) (void)p.tensor_shape(t, c);
    const Variables vars = p.variables(c);
    for (std::string_view key : {"flops", "bytes"}) {
      const Expr& e = key == "flops" ? p.flops : p.bytes;
      const std::string path = key_path("cost", key);
      double v = 0;
      try {
        v = e.eval(vars);
      } catch (const ExprError& err) {
        fail(*cost.get(key), path, fmt::format("cannot be evaluated for shapes[{}] ({}): {}", i, p.shape_label(i), err.what()));
      }
      if (!std::isfinite(v) || v < 0)
        fail(*cost.get(key), path, fmt::format("expected a finite value >= 0, found {} for shapes[{}] ({})",
                                               number_text(v), i, p.shape_label(i)));
    }
  }
}

Problem Loader::load(const toml::table& top, const fs::path& dir, const std::string& folder) const {
  check_keys(top, "", {"name", "deck", "level", "description", "targets", "dims", "inputs", "weights", "outputs", "shapes",
                       "cost", "seeds", "policy", "baseline"});
  Problem p;
  p.dir = dir;
  p.id = folder;
  load_header(top, p, folder);
  load_dims(top, p);
  p.inputs = load_tensors(top, "inputs", false, p);
  p.weights = load_tensors(top, "weights", false, p);
  p.outputs = load_tensors(top, "outputs", true, p);
  // A timed call must differ from every call before it (core/perturb.h): some input has to change.
  if (std::none_of(p.inputs.begin(), p.inputs.end(), [](const TensorSpec& t) { return t.perturb; }))
    fail(*top.get("inputs"), "inputs",
         "every input has perturb = \"none\": at least one input must be perturbed before each timed call, or a "
         "solution could replay cached outputs (docs/problem-format.md, \"perturb\")");
  // Tensors are matched to solution arguments and init overrides by name, across all three lists.
  std::map<std::string, std::string> seen;  // name -> key path of first use
  for (auto [key, list] : tensor_lists(p))
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string path = index_path(key, i);
      auto [it, fresh] = seen.emplace((*list)[i].name, path);
      if (!fresh) {
        const toml::node& at = *top.get(key)->as_array()->get(i)->as_table()->get("name");
        fail(at, key_path(path, "name"), fmt::format("tensor name \"{}\" is already used by {}; tensor names must be "
                                                     "unique across inputs, weights and outputs", it->first, it->second));
      }
    }
  load_shapes(top, p);
  load_cost(top, p);
  load_seeds(top, p);
  load_policy(top, p);
  load_baseline(top, p);
  check_cases(top, p);
  return p;
}

// The folder's own name, also for "problems/softmax/" or "." forms of the path.
std::string folder_name(const fs::path& dir) {
  fs::path d = fs::absolute(dir).lexically_normal();
  if (!d.has_filename()) d = d.parent_path();
  return d.filename().string();
}

// The key path of a tensor ("outputs[1]"), for messages about it; its name if it is not one of p's.
std::string tensor_key(const Problem& p, const TensorSpec& t) {
  for (auto [key, list] : tensor_lists(p))
    for (size_t i = 0; i < list->size(); ++i)
      if (&(*list)[i] == &t) return index_path(key, i);
  return "tensor '" + t.name + "'";
}

}  // namespace

// --- Problem ------------------------------------------------------------------------------------

bool Problem::supports(std::string_view target) const { return contains(targets, target); }

Variables Problem::variables(const ShapeCase& shape) const {
  Variables v;
  for (size_t i = 0; i < dims.size() && i < shape.dims.size(); ++i) v[dims[i]] = static_cast<double>(shape.dims[i]);
  return v;
}

std::vector<int64_t> Problem::tensor_shape(const TensorSpec& t, const ShapeCase& shape) const {
  // Named only when an error is reported: finding the case's index is a walk over every case,
  // which made loading quadratic in the number of shapes.
  auto where_text = [&] {
    for (size_t i = 0; i < shapes.size(); ++i)
      if (&shapes[i] == &shape) return fmt::format("shapes[{}] ({})", i, shape_label(i));
    return "shape case (" + dims_text(dims, shape.dims) + ")";
  };
  const std::string file = (dir / "problem.toml").string();
  const Variables vars = variables(shape);
  std::vector<int64_t> out;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    const std::string path = fmt::format("{}.shape[{}]", tensor_key(*this, t), d);
    double v = 0;
    try {
      v = t.shape[d].eval(vars);
    } catch (const ExprError& err) {
      throw SpecError(fmt::format("{}: {}: cannot be evaluated for {}: {}", file, path, where_text(), err.what()));
    }
    // 2^53: beyond it doubles no longer hold every integer, and no real tensor is that large.
    if (!(v >= 1 && v == std::floor(v) && v <= 9007199254740992.0))
      throw SpecError(fmt::format("{}: {}: expected a positive integer, found \"{}\" = {} for {}; fix the expression "
                                  "or choose dims that make it a positive integer",
                                  file, path, t.shape[d].text(), number_text(v), where_text()));
    out.push_back(static_cast<int64_t>(v));
  }
  // The element count in checked arithmetic: batch = vocab = 2^32 once wrapped to 0 and crashed
  // kbench later. 2^38 elements (1 TiB of fp32) is beyond any machine kbench judges on.
  constexpr int64_t kMaxElements = int64_t{1} << 38;
  int64_t n = 1;
  for (int64_t d : out)
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxElements)
      throw SpecError(fmt::format("{}: {}.shape: {} {} has more than 2^38 elements for {}: too large for kbench to hold; "
                                  "choose smaller dims",
                                  file, tensor_key(*this, t), t.name, shape_string(out), where_text()));
  return out;
}

const InitSpec& Problem::init_for(const TensorSpec& t, const ShapeCase& shape) const {
  auto it = shape.init.find(t.name);
  return it != shape.init.end() ? it->second : t.init;
}

std::string Problem::shape_label(size_t shape_index) const {
  const ShapeCase& s = shapes.at(shape_index);
  return s.label.empty() ? dims_text(dims, s.dims) : s.label;
}

Problem load_problem(const fs::path& dir) {
  const fs::path file = dir / "problem.toml";
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw SpecError(file.string() + ": cannot read the file; every problem folder needs a problem.toml "
                    "(see docs/problem-format.md)");
  std::stringstream text;
  text << in.rdbuf();
  toml::table top;
  try {
    top = toml::parse(text.str(), file.string());
  } catch (const toml::parse_error& e) {
    throw SpecError(fmt::format("{}:{}:{}: TOML syntax error: {}", file.string(), e.source().begin.line,
                                e.source().begin.column, e.description()));
  }
  return Loader(file.string()).load(top, dir, folder_name(dir));
}

std::vector<Problem> load_deck(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw SpecError(root.string() + ": not a directory; expected the deck folder holding one folder per problem");
  std::vector<fs::path> dirs;
  // An entry that cannot be resolved (a symlink loop, a dangling link, no permission) is not a
  // problem folder: it must not take the rest of the deck down with it.
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    std::error_code e;
    if (entry.is_directory(e) && fs::is_regular_file(entry.path() / "problem.toml", e)) dirs.push_back(entry.path());
  }
  if (ec) throw SpecError(root.string() + ": cannot list the deck folder: " + ec.message());
  // Sorted before loading, so that "the first bad one" is the same on every machine.
  std::sort(dirs.begin(), dirs.end(), [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  std::vector<Problem> deck;
  for (const auto& d : dirs) deck.push_back(load_problem(d));
  return deck;
}

std::string_view regime_name(Regime r) { return r == Regime::compute ? "compute" : "memory"; }

}  // namespace kb
