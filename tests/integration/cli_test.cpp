// The kbench command line as a user meets it: listings, and bad input answered with exit code 2
// and a message naming the file, key or value at fault.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"

namespace fs = std::filesystem;

namespace {

kb::CommandResult kbench(std::vector<std::string> args) {
  args.insert(args.begin(), KBENCH_BINARY);
  return kb::run_command(args, std::chrono::minutes(2));
}

TEST(Cli, ListJsonHoldsTheExampleProblemWithItsShapes) {
  auto r = kbench({"list", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output);
  auto it = std::find_if(j.begin(), j.end(), [](const auto& p) { return p["name"] == "softmax"; });
  ASSERT_NE(it, j.end());
  EXPECT_EQ((*it)["regime"], "memory");
  EXPECT_EQ((*it)["shapes"].size(), 4u);
  EXPECT_EQ((*it)["shapes"][0]["bytes"], 4.0 * 2 * 64 * 1024);
}

TEST(Cli, ShowPrintsTheSpecReadably) {
  auto r = kbench({"show", "softmax"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("rtol=0.001"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("batch=4 vocab=131072"), std::string::npos) << r.output;
}

TEST(Cli, UnknownProblemIsAUsageErrorNamingTheKnownOnes) {
  auto r = kbench({"show", "no_such_problem"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("no problem 'no_such_problem'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("softmax"), std::string::npos) << r.output;
}

TEST(Cli, MissingSolutionFolderIsAUsageError) {
  auto r = kbench({"check", "softmax", "/nonexistent/solution"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/nonexistent/solution"), std::string::npos) << r.output;
}

TEST(Cli, MalformedProblemTomlNamesFileAndKey) {
  const fs::path deck = fs::temp_directory_path() / "kbench-cli-bad-deck";
  fs::remove_all(deck);
  fs::create_directories(deck / "softmax");
  std::ifstream in(fs::path(KBENCH_SOURCE_DIR) / "problems/softmax/problem.toml");
  std::string toml((std::istreambuf_iterator<char>(in)), {});
  toml.replace(toml.find("dtype = \"f32\""), 13, "dtype = \"f33\"");
  std::ofstream(deck / "softmax/problem.toml") << toml;
  auto r = kbench({"show", "softmax", "--problems", deck.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("problem.toml"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("inputs[0].dtype"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("f33"), std::string::npos) << r.output;
  fs::remove_all(deck);
}

TEST(Cli, UnknownTargetIsAUsageError) {
  auto r = kbench({"check", "softmax", std::string(KBENCH_SOURCE_DIR) + "/problems/softmax/solutions/host-naive",
                   "--target", "tpu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("unknown target 'tpu'"), std::string::npos) << r.output;
}

TEST(Cli, HostCeilingsArePositive) {
  auto r = kbench({"ceilings", "--target", "host", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_TRUE(j["measured"].get<bool>());
  EXPECT_GT(j["memory"]["dram"]["value"].get<double>(), 1e8);
  EXPECT_GT(j["compute"]["fp32"]["value"].get<double>(), 1e8);
}

}  // namespace
