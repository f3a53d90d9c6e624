// The solution corpus: every problems/<id>/solutions/<name>/ with an expect.toml is evaluated by
// the real kbench binary, and its verdict and failure reason must be the expected ones. Honest
// solutions must pass (with a positive peak_fraction); exploits must fail for the named reason.
// Built twice: for the host target (label integration) and the cuda target (label gpu, skipped
// without a GPU; its tests are named with the suffix .cuda).
//
// Each entry's verdict is recorded in KBENCH_CORPUS_RESULTS_DIR/<target>/ for CorpusFigures, which
// ctest runs after all of them (a fixture: tests/CMakeLists.txt) and which tallies the records
// instead of evaluating the corpus a second time.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <toml++/toml.h>

#include <nlohmann/json.hpp>

#include "core/subprocess.h"
#include "loaded_machine.h"
#include "scratch_dir.h"
#include "target/python_solution.h"
#include "target/target.h"

namespace fs = std::filesystem;

namespace {

struct Entry {
  std::string problem, solution;
  fs::path dir;
  std::string verdict, failure;
  std::vector<std::string> args;
};

std::vector<Entry> corpus() {
  std::vector<Entry> out;
  const fs::path root = fs::path(KBENCH_SOURCE_DIR) / "problems";
  for (const auto& p : fs::directory_iterator(root)) {
    if (!fs::is_directory(p.path() / "solutions")) continue;
    for (const auto& s : fs::directory_iterator(p.path() / "solutions")) {
      const fs::path expect = s.path() / "expect.toml";
      if (!fs::is_regular_file(expect)) continue;
      auto t = toml::parse_file(expect.string());
      if (t["target"].value_or(std::string()) != CORPUS_TARGET) continue;
      Entry e{p.path().filename().string(), s.path().filename().string(), s.path(),
              t["verdict"].value_or(std::string("?")), t["failure"].value_or(std::string()), {}};
      if (auto* a = t["args"].as_array())
        for (const auto& v : *a) e.args.push_back(v.value_or(std::string()));
      out.push_back(e);
    }
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.dir < b.dir; });
  return out;
}

// Test names and failure messages show the folder, not the struct's bytes.
void PrintTo(const Entry& e, std::ostream* os) { *os << e.dir.string(); }

// The kbench binary's modification time: a record made by another build of it is not reused.
int64_t binary_stamp() {
  return static_cast<int64_t>(fs::last_write_time(KBENCH_BINARY).time_since_epoch().count());
}

// Where an entry's verdict is recorded for CorpusFigures.
fs::path record_path(const Entry& e) {
  return fs::path(KBENCH_CORPUS_RESULTS_DIR) / CORPUS_TARGET / (e.problem + "__" + e.solution + ".json");
}

struct Outcome {
  std::string verdict, failure;
};

// A result folder of this process's own (scratch_dir.h), removed however the test ends.
struct OutDir {
  explicit OutDir(const std::string& name) : path(kb::test::scratch_dir(name, /*make=*/false)) {}
  ~OutDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  OutDir(const OutDir&) = delete;
  OutDir& operator=(const OutDir&) = delete;
  const fs::path path;
};

// `kbench eval` of the entry into `out`, as the corpus runs it. `result`: what kbench printed.
nlohmann::json evaluate(const Entry& e, const fs::path& out, kb::CommandResult* result = nullptr) {
  std::vector<std::string> argv = {KBENCH_BINARY, "eval", e.problem, e.dir.string(), "--target", CORPUS_TARGET,
                                   "--json", "--out", out.string(),
                                   // Short timing and no baseline: the corpus proves verdicts, not
                                   // speed (deck-table times the baselines).
                                   "--max-time", "0.2", "--min-samples", "5", "--warmup", "0.02", "--no-baseline"};
  argv.insert(argv.end(), e.args.begin(), e.args.end());
  auto r = kb::run_command(argv, std::chrono::minutes(5));
  auto j = nlohmann::json::parse(r.output.substr(std::min(r.output.find('{'), r.output.size())), nullptr, false);
  if (result) *result = std::move(r);
  return j;
}

class Corpus : public testing::TestWithParam<Entry> {};

TEST_P(Corpus, VerdictAndReasonAreTheExpectedOnes) {
  const Entry& e = GetParam();
  if (std::string(CORPUS_TARGET) == "cuda" && !kb::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  // A Python entry needs Python solutions on the target (target/python_solution.h): skipped,
  // saying why, where they are unavailable -- but not in CI, whose scripts/setup provides them.
  if (kb::is_python_solution(e.dir, std::string(CORPUS_TARGET) == "cuda" ? "solution.cu" : "solution.cpp"))
    if (const auto why = kb::python_unavailable_reason(CORPUS_TARGET)) {
      if (std::getenv("CI")) FAIL() << "Python solutions unavailable in CI: " << *why;
      GTEST_SKIP() << "Python solutions unavailable here: " << *why;
    }
  const OutDir out("corpus-" + e.problem + "-" + e.solution);
  fs::remove(record_path(e));
  kb::CommandResult r;
  auto j = evaluate(e, out.path, &r);
  // `error timing_unconfirmed`: the machine was too loaded to judge (loaded_machine.h), not a
  // verdict on the entry.
  for (int again = 0; again < kb::test::kJudgeAgainWhenTooLoaded && kb::test::too_loaded_to_judge(j) &&
                      e.failure != "timing_unconfirmed";
       ++again) {
    fs::remove_all(out.path);
    kb::test::pause_before_judging_again(again);
    j = evaluate(e, out.path, &r);
  }
  ASSERT_FALSE(r.timed_out) << r.output;
  ASSERT_NE(r.output.find('{'), std::string::npos) << "no JSON from kbench (exit " << r.exit_code << "): " << r.output;
  ASSERT_FALSE(j.is_discarded()) << r.output;
  {
    // The record CorpusFigures tallies: what kbench said, whether or not it was expected.
    fs::create_directories(record_path(e).parent_path());
    std::ofstream(record_path(e)) << nlohmann::json{{"verdict", j.value("verdict", "?")},
                                                    {"failure", j.value("failure", "")},
                                                    {"binary_stamp", binary_stamp()}}.dump();
  }
  // Still too loaded after the pauses: kbench said it could not judge (an error, no score), which
  // the integrity issue allows under load and which is no verdict on the entry, right or wrong; a
  // fail of an honest entry, or a pass of an exploit, is still a failure of this test.
  if (kb::test::too_loaded_to_judge(j) && e.failure != "timing_unconfirmed")
    GTEST_SKIP() << "the machine stayed too loaded to judge " << e.dir << ": " << kb::test::kJudgeAgainWhenTooLoaded + 1
                 << " evaluations said error timing_unconfirmed (kbench could not tell tampering from load): "
                 << j["message"];
  EXPECT_EQ(j["verdict"], e.verdict) << j["message"];
  EXPECT_EQ(j["failure"], e.failure) << j["message"];
  EXPECT_EQ(r.exit_code, e.verdict == "pass" ? 0 : 1);
  if (e.verdict == "pass") {
    ASSERT_TRUE(j["summary"]["peak_fraction_geomean"].is_number());
    EXPECT_GT(j["summary"]["peak_fraction_geomean"].get<double>(), 0.0);
    EXPECT_GT(j["summary"]["sol_fraction_geomean"].get<double>(), 0.0);
    // The launch floor only raises a shape's achievable time above its speed of light: the achievable
    // fraction is never below the SoL one. Host ceilings always carry a floor; a GPU's has one once
    // `kbench ceilings` measured it.
    const auto& achievable = j["summary"]["achievable_fraction_geomean"];
    if (std::string(CORPUS_TARGET) == "host") {
      EXPECT_TRUE(achievable.is_number()) << j["summary"].dump();
    }
    if (achievable.is_number()) {
      EXPECT_GE(achievable.get<double>(), j["summary"]["sol_fraction_geomean"].get<double>() * (1 - 1e-12));
    }
    EXPECT_TRUE(fs::is_regular_file(out.path / "result.json"));
  } else {
    EXPECT_FALSE(j["message"].get<std::string>().empty());
  }
}

// The figures, in one test (ctest runs each parameterised test in a process of its own, so they
// cannot be tallied there): exploits caught / total and honest solutions passed / total. Each
// entry's verdict is the one its parameterised test recorded (ctest runs them first: a fixture),
// evaluated here only when there is no record from this kbench binary (the test binary run on its
// own, or a filter that left the entry out).
// KBENCH_CORPUS_FILTER (an ECMAScript regex searched in "problem/solution") tallies a part of the
// corpus, for machines that limit how long one command may run; the line printed names the filter.
TEST(CorpusFigures, ExploitsCaughtAndHonestPassed) {
  if (std::string(CORPUS_TARGET) == "cuda" && !kb::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  int exploits = 0, caught = 0, honest = 0, passed = 0, recorded = 0, unjudged = 0;
  const int64_t stamp = binary_stamp();
  const char* filter = std::getenv("KBENCH_CORPUS_FILTER");
  const std::regex only(filter ? filter : "");
  for (const Entry& e : corpus()) {
    if (filter && !std::regex_search(e.problem + "/" + e.solution, only)) continue;
    const bool is_exploit = e.solution.rfind("exploit-", 0) == 0;
    if (!is_exploit && e.verdict != "pass") continue;  // bad-* folders prove error handling, not integrity
    // Python entries where Python solutions are unavailable: skipped by their own tests too.
    if (!std::getenv("CI") &&
        kb::is_python_solution(e.dir, std::string(CORPUS_TARGET) == "cuda" ? "solution.cu" : "solution.cpp") &&
        kb::python_unavailable_reason(CORPUS_TARGET))
      continue;
    std::ifstream in(record_path(e));
    auto j = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
    if (j.is_object() && j.value("binary_stamp", int64_t{0}) == stamp) {
      ++recorded;
    } else {
      const OutDir out("figures-" + e.problem + "-" + e.solution);
      j = evaluate(e, out.path);
    }
    const std::string verdict = j.is_discarded() ? "?" : j.value("verdict", "?");
    const std::string failure = j.is_discarded() ? "?" : j.value("failure", "");
    // Not judged: the machine was too loaded for kbench to tell tampering from load (the entry's
    // own test skipped it, saying so); counted apart, neither caught nor passed.
    if (verdict == "error" && failure == "timing_unconfirmed" && e.failure != "timing_unconfirmed") {
      ++unjudged;
      continue;
    }
    if (is_exploit) {
      ++exploits;
      if (verdict == "fail" && failure == e.failure) ++caught;
      else ADD_FAILURE() << e.dir << ": " << verdict << " " << failure << ", expected " << e.failure;
    } else {
      ++honest;
      if (verdict == "pass") ++passed;
      else ADD_FAILURE() << e.dir << ": " << verdict << " " << failure;
    }
  }
  std::cout << "[corpus " << CORPUS_TARGET << (filter ? std::string(" matching '") + filter + "'" : std::string())
            << "] exploits caught " << caught << "/" << exploits << ", honest passed " << passed << "/" << honest
            << (unjudged ? ", " + std::to_string(unjudged) + " not judged (too loaded: timing_unconfirmed)" : std::string())
            << " (" << recorded << " from the entries' own runs, " << exploits + honest - recorded + unjudged
            << " evaluated here)" << std::endl;
  RecordProperty("not_judged", unjudged);
  RecordProperty("exploits_caught", caught);
  RecordProperty("honest_passed", passed);
}

std::string test_name(const testing::TestParamInfo<Entry>& info) {
  std::string n = info.param.problem + "_" + info.param.solution;
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Solutions, Corpus, testing::ValuesIn(corpus()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Corpus);

}  // namespace
