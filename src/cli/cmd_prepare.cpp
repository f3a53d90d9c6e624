// `kbench prepare PROBLEM DIR`: an agent workspace, for running an agent by hand. `kbench run`
// makes the same workspace inside a run directory and runs the agent in a sandbox.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <optional>

#include "agent/budget.h"
#include "agent/run_limits.h"
#include "agent/workspace.h"
#include "cli/app.h"
#include "cli/deck_lookup.h"
#include "core/self_executable.h"
#include "target/target.h"

namespace kb::cli {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct PrepareCommand {
  std::string problem;
  fs::path dir;
  fs::path private_dir;
  std::string target = "auto";
  std::string budget;  // empty: as `kbench run` would give (the problem's level's, else 45m)
};

int run_prepare(PrepareCommand& c, GlobalOptions& g) {
  resolve_defaults(g);
  Problem p = find_problem(g, c.problem);
  std::unique_ptr<Target> target;
  std::optional<std::chrono::milliseconds> budget;
  try {
    target = make_target(c.target);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--target ") + c.target + ": " + e.what());
  }
  try {
    if (!c.budget.empty()) budget = parse_duration(c.budget);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--budget: ") + e.what());
  }
  const fs::path dir = fs::absolute(c.dir).lexically_normal();
  WorkspaceOptions o;
  o.dir = dir;
  // Next to the workspace, not in it: the agent works in DIR, and these files are kbench's.
  o.private_dir = c.private_dir.empty() ? fs::path(dir.string() + ".kbench") : fs::absolute(c.private_dir).lexically_normal();
  o.target = target->name();
  o.device = target->device_description();
  o.kbench_binary = self_executable();
  o.hardware_dir = g.hardware_dir;
  // The prompt states the budget `kbench run` would give this problem (agent/run_limits.h).
  o.budget = resolve_run_limits(p, budget, std::nullopt).budget;
  Workspace w;
  try {
    w = prepare_workspace(p, o);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  } catch (const fs::filesystem_error& e) {
    // DIR (or --private-dir) under a file, unwritable, on a full disk: the request's path, not kbench.
    throw UsageError(fmt::format("cannot make the workspace at {}: {} ({})", e.path1().string(), e.code().message(),
                                 e.path1() == dir ? "DIR" : "its private folder, --private-dir"));
  }
  if (g.json) {
    json files = json::array();
    for (const auto& e : fs::directory_iterator(w.dir)) files.push_back(e.path().filename().string());
    std::sort(files.begin(), files.end());
    std::cout << json{{"workspace", w.dir.string()}, {"private_dir", w.private_dir.string()}, {"prompt", w.prompt_file.string()},
                      {"target", o.target}, {"device", o.device}, {"files", files}, {"notes", w.notes}}
                     .dump(2)
              << "\n";
    return kExitPass;
  }
  std::cout << fmt::format("workspace  {}\n  prompt.md        the task ({} target, {})\n  README.md        the interface\n"
                           "  {}     the starter solution (fails until implemented)\n{}"
                           "  include/         the interface headers (kbench/solution.h, dlpack/dlpack.h)\n"
                           "  ./kbench         `./kbench check` and `./kbench bench` on this folder\n"
                           "private    {} (kbench's copy of the problem; the agent does not need it)\n",
                           w.dir.string(), o.target, o.device, o.target == "cuda" ? "solution.cu " : "solution.cpp",
                           w.python ? "  starter.py       the Python starter (renamed solution.py, it replaces the C++ one)\n" : "",
                           w.private_dir.string());
  for (const auto& n : w.notes) std::cout << "note: " << n << "\n";
  std::cout << "This workspace is not sandboxed: `kbench run` runs an agent in a sandbox with a budget (docs/agent-runs.md).\n";
  return kExitPass;
}

}  // namespace

void register_prepare_command(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto c = std::make_shared<PrepareCommand>();
  auto* cmd = app.add_subcommand("prepare", "Make an agent workspace: prompt, interface, starter solution, ./kbench check|bench");
  add_global_options(*cmd, g);
  cmd->add_option("PROBLEM", c->problem, "Problem name (see `kbench list`) or folder")->required();
  cmd->add_option("DIR", c->dir, "The workspace folder to create (absent or empty)")->required();
  cmd->add_option("--target", c->target, "host, cuda or auto (cuda when a GPU is present)")->capture_default_str();
  cmd->add_option("--budget", c->budget,
                  "The time the prompt tells the agent it has (45m, 90s, 1h30m; default: as kbench run gives the problem)");
  cmd->add_option("--private-dir", c->private_dir, "Where kbench's copy of the problem goes (default: DIR.kbench)");
  cmd->callback([c, &g, &exit_code] { exit_code = run_prepare(*c, g); });
}

}  // namespace kb::cli
