// `kbench run`: one agent, one problem, one trial -- sandboxed, on a budget, judged; the run
// directory keeps everything (docs/agent-runs.md).
#include <fmt/format.h>

#include <iostream>
#include <optional>
#include <sstream>

#include "agent/agent_run.h"
#include "agent/budget.h"
#include "agent/run_limits.h"
#include "cli/app.h"
#include "cli/deck_lookup.h"
#include "cli/option_checks.h"
#include "cli/report.h"
#include "core/json_text.h"
#include "store/run_dir.h"

namespace kb::cli {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct RunCommand {
  std::string problem;
  std::string budget;               // empty: the problem's level's, else kbench's (agent/run_limits.h)
  std::optional<int> max_turns;     // unset: likewise
  std::string grace = "10s";
  bool no_sandbox = false;
  bool no_network = false;
  std::string sweep_cell;
  RunRequest request;
};

std::string clock_text(std::chrono::milliseconds d) {
  const int64_t s = d.count() / 1000;
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{}:{:02}", s / 60, s % 60);
}

int run_run(RunCommand& c, GlobalOptions& g) {
  resolve_defaults(g);
  Problem p = find_problem(g, c.problem);
  RunRequest& r = c.request;
  std::optional<std::chrono::milliseconds> budget;
  try {
    if (!c.budget.empty()) budget = parse_duration(c.budget);
    r.grace = parse_duration(c.grace);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--budget/--grace: ") + e.what());
  }
  // What the user gave wins; the rest comes from the problem's level, else kbench's defaults.
  r.limits = resolve_run_limits(p, budget, c.max_turns);
  if (std::error_code ec; fs::create_directories(r.runs_dir, ec), ec)
    throw UsageError(fmt::format("--runs-dir {}: cannot create the folder: {}", r.runs_dir.string(), ec.message()));
  if (!c.sweep_cell.empty()) {
    r.sweep_cell = json::parse(c.sweep_cell, nullptr, false);
    if (r.sweep_cell.is_discarded() || !r.sweep_cell.is_object()) throw UsageError("--sweep-cell: expected a JSON object");
  }
  r.sandbox = !c.no_sandbox;
  r.network = !c.no_network;
  r.hardware_dir = g.hardware_dir;
  const bool tty = stderr_is_terminal();
  bool ticking = false;  // a \r status line is on the terminal and needs a newline before the next line
  r.progress = [&](const std::string& s) {
    if (ticking) std::cerr << "\n";
    ticking = false;
    std::cerr << (tty ? "\033[2m" : "") << s << (tty ? "\033[0m" : "") << "\n";
  };
  if (tty)
    r.tick = [&, budget = r.limits.budget](std::chrono::milliseconds used) {
      std::cerr << "\r\033[2magent running " << clock_text(used) << " / " << clock_text(budget) << "\033[0m\033[K" << std::flush;
      ticking = true;
    };
  r.format_result = [](const EvalResult& e) {
    std::ostringstream s;
    print_result(s, e, false);
    return s.str();
  };
  RunOutcome o;
  try {
    o = run_agent(p, r);
  } catch (const RunSetupError& e) {
    throw UsageError(e.what());
  }
  if (g.json) {
    json j = {{"run_dir", o.dir.string()}, {"status", o.status}};
    if (o.result) j["result"] = to_json(*o.result, false);
    std::cout << kb::json_text(j) << "\n";
  } else {
    if (o.result) print_result(std::cout, *o.result, stdout_is_terminal());
    std::cout << fmt::format("  run     {}  ({})\n", o.dir.string(), o.status);
  }
  if (o.interrupt_signal) return 128 + o.interrupt_signal;
  if (!o.result) return kExitInternal;
  return reason_row(o.result->finding.reason).exit_code;
}

}  // namespace

void register_run_command(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto c = std::make_shared<RunCommand>();
  RunRequest& r = c->request;
  auto* cmd = app.add_subcommand("run", "Run a coding agent on a problem in a sandbox, on a budget, and judge what it leaves");
  add_global_options(*cmd, g);
  cmd->add_option("--agent", r.agent,
                  "The agent: claude-code, codex, opencode, gemini, kimi (the CLIs), kbench (kbench's own loop) or generic "
                  "(any command, see --command)")
      ->required();
  cmd->add_option("--model", r.model, "The model the agent uses (recorded; {model} in --command)")->required();
  cmd->add_option("--problem", c->problem, "Problem name (see `kbench list`) or folder")->required();
  cmd->add_option("--target", r.target, "host, cuda or auto (cuda when a GPU is present)")->capture_default_str();
  cmd->add_option("--budget", c->budget,
                  "Wall-clock time the agent has: 45m, 90s, 1h30m (default: the problem's KernelBench v3 level's, "
                  "15m/30m/45m/45m for levels 1-4, else 45m)");
  cmd->add_option("--grace", c->grace, "After the budget, time between SIGTERM and SIGKILL")->capture_default_str();
  cmd->add_option("--trial", r.trial, "Trial number (part of the run directory's name)")
      ->check(whole_in(0, 1000000, "(a trial number)"))
      ->capture_default_str();
  cmd->add_option("--runs-dir", r.runs_dir, "Where run directories go")->capture_default_str();
  cmd->add_option("--effort", r.effort, "Reasoning effort passed to the agent (recorded)");
  cmd->add_option("--command", r.adapter_options.command,
                  "generic agent: shell command run in the workspace; may use {prompt_file}, {workspace}, {model}");
  cmd->add_option("--agent-bin", r.adapter_options.agent_bin,
                  "The agent CLI to run (default: the one scripts/setup --agents installed, else PATH's)");
  cmd->add_option("--max-turns", c->max_turns,
                  "kbench agent: model calls it may make (default: the problem's KernelBench v3 level's, 10/12/15/15 "
                  "for levels 1-4, else 100)")
      ->check(whole_in(1, 100000, "model calls"));
  cmd->add_option("--ro-bind", r.adapter_options.read_only,
                  "Extra absolute path the agent's command needs, bound read-only into the sandbox (repeatable)");
  cmd->add_flag("--no-sandbox", c->no_sandbox, "Run the agent without the bubblewrap sandbox (recorded in run.json)");
  cmd->add_flag("--no-network", c->no_network, "Give the sandbox no network (loopback only)");
  cmd->add_option("--gateway", r.gateway,
                  "Put the model gateway between the agent and its model: replay:FILE (a script, no network) or forward:URL");
  cmd->add_option("--gateway-prices", r.gateway_prices,
                  "Price table for the gateway's cost figures (TOML; default: $KBENCH_PRICES or prices/models.toml)");
  cmd->add_option("--gateway-max-tokens", r.gateway_max_tokens, "Token budget the gateway enforces (HTTP 429 beyond it)")
      ->check(whole_in(1, 1000000000000, "tokens"));
  cmd->add_option("--gateway-max-cost", r.gateway_max_cost_usd, "Dollar budget the gateway enforces (HTTP 429 beyond it)")
      ->check(number_in(0.000001, 1000000, "USD"));
  cmd->add_option("--gateway-key-env", r.gateway_key_env, "forward: environment variable holding the upstream API key");
  cmd->add_option("--gateway-provider", r.gateway_provider_order,
                  "forward to OpenRouter: pin this upstream provider, no fallbacks (repeatable: in order)");
  cmd->add_flag("--check-only", r.check_only, "Judge correctness only, without timing (no peak_fraction)");
  // Set by `kbench sweep` for each cell it runs (docs/sweeps.md).
  cmd->add_option("--run-name", r.run_name, "The run directory's exact name")->group("Set by kbench sweep");
  cmd->add_option("--sweep-cell", c->sweep_cell, "JSON kept as run.json's \"sweep\"")->group("Set by kbench sweep");
  cmd->add_option("--gpu-lock", r.gpu_lock, "The GPU's lock file (agents sharing a GPU)")->group("Set by kbench sweep");
  cmd->callback([c, &g, &exit_code] { exit_code = run_run(*c, g); });
}

}  // namespace kb::cli
