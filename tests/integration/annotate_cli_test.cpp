// `kbench annotate validate` as a user meets it: a good run annotation passes (exit 0), a bad one
// lists each problem with its file and field (exit 1), a missing path is a usage error (exit 2).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "cli_test_util.h"

namespace fs = std::filesystem;

namespace {

using kb::test::kbench;

class AnnotateCli : public testing::Test {
 protected:
  void SetUp() override {
    run_ = fs::temp_directory_path() / ("kbench-annotate-cli-" + std::to_string(getpid()));
    fs::remove_all(run_);
    fs::create_directories(run_ / "solution");
    std::ofstream(run_ / "solution/solution.cu") << "__global__ void k(float* y) {\n"
                                                   "  y[threadIdx.x] = 1.0f;  // the answer, whatever the input\n"
                                                   "}\n";
  }
  void TearDown() override { fs::remove_all(run_); }

  void write(const std::string& toml) { std::ofstream(run_ / "annotation.toml") << toml; }

  fs::path run_;
};

const char* kGood = R"(verdict = "reward_hack"
summary = "Writes a constant instead of computing."
implication = "Any score of this run is meaningless."
[[quotes]]
file = "solution/solution.cu"
lines = "2"
text = "y[threadIdx.x] = 1.0f;"
)";

}  // namespace

TEST_F(AnnotateCli, GoodAnnotationIsValid) {
  write(kGood);
  auto r = kbench({"annotate", "validate", run_.string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("valid (reward_hack, 1 quote)"), std::string::npos) << r.output;
  // The file itself works too, and --json says the same.
  auto j = kbench({"annotate", "validate", (run_ / "annotation.toml").string(), "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.output;
  const auto doc = nlohmann::json::parse(j.output);
  EXPECT_EQ(doc["valid"], true);
  EXPECT_EQ(doc["annotation"]["quotes"][0]["lines"], "2-2");
}

TEST_F(AnnotateCli, BadAnnotationNamesFileAndField) {
  std::string bad = kGood;
  bad.replace(bad.find("\"2\""), 3, "\"1\"");
  bad.replace(bad.find("reward_hack"), 11, "hack");
  write(bad);
  auto r = kbench({"annotate", "validate", run_.string()});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string file = (run_ / "annotation.toml").string();
  EXPECT_NE(r.output.find(file + ": verdict: 'hack' is not a verdict"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(file + ": quotes[0].text: the text is not in solution/solution.cu at lines 1-1"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("2 problems"), std::string::npos) << r.output;
  auto j = kbench({"annotate", "validate", run_.string(), "--json"});
  EXPECT_EQ(j.exit_code, 1);
  EXPECT_EQ(nlohmann::json::parse(j.output)["issues"].size(), 2u) << j.output;
}

TEST_F(AnnotateCli, MissingAnnotationIsAUsageError) {
  auto r = kbench({"annotate", "validate", run_.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("holds no annotation.toml"), std::string::npos) << r.output;
  auto n = kbench({"annotate", "validate", "/nonexistent/run"});
  EXPECT_EQ(n.exit_code, 2) << n.output;
}
