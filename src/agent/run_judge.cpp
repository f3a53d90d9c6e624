// The last stage of an agent run (agent/run_stages.h): the verdict, computed outside the sandbox by
// the same evaluator as `kbench eval`, from the fresh copy of the solution in solution/.
#include <fmt/format.h>

#include <fstream>

#include "agent/run_stages.h"
#include "core/gpu_lock.h"
#include "eval/evaluator.h"
#include "target/ceilings.h"
#include "verdict/reason.h"

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// eval.log: the evaluation's progress lines and its verdict table, each on disk as it comes.
class EvalLog {
 public:
  explicit EvalLog(const fs::path& p) : out_(p, std::ios::app) {}
  void line(const std::string& s) {
    out_ << s << "\n";
    out_.flush();
  }

 private:
  std::ofstream out_;
};

// How the run used its GPU's lock (core/gpu_lock.h's summary of the log), or only the lock's file
// when the log was never written.
GpuLockRecord gpu_lock_record(const fs::path& lock, const fs::path& log) {
  GpuLockRecord g{lock.string(), std::nullopt, std::nullopt, std::nullopt};
  const json summary = summarize_gpu_lock_log(log);
  if (summary.is_object()) {
    g.uses = summary["uses"].get<int>();
    g.wait_seconds = summary["wait_seconds"].get<double>();
    g.hold_seconds = summary["hold_seconds"].get<double>();
  }
  return g;
}

VerdictRecord verdict_record(const EvalResult& r) {
  VerdictRecord v{std::string(verdict_name(r.verdict())), std::string(reason_name(r.finding.reason)), r.finding.message,
                  r.peak_fraction_geomean, std::nullopt};
  if (r.annotation) v.annotation = r.annotation->verdict;  // docs/annotations.md
  return v;
}

}  // namespace

EvalResult judge(const Problem& p, const RunRequest& req, const RunPlan& plan, OpenRun& run, const AgentTurn& turn) {
  run.step = "judging the solution";
  run.save();
  say(req, "judging " + (run / "solution").string());
  EvalLog log(run / "eval.log");
  EvalOptions o;
  o.target = plan.target->name();
  o.check = true;
  o.bench = !req.check_only;
  o.work_dir = run / "eval";
  o.build_dir = kbench_cache_dir() / "build";
  o.expected_cache_dir = kbench_cache_dir() / "expected";  // never shown to the agent (run_preflight.cpp)
  o.hardware_dir = req.hardware_dir;
  o.isolate = req.sandbox;
  o.no_isolation_reason = "--no-sandbox was given";
  o.progress = [&](const std::string& s) {
    log.line(s);
    say(req, s);
  };
  std::unique_ptr<GpuLock> gpu_lock;
  if (!req.gpu_lock.empty()) {
    say(req, "waiting for the GPU lock " + req.gpu_lock.string());
    gpu_lock = std::make_unique<GpuLock>(req.gpu_lock, turn.gpu_lock_log, "official evaluation");
  }
  EvalResult r = evaluate(p, run / "solution", o);
  // `timing_unconfirmed` is no verdict: the machine was too loaded to tell tampering from load
  // (eval/timing_confirmation.h). The agent's run is the expensive part and its solution is on disk,
  // so the solution is judged again, at most kJudgeAgainWhenTooLoaded more times, before kbench
  // records that it could not judge it; the log says so.
  constexpr int kJudgeAgainWhenTooLoaded = 2;
  for (int again = 1; again <= kJudgeAgainWhenTooLoaded && r.finding.reason == Reason::timing_unconfirmed; ++again) {
    o.progress(fmt::format("judging again ({} of {} more): the machine was too loaded to confirm the timing "
                           "(timing_unconfirmed), which is no verdict",
                           again, kJudgeAgainWhenTooLoaded));
    r = evaluate(p, run / "solution", o);
  }
  if (gpu_lock) {
    gpu_lock.reset();  // released, and its use logged
    run.record.gpu_lock = gpu_lock_record(req.gpu_lock, turn.gpu_lock_log);
  }
  if (req.format_result) log.line(req.format_result(r));
  run.dir().write_json("result.json", to_json(r, true));
  run.record.verdict = verdict_record(r);
  run.record.status = turn.outcome.killed_at_budget ? run_status::killed_at_budget : run_status::complete;
  run.record.finished_at = iso_utc(std::chrono::system_clock::now());
  run.finish();
  return r;
}

}  // namespace kb
