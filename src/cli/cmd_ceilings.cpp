// `kbench ceilings`: the peaks this machine is scored against.
#include <fmt/format.h>

#include <iostream>

#include "cli/app.h"
#include "target/target.h"

namespace kb::cli {

namespace {

void print_ceilings(const Ceilings& c) {
  std::cout << fmt::format("{} ({}, {})\n", c.name, c.id, c.measured ? "measured on this machine" : "datasheet");
  for (const auto& [k, v] : c.compute)
    std::cout << fmt::format("  {:<9} {:>10.2f} TFLOP/s   {}\n", k, v.value / 1e12, v.source);
  for (const auto& [k, v] : c.memory)
    std::cout << fmt::format("  {:<9} {:>10.2f} GB/s      {}\n", k, v.value / 1e9, v.source);
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
    Ceilings c = t->ceilings(g.hardware_dir, *refresh);
    if (g.json)
      std::cout << to_json(c).dump(2) << "\n";
    else
      print_ceilings(c);
    exit_code = kExitPass;
  });
}

}  // namespace kb::cli
