// run_agent: the stages of agent/run_stages.h in order, and the run directory they share.
#include "agent/agent_run.h"

#include <fmt/format.h>

#include "agent/run_stages.h"
#include "core/version.h"

namespace kb {
namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

double seconds(milliseconds d) { return static_cast<double>(d.count()) / 1000.0; }

std::string signal_reason(const std::string& step) { return "kbench was stopped by a signal while " + step; }

AgentSandboxRecord sandbox_record(const RunRequest& req, const SandboxProbe& probe) {
  AgentSandboxRecord s;
  s.enabled = req.sandbox;
  if (req.sandbox) {
    s.version = probe.version;
    s.network = req.network;
  } else {
    s.reason = "--no-sandbox was given";
    s.available = probe.ok;
    if (!probe.ok) s.probe_error = probe.error;
  }
  return s;
}

}  // namespace

void say(const RunRequest& request, const std::string& line) {
  if (request.progress) request.progress(line);
}

OpenRun::OpenRun(RunDir dir, RunRecord initial, std::string first_step)
    : record(std::move(initial)),
      step(std::move(first_step)),
      dir_(std::move(dir)),
      guard_(dir_, to_json(incomplete_at_step())) {
  dir_.write_record(to_json(record));
}

RunRecord OpenRun::incomplete_at_step() const { return record.incomplete(signal_reason(step), std::chrono::system_clock::now()); }

void OpenRun::save() {
  dir_.write_record(to_json(record));
  guard_.update(to_json(incomplete_at_step()));
}

void OpenRun::finish_incomplete(const std::string& reason) {
  record = record.incomplete(reason, std::chrono::system_clock::now());
  dir_.write_record(to_json(record));
}

void OpenRun::finish() { dir_.write_record(to_json(record)); }

std::unique_ptr<OpenRun> open_run(const Problem& p, const RunRequest& req, const RunPlan& plan) {
  const auto started = std::chrono::system_clock::now();
  RunDir dir = req.run_name.empty()
                   ? RunDir::create(plan.runs_dir, RunKey{req.agent, req.model, p.name, req.trial}, started)
                   : RunDir::create_named(plan.runs_dir, req.run_name);
  say(req, "run directory " + dir.path().string());
  RunRecord r;
  r.id = dir.path().filename().string();
  r.status = run_status::running;
  r.agent = req.agent;
  r.model = req.model;
  r.effort = req.effort;
  r.problem = p.name;
  r.target = plan.target->name();
  r.device = plan.device;
  r.trial = req.trial;
  r.kbench_version = kbench_version();
  r.budget_seconds = seconds(req.limits.budget);
  // kbench's own loop is the one agent whose turns kbench counts.
  r.limits = limits_json(req.limits, req.agent == "kbench");
  r.grace_seconds = seconds(req.grace);
  r.check_only = req.check_only;
  r.started_at = iso_utc(started);
  r.process = process_identity();
  r.sweep = req.sweep_cell;
  r.sandbox = sandbox_record(req, plan.sandbox_probe);
  return std::make_unique<OpenRun>(std::move(dir), std::move(r), "preparing the workspace");
}

RunOutcome run_agent(const Problem& p, const RunRequest& req) {
  RunPlan plan = refuse_before_anything(p, req);
  const std::unique_ptr<OpenRun> run = open_run(p, req, plan);
  RunOutcome outcome;
  outcome.dir = run->dir().path();
  try {
    PreparedRun prepared = prepare_workspace_home(p, req, plan, *run);
    auto gw = start_gateway(req, plan, *run, prepared);
    const AgentTurn turn = agent_turn(req, plan, *run, prepared, std::move(gw));
    collect_work(plan, *run, prepared, turn);
    if (turn.outcome.interrupted) {
      // The agent was stopped early, its work is kept, but a verdict on a cut-short turn is none.
      outcome.interrupt_signal = turn.outcome.interrupt_signal;
      run->finish_incomplete(fmt::format("kbench got signal {} while the agent was running; the agent was stopped and its "
                                         "work kept, but not judged",
                                         turn.outcome.interrupt_signal));
      outcome.status = run_status::incomplete;
      return outcome;
    }
    outcome.result = judge(p, req, plan, *run, turn);
    outcome.status = run->record.status;
    return outcome;
  } catch (const std::exception& e) {
    run->finish_incomplete(std::string("kbench failed while ") + run->step + ": " + e.what());
    throw;
  }
}

}  // namespace kb
