// `kbench sweep` end to end, on the host target:
//   - real agent CLIs (claude-code, codex, opencode) against the replay gateway, 3 entrants x 2
//     problems x 2 trials, the sweep killed with SIGKILL while cells are in flight, then resumed:
//     exactly 12 complete runs, one per cell, the killed attempts' directories kept as incomplete,
//     and `kbench db rebuild` of the runs folder gives identical `kbench results`;
//   - two sweeps started at once on one database: no cell runs twice;
//   - bad sweep files and databases: a clear error (exit 2) naming the file and key, nothing
//     already recorded changed.
// The CLIs are those `scripts/setup --agents` installs; without them the first test skips (fails
// under KBENCH_REQUIRE_AGENTS, as agents_test does).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "agent/adapter.h"
#include "agent/sandbox.h"
#include "agent_test_util.h"
#include "core/subprocess.h"
#include "store/results_db.h"
#include "store/run_dir.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace kb;

namespace {

const fs::path kSource = KBENCH_SOURCE_DIR;

CommandResult kbench(std::vector<std::string> args, std::chrono::seconds timeout = std::chrono::seconds(600)) {
  args.insert(args.begin(), KBENCH_BINARY);
  return run_command(args, timeout);
}

// A sweep started in the background, its output in a file.
pid_t spawn_sweep(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<std::string> a = {KBENCH_BINARY, "sweep"};
  a.insert(a.end(), args.begin(), args.end());
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::freopen(log.c_str(), "w", stdout);
    (void)f;
    dup2(fileno(stdout), 2);
    std::vector<char*> argv;
    for (auto& s : a) argv.push_back(s.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::map<std::string, int> cell_states(const fs::path& db_file) {
  std::map<std::string, int> n;
  if (!fs::exists(db_file)) return n;
  try {
    sql::Database db(db_file, sql::Database::Mode::read_only);
    for (auto st = db.prepare("SELECT state, count(*) FROM cells GROUP BY state"); st.step();)
      n[st.text(0)] = static_cast<int>(st.int64(1));
  } catch (const sql::SqliteError&) {  // not made yet
  }
  return n;
}

std::vector<json> run_records(const fs::path& runs) {
  std::vector<json> out;
  for (const auto& e : fs::directory_iterator(runs))
    if (fs::exists(e.path() / "run.json")) out.push_back(json::parse(kbtest::slurp(e.path() / "run.json")));
  return out;
}

std::string cell_key(const json& rec) {
  return rec["sweep"]["entrant"].get<std::string>() + " " + rec["problem"].get<std::string>() + " " +
         std::to_string(rec["trial"].get<int>());
}

bool agent_installed(const std::string& agent, std::string& why) {
  try {
    AdapterOptions o;
    o.kbench_binary = KBENCH_BINARY;
    (void)make_adapter(agent, o);
    return true;
  } catch (const std::invalid_argument& e) {
    why = e.what();
    return false;
  }
}

}  // namespace

TEST(Sweep, RealAgentsKilledMidFlightResumeToExactlyOneCompleteRunPerCell) {
  if (!probe_sandbox().ok) GTEST_SKIP() << probe_sandbox().error;
  const std::vector<std::pair<std::string, std::string>> agents = {
      {"claude-code", "claude-test"}, {"codex", "gpt-test"}, {"opencode", "oc-test"}};
  for (const auto& [a, _] : agents) {
    std::string why;
    if (!agent_installed(a, why)) {
      if (std::getenv("KBENCH_REQUIRE_AGENTS")) FAIL() << why;
      GTEST_SKIP() << why;
    }
  }
  const fs::path root = kbtest::scratch("sweep-kill");
  std::string toml = R"(name = "ci-kill"
problems = ["softmax", "kahan_softmax"]
trials = 2
budget = "4m"
target = "host"
check_only = true
db = "results/kbench.db"
[executor]
concurrency = 3
)";
  for (const auto& [a, m] : agents)
    toml += "[[entrants]]\nagent = \"" + a + "\"\nmodel = \"" + m + "\"\nallow_unpriced = true\ngateway = \"replay:" +
            (kSource / "tests/fixtures/agents" / (a + ".json")).string() + "\"\n";
  std::ofstream(root / "ci.toml") << toml;
  const fs::path db = root / "results/kbench.db", runs = root / "results/runs";

  // Started, then killed outright once a cell is done and others are running.
  const pid_t first = spawn_sweep({(root / "ci.toml").string()}, root / "first.log");
  bool in_flight = false;
  for (int i = 0; i < 1200 && !in_flight; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    const auto n = cell_states(db);
    in_flight = n.count("done") && n.at("done") >= 1 && n.count("running") && n.at("running") >= 1;
  }
  ASSERT_TRUE(in_flight) << kbtest::slurp(root / "first.log");
  kill(first, SIGKILL);
  EXPECT_EQ(wait_exit(first), 128 + SIGKILL);
  std::vector<std::string> killed_runs;  // the attempts in flight at the kill
  {
    sql::Database d(db, sql::Database::Mode::read_only);
    for (auto st = d.prepare("SELECT run_id FROM cells WHERE state = 'running'"); st.step();) killed_runs.push_back(st.text(0));
  }
  ASSERT_GE(killed_runs.size(), 1u);

  // The same command again: resumes, takes over the dead sweep's cells, runs what is left.
  const CommandResult second = kbench({"sweep", (root / "ci.toml").string()}, std::chrono::seconds(1500));
  ASSERT_EQ(second.exit_code, 0) << kbtest::slurp(root / "first.log") << "\n---\n" << second.output;
  EXPECT_NE(second.output.find("took over"), std::string::npos) << second.output;

  const auto recs = run_records(runs);
  std::map<std::string, int> complete;
  int incomplete = 0;
  for (const auto& r : recs) {
    const std::string st = effective_status(r);
    if (st == "complete" || st == "killed_at_budget") ++complete[cell_key(r)];
    else if (st == "incomplete") ++incomplete;
    EXPECT_NE(st, "running") << r.dump(2);
  }
  EXPECT_EQ(complete.size(), 12u) << "every cell has a complete run";
  for (const auto& [k, n] : complete) EXPECT_EQ(n, 1) << k << " ran to completion more than once";
  EXPECT_GE(incomplete, 1) << "the killed attempts' directories are kept, as incomplete";
  // Each attempt in flight at the kill either had not made its folder yet, or its folder is kept
  // as incomplete, or it finished in the moment it was told to stop and is its cell's one run.
  std::set<std::string> counted;
  {
    sql::Database d(db, sql::Database::Mode::read_only);
    for (auto st = d.prepare("SELECT run_id FROM cells WHERE state = 'done'"); st.step();) counted.insert(st.text(0));
  }
  for (const auto& id : killed_runs) {
    if (!fs::exists(runs / id / "run.json")) continue;
    const std::string st = effective_status(json::parse(kbtest::slurp(runs / id / "run.json")));
    EXPECT_TRUE(st == "incomplete" || counted.count(id)) << id << ": " << st;
  }

  // The database agrees: 12 counted runs, every cell done, each with its own run.
  sql::Database d(db, sql::Database::Mode::read_only);
  auto st = d.prepare("SELECT count(*), count(DISTINCT run_id) FROM cells WHERE state = 'done'");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.int64(0), 12);
  EXPECT_EQ(st.int64(1), 12);
  auto rs = d.prepare("SELECT count(*) FROM runs WHERE status = 'complete' AND infra_failure IS NULL");
  ASSERT_TRUE(rs.step());
  EXPECT_EQ(rs.int64(0), 12);
  const CommandResult res = kbench({"results", db.string(), "--format", "json"});
  ASSERT_EQ(res.exit_code, 0) << res.output;
  const json rj = json::parse(res.output);
  int trials = 0;
  for (const auto& c : rj["cells"]) trials += c["trials"].get<int>();
  EXPECT_EQ(trials, 12);
  // softmax passes for every entrant (the script writes a correct softmax); kahan_softmax fails.
  for (const auto& c : rj["cells"])
    EXPECT_EQ(c["passes"].get<int>(), c["problem"] == "softmax" ? 2 : 0) << c.dump();

  // Rebuilt from the runs folder alone, the database gives the same results, in every format.
  const fs::path rebuilt = root / "rebuilt.db";
  const CommandResult rb = kbench({"db", "rebuild", runs.string(), "--db", rebuilt.string()});
  ASSERT_EQ(rb.exit_code, 0) << rb.output;
  for (const char* format : {"text", "json", "csv", "markdown"}) {
    const CommandResult a = kbench({"results", db.string(), "--format", format});
    const CommandResult b = kbench({"results", rebuilt.string(), "--format", format});
    EXPECT_EQ(a.output, b.output) << format;
  }
  const CommandResult status = kbench({"sweep", "status", db.string()});
  EXPECT_NE(status.output.find("12/12 done"), std::string::npos) << status.output;
  fs::remove_all(root);
}

// A quick scripted agent (tests/fixtures/fake-agent-solve.sh) so that two sweeps overlap.
fs::path write_fake_sweep(const fs::path& root, const std::string& name, int trials, const std::string& extra = "") {
  const fs::path kit = root / "kit";
  fs::create_directories(kit);
  fs::copy_file(kSource / "tests/fixtures/fake-agent-solve.sh", kit / "fake-agent-solve.sh", fs::copy_options::overwrite_existing);
  fs::copy_file(kSource / "problems/softmax/solutions/host-naive/solution.cpp", kit / "solution.cpp",
                fs::copy_options::overwrite_existing);
  const fs::path file = root / (name + ".toml");
  std::ofstream(file) << "name = \"" << name << "\"\nproblems = [\"softmax\"]\ntrials = " << trials
                      << "\nbudget = \"3m\"\ntarget = \"host\"\ncheck_only = true\ndb = \"results/kbench.db\"\n" << extra
                      << "[executor]\nconcurrency = 2\n"
                      << "[[entrants]]\nagent = \"generic\"\nmodel = \"scripted-a\"\nallow_unpriced = true\nro_bind = [\""
                      << kit.string() << "\"]\ncommand = \"sh " << (kit / "fake-agent-solve.sh").string() << " " << kit.string()
                      << "\"\n[[entrants]]\nagent = \"generic\"\nmodel = \"scripted-b\"\nallow_unpriced = true\nro_bind = [\""
                      << kit.string() << "\"]\ncommand = \"sh " << (kit / "fake-agent-solve.sh").string() << " " << kit.string()
                      << "\"\n";
  return file;
}

TEST(Sweep, TwoSweepsOnOneDatabaseNeverRunACellTwice) {
  if (!probe_sandbox().ok) GTEST_SKIP() << probe_sandbox().error;
  const fs::path root = kbtest::scratch("sweep-two");
  const fs::path file = write_fake_sweep(root, "both", 4);  // 2 entrants x 1 problem x 4 trials = 8 cells
  const pid_t a = spawn_sweep({file.string(), "--json-events"}, root / "a.log");
  const pid_t b = spawn_sweep({file.string(), "--json-events"}, root / "b.log");
  const int ra = wait_exit(a), rb = wait_exit(b);
  ASSERT_EQ(ra, 0) << kbtest::slurp(root / "a.log");
  ASSERT_EQ(rb, 0) << kbtest::slurp(root / "b.log");
  std::map<std::string, int> runs_per_cell;
  for (const auto& r : run_records(root / "results/runs")) {
    EXPECT_EQ(effective_status(r), "complete") << r.dump(2);
    ++runs_per_cell[cell_key(r)];
  }
  EXPECT_EQ(runs_per_cell.size(), 8u);
  for (const auto& [k, n] : runs_per_cell) EXPECT_EQ(n, 1) << k << " ran " << n << " times";
  // Both took part (each started at least one cell), from their event streams.
  int started_a = 0, started_b = 0;
  for (const auto& [log, n] : {std::pair{root / "a.log", &started_a}, std::pair{root / "b.log", &started_b}}) {
    std::istringstream in(kbtest::slurp(log));
    for (std::string line; std::getline(in, line);)
      if (line.find("\"event\":\"cell_started\"") != std::string::npos) ++*n;
  }
  EXPECT_EQ(started_a + started_b, 8) << "one attempt per cell in all";
  fs::remove_all(root);
}

TEST(Sweep, BadInputsAreClearErrorsAndChangeNothingRecorded) {
  const fs::path root = kbtest::scratch("sweep-bad");
  auto expect_error = [&](const std::string& toml, const std::vector<std::string>& wants) {
    std::ofstream(root / "bad.toml") << toml;
    const CommandResult r = kbench({"sweep", (root / "bad.toml").string(), "--dry-run"});
    EXPECT_EQ(r.exit_code, 2) << toml << "\n" << r.output;
    for (const auto& w : wants) EXPECT_NE(r.output.find(w), std::string::npos) << "wanted '" << w << "' in:\n" << r.output;
  };
  const std::string entrant = "[[entrants]]\nagent = \"generic\"\nmodel = \"m\"\nallow_unpriced = true\ncommand = \"true\"\n";
  expect_error("problems = [\"softmax\"]\ntrails = 3\n" + entrant, {"bad.toml:2:10: trails: unknown key"});
  expect_error("problems = [\"no_such\"]\n" + entrant, {"bad.toml", "unknown problem \"no_such\"", "softmax"});
  expect_error("problems = [\"softmax\"]\ntrials = \"three\"\n" + entrant, {"bad.toml:2", "trials: expected an integer"});
  expect_error("problems = [\"softmax\"]\nbudget = \"45x\"\n" + entrant, {"budget: expected a duration"});
  expect_error("problems = [\"softmax\"]\n[[entrants]]\nagent = \"no-such-agent\"\nmodel = \"m\"\n", {"entrants[0]", "unknown agent"});
  expect_error("problems = [\"softmax\"]\n[[entrants]]\nagent = \"generic\"\nmodel = \"gpt-unheard-of\"\ncommand = \"true\"\n",
               {"entrants[0]", "model: \"gpt-unheard-of\" is not in the price table", "allow_unpriced"});
  expect_error("problems = [\"softmax\"]\n[[entrants]]\nmodel = \"m\"\n", {"entrants[0].agent: required"});
  expect_error("problems = [\"softmax\"]\n" + entrant + entrant, {"names two entrants"});
  expect_error("problems = [\"softmax\"]\ntarget = \"tpu\"\n" + entrant, {"target: expected \"host\", \"cuda\" or \"auto\""});
  EXPECT_EQ(kbench({"sweep", (root / "missing.toml").string()}).exit_code, 2);

  // An unwritable results folder (a path through a regular file).
  std::ofstream(root / "afile") << "x";
  std::ofstream(root / "ok.toml") << "problems = [\"softmax\"]\ntarget = \"host\"\ndb = \"afile/sub/kbench.db\"\n" << entrant;
  const CommandResult unwritable = kbench({"sweep", (root / "ok.toml").string()});
  EXPECT_EQ(unwritable.exit_code, 2) << unwritable.output;
  EXPECT_NE(unwritable.output.find("cannot create the results folder"), std::string::npos) << unwritable.output;

  // A database from a newer kbench: refused, left byte for byte as it was.
  const fs::path newer = root / "newer/kbench.db";
  {
    sql::Database db = open_results_db(newer);
    db.exec("PRAGMA user_version = 42");
    db.exec("PRAGMA journal_mode = DELETE");
  }
  const std::string before = kbtest::slurp(newer);
  std::ofstream(root / "newer.toml") << "problems = [\"softmax\"]\ntarget = \"host\"\ndb = \"newer/kbench.db\"\n" << entrant;
  for (const auto& args : std::vector<std::vector<std::string>>{{"sweep", (root / "newer.toml").string()},
                                                                {"results", newer.string()},
                                                                {"sweep", "status", newer.string()},
                                                                {"db", "rebuild", root.string(), "--db", newer.string()}}) {
    const CommandResult r = kbench(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << "\n" << r.output;
    EXPECT_NE(r.output.find("schema version 42"), std::string::npos) << r.output;
  }
  EXPECT_EQ(kbtest::slurp(newer), before);
  fs::remove_all(root);
}

TEST(Sweep, DryRunListsTheCellsAndAnEstimateWithoutTouchingTheDatabase) {
  const fs::path root = kbtest::scratch("sweep-dry");
  const fs::path file = write_fake_sweep(root, "dry", 3);
  const CommandResult r = kbench({"sweep", file.string(), "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2 entrants x 1 problems x 3 trials = 6 cells"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("generic/scripted-b  softmax  trial 3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("wall time up to"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(root / "results/kbench.db"));
  const CommandResult j = kbench({"sweep", file.string(), "--dry-run", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.output;
  EXPECT_EQ(json::parse(j.output)["cells"].size(), 6u);
  fs::remove_all(root);
}
