// The worker's resource caps (eval/worker_limits.h), each proven by a solution it catches and an
// honest one it lets pass: a log flood stops at --log-limit with verdict log_limit (also when the
// solution ignores SIGXFSZ), a 20 GB kb_setup fails at once with out_of_memory (std::bad_alloc and
// a C malloc alike), and a solution with 512 MiB of scratch and a chatty log passes. Each verdict
// ends the command with its reason's exit code from docs/cli.md's table (1 for a failed solution).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "cli_test_util.h"
#include "scratch_dir.h"
#include "verdict/reason.h"

namespace fs = std::filesystem;

namespace {

using kb::test::kbench;

std::string solution(const std::string& name) { return std::string(KBENCH_SOURCE_DIR) + "/problems/softmax/solutions/" + name; }

// kbench makes the result folder itself.
fs::path scratch(const std::string& name) { return kb::test::scratch_dir("limits-" + name, /*make=*/false); }

nlohmann::json json_of(const kb::CommandResult& r) {
  const size_t at = r.output.find('{');
  if (at == std::string::npos) return nlohmann::json();
  return nlohmann::json::parse(r.output.substr(at), nullptr, false);
}

struct CapCase {
  std::string solution;
  std::vector<std::string> args;
  kb::Reason reason;
  std::string message;  // a part of the failure message
};

TEST(WorkerLimits, EachCapCatchesItsSolutionWithItsOwnVerdict) {
  const std::vector<CapCase> cases = {
      {"bad-host-log-flood", {}, kb::Reason::log_limit, "log limit of 64 MiB"},
      {"bad-host-log-flood-ignores-signal", {"--log-limit", "1M"}, kb::Reason::log_limit, "the log limit"},
      {"bad-host-memory-hog", {}, kb::Reason::out_of_memory, "memory limit"},
      {"bad-host-memory-hog-malloc", {}, kb::Reason::out_of_memory, "errno ENOMEM"},
  };
  for (const auto& c : cases) {
    const fs::path out = scratch(c.solution);
    std::vector<std::string> args = {"check", "softmax", solution(c.solution), "--target", "host", "--json", "--out",
                                     out.string(), "--shape", "0"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = kbench(args);
    const auto j = json_of(r);
    ASSERT_TRUE(j.is_object()) << c.solution << ": no JSON (exit " << r.exit_code << "):\n" << r.output;
    EXPECT_EQ(j["verdict"], "fail") << c.solution << ": " << j.dump(2);
    EXPECT_EQ(j["failure"], std::string(kb::reason_name(c.reason))) << c.solution << ": " << j["message"];
    EXPECT_NE(j["message"].get<std::string>().find(c.message), std::string::npos) << c.solution << ": " << j["message"];
    EXPECT_EQ(r.exit_code, kb::reason_row(c.reason).exit_code) << c.solution;
    EXPECT_EQ(r.exit_code, 1) << c.solution << ": docs/cli.md: a judged failure exits 1";
    // The log never grows past the limit, whatever the solution does.
    std::error_code ec;
    const uint64_t limit = c.args.empty() ? 64ull << 20 : 1ull << 20;
    for (const auto& e : fs::directory_iterator(out, ec))
      if (e.path().extension() == ".log") {
        EXPECT_LE(fs::file_size(e.path()), limit) << e.path();
      }
    fs::remove_all(out);
  }
}

TEST(WorkerLimits, AnHonestSolutionWithScratchAndALogPasses) {
  const fs::path out = scratch("honest");
  // kbench() judges again what the machine was too loaded to judge (cli_test_util.h).
  const auto r = kbench({"eval", "softmax", solution("host-scratch-and-log"), "--target", "host", "--json", "--out",
                         out.string(), "--max-time", "0.1", "--min-samples", "3", "--max-samples", "10", "--rechecks",
                         "1", "--warmup", "0.01"});
  const auto j = json_of(r);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["verdict"], "pass") << j["message"];
  EXPECT_EQ(r.exit_code, 0);
  fs::remove_all(out);
}

TEST(WorkerLimits, ExplicitLimitsThatFitLetAnHonestSolutionPass) {
  // A tight memory limit (kbench's worker itself fits in far less) and a small log limit still
  // pass a quiet, honest solution: the caps judge the solution, not kbench's own needs.
  const fs::path out = scratch("tight");
  const auto r = kbench({"check", "softmax", solution("host-naive"), "--target", "host", "--json", "--out", out.string(),
                         "--memory-limit", "1G", "--log-limit", "4K"});
  const auto j = json_of(r);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["verdict"], "pass") << j["message"];
  EXPECT_EQ(r.exit_code, 0);
  fs::remove_all(out);
}

TEST(WorkerLimits, ARaisedLimitStillBelowTheAskKeepsTheVerdictAndNamesTheLimit) {
  // The message says how to raise the cap, and a raised cap that is still below the ask keeps the verdict.
  const fs::path out = scratch("raised");
  const auto r = kbench({"check", "softmax", solution("bad-host-memory-hog"), "--target", "host", "--json", "--out",
                         out.string(), "--shape", "0", "--memory-limit", "6G"});
  const auto j = json_of(r);
  ASSERT_TRUE(j.is_object()) << r.output;
  EXPECT_EQ(j["failure"], "out_of_memory") << j["message"];
  EXPECT_NE(j["message"].get<std::string>().find("6 GiB"), std::string::npos) << j["message"];
  EXPECT_NE(j["message"].get<std::string>().find("--memory-limit"), std::string::npos) << j["message"];
  fs::remove_all(out);
}

}  // namespace
