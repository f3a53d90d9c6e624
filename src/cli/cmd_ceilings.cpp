// `kbench ceilings`: the peaks this machine is scored against, and (cuda) what this GPU measured.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <set>

#include "cli/app.h"
#include "core/json_text.h"
#include "target/target.h"

namespace kb::cli {

namespace {

// Keys of one kind in vocabulary order, then any others (a newer cache file) alphabetically.
std::vector<std::string> ordered_keys(const std::vector<std::string>& vocabulary, const std::set<std::string>& present) {
  std::vector<std::string> out;
  for (const auto& k : vocabulary)
    if (present.count(k)) out.push_back(k);
  for (const auto& k : present)
    if (std::find(vocabulary.begin(), vocabulary.end(), k) == vocabulary.end()) out.push_back(k);
  return out;
}

struct Unit {
  const char* name;
  double scale;
};

Unit unit_of(const std::string& key, bool memory) {
  if (memory) return {"GB/s", 1e9};
  if (key.rfind("int", 0) == 0) return {"TOP/s", 1e12};
  return {"TFLOP/s", 1e12};
}

// Measured ceilings (host): one figure per key.
void print_measured_only(const Ceilings& c) {
  std::cout << fmt::format("{} ({}, {})\n", c.name, c.id, c.measured ? "measured on this machine" : "datasheet");
  for (const auto& [k, v] : c.compute)
    std::cout << fmt::format("  {:<9} {:>10.2f} {:<8}  {}\n", k, v.value / 1e12, unit_of(k, false).name, v.source);
  for (const auto& [k, v] : c.memory)
    std::cout << fmt::format("  {:<9} {:>10.2f} {:<8}  {}\n", k, v.value / 1e9, unit_of(k, true).name, v.source);
}

// Datasheet ceilings with the figures measured on this GPU beside them:
//   bf16_tc      989.40 TFLOP/s datasheet     812.30 measured ( 82%)   measured: cuBLASLt ...
void print_datasheet_and_measured(const Ceilings& c) {
  const bool has_datasheet = !c.compute.empty() || !c.memory.empty();
  std::cout << fmt::format("{} ({}): {}\n", c.name, c.id,
                           has_datasheet ? "datasheet figures (used for scoring) and the figures measured on this GPU"
                                         : "measured on this GPU; NO datasheet matches it");
  for (bool memory : {false, true}) {
    const auto& sheet = memory ? c.memory : c.compute;
    const auto& meas = memory ? c.measured_memory : c.measured_compute;
    const auto& vocabulary = memory ? memory_keys() : compute_keys();
    std::set<std::string> present;
    for (const auto& [k, v] : sheet) present.insert(k);
    for (const auto& [k, v] : meas) present.insert(k);
    for (const auto& [k, why] : c.unmeasured) {
      if (k == "launch_floor") continue;  // print_launch_floor's
      const bool is_memory = std::find(memory_keys().begin(), memory_keys().end(), k) != memory_keys().end();
      if (is_memory == memory) present.insert(k);
    }
    for (const auto& k : ordered_keys(vocabulary, present)) {
      const Unit u = unit_of(k, memory);
      const auto s = sheet.find(k);
      const auto m = meas.find(k);
      const std::string ds = s != sheet.end() ? fmt::format("{:>10.2f} {:<7} datasheet", s->second.value / u.scale, u.name)
                                              : fmt::format("{:>10} {:<7} datasheet", "-", u.name);
      std::string ms, note;
      if (m != meas.end()) {
        ms = fmt::format("{:>10.2f} measured", m->second.value / u.scale);
        if (s != sheet.end()) ms += fmt::format(" ({:>3.0f}%)", 100.0 * m->second.value / s->second.value);
        else ms += "       ";
        note = m->second.source;
      } else {
        ms = fmt::format("{:>10} {:<15}", "-", "not measured");
        auto why = c.unmeasured.find(k);
        note = why != c.unmeasured.end() ? why->second : (s != sheet.end() ? "datasheet: " + s->second.source : "");
      }
      std::cout << fmt::format("  {:<9} {}  {}   {}\n", k, ds, ms, note);
    }
  }
  if (!has_datasheet)
    std::cout << "  Scoring (kbench eval) needs a datasheet: add hardware/<id>.toml for this GPU (docs/hardware.md).\n";
  if (c.measured_compute.empty() && c.measured_memory.empty() && c.unmeasured.empty())
    std::cout << "  (no measurement of this GPU yet: `kbench ceilings --target cuda` measures it)\n";
  else if (measurement_failed_somewhere(c))
    std::cout << "  Some keys failed to measure (\"failed: ...\"): this measurement was not cached; the next run measures "
                 "again.\n";
  else
    std::cout << "  Measured figures are cached per GPU and driver; --refresh measures again."
              << (has_datasheet ? " Scoring uses the datasheet.\n" : "\n");
}

// The launch floor (target/launch_floor.h), or why there is none.
void print_launch_floor(const Ceilings& c) {
  if (c.launch_floor) {
    std::cout << fmt::format("  {:<9} {:>10.2f} us       {}\n", "floor", c.launch_floor->value * 1e6, c.launch_floor->source);
  } else if (auto why = c.unmeasured.find("launch_floor"); why != c.unmeasured.end()) {
    std::cout << fmt::format("  {:<9} {:>10} not measured: {}\n", "floor", "-", why->second);
  } else {
    std::cout << fmt::format("  {:<9} {:>10} not measured yet (no achievable fractions until it is)\n", "floor", "-");
  }
}

}  // namespace

void register_ceilings_command(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto target = std::make_shared<std::string>("auto");
  auto refresh = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("ceilings", "Measure (or show cached) ceilings of this machine");
  add_global_options(*cmd, g);
  cmd->add_option("--target", *target, "host, cuda or auto")->capture_default_str();
  cmd->add_flag("--refresh", *refresh, "Measure again instead of using the cache");
  cmd->callback([&g, &exit_code, target, refresh] {
    resolve_defaults(g);
    std::unique_ptr<Target> t;
    try {
      t = make_target(*target);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
    if (t->name() == "cuda" && stderr_is_terminal())
      std::cerr << "kbench: cuda ceilings: datasheet, plus this GPU's measurement (cached; measuring takes up to a "
                   "minute)\n";
    // measure = true: this command is where a GPU's own measurement is made (and cached).
    Ceilings c = t->ceilings(g.hardware_dir, *refresh, /*measure=*/true);
    if (g.json) {
      std::cout << kb::json_text(to_json(c)) << "\n";
    } else {
      if (c.measured)
        print_measured_only(c);
      else
        print_datasheet_and_measured(c);
      print_launch_floor(c);
    }
    exit_code = kExitPass;
  });
}

}  // namespace kb::cli
