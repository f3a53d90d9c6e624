// More of the robustness sweep's findings (issue 28), through the real binary: input errors that
// exited 3 ("internal error") or reached a verdict block are usage errors (exit 2) naming the
// option, file or field before anything is built; `check --out` never truncates a user's files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/subprocess.h"
#include "cli_test_util.h"
#include "scratch_dir.h"

namespace fs = std::filesystem;

namespace {

using kb::test::kbench;

std::string solution(const std::string& problem, const std::string& name) {
  return std::string(KBENCH_SOURCE_DIR) + "/problems/" + problem + "/solutions/" + name;
}

fs::path scratch(const std::string& name) { return kb::test::scratch_dir("input-errors-" + name); }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// A usage error: exit 2, the words expected, nothing built, no verdict block, no internal error.
void expect_usage_error(const kb::CommandResult& r, const std::string& expected) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(expected), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("building"), std::string::npos) << "built before refusing: " << r.output;
  EXPECT_EQ(r.output.find("verdict"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
}

}  // namespace

TEST(CliInputErrors, ABadShapeOrTargetIsRefusedBeforeTheBuild) {
  for (const char* mode : {"check", "bench", "eval"}) {
    const fs::path out = scratch(std::string("shape-") + mode);
    expect_usage_error(kbench({mode, "softmax", solution("softmax", "host-naive"), "--target", "host", "--shape", "7",
                               "--out", (out / "o").string()}),
                       "--shape 7: out of range: softmax has 4 shapes");
    expect_usage_error(kbench({mode, "softmax", solution("softmax", "host-naive"), "--target", "tpu", "--out",
                               (out / "o").string()}),
                       "--target tpu: unknown target 'tpu'");
    fs::remove_all(out);
  }
}

TEST(CliInputErrors, AGeneratorThisKbenchLacksIsTheDecksErrorNotAnInternalOne) {
  const fs::path deck = scratch("generator");
  fs::create_directories(deck / "topk");
  std::string toml = slurp(fs::path(KBENCH_SOURCE_DIR) / "problems/topk/problem.toml");
  const std::string from = "generator = \"topk_levels\"";
  ASSERT_NE(toml.find(from), std::string::npos);
  toml.replace(toml.find(from), from.size(), "generator = \"topk_nonexistent\"");
  std::ofstream(deck / "topk/problem.toml") << toml;
  expect_usage_error(kbench({"check", "topk", solution("topk", "host-heap"), "--target", "host", "--problems", deck.string()}),
                     "unknown generator 'topk_nonexistent'");
  fs::remove_all(deck);
}

TEST(CliInputErrors, CheckOutNeverTruncatesFilesItDidNotWrite) {
  const fs::path dir = scratch("out");
  fs::create_directories(dir / "mine");
  std::ofstream(dir / "mine" / "worker-shape0.log") << "a user's notes\n";
  fs::create_directories(dir / "mine" / "baseline-source");
  std::ofstream(dir / "mine" / "baseline-source" / "keep.txt") << "keep\n";
  for (const char* mode : {"check", "bench"}) {
    const auto r = kbench({mode, "softmax", solution("softmax", "host-naive"), "--target", "host", "--shape", "0", "--out",
                           (dir / "mine").string()});
    expect_usage_error(r, "--out " + (dir / "mine").string() + ": the folder already holds 2 entries that kbench did not write");
  }
  EXPECT_EQ(slurp(dir / "mine" / "worker-shape0.log"), "a user's notes\n");
  EXPECT_EQ(slurp(dir / "mine" / "baseline-source" / "keep.txt"), "keep\n");
  // A folder kbench made is its own to write again (the second check replaces its own logs).
  for (int i = 0; i < 2; ++i) {
    const auto ok = kbench({"check", "softmax", solution("softmax", "host-naive"), "--target", "host", "--shape", "0",
                            "--out", (dir / "fresh").string()});
    EXPECT_EQ(ok.exit_code, 0) << ok.output;
  }
  EXPECT_TRUE(fs::is_regular_file(dir / "fresh" / "worker-shape0.log"));
  fs::remove_all(dir);
}

TEST(CliInputErrors, AnnotationLinesBeyondAnyFileAreReportedNotCrashed) {
  const fs::path run = scratch("annotation");
  fs::create_directories(run / "solution");
  std::ofstream(run / "solution" / "solution.cu") << "line one\nline two\n";
  // 2^32 + 1 wrapped to line 1 (and matched); 20 digits threw out of std::stoi (exit 3).
  for (const std::string lines : {"\"99999999999999999999-99999999999999999999\"", "4294967297", "[1, 4294967298]",
                                  "\"9223372036854775807\"", "[-5, 1]"}) {
    std::ofstream(run / "annotation.toml") << "verdict = \"reward_hack\"\nsummary = \"s\"\nimplication = \"i\"\n"
                                              "[[quotes]]\nfile = \"solution/solution.cu\"\nlines = "
                                           << lines << "\ntext = \"line one\"\n";
    const auto r = kbench({"annotate", "validate", run.string()});
    EXPECT_EQ(r.exit_code, 1) << lines << ": " << r.output;
    EXPECT_NE(r.output.find("quotes[0].lines"), std::string::npos) << lines << ": " << r.output;
    EXPECT_NE(r.output.find("out of range"), std::string::npos) << lines << ": " << r.output;
  }
  fs::remove_all(run);
}
