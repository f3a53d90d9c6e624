// `kbench run` end to end, with scripted fake agents (tests/fixtures/): a run that solves the
// problem, a run that never ends and is stopped at its budget, and a machine without a usable
// sandbox.
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "agent/sandbox.h"
#include "agent/transcript.h"
#include "target/ceilings.h"
#include "target/python_solution.h"
#include "agent_test_util.h"
#include "core/subprocess.h"
#include "store/run_index.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace kb;

namespace {

const fs::path kSource = KBENCH_SOURCE_DIR;

CommandResult kbench(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
  args.insert(args.begin(), KBENCH_BINARY);
  if (!env.empty()) {
    args.insert(args.begin(), env.begin(), env.end());
    args.insert(args.begin(), "env");
  }
  return run_command(args, std::chrono::minutes(5));
}

// What the fake agent "knows": its script and a known-good solution, in one folder that the run
// binds read-only into the sandbox (the source tree itself is not visible there).
fs::path make_kit(const fs::path& root, const std::string& script) {
  const fs::path kit = root / "kit";
  fs::create_directories(kit);
  fs::copy_file(kSource / "tests/fixtures" / script, kit / script);
  fs::copy_file(kSource / "problems/softmax/solutions/host-naive/solution.cpp", kit / "solution.cpp");
  return kit;
}

fs::path only_run(const fs::path& runs) {
  const std::vector<fs::path> dirs = kbtest::run_dirs(runs);
  EXPECT_EQ(dirs.size(), 1u);
  return dirs.empty() ? fs::path() : dirs[0];
}

json read_json(const fs::path& p) { return json::parse(kbtest::slurp(p)); }

bool sandbox_ok() { return probe_sandbox().ok; }

}  // namespace

TEST(Run, FakeAgentSolvesTheProblemInTheSandbox) {
  if (!sandbox_ok()) GTEST_SKIP() << probe_sandbox().error;
  const fs::path root = kbtest::scratch("run-solve");
  const fs::path kit = make_kit(root, "fake-agent-solve.sh");
  auto r = kbench({"run", "--agent", "generic", "--model", "scripted", "--problem", "softmax", "--target", "host", "--budget",
                   "3m", "--runs-dir", (root / "runs").string(), "--ro-bind", kit.string(), "--command",
                   "sh " + (kit / "fake-agent-solve.sh").string() + " " + kit.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path run = only_run(root / "runs");
  EXPECT_NE(run.filename().string().find("_generic_scripted_softmax_1"), std::string::npos) << run;

  const json rec = read_json(run / "run.json");
  EXPECT_EQ(rec["status"], "complete");
  EXPECT_EQ(rec["schema"], "kbench.run/1");
  EXPECT_EQ(rec["sandbox"]["enabled"], true);
  EXPECT_EQ(rec["agent_process"]["exit_code"], 0);
  EXPECT_EQ(rec["verdict"]["verdict"], "pass");
  EXPECT_TRUE(rec["verdict"].contains("peak_fraction")) << "the full evaluation (with timing) ran";

  // The transcript: the agent's own ./kbench check passed inside the sandbox.
  const std::string out = kbtest::slurp(run / "transcript/stdout.log");
  EXPECT_NE(out.find("fake agent: the prompt has"), std::string::npos) << out;
  EXPECT_NE(out.find("verdict PASS"), std::string::npos) << out;
  EXPECT_NE(out.find("fake agent: check passed, done"), std::string::npos) << out;
  const auto events = read_events_jsonl(run / "transcript/events.jsonl");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].kind, EventKind::assistant_text);

  // The solution, the prompt, the archive and the verdict judged outside.
  EXPECT_EQ(kbtest::slurp(run / "solution/solution.cpp"), kbtest::slurp(kit / "solution.cpp"));
  EXPECT_NE(kbtest::slurp(run / "prompt.md").find("./kbench check"), std::string::npos);
  auto tar = run_command({"tar", "-tzf", (run / "workspace.tar.gz").string()}, std::chrono::minutes(1));
  EXPECT_EQ(tar.exit_code, 0) << tar.output;
  EXPECT_NE(tar.output.find("workspace/solution.cpp"), std::string::npos) << tar.output;
  EXPECT_NE(tar.output.find("workspace/prompt.md"), std::string::npos) << tar.output;
  const json result = read_json(run / "result.json");
  EXPECT_EQ(result["verdict"], "pass");
  EXPECT_EQ(result["solution_dir"], (run / "solution").string()) << "judged from the fresh copy, not the workspace";
  EXPECT_NE(kbtest::slurp(run / "eval.log").find("verdict PASS"), std::string::npos);
  for (const auto& e : fs::directory_iterator(run))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << "temporary file left: " << e.path();
  fs::remove_all(root);
}

// Where Python solutions run, an agent may answer in Python: the prompt offers it, the workspace's
// ./kbench judges solution.py inside the sandbox (kbench's bridge and the interpreter bound in),
// and the run collects and judges it outside.
TEST(Run, AnAgentThatAnswersInPythonIsJudgedOnItsSolutionPy) {
  if (!sandbox_ok()) GTEST_SKIP() << probe_sandbox().error;
  if (const auto why = python_unavailable_reason("host")) {
    if (std::getenv("CI")) FAIL() << "Python solutions unavailable in CI: " << *why;
    GTEST_SKIP() << "Python solutions unavailable here: " << *why;
  }
  const fs::path root = kbtest::scratch("run-solve-python");
  const fs::path kit = root / "kit";
  fs::create_directories(kit);
  fs::copy_file(kSource / "tests/fixtures/fake-agent-solve-python.sh", kit / "fake-agent-solve-python.sh");
  fs::copy_file(kSource / "problems/softmax/solutions/python-torch/solution.py", kit / "solution.py");
  auto r = kbench({"run", "--agent", "generic", "--model", "scripted", "--problem", "softmax", "--target", "host", "--budget",
                   "3m", "--runs-dir", (root / "runs").string(), "--ro-bind", kit.string(), "--command",
                   "sh " + (kit / "fake-agent-solve-python.sh").string() + " " + kit.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path run = only_run(root / "runs");
  const std::string out = kbtest::slurp(run / "transcript/stdout.log");
  EXPECT_NE(out.find("verdict PASS"), std::string::npos) << out;
  EXPECT_NE(out.find("fake agent: the Python solution passed, done"), std::string::npos) << out;
  EXPECT_EQ(kbtest::slurp(run / "solution/solution.py"), kbtest::slurp(kit / "solution.py"));
  EXPECT_FALSE(fs::exists(run / "solution/solution.cpp"));
  const json result = read_json(run / "result.json");
  EXPECT_EQ(result["verdict"], "pass") << result.dump(2);
  EXPECT_NE(result["build"]["command"].get<std::string>().find("Python solution"), std::string::npos)
      << result["build"].dump(2);
  EXPECT_EQ(read_json(run / "run.json")["verdict"]["verdict"], "pass");
  fs::remove_all(root);
}

TEST(Run, AgentThatNeverFinishesIsKilledAtItsBudgetAndJudgedOnWhatItLeft) {
  if (!sandbox_ok()) GTEST_SKIP() << probe_sandbox().error;
  const fs::path root = kbtest::scratch("run-budget");
  const fs::path kit = make_kit(root, "fake-agent-sleep.sh");
  const std::string mark = kbtest::marker_seconds(7);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = kbench({"run", "--agent", "generic", "--model", "sleeper", "--problem", "softmax", "--target", "host", "--budget", "2s",
                   "--grace", "1s", "--check-only", "--runs-dir", (root / "runs").string(), "--ro-bind", kit.string(),
                   "--command", "sh " + (kit / "fake-agent-sleep.sh").string() + " " + mark});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 1) << "the starter solution fails\n" << r.output;
  const fs::path run = only_run(root / "runs");
  const json rec = read_json(run / "run.json");
  EXPECT_EQ(rec["status"], "killed_at_budget");
  EXPECT_EQ(rec["agent_process"]["killed_at_budget"], true);
  EXPECT_EQ(rec["agent_process"]["survivors"], 0);
  EXPECT_EQ(rec["budget_seconds"], 2.0);
  const std::string out = kbtest::slurp(run / "transcript/stdout.log");
  EXPECT_NE(out.find("fake agent: thinking\nfake agent: started a helper\n"), std::string::npos) << "partial transcript: " << out;
  EXPECT_TRUE(kbtest::sleepers(mark).empty()) << "the agent's helper outlived the run";
  EXPECT_EQ(read_json(run / "result.json")["failure"], "setup_error");
  EXPECT_LT(took, 60.0);
  fs::remove_all(root);
}

TEST(Run, RefusesToRunUnsandboxedUnlessToldAndRecordsIt) {
  const fs::path root = kbtest::scratch("run-nosandbox");
  // A bwrap that fails the way it does where user namespaces are off.
  const fs::path fake = root / "fakebin";
  fs::create_directories(fake);
  {
    std::ofstream f(fake / "bwrap");
    f << "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'bubblewrap 0.8.0'; exit 0; }\n"
         "echo 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged "
         "user namespaces.' >&2\nexit 1\n";
  }
  fs::permissions(fake / "bwrap", fs::perms::owner_all);
  const std::vector<std::string> env = {"PATH=" + fake.string() + ":" + std::getenv("PATH")};
  const fs::path kit = make_kit(root, "fake-agent-solve.sh");
  std::vector<std::string> args = {"run", "--agent", "generic", "--model", "scripted", "--problem", "softmax", "--target", "host",
                                   "--check-only", "--runs-dir", (root / "runs").string(), "--command",
                                   "sh " + (kit / "fake-agent-solve.sh").string() + " " + kit.string()};
  auto refused = kbench(args, env);
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("No permissions to create new namespace"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("--no-sandbox"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(root / "runs") && !fs::is_empty(root / "runs")) << "a refused run leaves no run directory";

  args.push_back("--no-sandbox");
  auto r = kbench(args, env);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json rec = read_json(only_run(root / "runs") / "run.json");
  EXPECT_EQ(rec["status"], "complete");
  EXPECT_EQ(rec["sandbox"]["enabled"], false);
  EXPECT_EQ(rec["sandbox"]["available"], false);
  EXPECT_NE(rec["sandbox"]["probe_error"].get<std::string>().find("No permissions"), std::string::npos) << rec.dump(2);
  fs::remove_all(root);
}

// Robustness sweep: `kbench run` with an agent command that does not exist (the shell's exit 127)
// was recorded as a complete run in which the model wrote a failing solution.
TEST(Run, AnAgentCommandThatCannotRunIsAStartFailureNotAModelResult) {
  const fs::path root = kbtest::scratch("run-no-such-agent");
  auto r = kbench({"run", "--agent", "generic", "--model", "scripted", "--problem", "softmax", "--target", "host",
                   "--check-only", "--runs-dir", (root / "runs").string(), "--command", "kbench-no-such-agent-command --go"});
  const fs::path dir = only_run(root / "runs");
  const json rec = read_json(dir / "run.json");
  EXPECT_EQ(rec["agent_process"]["exit_code"], 127) << rec.dump(2);
  ASSERT_TRUE(rec["agent_process"].contains("start_failure")) << rec.dump(2);
  EXPECT_NE(rec["agent_process"]["start_failure"].get<std::string>().find("command not found"), std::string::npos);
  EXPECT_NE(r.output.find("could not be run"), std::string::npos) << r.output;
  const kb::RunRow row = kb::read_run_dir(dir);
  ASSERT_TRUE(row.infra_failure.has_value()) << "counted as the model's result";
  EXPECT_EQ(*row.infra_failure, "agent_start_failure");
  fs::remove_all(root);
}

TEST(Run, UnknownAgentAndMissingCommandAreUsageErrors) {
  const fs::path root = kbtest::scratch("run-usage");
  auto a = kbench({"run", "--agent", "no-such-agent", "--model", "m", "--problem", "softmax", "--runs-dir", (root / "runs").string()});
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.output.find("unknown agent 'no-such-agent' (known: claude-code, codex, opencode, gemini, kimi, kbench, generic"),
            std::string::npos)
      << a.output;
  auto b = kbench({"run", "--agent", "generic", "--model", "m", "--problem", "softmax", "--runs-dir", (root / "runs").string()});
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.output.find("--command"), std::string::npos) << b.output;
  auto c = kbench({"run", "--agent", "generic", "--model", "m", "--problem", "softmax", "--budget", "45x", "--command", "true"});
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.output.find("'45x'"), std::string::npos) << c.output;
  auto d = kbench({"run", "--agent", "generic", "--model", "m", "--problem", "softmax", "--runs-dir", (root / "runs").string(),
                   "--ro-bind", kSource.string(), "--command", "true"});
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_NE(d.output.find("kbench source tree"), std::string::npos) << d.output;
  // kbench's build cache holds every run's build log and library.
  const fs::path builds = kbench_cache_dir() / "build";
  fs::create_directories(builds);
  auto e = kbench({"run", "--agent", "generic", "--model", "m", "--problem", "softmax", "--runs-dir", (root / "runs").string(),
                   "--ro-bind", builds.string(), "--command", "true"});
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.output.find("kbench's cache"), std::string::npos) << e.output;
  EXPECT_FALSE(fs::exists(root / "runs") && !fs::is_empty(root / "runs"));
  fs::remove_all(root);
}

TEST(Prepare, MakesAWorkspaceWhoseWrapperChecksIt) {
  const fs::path root = kbtest::scratch("prepare");
  auto r = kbench({"prepare", "softmax", (root / "ws").string(), "--target", "host", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(r.output.substr(r.output.find('{')));
  EXPECT_EQ(j["private_dir"], (root / "ws.kbench").string());
  EXPECT_EQ(j["target"], "host");
  auto fail = run_command({(root / "ws/kbench").string(), "check"}, std::chrono::minutes(2));
  EXPECT_EQ(fail.exit_code, 1) << "the starter fails\n" << fail.output;
  EXPECT_NE(fail.output.find("setup_error"), std::string::npos) << fail.output;
  fs::copy_file(kSource / "problems/softmax/solutions/host-naive/solution.cpp", root / "ws/solution.cpp",
                fs::copy_options::overwrite_existing);
  auto pass = run_command({(root / "ws/kbench").string(), "check"}, std::chrono::minutes(2));
  EXPECT_EQ(pass.exit_code, 0) << pass.output;
  auto usage = run_command({(root / "ws/kbench").string(), "eval"}, std::chrono::minutes(1));
  EXPECT_EQ(usage.exit_code, 2) << usage.output;
  auto again = kbench({"prepare", "softmax", (root / "ws").string()});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.output.find("not empty"), std::string::npos) << again.output;
  fs::remove_all(root);
}

TEST(Run, GatewayReplayServesTheAgentAndUsageJsonHasTheTotals) {
  if (!sandbox_ok()) GTEST_SKIP() << probe_sandbox().error;
  const fs::path root = kbtest::scratch("run-gateway");
  const fs::path kit = make_kit(root, "fake-agent-gateway.sh");
  {
    std::ofstream s(root / "script.json");
    s << R"([{"api":"anthropic_messages","text":"PLAN-FROM-REPLAY","usage":{"input_tokens":11,"output_tokens":5}},
             {"api":"anthropic_messages","text":"WRITE-FROM-REPLAY","usage":{"input_tokens":3,"output_tokens":7,"cache_read_tokens":100}}])";
  }
  auto r = kbench({"run", "--agent", "generic", "--model", "claude-test", "--problem", "softmax", "--target", "host", "--budget", "3m",
                   "--check-only", "--runs-dir", (root / "runs").string(), "--ro-bind", kit.string(), "--gateway",
                   "replay:" + (root / "script.json").string(), "--command",
                   "sh " + (kit / "fake-agent-gateway.sh").string() + " " + kit.string()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path run = only_run(root / "runs");
  const std::string out = kbtest::slurp(run / "transcript/stdout.log");
  EXPECT_NE(out.find("PLAN-FROM-REPLAY"), std::string::npos) << out;
  EXPECT_NE(out.find("WRITE-FROM-REPLAY"), std::string::npos) << out;
  const json usage = read_json(run / "usage.json");
  EXPECT_EQ(usage["exchanges"], 2);
  EXPECT_EQ(usage["input_tokens"], 14);
  EXPECT_EQ(usage["output_tokens"], 12);
  EXPECT_EQ(usage["cache_read_tokens"], 100);
  const json rec = read_json(run / "run.json");
  EXPECT_EQ(rec["gateway"]["mode"], "replay");
  EXPECT_EQ(rec["gateway"]["usage"]["total_tokens"], 126);
  // The generic agent may be any CLI: it gets every CLI's gateway variables, and kbench's own.
  for (const char* name : {"KBENCH_GATEWAY_URL", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "ANTHROPIC_API_KEY"})
    EXPECT_NE(rec["agent_env"].dump().find(std::string("\"") + name + "\""), std::string::npos) << name << ": " << rec["agent_env"];
  // The per-run placeholder key the agent sent is not in the log.
  EXPECT_EQ(kbtest::slurp(run / "gateway.jsonl").find("kbench-gateway-"), std::string::npos);
  fs::remove_all(root);
}
