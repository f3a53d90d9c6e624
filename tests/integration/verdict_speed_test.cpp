// How fast a verdict comes (issue 18), through the real kbench binary on the host target: a
// hanging solution is judged within seconds with default options (the call timeout follows from
// the problem, and the first failing shape ends the judging unless --all-shapes asks for all).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"

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
  Outcome run{kb::run_command(args, std::chrono::minutes(3)), nullptr, 0};
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

// The bound: with default options, a hanging solution on the deck's softmax is judged in
// under 20 s. The timeouts that make up the time are wall-clock figures (5 s per call, ~14 s for a
// timing request), so a loaded machine adds only start-up to them.
class HangingSolution : public testing::TestWithParam<const char*> {};

TEST_P(HangingSolution, IsJudgedWithinTwentySecondsWithDefaultOptions) {
  const std::string mode = GetParam();
  const fs::path out = out_dir(mode);
  Outcome run = kbench({mode, "softmax", (kSoftmax / "solutions" / "bad-host-hang").string(), "--target", "host", "--json",
                    "--out", out.string()});
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
