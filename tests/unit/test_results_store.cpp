// The results database: the SQLite layer (transactions roll back), the schema's migrations (a newer
// database is refused and left byte for byte as it was), indexing run directories (which runs are
// infrastructure failures), the results read API (best / median / spread, which runs count) and
// its exports, and the rebuild of a database from a runs folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "store/results.h"
#include "store/results_db.h"
#include "store/run_dir.h"
#include "store/run_index.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace kb;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("kbench-store-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void write(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << s;
}

struct FakeRun {
  std::string agent = "codex", model = "gpt-x", effort, problem = "softmax", status = "complete", verdict = "pass";
  int trial = 1;
  std::optional<double> peak;
  std::optional<bool> beats;  // result.json's summary.beats_baseline (nullopt: no comparison)
  std::string sweep, entrant;
  std::optional<double> cost = 0.5;
  bool cost_complete = true;
  int exit_code = 0;
  std::vector<int> gateway_statuses = {200, 200};
  std::string started_at = "2026-11-25T10:00:00Z";
  std::string incomplete_reason = "kbench was stopped by a signal while the agent was running";
};

// A run directory as `kbench run` leaves it, with the files the indexer reads.
fs::path make_run(const fs::path& runs, const std::string& name, const FakeRun& f) {
  const fs::path d = runs / name;
  json rec = {{"schema", kRunSchema}, {"id", name},          {"status", f.status},   {"agent", f.agent},
              {"model", f.model},     {"problem", f.problem}, {"target", "host"},     {"device", "cpu"},
              {"trial", f.trial},     {"kbench_version", "t"}, {"started_at", f.started_at}, {"finished_at", f.started_at},
              {"effort", f.effort.empty() ? json(nullptr) : json(f.effort)}};
  rec["agent_process"] = {{"exit_code", f.exit_code}, {"signal", 0}, {"seconds", 12.5}, {"killed_at_budget", false}};
  rec["gateway"] = {{"mode", "replay"}};
  if (!f.sweep.empty()) rec["sweep"] = {{"id", f.sweep}, {"entrant", f.entrant}, {"attempt", 1}};
  if (f.status == "complete") {
    rec["verdict"] = {{"verdict", f.verdict}, {"failure", f.verdict == "pass" ? "" : "mismatch"}, {"message", ""}};
    if (f.peak) rec["verdict"]["peak_fraction"] = *f.peak;
    json shapes = json::array({{{"index", 0}, {"label", "s0"}, {"dims", {{"N", 4}}}, {"pass", f.verdict == "pass"}, {"failure", ""},
                                {"timing", {{"median", 1e-3}}}, {"roofline", {{"peak_fraction", f.peak.value_or(0)}}}}});
    json summary = {{"peak_fraction_geomean", f.peak ? json(*f.peak) : json(nullptr)},
                    {"sol_fraction_geomean", f.peak ? json(*f.peak + 0.1) : json(nullptr)}};
    if (f.beats) summary["beats_baseline"] = *f.beats, summary["speedup_vs_baseline"] = *f.beats ? 1.5 : 0.5;
    write(d / "result.json", json{{"summary", summary}, {"shapes", shapes}}.dump());
  } else {
    rec["incomplete_reason"] = f.incomplete_reason;
  }
  write(d / "run.json", rec.dump());
  write(d / "usage.json", json{{"input_tokens", 100}, {"output_tokens", 10}, {"total_tokens", 110},
                               {"cost_usd", f.cost ? json(*f.cost) : json(nullptr)}, {"cost_complete", f.cost_complete}}
                              .dump());
  std::string log;
  int seq = 0;
  for (int s : f.gateway_statuses)
    log += json{{"seq", ++seq}, {"response", {{"status", s}}}, {"error", s >= 300 ? json("upstream said no") : json(nullptr)}}.dump() +
           "\n";
  // The log's records without an error carry no "error" key.
  std::string cleaned;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line);
    if (r["error"].is_null()) r.erase("error");
    cleaned += r.dump() + "\n";
  }
  write(d / "gateway.jsonl", cleaned);
  return d;
}

}  // namespace

TEST(ResultsDb, CreatesTheCurrentSchemaAndReopens) {
  const fs::path d = scratch("schema");
  {
    sql::Database db = open_results_db(d / "sub/kbench.db");
    EXPECT_EQ(schema_version(db), kResultsSchemaVersion);
  }
  sql::Database again = open_results_db(d / "sub/kbench.db", DbAccess::read_only);
  EXPECT_EQ(schema_version(again), kResultsSchemaVersion);
  fs::remove_all(d);
}

TEST(ResultsDb, RefusesADatabaseFromANewerSchemaAndLeavesItUnchanged) {
  const fs::path d = scratch("newer");
  const fs::path file = d / "kbench.db";
  {
    sql::Database db = open_results_db(file);
    db.exec("PRAGMA user_version = 99");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    db.exec("PRAGMA journal_mode = DELETE");
  }
  const std::string before = slurp(file);
  for (DbAccess a : {DbAccess::create, DbAccess::write, DbAccess::read_only}) {
    try {
      (void)open_results_db(file, a);
      FAIL() << "a database of schema 99 was opened";
    } catch (const ResultsDbError& e) {
      EXPECT_NE(std::string(e.what()).find("schema version 99"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("newer kbench"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(slurp(file), before) << "the refused database was changed";
  EXPECT_FALSE(fs::exists(file.string() + "-wal")) << "not even a WAL file is made";
  fs::remove_all(d);
}

TEST(ResultsDb, RefusesFilesThatAreNotKbenchDatabasesAndUnwritableFolders) {
  const fs::path d = scratch("notdb");
  write(d / "text.db", "hello, I am not a database at all");
  EXPECT_THROW((void)open_results_db(d / "text.db"), ResultsDbError);
  write(d / "file", "x");
  try {
    (void)open_results_db(d / "file/sub/kbench.db");
    FAIL();
  } catch (const ResultsDbError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create the results folder"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)open_results_db(d / "missing.db", DbAccess::read_only), ResultsDbError);
  fs::remove_all(d);
}

TEST(Sqlite, ATransactionLeftByAnExceptionRollsBack) {
  const fs::path d = scratch("tx");
  sql::Database db(d / "t.db");
  db.exec("CREATE TABLE t (x INTEGER)");
  try {
    sql::Transaction t(db);
    db.prepare("INSERT INTO t VALUES (?)").bind_all(int64_t{1}).run();
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  {
    sql::Transaction t(db);
    db.prepare("INSERT INTO t VALUES (?)").bind_all(int64_t{2}).run();
    t.commit();
  }
  auto st = db.prepare("SELECT group_concat(x) FROM t");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "2");
  EXPECT_THROW(db.prepare("SELECT nope FROM t"), sql::SqliteError);
  fs::remove_all(d);
}

// Migration 2 on a database that schema 1 made: the runs it holds stay, and read NULL for v3's
// "beats baseline" (their result.json had no such field); runs indexed afterwards carry it.
TEST(ResultsDb, MigratesASchema1DatabaseKeepingItsRuns) {
  const fs::path d = scratch("migrate");
  const fs::path file = d / "kbench.db";
  const fs::path runs = d / "runs";
  FakeRun before;
  before.peak = 0.3;
  {
    // Schema 1 as it was: the current schema less migration 2's columns.
    sql::Database db = open_results_db(file);
    upsert_run(db, read_run_dir(make_run(runs, "r-before", before)));
    db.exec("ALTER TABLE runs DROP COLUMN beats_baseline");
    db.exec("ALTER TABLE runs DROP COLUMN speedup_vs_baseline");
    db.exec("PRAGMA user_version = 1");
  }
  EXPECT_THROW((void)open_results_db(file, DbAccess::read_only), ResultsDbError) << "read-only cannot migrate";
  sql::Database db = open_results_db(file, DbAccess::write);
  EXPECT_EQ(schema_version(db), kResultsSchemaVersion);
  {
    auto st = db.prepare("SELECT peak_fraction, beats_baseline, speedup_vs_baseline FROM runs WHERE id = 'r-before'");
    ASSERT_TRUE(st.step());
    EXPECT_DOUBLE_EQ(st.opt_real(0).value(), 0.3);
    EXPECT_FALSE(st.opt_int64(1));
    EXPECT_FALSE(st.opt_real(2));
  }
  const fs::path after = make_run(runs, "r-after", before);
  json result = json::parse(slurp(after / "result.json"));
  result["summary"]["beats_baseline"] = false;
  result["summary"]["speedup_vs_baseline"] = 0.8;
  write(after / "result.json", result.dump());
  const RunRow row = read_run_dir(after);
  ASSERT_TRUE(row.beats_baseline);
  EXPECT_FALSE(*row.beats_baseline);
  upsert_run(db, row);
  auto st = db.prepare("SELECT beats_baseline, speedup_vs_baseline FROM runs WHERE id = 'r-after'");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.opt_int64(0), 0);
  EXPECT_DOUBLE_EQ(st.opt_real(1).value(), 0.8);
  fs::remove_all(d);
}

TEST(RunIndex, ReadsARunDirectoryAndTellsInfrastructureFailuresApart) {
  const fs::path runs = scratch("index");
  FakeRun ok;
  ok.peak = 0.42;
  const RunRow r = read_run_dir(make_run(runs, "r-ok", ok));
  EXPECT_EQ(r.entrant, "codex/gpt-x");
  EXPECT_EQ(r.status, "complete");
  EXPECT_FALSE(r.infra_failure);
  EXPECT_EQ(r.verdict, "pass");
  EXPECT_DOUBLE_EQ(r.peak_fraction.value(), 0.42);
  EXPECT_NEAR(r.sol_fraction.value(), 0.52, 1e-12);
  EXPECT_EQ(r.total_tokens, 110);
  EXPECT_EQ(r.cost_complete, true);
  ASSERT_EQ(r.shapes.size(), 1u);
  EXPECT_EQ(r.shapes[0].dims["N"], 4);

  FakeRun storm = ok;  // the provider answered 429/5xx to most requests
  storm.gateway_statuses = {200, 429, 503, 429};
  EXPECT_EQ(read_run_dir(make_run(runs, "r-storm", storm)).infra_failure, "provider_errors");

  FakeRun crashed = ok;  // the CLI died before any model call worked
  crashed.exit_code = 1;
  crashed.verdict = "fail";
  crashed.gateway_statuses = {};
  EXPECT_EQ(read_run_dir(make_run(runs, "r-crash", crashed)).infra_failure, "agent_start_failure");

  {
    const fs::path d = make_run(runs, "r-killed", ok);  // SIGTERM from outside (scancel): not the model's doing
    json rec = json::parse(slurp(d / "run.json"));
    rec["agent_process"]["signal"] = 15;
    rec["agent_process"]["exit_code"] = -1;
    write(d / "run.json", rec.dump());
    EXPECT_EQ(read_run_dir(d).infra_failure, "agent_killed");
    rec["agent_process"]["sigterm_sent"] = 3;  // kbench's own stop at the budget is not that
    rec["agent_process"]["killed_at_budget"] = true;
    write(d / "run.json", rec.dump());
    EXPECT_FALSE(read_run_dir(d).infra_failure);
  }
  FakeRun wrong = ok;  // the model wrote a wrong kernel and gave up: a result, not infra
  wrong.verdict = "fail";
  wrong.exit_code = 1;
  EXPECT_FALSE(read_run_dir(make_run(runs, "r-wrong", wrong)).infra_failure);

  FakeRun stopped = ok;
  stopped.status = "incomplete";
  EXPECT_EQ(read_run_dir(make_run(runs, "r-stopped", stopped)).infra_failure, "interrupted");
  FakeRun broke = stopped;
  broke.incomplete_reason = "kbench failed while judging the solution: No space left on device";
  EXPECT_EQ(read_run_dir(make_run(runs, "r-disk", broke)).infra_failure, "disk_full");
  broke.incomplete_reason = "kbench failed while judging the solution: worker lost";
  EXPECT_EQ(read_run_dir(make_run(runs, "r-broke", broke)).infra_failure, "incomplete");
  EXPECT_THROW(read_run_dir(runs / "nope"), std::runtime_error);
  fs::remove_all(runs);
}

TEST(Results, MatrixCountsOneRunPerTrialAndScoresFailuresAsZero) {
  const fs::path d = scratch("results");
  const fs::path runs = d / "runs";
  auto run = [&](const std::string& name, int trial, const std::string& verdict, std::optional<double> peak,
                 const std::string& agent = "codex") {
    FakeRun f;
    f.agent = agent;
    f.trial = trial;
    f.verdict = verdict;
    f.peak = peak;
    f.started_at = "2026-11-25T10:00:0" + std::to_string(trial) + "Z";
    return make_run(runs, name, f);
  };
  run("a1", 1, "pass", 0.5);
  run("a2", 2, "fail", std::nullopt);
  run("a3", 3, "pass", 0.2);
  {
    FakeRun again;  // trial 1 repeated later: only the first counts
    again.peak = 0.9;
    again.started_at = "2026-11-25T11:00:00Z";
    make_run(runs, "a1-again", again);
    FakeRun infra;
    infra.trial = 4;
    infra.status = "incomplete";
    make_run(runs, "a4-incomplete", infra);
    FakeRun unpriced;
    unpriced.agent = "kimi";
    unpriced.peak = 0.3;
    unpriced.cost = std::nullopt;
    unpriced.cost_complete = false;
    make_run(runs, "k1", unpriced);
  }
  sql::Database db = open_results_db(d / "kbench.db");
  (void)rebuild_from_runs(db, runs);
  const Results r = load_results(db);
  ASSERT_EQ(r.entrants, (std::vector<std::string>{"codex/gpt-x", "kimi/gpt-x"}));
  ASSERT_EQ(r.problems, (std::vector<std::string>{"softmax"}));
  const CellResult& c = r.cell(0, 0);
  EXPECT_EQ(c.trials, 3);
  EXPECT_EQ(c.passes, 2);
  EXPECT_DOUBLE_EQ(c.best.value(), 0.5);
  EXPECT_DOUBLE_EQ(c.median, 0.2) << "median of {0.5, 0 (failed), 0.2}";
  EXPECT_DOUBLE_EQ(c.spread, 0.5);
  EXPECT_EQ(c.not_counted, 2) << "the repeated trial 1 and the incomplete run";
  ASSERT_EQ(c.runs.size(), 3u);
  EXPECT_EQ(r.runs[c.runs[0]].id, "a1");
  const EntrantResult& codex = r.per_entrant[0];
  EXPECT_EQ(codex.runs, 5);
  EXPECT_EQ(codex.passes, 2);
  EXPECT_DOUBLE_EQ(codex.cost_usd, 2.5) << "every run costs, counted or not";
  EXPECT_TRUE(codex.cost_complete);
  EXPECT_FALSE(r.per_entrant[1].cost_complete);

  const json j = results_to_json(r);
  EXPECT_EQ(j["cells"][0]["median_peak_fraction"], 0.2);
  EXPECT_TRUE(j["per_entrant"][1]["cost_usd"].is_null()) << "an unknown cost is never shown as a number";
  const std::string csv = results_cells_csv(r);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "entrant,problem,trials,passes,best_peak_fraction,median_peak_fraction,spread,not_counted,beats_baseline");
  EXPECT_NE(csv.find("codex/gpt-x,softmax,3,2,0.5,0.2,0.5,2,\n"), std::string::npos) << "no comparison: empty\n" << csv;
  const std::string md = results_markdown(r);
  EXPECT_NE(md.find("| codex/gpt-x | 2/3 0.500 (0.200) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| kimi/gpt-x | 1/1 | 1/1 | 0.300 | - | 1 | 110 | unknown |"), std::string::npos) << md;
  EXPECT_NE(results_text(r).find("codex/gpt-x"), std::string::npos);
  fs::remove_all(d);
}

// KernelBench v3's view beside kbench's: a trial beats the baseline when it passed and its result
// says so; only problems some run compared count (a problem without a baseline has no comparison),
// and there a failed trial beats nothing.
TEST(Results, BeatsBaselineCountsPassesThatBeatItOnComparedProblemsOnly) {
  const fs::path d = scratch("results-beats");
  const fs::path runs = d / "runs";
  auto run = [&](const std::string& name, const std::string& problem, int trial, const std::string& verdict,
                 std::optional<bool> beats) {
    FakeRun f;
    f.problem = problem;
    f.trial = trial;
    f.verdict = verdict;
    f.peak = verdict == "pass" ? std::optional<double>(0.4) : std::nullopt;
    f.beats = beats;
    f.started_at = "2026-11-25T10:00:0" + std::to_string(trial) + "Z";
    return make_run(runs, name, f);
  };
  run("s1", "softmax", 1, "pass", true);
  run("s2", "softmax", 2, "pass", false);
  run("s3", "softmax", 3, "fail", std::nullopt);  // failed: no comparison, beats nothing
  run("t1", "topk", 1, "pass", std::nullopt);     // topk has no baseline in this store
  run("t2", "topk", 2, "pass", std::nullopt);
  sql::Database db = open_results_db(d / "kbench.db");
  (void)rebuild_from_runs(db, runs);
  const Results r = load_results(db);
  ASSERT_EQ(r.problems, (std::vector<std::string>{"softmax", "topk"}));
  EXPECT_EQ(r.compared_problems, (std::vector<std::string>{"softmax"}));
  EXPECT_EQ(r.cell(0, 0).beats, 1);
  EXPECT_FALSE(r.cell(0, 1).beats.has_value()) << "a problem without a comparison has no beats figure, not 0";
  const EntrantResult& e = r.per_entrant[0];
  EXPECT_EQ(e.compared_trials, 3) << "topk's trials are not compared";
  EXPECT_EQ(e.beats, 1);
  EXPECT_EQ(e.problems_beaten, 1);
  ASSERT_EQ(r.runs.size(), 5u);
  EXPECT_EQ(r.runs[0].beats_baseline, true);
  EXPECT_DOUBLE_EQ(r.runs[0].speedup_vs_baseline.value(), 1.5);
  EXPECT_EQ(r.runs[1].beats_baseline, false);

  const json j = results_to_json(r);
  EXPECT_EQ(j["compared_problems"], json::array({"softmax"}));
  EXPECT_EQ(j["cells"][0]["beats_baseline"], 1);
  EXPECT_TRUE(j["cells"][1]["beats_baseline"].is_null());
  EXPECT_EQ(j["per_entrant"][0]["beats_baseline"], 1);
  EXPECT_EQ(j["per_entrant"][0]["compared_trials"], 3);
  EXPECT_EQ(j["runs"][1]["beats_baseline"], false);
  EXPECT_NE(results_cells_csv(r).find("codex/gpt-x,softmax,3,2,0.4,0.4,0.4,0,1\n"), std::string::npos) << results_cells_csv(r);
  EXPECT_NE(results_markdown(r).find("| 1/3 (1 of 1 problems) |"), std::string::npos) << results_markdown(r);
  EXPECT_NE(results_text(r).find("1/3 (1 of 1 problems)"), std::string::npos) << results_text(r);
  fs::remove_all(d);
}

TEST(Rebuild, RecomputesSweepsAndCellStatesFromTheRunsFolder) {
  const fs::path d = scratch("rebuild");
  const fs::path runs = d / "runs";
  json plan = {{"schema", "kbench.sweep-plan/1"}, {"id", "s1"}, {"spec_hash", "h"}, {"created_at", "2026-11-25T10:00:00Z"},
               {"spec", {{"retry", {{"infra_retries", 1}}}}},
               {"cells", {{{"entrant", "E"}, {"problem", "softmax"}, {"trial", 1}, {"ordinal", 0}},
                          {{"entrant", "E"}, {"problem", "softmax"}, {"trial", 2}, {"ordinal", 1}},
                          {{"entrant", "E"}, {"problem", "softmax"}, {"trial", 3}, {"ordinal", 2}}}}};
  write(runs / (std::string("s1") + kSweepPlanSuffix), plan.dump());
  FakeRun f;
  f.sweep = "s1";
  f.entrant = "E";
  f.peak = 0.1;
  make_run(runs, "t1-killed", [&] { FakeRun x = f; x.status = "incomplete"; return x; }());
  make_run(runs, "t1", f);
  for (const char* n : {"t2-a", "t2-b"})
    make_run(runs, n, [&] {
      FakeRun x = f;
      x.trial = 2;
      x.status = "incomplete";
      x.incomplete_reason = "kbench failed while judging the solution: worker lost";
      return x;
    }());
  sql::Database db = open_results_db(d / "kbench.db");
  const RebuildReport rep = rebuild_from_runs(db, runs);
  EXPECT_EQ(rep.runs, 4);
  EXPECT_EQ(rep.sweeps, 1);
  EXPECT_EQ(rep.cells, 3);
  auto st = db.prepare("SELECT trial, state, attempts, infra_failures, coalesce(run_id, '') FROM cells ORDER BY trial");
  std::vector<std::string> got;
  while (st.step())
    got.push_back(std::to_string(st.int64(0)) + " " + st.text(1) + " " + std::to_string(st.int64(2)) + " " +
                  std::to_string(st.int64(3)) + " " + st.text(4));
  EXPECT_EQ(got, (std::vector<std::string>{"1 done 2 0 t1", "2 failed 2 2 ", "3 queued 0 0 "}));
  fs::remove_all(d);
}
