// The budget: an agent is stopped at its time with SIGTERM, then SIGKILL after the grace, and no
// process it started survives -- not one in a new session that ignores SIGTERM, with or without
// the sandbox -- while its output up to the kill stays on disk.
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "agent/budget.h"
#include "agent/sandbox.h"
#include "agent_test_util.h"

namespace fs = std::filesystem;
using namespace kb;
using namespace std::chrono_literals;

namespace {

struct Ran {
  BudgetOutcome outcome;
  std::string out, err;
};

Ran run_script(const std::string& name, const std::string& script, std::chrono::milliseconds budget, bool sandboxed,
               std::chrono::milliseconds grace = 500ms) {
  const fs::path d = kbtest::scratch("budget-" + name);
  BudgetedCommand c;
  c.argv = {"/bin/sh", "-c", script};
  if (sandboxed) {
    SandboxSpec s;
    s.workspace = d / "ws";
    s.home = d / "home";
    fs::create_directories(s.workspace);
    fs::create_directories(s.home);
    c.argv = sandbox_command(s, c.argv);
    c.sandboxed = true;
  }
  c.env = {"PATH=/usr/bin:/bin", "HOME=" + (d / "home").string()};
  c.stdout_file = d / "stdout.log";
  c.stderr_file = d / "stderr.log";
  c.budget = budget;
  c.grace = grace;
  Ran r;
  r.outcome = run_with_budget(c);
  r.out = kbtest::slurp(c.stdout_file);
  r.err = kbtest::slurp(c.stderr_file);
  fs::remove_all(d);
  return r;
}

// The grandchild is double-forked (its parent exits at once, so it is an orphan), leaves the
// session and ignores SIGTERM; the agent itself ignores SIGTERM too. Only SIGKILL after the grace
// ends them, and only a supervisor that still finds the orphan (subreaper, PID namespace) can.
std::string stubborn_agent(const std::string& mark) {
  return "echo started; (setsid sh -c \"trap '' TERM; exec sleep " + mark +
         "\" &); trap '' TERM; echo forked; sleep 100000; :";
}

void skip_without_sandbox() {
  const SandboxProbe p = probe_sandbox();
  if (!p.ok) GTEST_SKIP() << "no sandbox on this machine: " << p.error;
}

}  // namespace

TEST(Budget, UnsandboxedAgentAndItsSetsidGrandchildAreKilledAtTheBudget) {
  const std::string mark = kbtest::marker_seconds(1);
  const auto t0 = std::chrono::steady_clock::now();
  Ran r = run_script("plain", stubborn_agent(mark), 1s, false);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.outcome.killed_at_budget);
  EXPECT_FALSE(r.outcome.interrupted);
  EXPECT_GE(r.outcome.killed, 2) << "the agent and the grandchild ignore SIGTERM; both need SIGKILL";
  EXPECT_EQ(r.outcome.survivors, 0);
  EXPECT_EQ(r.outcome.signal, SIGKILL);
  EXPECT_NE(r.out.find("started\nforked\n"), std::string::npos) << "partial transcript lost: " << r.out;
  EXPECT_TRUE(kbtest::sleepers(mark).empty()) << "a process outlived the budget";
  EXPECT_LT(took, 1.0 + 0.5 + 5.0);
}

TEST(Budget, SandboxedAgentAndItsSetsidGrandchildAreKilledAtTheBudget) {
  skip_without_sandbox();
  const std::string mark = kbtest::marker_seconds(2);
  Ran r = run_script("sandboxed", stubborn_agent(mark), 1s, true);
  EXPECT_TRUE(r.outcome.killed_at_budget);
  EXPECT_EQ(r.outcome.survivors, 0);
  EXPECT_NE(r.out.find("started\nforked\n"), std::string::npos) << r.out << r.err;
  EXPECT_TRUE(kbtest::sleepers(mark).empty()) << "a process outlived the budget";
}

TEST(Budget, AgentThatHonoursSigtermEndsWithinTheGrace) {
  Ran r = run_script("polite", "echo waiting; sleep 100000", 500ms, false, 10s);
  EXPECT_TRUE(r.outcome.killed_at_budget);
  EXPECT_EQ(r.outcome.killed, 0) << "SIGTERM was enough; no SIGKILL needed";
  EXPECT_GE(r.outcome.terminated, 1);
  EXPECT_LT(r.outcome.seconds, 5.0) << "the grace is a limit, not a wait";
}

TEST(Budget, AgentThatFinishesKeepsItsExitCodeAndOutput) {
  Ran r = run_script("finish", "echo out; echo err >&2; exit 3", 30s, false);
  EXPECT_FALSE(r.outcome.killed_at_budget);
  EXPECT_EQ(r.outcome.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.outcome.strays, 0);
}

TEST(Budget, ProcessesLeftBehindByAFinishedAgentAreEnded) {
  const std::string mark = kbtest::marker_seconds(3);
  // A double fork (the classic daemon) and a setsid'd child that ignores SIGTERM, then exit 0.
  Ran r = run_script("strays",
                     "(sleep " + mark + " &) ; setsid sh -c \"trap '' TERM; exec sleep " + mark + "\" & echo done", 30s, false);
  EXPECT_FALSE(r.outcome.killed_at_budget);
  EXPECT_EQ(r.outcome.exit_code, 0);
  EXPECT_GE(r.outcome.strays, 2);
  EXPECT_TRUE(kbtest::sleepers(mark).empty());
}

TEST(Budget, SignalToKbenchEndsTheAgentTheSameWay) {
  const std::string mark = kbtest::marker_seconds(4);
  std::thread interrupter([] {
    std::this_thread::sleep_for(500ms);
    kill(getpid(), SIGTERM);
  });
  Ran r = run_script("interrupt", stubborn_agent(mark), 60s, false);
  interrupter.join();
  EXPECT_TRUE(r.outcome.interrupted);
  EXPECT_EQ(r.outcome.interrupt_signal, SIGTERM);
  EXPECT_FALSE(r.outcome.killed_at_budget);
  EXPECT_TRUE(kbtest::sleepers(mark).empty());
}
