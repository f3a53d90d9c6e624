// `kbench list` and `kbench show`: the deck, readable.
#include <fmt/format.h>

#include <iostream>

#include "cli/app.h"
#include "cli/deck_lookup.h"
#include "cli/option_checks.h"
#include "core/json_text.h"
#include "core/tensor.h"
#include "deck/level.h"
#include "eval/baseline_stage.h"
#include "eval/comparator.h"
#include "eval/judge.h"

namespace kb::cli {
namespace fs = std::filesystem;
using json = nlohmann::json;

Problem find_problem(const GlobalOptions& g, const std::string& name_or_path) {
  fs::path dir = name_or_path;
  if (name_or_path.find('/') == std::string::npos || !fs::is_directory(dir)) dir = g.problems_dir / name_or_path;
  if (!fs::is_regular_file(dir / "problem.toml")) {
    std::string known;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(g.problems_dir, ec))
      if (fs::is_regular_file(e.path() / "problem.toml")) known += (known.empty() ? "" : ", ") + e.path().filename().string();
    throw UsageError(fmt::format("no problem '{}' in {} (known: {}); `kbench list` shows the deck", name_or_path,
                                 g.problems_dir.string(), known.empty() ? "none" : known));
  }
  return load_problem(dir);
}

namespace {

json tensor_json(const TensorSpec& t) {
  json shape = json::array();
  for (const auto& e : t.shape) shape.push_back(e.text());
  return {{"name", t.name}, {"dtype", std::string(name(t.dtype))}, {"shape", shape}};
}

// The targets whose baseline source the problem folder holds (baseline.cu, baseline.cpp, baseline.py).
std::vector<std::string> baseline_targets(const Problem& p) {
  std::vector<std::string> targets;
  for (const auto& t : p.targets)
    if (std::filesystem::exists(baseline_source(p, t))) targets.push_back(t);
  return targets;
}

// The vendor-library reference line: null when the problem has none.
json baseline_json(const Problem& p) {
  const auto targets = baseline_targets(p);
  if (targets.empty()) return nullptr;
  // Each target's source file: baseline.cu, baseline.cpp, or baseline.py (PyTorch, judged as a
  // Python solution).
  json sources = json::object();
  for (const auto& t : targets) sources[t] = baseline_source(p, t).filename().string();
  return {{"description", p.baseline_description}, {"libraries", p.baseline_libraries}, {"targets", targets},
          {"sources", sources}, {"synchronizes", p.baseline_synchronizes}};
}

json problem_json(const Problem& p) {
  json j = {{"name", p.name}, {"deck", p.deck}, {"level", p.level ? json(*p.level) : json(nullptr)},
            {"description", p.description}, {"targets", p.targets},
            {"dims", p.dims}, {"regime", std::string(regime_name(p.regime))}, {"compute_peak", p.compute_peak},
            {"memory_peak", p.memory_peak}, {"flops", p.flops.text()}, {"bytes", p.bytes.text()},
            {"check_seeds", p.check_seeds}, {"secret_seeds", p.secret_seeds}};
  for (const char* k : {"inputs", "weights", "outputs"}) j[k] = json::array();
  for (const auto& t : p.inputs) j["inputs"].push_back(tensor_json(t));
  for (const auto& t : p.weights) j["weights"].push_back(tensor_json(t));
  for (const auto& t : p.outputs) {
    j["outputs"].push_back(tensor_json(t));
    j["outputs"].back()["tolerance"] = describe_tolerance(t.tolerance);
    if (!t.comparator.empty()) j["outputs"].back()["comparator"] = t.comparator;
  }
  j["baseline"] = baseline_json(p);
  j["shapes"] = json::array();
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    const Variables v = p.variables(p.shapes[i]);
    j["shapes"].push_back({{"label", p.shape_label(i)}, {"flops", p.flops.eval(v)}, {"bytes", p.bytes.eval(v)}});
  }
  return j;
}

std::string tensor_line(const TensorSpec& t) {
  std::string shape;
  for (const auto& e : t.shape) shape += (shape.empty() ? "" : ", ") + e.text();
  return fmt::format("    {:<10} {:<5} ({})", t.name, name(t.dtype), shape);
}

// "deck hard, no level" / "deck v3, level 1": where the problem sits, for `kbench show`.
std::string deck_and_level(const Problem& p) {
  return p.level ? fmt::format("deck {}, level {}", p.deck, *p.level) : fmt::format("deck {}, no level", p.deck);
}

void print_problem(const Problem& p) {
  std::cout << fmt::format("{}  [{} · {}-bound · targets: {}]\n\n", p.name, deck_and_level(p), regime_name(p.regime),
                           fmt::join(p.targets, ", "));
  if (p.level) {
    const LevelDefaults d = level_defaults(*p.level);
    std::cout << fmt::format("  kbench run defaults (KernelBench v3, level {}): budget {} min, --agent kbench {} turns\n\n",
                             *p.level, d.wall_clock.count() / 60, d.max_turns);
  }
  std::cout << p.description << "\n\n";
  if (!p.inputs.empty()) std::cout << "  inputs\n";
  for (const auto& t : p.inputs) std::cout << tensor_line(t) << "\n";
  if (!p.weights.empty()) std::cout << "  weights\n";
  for (const auto& t : p.weights) std::cout << tensor_line(t) << "\n";
  std::cout << "  outputs\n";
  for (const auto& t : p.outputs) {
    if (t.comparator.empty()) {
      std::cout << tensor_line(t) << "   tolerance: " << describe_tolerance(t.tolerance) << "\n";
      continue;
    }
    const ComparatorInfo* c = find_comparator(t.comparator);
    std::cout << tensor_line(t) << "   comparator: " << t.comparator << " ("
              << (c ? c->rule : "not compiled into this kbench") << ")\n";
  }
  std::cout << fmt::format("\n  flops = {}\n  bytes = {}\n  peak  = {} (compute), {} (memory)\n\n  shapes\n",
                           p.flops.text(), p.bytes.text(), p.compute_peak, p.memory_peak);
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    const Variables v = p.variables(p.shapes[i]);
    std::cout << fmt::format("    {:>2}  {:<40} {:>10.3g} FLOP {:>10.3g} B\n", i, p.shape_label(i), p.flops.eval(v), p.bytes.eval(v));
  }
  std::cout << fmt::format("\n  seeds: {} fixed ({}) + {} secret per shape\n", p.check_seeds.size(),
                           fmt::join(p.check_seeds, ", "), p.secret_seeds);
  // The reference line `kbench bench` and `kbench eval` time beside a solution (never scored).
  const auto targets = baseline_targets(p);
  if (targets.empty()) {
    std::cout << "  baseline: none\n";
  } else {
    // The source is named only where it is the Python one: a native baseline is the usual case.
    std::vector<std::string> where;
    for (const auto& t : targets)
      where.push_back(is_python_baseline(baseline_source(p, t)) ? t + ": " + kPythonBaselineFile : t);
    std::cout << fmt::format("  baseline ({}): {}{}\n", fmt::join(where, ", "),
                             p.baseline_description.empty() ? "no description" : p.baseline_description,
                             p.baseline_libraries.empty() ? "" : fmt::format(" [links {}]", fmt::join(p.baseline_libraries, ", ")));
  }
}

}  // namespace

void register_deck_commands(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto* list = app.add_subcommand("list", "List the problems of the deck");
  add_global_options(*list, g);
  auto levels = std::make_shared<std::vector<int>>();
  auto decks = std::make_shared<std::vector<std::string>>();
  list->add_option("--level", *levels, "Only the problems of this KernelBench v3 level, 1-4 (repeatable or comma-separated)")
      ->delimiter(',')
      ->check(whole_in(kMinLevel, kMaxLevel, "(KernelBench v3's level)"));
  list->add_option("--deck", *decks, "Only the problems of this deck, e.g. hard (repeatable or comma-separated)")
      ->delimiter(',');
  list->callback([&g, &exit_code, levels, decks] {
    resolve_defaults(g);
    auto deck = load_deck(g.problems_dir);
    // A filter keeps a problem that matches any of its values; both filters must hold. An empty
    // result is a listing, not an error: a deck may hold no problem of a level yet.
    std::erase_if(deck, [&](const Problem& p) {
      const bool level_ok = levels->empty() || (p.level && std::count(levels->begin(), levels->end(), *p.level));
      const bool deck_ok = decks->empty() || std::count(decks->begin(), decks->end(), p.deck);
      return !(level_ok && deck_ok);
    });
    if (g.json) {
      json j = json::array();
      for (const auto& p : deck) j.push_back(problem_json(p));
      std::cout << kb::json_text(j) << "\n";
    } else {
      // The name column is as wide as the longest name listed (v3's level-2 names run to 39).
      size_t name_width = std::string("problem").size();
      for (const auto& p : deck) name_width = std::max(name_width, p.name.size());
      std::cout << fmt::format("{:<{}} {:<12} {:<5} {:<8} {:<11} {}\n", "problem", name_width, "deck", "level", "regime",
                               "targets", "shapes");
      for (const auto& p : deck) {
        std::string shapes;
        for (size_t i = 0; i < p.shapes.size(); ++i) shapes += (i ? "; " : "") + p.shape_label(i);
        std::cout << fmt::format("{:<{}} {:<12} {:<5} {:<8} {:<11} {}\n", p.name, name_width, p.deck, level_text(p.level),
                                 regime_name(p.regime), fmt::format("{}", fmt::join(p.targets, ",")), shapes);
      }
    }
    exit_code = kExitPass;
  });

  auto problem = std::make_shared<std::string>();
  auto* show = app.add_subcommand("show", "Print one problem's specification");
  add_global_options(*show, g);
  show->add_option("PROBLEM", *problem, "Problem name (or folder)")->required();
  show->callback([&g, &exit_code, problem] {
    resolve_defaults(g);
    Problem p = find_problem(g, *problem);
    if (g.json)
      std::cout << kb::json_text(problem_json(p)) << "\n";
    else
      print_problem(p);
    exit_code = kExitPass;
  });
}

}  // namespace kb::cli
