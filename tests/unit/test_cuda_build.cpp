// The cuda target's nvcc command line works: builds the honest cuda softmax into a temporary build
// cache. Needs nvcc, not a GPU (with none visible the arch is $KBENCH_CUDA_ARCH or sm_90a), so it
// runs in CI and catches flag or include-path regressions before they reach a GPU machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "deck/problem.h"
#include "elf_relro.h"
#include "eval/forbidden_kernels.h"
#include "eval/sass.h"
#include "eval/static_scan.h"
#include "target/nvcc_toolkit.h"
#include "target/target.h"
#include "test_support.h"

using kb::testing_support::ScopedEnv;

namespace fs = std::filesystem;

#if KBENCH_WITH_CUDA
namespace kb {
std::unique_ptr<Target> make_cuda_target();
}
#endif

// Skips (visibly) where there is no nvcc to build with; otherwise holds the cuda target.
class NvccTest : public testing::Test {
 protected:
  void SetUp() override {
#if !KBENCH_WITH_CUDA
    GTEST_SKIP() << "kbench was built without the CUDA toolkit";
#else
    std::string looked;
    if (kb::testing_support::nvcc_for_tests(&looked).empty()) GTEST_SKIP() << "nvcc not found at " << looked;
    t = kb::make_cuda_target();
#endif
  }
  std::unique_ptr<kb::Target> t;
};

TEST_F(NvccTest, HonestSoftmaxCompilesWithNvcc) {
  // The caller's TMPDIR must not matter: nvcc's intermediate files go to a temporary folder of the
  // build's own (a CI machine with TMPDIR set once failed every nvcc build on them).
  const fs::path own_tmp = fs::temp_directory_path() / ("kbench-tmpdir-" + std::to_string(getpid()));
  fs::create_directories(own_tmp);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old ? old : "";
  setenv("TMPDIR", own_tmp.c_str(), 1);
  EXPECT_EQ(t->name(), "cuda");
  EXPECT_EQ(t->source_file(), "solution.cu");
  const fs::path root = fs::temp_directory_path() / ("kbench-cuda-build-" + std::to_string(getpid()));
  const fs::path dir = fs::path(KBENCH_SOURCE_DIR) / "problems/softmax/solutions/cuda-fast";
  kb::BuildResult r = t->build(dir, root);
  ASSERT_TRUE(r.ok) << r.command << "\n" << r.log;
  EXPECT_TRUE(fs::is_regular_file(r.library));
  EXPECT_TRUE(kb::testing_support::read_relro(r.library).full()) << "not full RELRO: " << r.command;
  EXPECT_NE(r.command.find("-gencode=arch=compute_"), std::string::npos) << r.command;
  EXPECT_FALSE(r.cached);
  kb::BuildResult again = t->build(dir, root);  // same sources and flags: a cache hit
  EXPECT_TRUE(again.ok && again.cached);
  if (old) setenv("TMPDIR", saved.c_str(), 1);
  else unsetenv("TMPDIR");
  fs::remove_all(root);
  fs::remove_all(own_tmp);
}

// Every cuda solution of the deck (problems/*/solutions/* with a solution.cu), honest and exploit
// alike, is compiled in CI, so a typo, an API misuse or a kit change that breaks a caller shows
// before a GPU machine sees it (a kit's kernel once gained a parameter and an exploit that was not
// on a hand-written list stopped compiling, found only on the GPU). Only a folder whose
// expect.toml expects build_error is left out.
std::vector<std::string> deck_cuda_solutions() {
  std::vector<std::string> found;
  const fs::path problems = fs::path(KBENCH_SOURCE_DIR) / "problems";
  for (const auto& problem : fs::directory_iterator(problems)) {
    const fs::path solutions = problem.path() / "solutions";
    if (!fs::is_directory(solutions)) continue;
    for (const auto& dir : fs::directory_iterator(solutions)) {
      if (!fs::is_regular_file(dir.path() / "solution.cu")) continue;
      std::ifstream expect(dir.path() / "expect.toml");
      const std::string text((std::istreambuf_iterator<char>(expect)), std::istreambuf_iterator<char>());
      if (text.find("\"build_error\"") != std::string::npos) continue;
      found.push_back(fs::relative(dir.path(), problems).string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

class DeckCudaBuild : public NvccTest, public testing::WithParamInterface<std::string> {};

// With the build, the check of library kernels compiled into the module (eval/forbidden_kernels.h),
// which needs no GPU: an exploit that expects `forbidden_kernel` is caught from its SASS (and its
// source gets past the static scan, or it would be no exploit of this check), and every other
// solution of the deck, honest ones included, is not.
TEST_P(DeckCudaBuild, CompilesWithNvcc) {
  const fs::path root = fs::temp_directory_path() / ("kbench-deck-cuda-build-" + std::to_string(getpid()));
  const fs::path dir = fs::path(KBENCH_SOURCE_DIR) / "problems" / GetParam();
  kb::BuildResult r = t->build(dir, root);
  EXPECT_TRUE(r.ok) << r.command << "\n" << r.log;
  if (r.ok) {
    const kb::Problem p = kb::load_problem(dir.parent_path().parent_path());
    std::ifstream expect(dir / "expect.toml");
    const std::string text((std::istreambuf_iterator<char>(expect)), std::istreambuf_iterator<char>());
    const bool exploit = text.find("\"forbidden_kernel\"") != std::string::npos;
    const kb::SassReport sass = kb::inspect_sass(r.library);
    if (!sass.available) {
      // (CI's toolkit has nvcc but no cuobjdump; GPU machines have both: device-check's unit-tests.)
      if (exploit) std::printf("[ note      ] no SASS to read (%s): the forbidden_kernel check is not exercised here\n", sass.note.c_str());
    } else {
      const auto finding = kb::check_forbidden_kernels(p.forbidden, sass);
      EXPECT_EQ(finding.has_value(), exploit) << (finding ? finding->message : "no forbidden kernel found");
    }
    if (exploit) EXPECT_EQ(kb::scan_sources(dir, p.forbidden).reason, kb::Reason::none) << "the static scan already catches it";
  }
  fs::remove_all(root);
}

// The discovery itself: it must find the deck's solutions (a wrong folder would find none and
// the suite above would be empty), exploits included.
TEST(DeckCudaSolutions, DiscoveryFindsEveryProblemsCudaSolutionsExploitsIncluded) {
  const auto found = deck_cuda_solutions();
  EXPECT_GE(found.size(), 40u);
  for (const char* expected : {"softmax/solutions/cuda-fast", "softmax/solutions/exploit-cuda-persisting-l2",
                               "kda/solutions/cuda-recurrent", "moe_swiglu/solutions/cuda-mma"})
    EXPECT_NE(std::find(found.begin(), found.end(), expected), found.end()) << expected;
}

INSTANTIATE_TEST_SUITE_P(Deck, DeckCudaBuild, testing::ValuesIn(deck_cuda_solutions()),
                         [](const testing::TestParamInfo<std::string>& i) {
                           std::string n = i.param;
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

#if KBENCH_WITH_CUDA
// A machine may put a wrapper script on PATH as nvcc (/usr/local/bin/nvcc: `exec
// /usr/local/cuda-13.0/bin/nvcc "$@"`), and CMake then builds kbench with it. The folder above the
// wrapper's bin/ holds no CUDA header: the toolkit is where nvcc says it is, or the input check
// refuses every CUDA header the build reads (the whole deck failed to build on such a machine).
TEST_F(NvccTest, AWrapperScriptOutsideTheToolkitBuildsWithTheToolkitsHeaders) {
  const char* env = std::getenv("KBENCH_NVCC");
  const fs::path real = env && *env ? env : KBENCH_NVCC;
  const fs::path toolkit = kb::nvcc_toolkit_root(real);
  ASSERT_TRUE(fs::is_regular_file(toolkit / "bin" / "nvcc")) << toolkit;
  const fs::path scratch = fs::temp_directory_path() / ("kbench-nvcc-wrapper-" + std::to_string(getpid()));
  fs::create_directories(scratch / "bin");
  const fs::path wrapper = scratch / "bin" / "nvcc";
  std::ofstream(wrapper) << "#!/bin/sh\nexec " << (toolkit / "bin" / "nvcc").string() << " \"$@\"\n";
  fs::permissions(wrapper, fs::perms::owner_all);
  EXPECT_EQ(kb::nvcc_toolkit_root(wrapper), toolkit);
  {
    ScopedEnv use("KBENCH_NVCC", wrapper.string());
    const fs::path dir = fs::path(KBENCH_SOURCE_DIR) / "problems/softmax/solutions/cuda-fast";
    const kb::BuildResult r = t->build(dir, scratch / "build");
    EXPECT_TRUE(r.ok) << r.command << "\n" << r.log;
    EXPECT_EQ(r.command.rfind(wrapper.string(), 0), 0u) << r.command;  // built by the wrapper, not around it
  }
  // A path that is no nvcc has no toolkit.
  EXPECT_EQ(kb::nvcc_toolkit_root(scratch / "no-such-nvcc"), fs::path());
  fs::remove_all(scratch);
}
#endif
