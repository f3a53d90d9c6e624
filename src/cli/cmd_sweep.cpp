// `kbench sweep SWEEP.toml`: entrants x problems x trials, each cell one `kbench run`, on local
// GPUs or on Slurm, resumable, into the results database. `kbench sweep status [DB]`: where a
// sweep stands, from the database (docs/sweeps.md).
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <iostream>

#include "cli/app.h"
#include "cli/option_checks.h"
#include "cli/sweep_commands.h"
#include "core/self_executable.h"
#include "deck/level.h"
#include "deck/problem.h"
#include "store/results_db.h"
#include "sweep/cells.h"
#include "sweep/local_executor.h"
#include "sweep/progress.h"
#include "sweep/slurm_executor.h"
#include "sweep/sweep_runner.h"
#include "sweep/sweep_spec.h"
#include "sweep/sweep_status.h"
#include "target/target.h"

namespace kb::cli {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::atomic<int> g_stop{0};
extern "C" void on_stop_signal(int sig) { g_stop.store(sig); }

struct SweepCommand {
  fs::path file;
  SweepOverrides o;
  std::string gpus;
  bool dry_run = false;
  bool json_events = false;
};

std::vector<int> parse_gpus(const std::string& text) {
  std::vector<int> out;
  size_t p = 0;
  while (p <= text.size() && !text.empty()) {
    const size_t q = std::min(text.find(',', p), text.size());
    const std::string item = text.substr(p, q - p);
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end || v < 0) throw UsageError("--gpus '" + text + "': expected GPU indices such as 0,1,3");
    out.push_back(static_cast<int>(v));
    p = q + 1;
  }
  return out;
}

// Seconds one cell may take: the budget, its grace, and judging. The judging share is an
// assumption (the real figures show in `kbench sweep status` once cells finish): a check-only
// evaluation takes about a minute, a full one with timing up to ten on the large problems.
double cell_seconds(const SweepSpec& s) {
  return (static_cast<double>(longest_cell_budget(s).count()) + static_cast<double>(s.grace.count())) / 1000.0 +
         (s.check_only ? 60 : 600);
}

int dry_run(const SweepSpec& s, const std::vector<Cell>& cells, int slots, const std::string& target_name, bool as_json) {
  const double per = cell_seconds(s);
  const int waves = static_cast<int>(std::ceil(static_cast<double>(cells.size()) / std::max(1, slots)));
  const double wall = waves * per;
  const double gpu_hours = target_name == "cuda" ? cells.size() * per / 3600.0 / std::max(1, s.agents_per_gpu) : 0.0;
  if (as_json) {
    json jc = json::array();
    for (const auto& c : cells) jc.push_back({{"ordinal", c.ordinal}, {"entrant", c.entrant}, {"problem", c.problem}, {"trial", c.trial}});
    std::cout << json{{"sweep", s.name},
                      {"spec", sweep_to_json(s)},
                      {"cells", jc},
                      {"slots", slots},
                      {"cell_seconds_max", per},
                      {"wall_seconds_max", wall},
                      {"gpu_hours_max", gpu_hours},
                      {"db", s.db.string()},
                      {"runs_dir", s.runs_dir.string()}}
                     .dump(2)
              << "\n";
    return kExitPass;
  }
  std::cout << fmt::format("sweep {}: {} entrants x {} problems x {} trials = {} cells\n", s.name, s.entrants.size(),
                           s.problems.size(), s.trials, cells.size());
  for (const auto& c : cells) std::cout << fmt::format("  {:>4}  {}  {}  trial {}\n", c.ordinal, c.entrant, c.problem, c.trial);
  const std::string budget = duration_text(static_cast<double>(longest_cell_budget(s).count()) / 1000);
  std::cout << fmt::format("target {}, executor {}, {} at a time; budget {}, {}\n", target_name, s.executor, slots,
                           s.budget_given || s.problem_levels.empty() ? budget : "by level, up to " + budget,
                           s.check_only ? "check only" : "full evaluation");
  std::cout << fmt::format("estimate (each cell at most its budget + grace + {} judging): wall time up to {}", 
                           s.check_only ? "1 min" : "10 min", duration_text(wall));
  if (target_name == "cuda") std::cout << fmt::format(", {:.1f} GPU hours", gpu_hours);
  std::cout << fmt::format("\nresults into {} (runs in {})\n", s.db.string(), s.runs_dir.string());
  return kExitPass;
}

int run_sweep_command(SweepCommand& c, GlobalOptions& g) {
  resolve_defaults(g);
  if (!c.gpus.empty()) c.o.gpus = parse_gpus(c.gpus);
  std::vector<Problem> deck;
  try {
    deck = load_deck(g.problems_dir);
  } catch (const SpecError& e) {
    throw UsageError(e.what());
  }
  SweepSpec s;
  try {
    s = load_sweep(c.file, c.o, deck);
    check_sweep_runnable(s, deck);
  } catch (const SweepError& e) {
    throw UsageError(e.what());
  }
  const std::string target_name = make_target(s.target)->name();
  std::unique_ptr<Executor> ex;
  if (s.executor == "slurm") {
    try {
      ex = make_slurm_executor(s);
    } catch (const SweepError& e) {
      throw UsageError(e.what());
    }
  } else {
    LocalSlots slots;
    if (target_name == "cuda") {
      slots.gpus = visible_gpus(s.gpus);
      if (slots.gpus.empty()) throw UsageError("the cuda target needs a GPU and none is visible (--gpus, CUDA_VISIBLE_DEVICES)");
      slots.per_gpu = s.agents_per_gpu;
      slots.lock_dir = s.runs_dir / "_locks";
    } else {
      slots.host_concurrency = std::max(1, s.concurrency);
    }
    ex = std::make_unique<LocalExecutor>(slots);
  }
  const std::vector<Cell> cells = plan_cells(s);
  if (c.dry_run) return dry_run(s, cells, std::max(1, ex->free_slots()), target_name, g.json);

  sql::Database db = [&] {
    try {
      return open_results_db(s.db, DbAccess::create);
    } catch (const ResultsDbError& e) {
      throw UsageError(e.what());
    }
  }();
  std::error_code ec;
  fs::create_directories(s.runs_dir, ec);
  if (ec || ::access(s.runs_dir.c_str(), W_OK) != 0)
    throw UsageError(fmt::format("runs folder {}: cannot be written{}", s.runs_dir.string(), ec ? ": " + ec.message() : ""));

  const SweepProgress::Mode mode = c.json_events ? SweepProgress::Mode::json
                                   : stderr_is_terminal() ? SweepProgress::Mode::live
                                                          : SweepProgress::Mode::lines;
  SweepProgress progress(mode, db, s.name, std::cout, std::cerr);
  SweepRunOptions o;
  o.kbench_binary = self_executable();
  o.problems_dir = fs::absolute(g.problems_dir);
  o.hardware_dir = fs::absolute(g.hardware_dir);
  o.on_event = [&](const SweepEvent& e) { progress.event(e); };
  o.on_tick = [&] { progress.tick(); };
  o.stop = &g_stop;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
  SweepOutcome out;
  try {
    out = run_sweep(s, db, *ex, o);
  } catch (const SweepError& e) {
    throw UsageError(e.what());
  }
  progress.done();
  if (mode != SweepProgress::Mode::json)
    std::cout << fmt::format("results: kbench results {} --sweep {}\n", s.db.string(), s.name);
  if (out.stopped_by) return 128 + out.stopped_by;
  return out.failed > 0 || out.queued > 0 ? kExitFail : kExitPass;
}

struct StatusCommand {
  fs::path db;
  std::string sweep;
};

int run_status(const StatusCommand& c, const GlobalOptions& g) {
  const fs::path file = c.db.empty() ? default_results_db() : c.db;
  sql::Database db = [&] {
    try {
      return open_results_db(file, DbAccess::read_only);
    } catch (const ResultsDbError& e) {
      throw UsageError(e.what());
    }
  }();
  std::vector<std::string> ids = c.sweep.empty() ? sweep_ids(db) : std::vector<std::string>{c.sweep};
  if (ids.empty()) {
    std::cout << (g.json ? "[]\n" : file.string() + ": no sweeps\n");
    return kExitPass;
  }
  json all = json::array();
  for (const auto& id : ids) {
    SweepStatus st;
    try {
      st = read_sweep_status(db, id);
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
    if (g.json) all.push_back(sweep_status_json(st));
    else std::cout << sweep_status_text(st) << (ids.size() > 1 ? "\n" : "");
  }
  if (g.json) std::cout << all.dump(2) << "\n";
  return kExitPass;
}

}  // namespace

void register_sweep_commands(CLI::App& app, GlobalOptions& g, int& exit_code) {
  auto c = std::make_shared<SweepCommand>();
  auto* cmd = app.add_subcommand("sweep", "Run entrants x problems x trials (resumable) into the results database");
  add_global_options(*cmd, g);
  cmd->add_option("sweep_file", c->file, "The sweep file (docs/sweeps.md); optional with --agents/--models/--problems");
  cmd->add_option("--name", c->o.name, "The sweep's name (default: the file's name); the same name resumes it");
  cmd->add_option("--agents", c->o.agents, "Agents (with --models: every agent x model is an entrant)")->delimiter(',');
  cmd->add_option("--models", c->o.models, "Models")->delimiter(',');
  cmd->add_option("--problem", c->o.problems, "Problem names (repeatable or comma-separated), or all (--problems is the deck folder)")->delimiter(',');
  cmd->add_option("--deck", c->o.decks, "Every problem of this deck, e.g. hard (repeatable or comma-separated)")
      ->delimiter(',');
  cmd->add_option("--level", c->o.levels, "Every problem of this KernelBench v3 level, 1-4 (repeatable or comma-separated)")
      ->delimiter(',')
      ->check(whole_in(kMinLevel, kMaxLevel, "(KernelBench v3's level)"));
  cmd->add_option("--trials", c->o.trials, "Trials per entrant and problem")->check(whole_in(1, 10000, "trials"));
  cmd->add_option("--budget", c->o.budget, "Each run's wall-clock budget: 45m, 90s, 1h30m");
  cmd->add_option("--target", c->o.target, "host, cuda or auto");
  cmd->add_option("--executor", c->o.executor, "local or slurm");
  cmd->add_option("--gpus", c->gpus, "local, cuda: GPU indices to use (default: every visible GPU), e.g. 0,1");
  cmd->add_option("--agents-per-gpu", c->o.agents_per_gpu, "local, cuda: cells sharing one GPU (default 1)")->check(whole_in(1, 10000, "cells"));
  cmd->add_option("--concurrency", c->o.concurrency, "local, host target: cells at once (default 1)")->check(whole_in(1, 10000, "cells"));
  cmd->add_option("--db", c->o.db, "Results database (default: results/kbench.db)");
  cmd->add_option("--runs-dir", c->o.runs_dir, "Where run directories go (default: runs/ beside the database)");
  cmd->add_flag("--check-only", c->o.check_only, "Judge correctness only, without timing");
  cmd->add_flag("--no-sandbox", c->o.no_sandbox, "Run the agents without the sandbox (recorded)");
  cmd->add_flag("--dry-run", c->dry_run, "Print the cells and an estimate of wall time and GPU hours; run nothing");
  cmd->add_flag("--json-events", c->json_events, "One JSON object per event on stdout");

  auto st = std::make_shared<StatusCommand>();
  auto* status = cmd->add_subcommand("status", "Where the sweeps of a results database stand (also while one runs)");
  add_global_options(*status, g);
  status->add_option("db", st->db, "Results database (default: results/kbench.db)");
  status->add_option("--sweep", st->sweep, "Only this sweep");
  status->callback([st, &g, &exit_code] { exit_code = run_status(*st, g); });
  cmd->callback([c, cmd, &g, &exit_code] {
    if (cmd->got_subcommand("status")) return;
    if (c->file.empty() && c->o.agents.empty())
      throw UsageError("give a sweep file, or --agents, --models and --problems (kbench sweep --help)");
    exit_code = run_sweep_command(*c, g);
  });
}

}  // namespace kb::cli
