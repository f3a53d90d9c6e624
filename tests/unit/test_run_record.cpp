// run.json's record (agent/run_record.h): to_json writes exactly the schema the results store, the
// site and docs/agent-runs.md read -- the keys, the number types, null effort, and every field a
// run has not reached left out -- for a judged run and for one stopped before its verdict.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/run_record.h"
#include "store/run_dir.h"

using json = nlohmann::json;
using namespace kb;

namespace {

// The record of a run as open_run() starts it.
RunRecord started_record() {
  RunRecord r;
  r.id = "20261121T170102Z_generic_m-1_softmax_1";
  r.status = run_status::running;
  r.agent = "generic";
  r.model = "m-1";
  r.problem = "softmax";
  r.target = "host";
  r.device = "Some CPU";
  r.trial = 1;
  r.kbench_version = "0.1.0";
  r.budget_seconds = 60;
  r.grace_seconds = 2.5;
  r.started_at = "2026-11-21T17:01:02Z";
  r.process = {{"hostname", "h"}, {"pid", 42}, {"pid_start", 7}};
  r.sandbox.enabled = false;
  r.sandbox.reason = "--no-sandbox was given";
  r.sandbox.available = false;
  r.sandbox.probe_error = "bwrap: no user namespaces";
  return r;
}

// Dumps are compared, not JSON values: a value compares equal to one of another number type
// (60 == 60.0), while the readers of run.json see the difference.
std::string dump(const json& j) { return j.dump(); }

}  // namespace

TEST(RunRecord, JudgedRunWritesEveryFieldOfTheSchema) {
  RunRecord r = started_record();
  r.effort = "high";
  r.check_only = true;
  r.sweep = {{"id", "s1"}, {"entrant", "e"}, {"ordinal", 3}, {"attempt", 1}};
  r.sandbox = AgentSandboxRecord{};
  r.sandbox.enabled = true;
  r.sandbox.version = "bubblewrap 0.8.0";
  r.sandbox.network = false;
  r.sandbox.read_only = std::vector<std::string>{"/opt/agent"};
  r.sandbox.gpu_devices = std::vector<std::string>{};
  r.gateway = GatewayRecord{"replay", "/s/script.json", "http://127.0.0.1:4242", "gateway.jsonl",
                            GatewayUsageRecord{2, 0, 126, 0.5, false}, std::nullopt};
  r.gpu_lock = GpuLockRecord{"/locks/gpu0.lock", 2, 0.25, 1.5};
  r.agent_command = "sh agent.sh";
  r.agent_version = "agent 1.2.3";
  r.agent_env = std::vector<std::string>{"ANTHROPIC_API_KEY", "KBENCH_GATEWAY_URL"};
  r.workspace = "/runs/x/workspace";
  r.home = "/runs/x/home";
  r.agent_started_at = "2026-11-21T17:01:03Z";
  r.agent_finished_at = "2026-11-21T17:02:03Z";
  r.agent_process = AgentProcessRecord{0, 0, 60.0, true, 3, 1, 2, 0, std::nullopt};
  Usage u;
  u.input_tokens = 10;
  u.output_tokens = 4;
  r.transcript = TranscriptRecord{5, u};
  r.solution_limits = SolutionLimits{};
  r.solution_files = std::vector<std::string>{"solution.cpp"};
  r.solution_notes = {"link.cpp: a symlink, not taken"};
  r.verdict = VerdictRecord{"pass", "none", "", 0.75, std::string("clean")};
  r.status = run_status::killed_at_budget;
  r.finished_at = "2026-11-21T17:03:00Z";

  const json expected = json::parse(R"({
    "schema": "kbench.run/1", "id": "20261121T170102Z_generic_m-1_softmax_1", "status": "killed_at_budget",
    "agent": "generic", "model": "m-1", "effort": "high", "problem": "softmax", "target": "host", "device": "Some CPU",
    "trial": 1, "kbench_version": "0.1.0", "budget_seconds": 60.0, "grace_seconds": 2.5, "check_only": true,
    "started_at": "2026-11-21T17:01:02Z", "process": {"hostname": "h", "pid": 42, "pid_start": 7},
    "sweep": {"id": "s1", "entrant": "e", "ordinal": 3, "attempt": 1},
    "sandbox": {"enabled": true, "tool": "bwrap", "version": "bubblewrap 0.8.0", "network": false,
                "read_only": ["/opt/agent"], "gpu_devices": []},
    "gateway": {"mode": "replay", "source": "/s/script.json", "url": "http://127.0.0.1:4242", "log": "gateway.jsonl",
                "usage": {"exchanges": 2, "errors": 0, "total_tokens": 126, "cost_usd": 0.5, "cost_complete": false}},
    "gpu_lock": {"file": "/locks/gpu0.lock", "uses": 2, "wait_seconds": 0.25, "hold_seconds": 1.5},
    "agent_command": "sh agent.sh", "agent_version": "agent 1.2.3",
    "agent_env": ["ANTHROPIC_API_KEY", "KBENCH_GATEWAY_URL"],
    "workspace": "/runs/x/workspace", "home": "/runs/x/home",
    "agent_started_at": "2026-11-21T17:01:03Z", "agent_finished_at": "2026-11-21T17:02:03Z",
    "agent_process": {"exit_code": 0, "signal": 0, "seconds": 60.0, "killed_at_budget": true, "sigterm_sent": 3,
                      "sigkill_sent": 1, "strays_after_exit": 2, "survivors": 0},
    "transcript": {"events": 5, "usage": {"input_tokens": 10, "output_tokens": 4}},
    "solution_limits": {"max_file_bytes": 4194304, "max_total_bytes": 16777216, "max_hole_bytes": 65536,
                        "regular_files_only": true},
    "solution_files": ["solution.cpp"], "solution_notes": ["link.cpp: a symlink, not taken"],
    "verdict": {"verdict": "pass", "failure": "none", "message": "", "peak_fraction": 0.75, "annotation": "clean"},
    "finished_at": "2026-11-21T17:03:00Z"
  })");
  EXPECT_EQ(dump(to_json(r)), dump(expected));
}

TEST(RunRecord, RunStoppedBeforeItsVerdictIsIncompleteWithItsReasonAndNothingItDidNotReach) {
  RunRecord r = started_record();
  r.agent_process = AgentProcessRecord{127, 0, 0.5, false, 0, 0, 0, 0, std::string("the agent's command could not be run")};
  r.transcript_error = "bad line";
  r.archive_error = "tar failed (exit code 2): ; the workspace folder is kept";
  r.gateway = GatewayRecord{"forward", "https://api.example.com", "http://127.0.0.1:4242", "gateway.jsonl", std::nullopt,
                            std::string("gateway log: cannot be read")};
  r.gpu_lock = GpuLockRecord{"/locks/gpu0.lock", std::nullopt, std::nullopt, std::nullopt};
  const auto when = std::chrono::system_clock::from_time_t(1700000000);  // 2023-11-14 22:13:20 UTC
  const RunRecord stopped = r.incomplete("kbench was stopped by a signal while judging the solution", when);
  EXPECT_EQ(r.status, run_status::running) << "the record it was made from is unchanged";

  const json expected = json::parse(R"({
    "schema": "kbench.run/1", "id": "20261121T170102Z_generic_m-1_softmax_1", "status": "incomplete",
    "agent": "generic", "model": "m-1", "effort": null, "problem": "softmax", "target": "host", "device": "Some CPU",
    "trial": 1, "kbench_version": "0.1.0", "budget_seconds": 60.0, "grace_seconds": 2.5, "check_only": false,
    "started_at": "2026-11-21T17:01:02Z", "process": {"hostname": "h", "pid": 42, "pid_start": 7},
    "sandbox": {"enabled": false, "reason": "--no-sandbox was given", "available": false,
                "probe_error": "bwrap: no user namespaces"},
    "gateway": {"mode": "forward", "source": "https://api.example.com", "url": "http://127.0.0.1:4242",
                "log": "gateway.jsonl", "usage_error": "gateway log: cannot be read"},
    "gpu_lock": {"file": "/locks/gpu0.lock"},
    "agent_process": {"exit_code": 127, "signal": 0, "seconds": 0.5, "killed_at_budget": false, "sigterm_sent": 0,
                      "sigkill_sent": 0, "strays_after_exit": 0, "survivors": 0,
                      "start_failure": "the agent's command could not be run"},
    "transcript_error": "bad line",
    "archive_error": "tar failed (exit code 2): ; the workspace folder is kept",
    "incomplete_reason": "kbench was stopped by a signal while judging the solution",
    "finished_at": "2023-11-14T22:13:20Z"
  })");
  const json j = to_json(stopped);
  EXPECT_EQ(dump(j), dump(expected));
  EXPECT_EQ(effective_status(j), run_status::incomplete);
}

TEST(RunRecord, RunningRecordHasOnlyWhatIsKnownWhenTheDirectoryIsMade) {
  const json j = to_json(started_record());
  EXPECT_EQ(j["status"], run_status::running);
  EXPECT_TRUE(j["effort"].is_null()) << "effort is null, not absent, when the agent's default is used";
  for (const char* absent : {"sweep", "gateway", "gpu_lock", "agent_env", "agent_process", "transcript", "solution_files",
                             "solution_notes", "verdict", "finished_at", "incomplete_reason"})
    EXPECT_FALSE(j.contains(absent)) << absent << " in " << j.dump();
}
