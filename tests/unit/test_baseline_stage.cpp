// A problem's baseline staged as a solution folder (eval/baseline_stage.h): its source as
// solution.cu with the kits' files beside it, so that the deck's shared baselines
// (problems/kit/v3/cublas_sgemm_baseline.cuh, problems/kit/cudnn_softmax_baseline.cuh) are found by
// the baselines that include them; the problem's own kit wins a name both kits use; and a change to
// the deck's kit changes the baseline cache's key (a stale record would otherwise be served); and a
// Python baseline (baseline.py) is staged alone and keyed on the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/read_file.h"
#include "deck/problem.h"
#include "eval/baseline_cache.h"
#include "eval/baseline_stage.h"
#include "test_support.h"

namespace kb {
namespace {

namespace fs = std::filesystem;
using testing_support::TempDir;

const fs::path kProblems = fs::path(KBENCH_SOURCE_DIR) / "problems";

TEST(BaselineStage, TheDeckKitsSharedBaselineIsStagedBesideTheSource) {
  TempDir work("baseline-stage");
  for (const char* id : {"l1_matmul", "l1_square_matmul", "l1_irregular_matmul", "l1_tall_skinny_matmul"}) {
    const Problem p = load_problem(kProblems / id);
    const auto dir = stage_baseline(p, "cuda", work.path());
    ASSERT_TRUE(dir.has_value()) << id;
    EXPECT_EQ(read_file(*dir / "solution.cu"), read_file(kProblems / id / "baseline.cu")) << id;
    EXPECT_EQ(read_file(*dir / "v3" / "cublas_sgemm_baseline.cuh"), read_file(kProblems / "kit" / "v3" / "cublas_sgemm_baseline.cuh"))
        << id;
    EXPECT_NE(read_file(*dir / "solution.cu").find("#include \"v3/cublas_sgemm_baseline.cuh\""), std::string::npos) << id;
  }
  for (const char* id : {"softmax", "l1_softmax"}) {
    const auto dir = stage_baseline(load_problem(kProblems / id), "cuda", work.path());
    ASSERT_TRUE(dir.has_value()) << id;
    EXPECT_TRUE(fs::is_regular_file(*dir / "cudnn_softmax_baseline.cuh")) << id;
  }
}

TEST(BaselineStage, NoBaselineForTheTargetIsNothingStaged) {
  TempDir work("baseline-stage-none");
  EXPECT_FALSE(stage_baseline(load_problem(kProblems / "l1_gelu"), "cuda", work.path()).has_value());
  EXPECT_FALSE(stage_baseline(load_problem(kProblems / "l1_matmul"), "host", work.path()).has_value());
}

// A copy of l1_softmax with a kit of its own beside a deck kit of the copy's: both staged, the
// problem's header winning the shared name; and the cache key follows the deck kit's content.
TEST(BaselineStage, TheProblemsKitWinsAndTheDeckKitIsInTheCacheKey) {
  TempDir deck("baseline-stage-deck"), work("baseline-stage-work");
  const fs::path problem = deck.path() / "l1_softmax";
  fs::create_directories(problem / "kit");
  for (const char* f : {"problem.toml", "baseline.cu", "prompt.md"}) fs::copy_file(kProblems / "l1_softmax" / f, problem / f);
  fs::copy(kProblems / "kit", deck.path() / "kit", fs::copy_options::recursive);
  std::ofstream(problem / "kit" / "cudnn_softmax_baseline.cuh") << "// the problem's own\n";
  const Problem p = load_problem(problem);
  ASSERT_EQ(baseline_kits(p).size(), 2u);
  const auto dir = stage_baseline(p, "cuda", work.path());
  ASSERT_TRUE(dir.has_value());
  EXPECT_EQ(read_file(*dir / "cudnn_softmax_baseline.cuh"), "// the problem's own\n");
  EXPECT_TRUE(fs::is_regular_file(*dir / "v3" / "block_reduce.cuh"));

  const std::string before = baseline_cache_key(p, "cuda", "gpu", "1.0", {});
  std::ofstream(deck.path() / "kit" / "v3" / "cublas_sgemm_baseline.cuh", std::ios::app) << "// changed\n";
  EXPECT_NE(baseline_cache_key(p, "cuda", "gpu", "1.0", {}), before) << "a deck kit change must miss the cache";
}

// baseline.py (PyTorch, where the library is reached only from Python): the source for every target
// without a native baseline, staged as solution.py, and keyed in
// the cache on the interpreter too: another Python (KBENCH_PYTHON) is another baseline.
TEST(BaselineStage, APythonBaselineIsStagedAloneAndKeyedOnTheInterpreter) {
  TempDir deck("baseline-stage-py-deck"), work("baseline-stage-py-work");
  const fs::path problem = deck.path() / "softmax";
  fs::create_directories(problem);
  for (const char* f : {"problem.toml", "prompt.md", "baseline.cu"}) fs::copy_file(kProblems / "softmax" / f, problem / f);
  fs::copy(kProblems / "kit", deck.path() / "kit", fs::copy_options::recursive);
  std::ofstream(problem / "baseline.py") << "def setup(problem):\n    return None\n";
  const Problem p = load_problem(problem);
  // The native source wins where there is one: cuda keeps baseline.cu, host takes baseline.py.
  EXPECT_EQ(baseline_source(p, "cuda").filename(), "baseline.cu");
  EXPECT_EQ(baseline_source(p, "host").filename(), "baseline.py");
  EXPECT_TRUE(is_python_baseline(baseline_source(p, "host")));
  EXPECT_FALSE(is_python_baseline(baseline_source(p, "cuda")));
  const auto dir = stage_baseline(p, "host", work.path());
  ASSERT_TRUE(dir.has_value());
  EXPECT_EQ(read_file(*dir / "solution.py"), read_file(problem / "baseline.py"));
  // With the kits' Python modules (the deck's torch_baselines.py), never their C++ headers.
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(*dir))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), *dir).string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"solution.py", "torch_baselines.py"}));

  const char* was = std::getenv("KBENCH_PYTHON");
  const std::string saved = was ? was : "";
  setenv("KBENCH_PYTHON", (deck.path() / "python-a").c_str(), 1);
  const std::string a = baseline_cache_key(p, "host", "cpu", "1.0", {});
  const std::string cuda_a = baseline_cache_key(p, "cuda", "gpu", "1.0", {});
  setenv("KBENCH_PYTHON", (deck.path() / "python-b").c_str(), 1);
  EXPECT_NE(baseline_cache_key(p, "host", "cpu", "1.0", {}), a) << "another interpreter must miss the cache";
  EXPECT_EQ(baseline_cache_key(p, "cuda", "gpu", "1.0", {}), cuda_a) << "a native baseline does not depend on Python";
  if (was) setenv("KBENCH_PYTHON", saved.c_str(), 1);
  else unsetenv("KBENCH_PYTHON");
}

}  // namespace
}  // namespace kb
