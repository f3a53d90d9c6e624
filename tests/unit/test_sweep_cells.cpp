// The sweep's cells in the database (sweep/cells.h): claims are exclusive, a finished run makes a
// cell done, infrastructure failures are retried up to the limit and then given up, an interrupted
// attempt is queued again without counting against the cell, a dead holder's cells are taken over
// (a run that had completed is adopted, not run again), and a changed plan under the same name is
// refused. Plus the sweep file's plan and its Slurm command line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "core/gpu_lock.h"
#include "deck/problem.h"
#include "store/results_db.h"
#include "store/run_dir.h"
#include "sweep/cells.h"
#include "sweep/slurm_executor.h"
#include "sweep/sweep_spec.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace kb;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("kbench-cells-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

SweepSpec spec(const fs::path& root, int trials = 2) {
  SweepSpec s;
  s.name = "unit";
  Entrant e;
  e.agent = "generic";
  e.model = "m";
  e.label = "generic/m";
  e.command = "true";
  s.entrants = {e};
  s.problems = {"softmax"};
  s.trials = trials;
  s.target = "host";
  s.infra_retries = 1;
  s.runs_dir = root / "runs";
  s.db = root / "kbench.db";
  return s;
}

// A run directory for an attempt: complete with a verdict, or incomplete for a reason.
void write_run(const fs::path& dir, const std::string& status, const std::string& reason = "", const json& process = nullptr) {
  fs::create_directories(dir);
  json rec = {{"schema", kRunSchema}, {"status", status}, {"agent", "generic"}, {"model", "m"}, {"problem", "softmax"},
              {"trial", 1},          {"started_at", "2026-11-25T10:00:00Z"},   {"sweep", {{"id", "unit"}, {"entrant", "generic/m"}}}};
  if (status == "complete") rec["verdict"] = {{"verdict", "pass"}, {"failure", ""}, {"message", ""}};
  if (!reason.empty()) rec["incomplete_reason"] = reason;
  if (!process.is_null()) rec["process"] = process;
  std::ofstream(dir / "run.json") << rec.dump();
}

std::string state_of(sql::Database& db, int ordinal) {
  auto st = db.prepare("SELECT state || ' ' || attempts || ' ' || infra_failures FROM cells WHERE ordinal = ?");
  st.bind_all(static_cast<int64_t>(ordinal));
  return st.step() ? st.text(0) : "";
}

// Another process's identity: this host, a pid that cannot exist (gone) or our own (alive).
json owner(bool alive) {
  json o = process_identity();
  if (!alive) o["pid"] = 999999999, o["pid_start"] = "0";
  return o;
}

}  // namespace

TEST(SweepCells, PlanIsTrialMajorAndClaimsAreExclusive) {
  const fs::path root = scratch("claim");
  const SweepSpec s = spec(root);
  const auto cells = plan_cells(s);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[1].trial, 2);
  sql::Database db = open_results_db(s.db);
  sql::Database db2 = open_results_db(s.db);
  CellStore a(db, s.name, owner(true)), b(db2, s.name, owner(false));
  a.register_sweep(s, cells);
  b.register_sweep(s, cells);  // the same plan: accepted
  EXPECT_TRUE(fs::exists(s.runs_dir / "unit.sweep.json"));
  auto c1 = a.claim([](const Cell& c) { return "run-" + std::to_string(c.ordinal); });
  auto c2 = b.claim([](const Cell& c) { return "run-" + std::to_string(c.ordinal); });
  auto c3 = a.claim([](const Cell&) { return std::string("x"); });
  ASSERT_TRUE(c1 && c2);
  EXPECT_NE(c1->ordinal, c2->ordinal);
  EXPECT_FALSE(c3) << "no third cell";
  EXPECT_EQ(c1->attempts, 1);
  EXPECT_EQ(a.counts().running, 2);
  EXPECT_EQ(a.counts().running_here, 1);

  SweepSpec changed = s;
  changed.trials = 3;
  try {
    CellStore(db, s.name, owner(true)).register_sweep(changed, plan_cells(changed));
    FAIL() << "a changed plan was accepted";
  } catch (const SweepError& e) {
    EXPECT_NE(std::string(e.what()).find("differs in: trials"), std::string::npos) << e.what();
  }
  fs::remove_all(root);
}

TEST(SweepCells, FinishedRunsCountInfraFailuresRetryThenFailInterruptionsDoNot) {
  const fs::path root = scratch("finish");
  const SweepSpec s = spec(root, 1);
  sql::Database db = open_results_db(s.db);
  CellStore st(db, s.name, owner(true));
  st.register_sweep(s, plan_cells(s));
  auto name = [n = 0](const Cell&) mutable { return "a" + std::to_string(++n); };

  auto c = st.claim(name);  // interrupted: queued again, not counted
  write_run(s.runs_dir / c->run_id, "incomplete", "kbench was stopped by a signal while the agent was running");
  EXPECT_EQ(st.finish(*c, s.runs_dir / c->run_id), "queued");
  EXPECT_EQ(state_of(db, 0), "queued 1 0");

  c = st.claim(name);  // kbench failed around the run: an infrastructure failure, retried
  write_run(s.runs_dir / c->run_id, "incomplete", "kbench failed while judging the solution: worker lost");
  EXPECT_EQ(st.finish(*c, s.runs_dir / c->run_id), "queued");
  EXPECT_EQ(state_of(db, 0), "queued 2 1");

  c = st.claim(name);  // no run directory at all: infrastructure again, past the limit of 1
  EXPECT_EQ(st.finish(*c, s.runs_dir / c->run_id, "exit code 2: bad option"), "failed");
  EXPECT_EQ(state_of(db, 0), "failed 3 2");
  EXPECT_FALSE(st.claim(name));
  fs::remove_all(root);
}

TEST(SweepCells, DeadHoldersCellsAreTakenOverAndACompletedRunIsAdoptedNotRerun) {
  const fs::path root = scratch("reclaim");
  const SweepSpec s = spec(root);
  sql::Database db = open_results_db(s.db);
  CellStore dead(db, s.name, owner(false)), alive(db, s.name, owner(true));
  dead.register_sweep(s, plan_cells(s));
  auto c0 = dead.claim([](const Cell&) { return std::string("done-run"); });
  auto c1 = dead.claim([](const Cell&) { return std::string("lost-run"); });
  ASSERT_TRUE(c0 && c1);
  write_run(s.runs_dir / "done-run", "complete");  // finished before its sweep died
  // lost-run: the attempt's process died too (a "running" record of a vanished process).
  write_run(s.runs_dir / "lost-run", "running", "", owner(false));
  auto c2 = dead.claim([](const Cell&) { return std::string("x"); });
  EXPECT_FALSE(c2) << "two cells only";
  EXPECT_EQ(alive.reclaim_dead(s.runs_dir), 2);
  EXPECT_EQ(state_of(db, 0), "done 1 0");
  EXPECT_EQ(state_of(db, 1), "queued 1 0") << "an interrupted attempt is not held against the cell";
  auto st = db.prepare("SELECT run_id FROM cells WHERE ordinal = 0");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "done-run");
  // An attempt that never started: its name is taken, so that a late start (a pending Slurm
  // job) fails to make its folder rather than run the cell a second time.
  auto c3 = dead.claim([](const Cell&) { return std::string("never-started"); });
  ASSERT_TRUE(c3);
  EXPECT_EQ(alive.reclaim_dead(s.runs_dir), 1);
  EXPECT_TRUE(fs::exists(s.runs_dir / "never-started/NOT-STARTED"));
  EXPECT_THROW(RunDir::create_named(s.runs_dir, "never-started"), std::runtime_error);
  EXPECT_EQ(state_of(db, 1), "queued 2 0");
  // A live holder's cells are left alone.
  auto c = alive.claim([](const Cell&) { return std::string("mine"); });
  ASSERT_TRUE(c);
  CellStore third(db, s.name, owner(false));
  EXPECT_EQ(third.reclaim_dead(s.runs_dir), 0);
  // The dead holder's late finish does not override the new owner's view.
  EXPECT_EQ(dead.finish(*c1, s.runs_dir / "lost-run"), "running");
  fs::remove_all(root);
}

TEST(SweepSpec, LoadsAFileResolvesPathsAndDecksAndAppliesOverrides) {
  const fs::path root = scratch("spec");
  std::ofstream(root / "s.toml") << R"(name = "nightly"
decks = ["hard"]
problems = ["softmax"]
trials = 3
budget = "1h30m"
[executor]
kind = "slurm"
[executor.slurm]
partition = "gpu"
margin = "20m"
max_parallel = 4
extra_args = ["--constraint=h100"]
[[entrants]]
agent = "codex"
model = "gpt-5"
effort = "xhigh"
gateway = "replay:scripts/codex.json"
)";
  Problem soft, hard;
  soft.name = "softmax";
  soft.deck = "example";
  hard.name = "topk";
  hard.deck = "hard";
  const SweepSpec s = load_sweep(root / "s.toml", {}, {soft, hard});
  EXPECT_EQ(s.name, "nightly");
  EXPECT_EQ(s.problems, (std::vector<std::string>{"softmax", "topk"}));
  EXPECT_EQ(s.entrants[0].label, "codex/gpt-5 [xhigh]");
  EXPECT_EQ(s.entrants[0].gateway, "replay:" + (root / "scripts/codex.json").string());
  EXPECT_EQ(s.budget, std::chrono::minutes(90));
  EXPECT_EQ(s.db, fs::absolute("results/kbench.db").lexically_normal());
  const auto cmd = sbatch_command(s, "cuda", 6, "job.sh", "out_%a");
  const std::string line = [&] {
    std::string l;
    for (const auto& a : cmd) l += a + " ";
    return l;
  }();
  EXPECT_NE(line.find("--array 0-5%4 --time 111 "), std::string::npos) << line << " (90m + 10s grace + 20m margin, rounded up)";
  EXPECT_NE(line.find("--gres=gpu:1 --partition gpu --constraint=h100 job.sh"), std::string::npos) << line;

  SweepOverrides o;
  o.trials = 1;
  o.problems = {"topk"};
  o.executor = "local";
  const SweepSpec t = load_sweep(root / "s.toml", o, {soft, hard});
  EXPECT_EQ(t.trials, 1);
  EXPECT_EQ(t.executor, "local");
  EXPECT_EQ(t.problems, (std::vector<std::string>{"topk"})) << "--problem replaces the file's names and decks";
  EXPECT_NE(sweep_plan_hash(s), sweep_plan_hash(t));
  fs::remove_all(root);
}

// A deck of three: KernelBench-Hard's topk (no level) and two v3 problems of levels 1 and 2.
std::vector<Problem> leveled_deck() {
  Problem topk, gemm, fused;
  topk.name = "topk";
  topk.deck = "hard";
  gemm.name = "1_Square_matrix_multiplication_";
  gemm.deck = "v3";
  gemm.level = 1;
  fused.name = "59_Matmul_Swish_Scaling";
  fused.deck = "v3";
  fused.level = 2;
  return {topk, gemm, fused};
}

std::string sweep_file(const fs::path& root, const std::string& selection) {
  std::ofstream(root / "s.toml") << "name = \"levels\"\n" << selection << "\n[[entrants]]\nagent = \"kbench\"\nmodel = \"m\"\n";
  return (root / "s.toml").string();
}

TEST(SweepSpec, SelectsProblemsByV3Level) {
  const fs::path root = scratch("levels");
  const auto deck = leveled_deck();
  EXPECT_EQ(load_sweep(sweep_file(root, "levels = [2]"), {}, deck).problems,
            (std::vector<std::string>{"59_Matmul_Swish_Scaling"}));
  EXPECT_EQ(load_sweep(sweep_file(root, "levels = [1, 2]"), {}, deck).problems,
            (std::vector<std::string>{"1_Square_matrix_multiplication_", "59_Matmul_Swish_Scaling"}));
  // The union of names, decks and levels, in deck order.
  EXPECT_EQ(load_sweep(sweep_file(root, "levels = [2]\ndecks = [\"hard\"]"), {}, deck).problems,
            (std::vector<std::string>{"topk", "59_Matmul_Swish_Scaling"}));
  // --level replaces the file's selection.
  SweepOverrides o;
  o.levels = {1};
  EXPECT_EQ(load_sweep(sweep_file(root, "problems = [\"topk\"]"), o, deck).problems,
            (std::vector<std::string>{"1_Square_matrix_multiplication_"}));
  fs::remove_all(root);
}

TEST(SweepSpec, BadLevelsNameTheFileTheKeyAndTheValue) {
  const fs::path root = scratch("badlevels");
  const auto deck = leveled_deck();
  auto error = [&](const std::string& selection, const SweepOverrides& o = {}) {
    try {
      load_sweep(sweep_file(root, selection), o, deck);
    } catch (const SweepError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto has = [](const std::string& msg, std::initializer_list<const char*> parts) {
    for (const char* p : parts)
      if (msg.find(p) == std::string::npos) return ::testing::AssertionFailure() << "'" << p << "' not in: " << msg;
    return ::testing::AssertionSuccess();
  };
  EXPECT_TRUE(has(error("levels = [7]"), {"s.toml:2:", "levels", "integers from 1 to 4", "found 7"}));
  EXPECT_TRUE(has(error("levels = [0]"), {"levels", "found 0"}));
  EXPECT_TRUE(has(error("levels = 1"), {"levels", "an array of KernelBench v3 levels", "found 1"}));
  // A deck name where `levels` once took one: the error says where it goes.
  EXPECT_TRUE(has(error("levels = [\"hard\"]"), {"levels", "found \"hard\"", "decks = [\"hard\"]"}));
  EXPECT_TRUE(has(error("levels = [3]"), {"levels", "no problem of level 3", "levels present: 1, 2"}));
  EXPECT_TRUE(has(error("decks = [\"v4\"]"), {"decks", "no problem of deck \"v4\"", "hard, v3"}));
  SweepOverrides o;
  o.levels = {4};
  EXPECT_TRUE(has(error("levels = [1]", o), {"--level 4", "no problem of level 4"}));
  o.levels = {9};
  EXPECT_TRUE(has(error("levels = [1]", o), {"--level 9", "an integer from 1 to 4"}));
  fs::remove_all(root);
}

// The per-GPU lock of agents sharing a GPU: a second holder, through a hard link to the same file
// (as a run's private folder has it), waits until the first lets go; every use is logged and summed.
TEST(GpuLock, AHardLinkedHolderWaitsForTheFirstAndUsesAreSummed) {
  const fs::path root = scratch("gpulock");
  std::ofstream(root / "gpu-0.lock").flush();
  fs::create_hard_link(root / "gpu-0.lock", root / "linked.lock");
  const fs::path log = root / "uses.jsonl";
  std::atomic<bool> held{false};
  std::thread first([&] {
    GpuLock l(root / "gpu-0.lock", log, "first");
    held = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  });
  while (!held) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  double waited = 0;
  {
    GpuLock second(root / "linked.lock", log, "second");
    waited = second.wait_seconds();
  }
  first.join();
  EXPECT_GT(waited, 0.2) << "the second holder got the lock while the first held it";
  const json s = summarize_gpu_lock_log(log);
  EXPECT_EQ(s["uses"], 2);
  EXPECT_GE(s["hold_seconds"].get<double>(), 0.45);
  EXPECT_GT(s["wait_seconds"].get<double>(), 0.2);
  EXPECT_TRUE(summarize_gpu_lock_log(root / "none.jsonl").is_null());
  EXPECT_THROW(GpuLock(root / "missing.lock", log, "x"), std::runtime_error);
  fs::remove_all(root);
}
