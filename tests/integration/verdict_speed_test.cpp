// How fast a verdict comes (issue 18), through the real kbench binary on the host target: a
// hanging solution is judged within seconds with default options (the call timeout follows from
// the problem, and the first failing shape ends the judging unless --all-shapes asks for all).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "loaded_machine.h"

namespace fs = std::filesystem;

namespace {

const fs::path kSoftmax = fs::path(KBENCH_SOURCE_DIR) / "problems" / "softmax";

struct Outcome {
  kb::CommandResult r;
  nlohmann::json j;
  double seconds = 0;
};

Outcome kbench(std::vector<std::string> args) {
  args.insert(args.begin(), KBENCH_BINARY);
  const auto t0 = std::chrono::steady_clock::now();
  // A timed evaluation the machine was too loaded to judge is judged again (loaded_machine.h).
  Outcome run{kb::test::judged([&] { return kb::run_command(args, std::chrono::minutes(3)); }, kb::test::forget_out(args)),
              nullptr, 0};
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const size_t brace = run.r.output.find('{');
  if (brace != std::string::npos) run.j = nlohmann::json::parse(run.r.output.substr(brace), nullptr, false);
  return run;
}

fs::path out_dir(const std::string& tag) {
  const fs::path d = fs::temp_directory_path() / ("kbench-verdict-speed-" + tag + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  return d;
}

// `kbench check --json` of the crashing softmax, `jobs` shapes at once, every shape when `all`.
nlohmann::json check_crashing_solution(const fs::path& out, const std::string& jobs, bool all) {
  std::vector<std::string> args = {KBENCH_BINARY, "check", "softmax", (kSoftmax / "solutions" / "bad-host-crash").string(),
                                   "--target", "host", "--json", "--out", out.string(), "--shape-jobs", jobs};
  if (all) args.push_back("--all-shapes");
  const kb::CommandResult r = kb::run_command(args, std::chrono::minutes(3));
  const size_t brace = r.output.find('{');
  const nlohmann::json j =
      brace == std::string::npos ? nlohmann::json() : nlohmann::json::parse(r.output.substr(brace), nullptr, false);
  EXPECT_TRUE(j.is_object()) << r.output;
  return j;
}

// The bound: with default options, a hanging solution on the deck's softmax is judged in
// under 20 s. The timeouts that make up the time are wall-clock figures (5 s per call, ~14 s for a
// timing request), so a loaded machine adds only start-up to them.
class HangingSolution : public testing::TestWithParam<const char*> {};

TEST_P(HangingSolution, IsJudgedWithinTwentySecondsWithDefaultOptions) {
  const std::string mode = GetParam();
  const fs::path out = out_dir(mode);
  std::vector<std::string> args = {mode, "softmax", (kSoftmax / "solutions" / "bad-host-hang").string(), "--target", "host",
                                   "--json", "--out", out.string()};
  // One shape at a time, whatever the machine (a check judges several at once on many cores:
  // ShapeJobs below), so that exactly one shape is judged.
  if (mode == "check") args.insert(args.end(), {"--shape-jobs", "1"});
  Outcome run = kbench(args);
  ASSERT_TRUE(run.j.is_object()) << run.r.output;
  EXPECT_EQ(run.j["verdict"], "fail") << run.r.output;
  EXPECT_EQ(run.j["failure"], "timeout") << run.j["message"];
  EXPECT_EQ(run.r.exit_code, 1);
  EXPECT_LT(run.seconds, 20.0) << run.j["message"];
  // One shape judged, the other three left unjudged and named.
  EXPECT_EQ(run.j["shapes"].size(), 1u);
  EXPECT_EQ(run.j["shapes_not_judged"].size(), 3u);
  EXPECT_NE(run.j["message"].get<std::string>().find("--all-shapes"), std::string::npos) << run.j["message"];
  // The derived limit is recorded, and it is the floor's few seconds, not a minute.
  const double limit = run.j["shapes"][0]["call_timeout_seconds"];
  EXPECT_GE(limit, 5.0);
  EXPECT_LT(limit, 10.0);
  // No reference line for a failed solution.
  EXPECT_TRUE(run.j["baseline"].is_null());
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Modes, HangingSolution, testing::Values("check", "bench", "eval"));

TEST(AllShapes, JudgesEveryShapeAfterAFailure) {
  const fs::path out = out_dir("all-shapes");
  Outcome run = kbench({"check", "softmax", (kSoftmax / "solutions" / "bad-host-hang").string(), "--target", "host",
                    "--json", "--out", out.string(), "--all-shapes", "--timeout", "1"});
  ASSERT_TRUE(run.j.is_object()) << run.r.output;
  EXPECT_EQ(run.j["failure"], "timeout");
  ASSERT_EQ(run.j["shapes"].size(), 4u);
  for (const auto& s : run.j["shapes"]) {
    EXPECT_EQ(s["failure"], "timeout");
    EXPECT_EQ(s["call_timeout_seconds"], 1.0);  // --timeout is taken as given
  }
  EXPECT_TRUE(run.j["shapes_not_judged"].empty());
  fs::remove_all(out);
}

TEST(AllShapes, APassingSolutionIsJudgedOnEveryShapeEitherWay) {
  const fs::path out = out_dir("passing");
  Outcome run = kbench({"check", "softmax", (kSoftmax / "solutions" / "host-fast").string(), "--target", "host", "--json",
                    "--out", out.string()});
  ASSERT_TRUE(run.j.is_object()) << run.r.output;
  EXPECT_EQ(run.j["verdict"], "pass") << run.j["message"];
  EXPECT_EQ(run.j["shapes"].size(), 4u);
  EXPECT_TRUE(run.j["shapes_not_judged"].empty());
  fs::remove_all(out);
}

}  // namespace

// Each shape's worker after the first is started once the shape before has run kb_setup, and is
// ready before that shape is timed (docs/evaluation.md, step 2): the progress shows the start
// between the shape's header and its timing (after its checks), every shape passes, and each
// records its wait. The first shape's worker starts beside the parent's preparation (the machine
// code read, the ceilings), before it has ended.
TEST(EarlyWorkers, TheNextShapesWorkerStartsBeforeTheShapeBeforeIsTimed) {
  const fs::path out = out_dir("early-workers");
  const std::vector<std::string> args = {KBENCH_BINARY, "eval",  "softmax", (kSoftmax / "solutions" / "host-fast").string(),
                                         "--target",   "host",  "--shape", "0", "--shape", "1", "--shape", "2",
                                         "--max-time", "0.2",   "--out",   out.string()};
  kb::CommandResult r =
      kb::test::judged([&] { return kb::run_command(args, std::chrono::minutes(3)); }, kb::test::forget_out(args));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The shapes in the order judged (secret), each header "shape I/4: ...".
  std::vector<std::string> order;
  std::vector<size_t> headers;
  for (size_t at = r.output.find("\nshape "); at != std::string::npos; at = r.output.find("\nshape ", at + 1)) {
    order.push_back(r.output.substr(at + 7, r.output.find('/', at) - at - 7));
    headers.push_back(at);
  }
  ASSERT_EQ(order.size(), 3u) << r.output;
  for (size_t k = 0; k + 1 < order.size(); ++k) {
    const std::string started = "  shape " + order[k] + ": starting shape " + order[k + 1] + "'s worker";
    const std::string timing = "  shape " + order[k] + " (";
    const size_t s = r.output.find(started, headers[k]);
    ASSERT_NE(s, std::string::npos) << started << "\n" << r.output;
    EXPECT_LT(s, headers[k + 1]) << r.output;
    const size_t t = r.output.find(timing, headers[k]);
    ASSERT_NE(t, std::string::npos) << r.output;
    EXPECT_LT(s, r.output.find("): timing", headers[k])) << "the next worker must start before the timing\n" << r.output;
  }
  // The last shape judged starts no worker: there is none after it.
  EXPECT_EQ(r.output.find("  shape " + order.back() + ": starting shape"), std::string::npos) << r.output;
  // The first one's starts beside the preparation, before the parent has finished preparing.
  const size_t first = r.output.find("starting shape " + order.front() + "'s worker beside the preparation");
  ASSERT_NE(first, std::string::npos) << r.output;
  EXPECT_LT(first, r.output.find("prepared: ")) << r.output;
  EXPECT_LT(first, headers.front()) << r.output;
  const nlohmann::json res = nlohmann::json::parse(std::ifstream(out / "result.json"), nullptr, false);
  ASSERT_TRUE(res.is_object());
  EXPECT_EQ(res["verdict"], "pass");
  for (const auto& s : res["shapes"]) {
    EXPECT_GE(s["seconds"]["start"].get<double>(), 0.0);
    EXPECT_LE(s["seconds"]["start"].get<double>(), s["seconds"]["total"].get<double>());
  }
  fs::remove_all(out);
}

// A shape that fails after its kb_setup leaves the next shape's early worker to be stopped (the
// verdict is known) or used (--all-shapes): either way each judged shape gets its own verdict.
TEST(EarlyWorkers, AFailingShapeStopsOrHandsOnTheNextWorker) {
  for (const bool all : {false, true}) {
    const fs::path out = out_dir(all ? "early-crash-all" : "early-crash");
    const nlohmann::json j = check_crashing_solution(out, "1", all);
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["failure"], "crash");
    EXPECT_EQ(j["shapes"].size(), all ? 4u : 1u);
    for (const auto& s : j["shapes"]) EXPECT_EQ(s["failure"], "crash") << s["message"];
    fs::remove_all(out);
  }
}

// `kbench check` judges several shapes at once (eval/shape_jobs.h): all four of softmax's start
// before the first has ended (their headers come before any shape's closing line), their workers
// beside the parent's preparation, and the verdict and the results, in index order, are those of
// one shape at a time.
TEST(ShapeJobs, ACheckJudgesItsShapesAtOnceWithTheVerdictOfOneAtATime) {
  const fs::path out = out_dir("shape-jobs");
  kb::CommandResult r = kb::run_command({KBENCH_BINARY, "check", "softmax", (kSoftmax / "solutions" / "host-fast").string(),
                                         "--target", "host", "--out", out.string(), "--shape-jobs", "4"},
                                        std::chrono::minutes(3));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t report = r.output.find("kbench check softmax");
  ASSERT_NE(report, std::string::npos) << r.output;
  const std::string progress = r.output.substr(0, report);
  const size_t first_end = progress.find(" s: worker start ");
  ASSERT_NE(first_end, std::string::npos) << progress;
  for (int i = 0; i < 4; ++i) EXPECT_LT(progress.find("shape " + std::to_string(i) + "/4: "), first_end) << progress;
  // Their workers start beside the parent's preparation: every header comes before its end.
  const size_t prepared = progress.find("prepared: ");
  ASSERT_NE(prepared, std::string::npos) << progress;
  for (int i = 0; i < 4; ++i) EXPECT_LT(progress.find("shape " + std::to_string(i) + "/4: "), prepared) << progress;
  // Every line of progress whole: each starts as kbench's own lines do.
  std::istringstream lines(progress);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    EXPECT_TRUE(line.rfind("shape ", 0) == 0 || line.rfind("  shape ", 0) == 0 || line.rfind("building", 0) == 0 ||
                line.rfind("prepared: ", 0) == 0 || line.rfind("starting shape ", 0) == 0)
        << line;
  }
  // The report lists the shapes in index order, each checked on its 4 seeds, and passes.
  const std::string table = r.output.substr(report);
  size_t at = 0;
  for (const char* label : {"ok batch=64 vocab=1024", "ok batch=32 vocab=4096", "ok batch=8 vocab=32768",
                            "ok batch=4 vocab=131072"}) {
    const size_t found = table.find(label, at);
    ASSERT_NE(found, std::string::npos) << label << "\n" << table;
    at = found;
  }
  EXPECT_NE(table.find("verdict PASS"), std::string::npos) << table;
  fs::remove_all(out);
}

// A failing solution judged several shapes at once: the verdict is the one-at-a-time verdict; the
// shapes not started when it was known are named; with --all-shapes every shape is judged.
TEST(ShapeJobs, AFailureStopsTheShapesNotYetStartedUnlessAllAreAsked) {
  for (const bool all : {false, true}) {
    const fs::path out = out_dir(all ? "shape-jobs-crash-all" : "shape-jobs-crash");
    const nlohmann::json j = check_crashing_solution(out, "2", all);
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["verdict"], "fail");
    EXPECT_EQ(j["failure"], "crash");
    for (const auto& s : j["shapes"]) EXPECT_EQ(s["failure"], "crash") << s["message"];
    if (all) {
      EXPECT_EQ(j["shapes"].size(), 4u);
      EXPECT_TRUE(j["shapes_not_judged"].empty());
    } else {
      // The two started at once are judged, the other two never start.
      EXPECT_EQ(j["shapes"].size(), 2u);
      EXPECT_EQ(j["shapes_not_judged"].size(), 2u);
      EXPECT_NE(j["message"].get<std::string>().find("2 other shapes not judged"), std::string::npos) << j["message"];
    }
    fs::remove_all(out);
  }
}
