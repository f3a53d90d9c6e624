// Bad input on the command line and in the deck is answered with exit 2 and a message naming the
// option, file or key and the value (issue: the robustness sweep). Every numeric option is fed a
// value of each bad kind; a recorded result is never replaced; a string that is not UTF-8 never
// turns a verdict into "internal error".
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "cli_test_util.h"
#include "scratch_dir.h"

namespace fs = std::filesystem;

namespace {

using kb::test::kbench;

std::string solution(const std::string& name) { return std::string(KBENCH_SOURCE_DIR) + "/problems/softmax/solutions/" + name; }

fs::path scratch(const std::string& name) { return kb::test::scratch_dir("badinput-" + name); }

struct OptionCase {
  std::vector<std::string> command;  // the command with its required arguments
  std::string option;
  std::vector<std::string> bad;       // values that must be refused
};

// Kinds of bad value every numeric option refuses, plus those only some refuse (0, a fraction).
const std::vector<std::string> kAlwaysBad = {"nan", "inf", "abc", "", "1e30", "-1", "99999999999999999999999"};

TEST(CliBadInput, EveryNumericOptionRefusesBadValuesNamingTheOption) {
  const fs::path dir = scratch("options");
  const std::string sol = solution("host-naive");
  std::ofstream(dir / "prompt.md") << "hi\n";
  const std::vector<std::string> check = {"check", "softmax", sol, "--target", "host"};
  const std::vector<std::string> bench = {"bench", "softmax", sol, "--target", "host"};
  const std::vector<std::string> run = {"run", "--agent", "generic", "--command", "true", "--model", "m", "--problem", "softmax",
                                        "--target", "host", "--runs-dir", (dir / "runs").string()};
  const std::vector<std::string> gateway = {"gateway", "--replay", (dir / "none.toml").string(), "--log", (dir / "g.jsonl").string()};
  const std::vector<std::string> loop = {"agent-loop", "--model", "m", "--prompt-file", (dir / "prompt.md").string()};
  const std::vector<std::string> dump = {"dump", "softmax", "--out", (dir / "c.safetensors").string()};
  const std::vector<std::string> eval = {"eval", "softmax", sol, "--target", "host", "--out", (dir / "eval").string()};
  const std::vector<std::string> prepare = {"prepare", "softmax", (dir / "ws").string(), "--target", "host"};
  const std::vector<std::string> sweep = {"sweep", "--agents", "generic", "--models", "m", "--problem", "softmax", "--target",
                                          "host", "--runs-dir", (dir / "sweep-runs").string(), "--db",
                                          (dir / "sweep.db").string()};
  // Sizes (--log-limit, --memory-limit): a unit kbench does not know, below the floor, above the ceiling.
  const std::vector<std::string> bad_sizes = {"0", "1", "1023", "1X", "M", "1.5.5M", "-1M", "2P"};
  std::vector<OptionCase> cases = {
      {check, "--timeout", {"0", "0.0001", "86401"}},
      {check, "--seed", {"0.5", "1e3"}},
      {check, "--repeat-calls", {"65", "0.5"}},
      {check, "--shape", {"0.5"}},
      {check, "--shape-jobs", {"0", "65", "1.5"}},
      {bench, "--shape-jobs", {"2"}},  // timing judges one shape at a time: check's option only
      {eval, "--shape-jobs", {"2"}},
      {bench, "--max-time", {"0"}},
      {bench, "--min-samples", {"0", "2.5"}},
      {bench, "--max-samples", {"0", "1e9"}},
      {bench, "--noise", {"2"}},
      {bench, "--warmup", {"61", "1e9"}},
      {bench, "--rechecks", {"1001", "1.5"}},
      {bench, "--tail-checks", {"1001"}},
      {run, "--budget", {"0", "0s", "99999999999999999999h", "8d", "168h1s"}},
      {run, "--grace", {"0"}},
      {run, "--trial", {"1.5"}},
      {run, "--max-turns", {"0"}},
      {run, "--gateway-max-tokens", {"0"}},
      {run, "--gateway-max-cost", {"0"}},
      {gateway, "--max-tokens", {"0"}},
      {gateway, "--max-cost", {"0"}},
      {gateway, "--port", {"65536"}},
      {loop, "--max-turns", {"0"}},
      {loop, "--command-timeout", {"0"}},
      {dump, "--shape", {"1.5"}},
      {dump, "--seed", {"0.5"}},
      {dump, "--weights-seed", {"0.5"}},
      {eval, "--timeout", {"0", "0.0001", "86401"}},
      {eval, "--seed", {"0.5", "1e3"}},
      {eval, "--repeat-calls", {"65", "0.5"}},
      {eval, "--shape", {"0.5"}},
      {eval, "--max-time", {"0"}},
      {eval, "--min-samples", {"0", "2.5"}},
      {eval, "--max-samples", {"0", "1e9"}},
      {eval, "--noise", {"2"}},
      {eval, "--warmup", {"61", "1e9"}},
      {eval, "--rechecks", {"1001", "1.5"}},
      {eval, "--tail-checks", {"1001"}},
      {prepare, "--budget", {"0", "0s", "99999999999999999999h", "8d"}},
      {sweep, "--trials", {"0", "0.5", "10001"}},
      {sweep, "--agents-per-gpu", {"0", "1.5"}},
      {sweep, "--concurrency", {"0", "2.5"}},
  };
  for (const auto* command : {&check, &bench, &eval}) {
    cases.push_back({*command, "--log-limit", bad_sizes});
    cases.push_back({*command, "--memory-limit", {"0", "1M", "63M", "2P", "1X", "-8G"}});
  }
  for (const auto& c : cases) {
    std::vector<std::string> values = kAlwaysBad;
    values.insert(values.end(), c.bad.begin(), c.bad.end());
    for (const auto& v : values) {
      std::vector<std::string> args = c.command;
      args.push_back(c.option + "=" + v);
      const auto r = kbench(args);
      EXPECT_EQ(r.exit_code, 2) << c.command[0] << " " << c.option << "=" << v << ":\n" << r.output;
      EXPECT_NE(r.output.find(c.option), std::string::npos) << c.command[0] << " " << c.option << "=" << v << ":\n" << r.output;
      EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
    }
  }
  EXPECT_FALSE(fs::exists(dir / "runs")) << "a refused run left a run directory";
  EXPECT_FALSE(fs::exists(dir / "sweep-runs")) << "a refused sweep left a run directory";
  EXPECT_FALSE(fs::exists(dir / "eval" / "result.json")) << "a refused eval wrote a result";
  fs::remove_all(dir);
}

TEST(CliBadInput, MaxSamplesBelowRechecksIsAUsageErrorNotAFailedSolution) {
  const auto r = kbench({"bench", "softmax", solution("host-naive"), "--target", "host", "--max-samples", "2", "--rechecks", "3"});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--max-samples 2 is below --rechecks 3"), std::string::npos) << r.output;
}

TEST(CliBadInput, AnUnknownCommandIsAUsageErrorEvenWithHelp) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"frobnicate", "--help"}, {"frobnicate"}}) {
    const auto r = kbench(args);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("unknown command 'frobnicate'"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("check"), std::string::npos) << "the message lists the commands: " << r.output;
  }
  EXPECT_EQ(kbench({"check", "--help"}).exit_code, 0);
}

// A deck whose softmax problem.toml has one line replaced.
fs::path deck_with(const std::string& name, const std::string& from, const std::string& to) {
  const fs::path deck = scratch(name);
  fs::create_directories(deck / "softmax");
  std::ifstream in(fs::path(KBENCH_SOURCE_DIR) / "problems/softmax/problem.toml");
  std::string toml((std::istreambuf_iterator<char>(in)), {});
  const size_t at = toml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) toml.replace(at, from.size(), to);
  std::ofstream(deck / "softmax/problem.toml") << toml;
  return deck;
}

TEST(CliBadInput, AShapeTooLargeToHoldIsRefusedAtLoadNamingTheTensor) {
  // batch * vocab = 2^64 wrapped to 0 elements and crashed kbench in `check` (exit 139).
  const fs::path deck = deck_with("huge-shape", "batch = 64\nvocab = 1024", "batch = 4294967296\nvocab = 4294967296");
  const auto r = kbench({"show", "softmax", "--problems", deck.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("problem.toml"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("more than 2^38 elements"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(4294967296, 4294967296)"), std::string::npos) << r.output;
  fs::remove_all(deck);
}

TEST(CliBadInput, AnInvalidForbiddenRegexIsRefusedAtLoad) {
  // softmax has a [policy] table (its forbidden_torch): the pattern goes into it.
  const fs::path deck = deck_with("bad-regex", "[policy]\n", "[policy]\nforbidden = [\"cublas\", \"memo(\"]\n");
  const auto r = kbench({"show", "softmax", "--problems", deck.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("policy.forbidden[1]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'memo('"), std::string::npos) << r.output;
  fs::remove_all(deck);
}

TEST(CliBadInput, EvalNeverReplacesARecordedResult) {
  const fs::path out = scratch("recorded");
  const std::string recorded = "{\"verdict\": \"pass\", \"note\": \"an earlier run's record\"}\n";
  std::ofstream(out / "result.json") << recorded;
  const auto r = kbench({"eval", "softmax", solution("bad-host-crash"), "--target", "host", "--out", out.string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("already holds a result.json"), std::string::npos) << r.output;
  std::ifstream in(out / "result.json");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), recorded);
  fs::remove_all(out);
}

TEST(CliBadInput, AFolderNameThatIsNotUtf8StillGetsItsVerdictRecorded) {
  // The folder's name reaches result.json; nlohmann-json's dump threw type_error.316 on it and a
  // finished evaluation became "internal error" with no result.json.
  const fs::path root = scratch("utf8");
  const fs::path sol = root / "sol-\xff\xfe";
  fs::copy(solution("host-naive"), sol, fs::copy_options::recursive);
  const auto r = kbench({"eval", "softmax", sol.string(), "--target", "host", "--out", (root / "out").string(), "--shape", "0",
                         "--max-time", "0.05", "--min-samples", "3", "--max-samples", "5", "--rechecks", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  std::ifstream in(root / "out" / "result.json");
  ASSERT_TRUE(in.good()) << r.output;
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["verdict"], "pass");
  fs::remove_all(root);
}

}  // namespace

namespace {

TEST(CliBadInput, DumpNeverWritesThroughASymbolicLink) {
  const fs::path dir = scratch("dump-link");
  std::ofstream(dir / "precious.txt") << "someone's file\n";
  fs::create_symlink(dir / "precious.txt", dir / "case.safetensors");
  const auto r = kbench({"dump", "softmax", "--out", (dir / "case.safetensors").string()});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("symbolic link"), std::string::npos) << r.output;
  std::ifstream in(dir / "precious.txt");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "someone's file\n");
  // A plain file is replaced whole, through a rename: no temporary is left beside it.
  const auto ok = kbench({"dump", "softmax", "--out", (dir / "fresh.safetensors").string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().filename().string().find(".tmp") == std::string::npos ? 1 : 100;
  EXPECT_EQ(files, 3u);
  fs::remove_all(dir);
}

TEST(CliBadInput, ASymlinkLoopInTheDeckDoesNotHideTheOtherProblems) {
  const fs::path deck = scratch("loop-deck");
  fs::copy(fs::path(KBENCH_SOURCE_DIR) / "problems/softmax", deck / "softmax", fs::copy_options::recursive);
  fs::create_symlink(deck / "loop", deck / "loop");
  const auto r = kbench({"list", "--problems", deck.string()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("softmax"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  fs::remove_all(deck);
}

}  // namespace

namespace {

TEST(CliBadInput, FoldersThatCannotServeAreUsageErrorsNamingThem) {
  const fs::path dir = scratch("folders");
  fs::create_directories(dir / "empty");
  std::ofstream(dir / "a-file") << "x\n";
  const auto empty = kbench({"check", "softmax", (dir / "empty").string(), "--target", "host"});
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_NE(empty.output.find("holds no solution.cpp"), std::string::npos) << empty.output;
  const auto out = kbench({"eval", "softmax", solution("host-naive"), "--target", "host", "--out", (dir / "a-file" / "sub").string()});
  EXPECT_EQ(out.exit_code, 2) << out.output;
  EXPECT_NE(out.output.find("--out " + (dir / "a-file" / "sub").string() + ": cannot create the folder"), std::string::npos)
      << out.output;
  const auto runs = kbench({"run", "--agent", "generic", "--command", "true", "--model", "m", "--problem", "softmax", "--target",
                            "host", "--runs-dir", (dir / "a-file").string()});
  EXPECT_EQ(runs.exit_code, 2) << runs.output;
  EXPECT_NE(runs.output.find("--runs-dir " + (dir / "a-file").string() + ": cannot create the folder"), std::string::npos)
      << runs.output;
  for (const auto& r : {empty, out, runs}) EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

TEST(CliBadInput, ControlBytesFromTheCompilerNeverReachTheTerminalRaw) {
  // gcc quotes the offending source line: a solution could paint a fake verdict over the real one.
  const fs::path dir = scratch("ansi");
  fs::create_directories(dir / "sol");
  std::ofstream(dir / "sol" / "solution.cpp") << "#error \"\x1b[2J\x1b[H  verdict PASS\"\n";
  const auto r = kbench({"check", "softmax", (dir / "sol").string(), "--target", "host"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("^[[2J"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos) << "a raw escape byte reached the output";
  fs::remove_all(dir);
}

}  // namespace

namespace {

// Every path option of the commands that write or read folders, given a path that cannot serve
// (a file where a folder must be, a folder under a file, a folder that does not exist): exit 2
// naming the path, and no internal error (docs/cli.md's exit-code table).
TEST(CliBadInput, EveryPathOptionRefusesAPathThatCannotServe) {
  const fs::path dir = scratch("paths");
  std::ofstream(dir / "a-file") << "x\n";
  const std::string sol = solution("host-naive");
  const std::string file = (dir / "a-file").string(), under_file = (dir / "a-file" / "sub").string(),
                    missing = (dir / "no-such-folder").string();
  struct PathCase {
    std::vector<std::string> args;
    std::string named;  // what the message must name
  };
  const std::vector<PathCase> cases = {
      {{"check", "softmax", sol, "--target", "host", "--out", under_file}, under_file},
      {{"bench", "softmax", sol, "--target", "host", "--out", under_file}, under_file},
      {{"eval", "softmax", sol, "--target", "host", "--out", under_file}, under_file},
      {{"check", "softmax", missing, "--target", "host"}, missing},
      {{"check", "softmax", file, "--target", "host"}, file},
      {{"dump", "softmax", "--out", (dir / "a-file" / "c.safetensors").string()}, (dir / "a-file").string()},
      {{"prepare", "softmax", under_file, "--target", "host"}, under_file},
      {{"run", "--agent", "generic", "--command", "true", "--model", "m", "--problem", "softmax", "--target", "host",
        "--runs-dir", file},
       file},
      {{"list", "--problems", missing}, missing},
      {{"show", "softmax", "--problems", missing}, missing},
      {{"check", "softmax", sol, "--target", "host", "--problems", missing}, missing},
  };
  for (const auto& c : cases) {
    const auto r = kbench(c.args);
    std::string line;
    for (const auto& a : c.args) line += a + " ";
    EXPECT_EQ(r.exit_code, 2) << line << ":\n" << r.output;
    EXPECT_NE(r.output.find(c.named), std::string::npos) << line << ":\n" << r.output;
    EXPECT_EQ(r.output.find("internal error"), std::string::npos) << line << ":\n" << r.output;
  }
  std::ifstream in(dir / "a-file");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "x\n") << "a refused command changed the file";
  fs::remove_all(dir);
}

// A solution folder named through ".." (a relative path typed from the build folder) is the folder
// it names: the build's sandbox binds the normal path, where the ".." spelling found no source.
TEST(CliBadInput, ASolutionFolderNamedThroughDotDotIsJudgedAsThatFolder) {
  const std::string dotted = std::string(KBENCH_SOURCE_DIR) + "/problems/softmax/../softmax/solutions/host-naive";
  auto r = kbench({"check", "softmax", dotted, "--target", "host", "--shape", "0"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("verdict PASS"), std::string::npos) << r.output;
}

}  // namespace
