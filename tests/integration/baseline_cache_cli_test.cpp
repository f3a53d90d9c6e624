// The baseline's cache through the real kbench (eval/baseline_cache.h): the first eval times the
// baseline and stores it, the next one reads it back and records it byte for byte as the first did,
// its times set the solution's derived call timeout, and a changed problem or --refresh-baseline
// times the baseline again.
//
// The deck has no host baseline, so the test makes a copy of softmax whose baseline.cpp is the
// deck's host-fast solution. A comment unique to this run in its problem.toml gives it keys of its
// own in the user's cache (whose build cache and host ceilings stay warm); the test removes the
// cache files it made.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"
#include "core/json_text.h"
#include "deck/problem.h"
#include "eval/call_timeout.h"
#include "eval/result.h"
#include "target/python_solution.h"

namespace fs = std::filesystem;

namespace {

using kb::test::kbench;

const fs::path kSoftmax = fs::path(KBENCH_SOURCE_DIR) / "problems" / "softmax";
const fs::path kHostFast = kSoftmax / "solutions" / "host-fast";

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class BaselineCacheCli : public testing::Test {
 protected:
  BaselineCacheCli() {
    root_ = fs::temp_directory_path() / ("kbench-baseline-cache-cli-" + std::to_string(getpid()));
    fs::remove_all(root_);
    const fs::path dir = problem_dir();
    fs::create_directories(dir);
    for (const auto& e : fs::directory_iterator(kSoftmax))
      if (e.path().filename() != "solutions" && e.path().filename() != "baseline.cu")
        fs::copy(e.path(), dir / e.path().filename(), fs::copy_options::recursive);
    fs::copy_file(kHostFast / "solution.cpp", dir / "baseline.cpp");
    // The host baseline links no vendor library.
    std::string toml = read_text(dir / "problem.toml");
    toml = std::regex_replace(toml, std::regex(R"(\nlibraries = \["cudnn"\]\n)"), "\n");
    toml += "\n# baseline cache test " + std::to_string(getpid()) + " " +
            std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) + "\n";
    std::ofstream(dir / "problem.toml", std::ios::trunc) << toml;
  }
  ~BaselineCacheCli() override {
    std::error_code ec;
    for (const auto& f : cache_files_) fs::remove(f, ec);
    fs::remove_all(root_, ec);
  }
  fs::path problem_dir() const { return root_ / "softmax"; }

  struct Run {
    kb::CommandResult r;
    nlohmann::json result;
  };
  // One eval of host-fast on the first shape, briefly timed; the options are the same every time,
  // as they are part of the key.
  Run eval(const std::string& tag, std::vector<std::string> extra = {}) {
    const fs::path out = root_ / ("out-" + tag);
    std::vector<std::string> args = {"eval", problem_dir().string(), kHostFast.string(), "--target", "host",
                                     "--shape", "0", "--max-time", "0.2", "--out", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    // An attempt the machine was too loaded to judge is judged again (cli_test_util.h) as if it
    // had not run: a baseline it stored goes too (its --out folder goes anyway), or the next attempt would read it from the cache.
    const auto forget = [&](const kb::CommandResult& r) {
      std::error_code ec;
      for (const auto& f : stored_by(r)) fs::remove(f, ec);
    };
    Run run{kbench(args, std::chrono::minutes(3), forget), nullptr};
    run.result = nlohmann::json::parse(read_text(out / "result.json"), nullptr, false);
    for (auto& f : stored_by(run.r)) cache_files_.push_back(std::move(f));  // removed afterwards
    return run;
  }

  // Where a run stored a baseline, from what it said.
  static std::vector<std::string> stored_by(const kb::CommandResult& r) {
    static const std::regex stored(R"(baseline: cached \(([^)\n]+)\))");
    std::vector<std::string> files;
    for (std::sregex_iterator m(r.output.begin(), r.output.end(), stored), end; m != end; ++m) files.push_back((*m)[1].str());
    return files;
  }

  fs::path root_;
  std::vector<fs::path> cache_files_;
};

bool says(const kb::CommandResult& r, const std::string& text) { return r.output.find(text) != std::string::npos; }

// The verdict summary's line for v3's view: "vs baseline 1.023x (...): beats the baseline".
bool summary_line_present(const kb::CommandResult& r) {
  static const std::regex line(
      R"(vs baseline [0-9.]+x \(geomean of baseline/solution medians\): (beats|does not beat) the baseline)");
  return std::regex_search(r.output, line);
}

TEST_F(BaselineCacheCli, ASecondEvalReadsTheBaselineBackExactlyAsTheFirstWroteIt) {
  const Run first = eval("first");
  ASSERT_EQ(first.r.exit_code, 0) << first.r.output;
  ASSERT_TRUE(first.result.is_object()) << first.r.output;
  const nlohmann::json& baseline = first.result["baseline"];
  ASSERT_TRUE(baseline.is_object()) << first.r.output;
  EXPECT_EQ(baseline["verdict"], "pass");
  EXPECT_FALSE(says(first.r, "baseline: from the cache")) << first.r.output;
  ASSERT_EQ(cache_files_.size(), 1u) << first.r.output;
  EXPECT_TRUE(fs::is_regular_file(cache_files_[0]));

  // A real baseline's record survives reading back unchanged.
  EXPECT_EQ(kb::json_text(kb::to_json(kb::eval_result_from_json(baseline))), kb::json_text(baseline));

  const Run second = eval("second");
  ASSERT_EQ(second.r.exit_code, 0) << second.r.output;
  EXPECT_TRUE(says(second.r, "baseline: from the cache (" + cache_files_[0].string() + ")")) << second.r.output;
  EXPECT_EQ(cache_files_.size(), 1u) << "a hit stores nothing";
  EXPECT_EQ(kb::json_text(second.result["baseline"]), kb::json_text(baseline));
  EXPECT_EQ(second.result["verdict"], "pass");

  // KernelBench v3's "beats baseline" beside kbench's fractions, from the two medians of the shape
  // (the baseline here is host-fast itself, so near 1 either way), whether the baseline was timed
  // or read back from the cache; the verdict summary says it.
  for (const Run* run : {&first, &second}) {
    const nlohmann::json& summary = run->result["summary"];
    ASSERT_TRUE(summary["speedup_vs_baseline"].is_number()) << summary.dump(2);
    const double expected = run->result["baseline"]["shapes"][0]["timing"]["median"].get<double>() /
                            run->result["shapes"][0]["timing"]["median"].get<double>();
    EXPECT_NEAR(summary["speedup_vs_baseline"].get<double>(), expected, 1e-12 * expected);
    EXPECT_EQ(summary["beats_baseline"], expected >= 1.0);
    EXPECT_TRUE(summary_line_present(run->r)) << run->r.output;
  }

  // The solution's derived call timeout follows the cached baseline's time of the shape
  // (eval/call_timeout.h); the first eval, without it, used the naive-rate estimate.
  const kb::Problem p = kb::load_problem(problem_dir());
  const double median = baseline["shapes"][0]["timing"]["median"];
  const auto with_baseline = kb::default_call_timeout(p, 0, "host", median).call();
  const auto without = kb::default_call_timeout(p, 0, "host", std::nullopt).call();
  ASSERT_NE(with_baseline, without);
  EXPECT_DOUBLE_EQ(second.result["shapes"][0]["call_timeout_seconds"].get<double>(),
                   static_cast<double>(with_baseline.count()) / 1000);
  EXPECT_DOUBLE_EQ(first.result["shapes"][0]["call_timeout_seconds"].get<double>(),
                   static_cast<double>(without.count()) / 1000);

  // --refresh-baseline times it again and overwrites the same file.
  const Run refreshed = eval("refreshed", {"--refresh-baseline"});
  ASSERT_EQ(refreshed.r.exit_code, 0) << refreshed.r.output;
  EXPECT_FALSE(says(refreshed.r, "baseline: from the cache")) << refreshed.r.output;
  ASSERT_EQ(cache_files_.size(), 2u) << refreshed.r.output;
  EXPECT_EQ(cache_files_[1], cache_files_[0]);
  EXPECT_EQ(refreshed.result["baseline"]["verdict"], "pass");

  // A changed problem is a different key: timed again, stored apart.
  std::ofstream(problem_dir() / "problem.toml", std::ios::app) << "# changed\n";
  const Run changed = eval("changed");
  ASSERT_EQ(changed.r.exit_code, 0) << changed.r.output;
  EXPECT_FALSE(says(changed.r, "baseline: from the cache")) << changed.r.output;
  ASSERT_EQ(cache_files_.size(), 3u) << changed.r.output;
  EXPECT_NE(cache_files_[2], cache_files_[0]);
}

// baseline.py, PyTorch (eval/baseline_stage.h): judged as a Python solution, shown as such, and
// cached like a native baseline. Here softmax's python-torch solution stands in for a library.
TEST_F(BaselineCacheCli, APythonBaselineIsJudgedAsAPythonSolutionAndNamedByShow) {
  if (const auto why = kb::python_unavailable_reason("host")) {
    if (std::getenv("CI")) FAIL() << "Python solutions unavailable in CI: " << *why;
    GTEST_SKIP() << "Python solutions unavailable here: " << *why;
  }
  fs::remove(problem_dir() / "baseline.cpp");
  fs::copy_file(kSoftmax / "solutions" / "python-torch" / "solution.py", problem_dir() / "baseline.py");
  const kb::CommandResult shown = kbench({"show", problem_dir().string()});
  EXPECT_NE(shown.output.find("baseline (host: baseline.py, cuda: baseline.py)"), std::string::npos) << shown.output;

  const Run first = eval("python-first");
  ASSERT_EQ(first.r.exit_code, 0) << first.r.output;
  const nlohmann::json& baseline = first.result["baseline"];
  ASSERT_TRUE(baseline.is_object()) << first.r.output;
  EXPECT_EQ(baseline["verdict"], "pass") << baseline.dump(2);
  EXPECT_EQ(fs::path(baseline["solution_dir"].get<std::string>()).filename(), "baseline.py");
  EXPECT_NE(baseline["build"]["command"].get<std::string>().find("Python solution"), std::string::npos)
      << baseline["build"].dump(2);
  ASSERT_EQ(cache_files_.size(), 1u) << first.r.output;
  const Run second = eval("python-second");
  ASSERT_EQ(second.r.exit_code, 0) << second.r.output;
  EXPECT_TRUE(says(second.r, "baseline: from the cache (" + cache_files_[0].string() + ")")) << second.r.output;
}

}  // namespace
