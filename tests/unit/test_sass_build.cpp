// The SASS check end to end on libraries the cuda target builds here with nvcc (no GPU needed):
// the exploit it exists for (tests/fixtures/sass/solutions/exploit-bf16-upcast: an "fp8" GEMM that
// upcasts to bf16 and uses HMMA) fails a problem that requires QGMMA on sm_90a, and the honest
// wgmma e4m3 solution passes it. Needs cuobjdump for the facts (skipped, visibly, without it);
// the no-disassembler path is tested everywhere nvcc is.
#include <gtest/gtest.h>

#include <filesystem>

#include "eval/result.h"
#include "eval/sass.h"
#include "eval/worker_sandbox.h"
#include "target/target.h"
#include "test_support.h"

namespace fs = std::filesystem;
using kb::testing_support::ScopedEnv;
using kb::testing_support::TempDir;

#if KBENCH_WITH_CUDA
namespace kb {
std::unique_ptr<Target> make_cuda_target();
}
#endif

namespace {

const std::map<std::string, std::vector<std::string>> kRequireQgmma{{"sm_90a", {"QGMMA"}}};

class SassBuild : public testing::Test {
 protected:
  void SetUp() override {
#if !KBENCH_WITH_CUDA
    GTEST_SKIP() << "kbench was built without the CUDA toolkit";
#else
    std::string looked;
    if (kb::testing_support::nvcc_for_tests(&looked).empty()) GTEST_SKIP() << "nvcc not found at " << looked;
    target_ = kb::make_cuda_target();
#endif
  }

  // Builds a fixture solution for sm_90a, whatever GPU this machine has.
  kb::BuildResult build(const std::string& name) {
    ScopedEnv arch("KBENCH_CUDA_ARCH", "sm_90a");
    const fs::path dir = fs::path(KBENCH_SOURCE_DIR) / "tests/fixtures/sass/solutions" / name;
    kb::BuildResult b = target_->build(dir, cache_.path());
    EXPECT_TRUE(b.ok) << b.command << "\n" << b.log;
    return b;
  }

  // Whether the build targets sm_90a (a GPU of another arch makes the cuda target build for it).
  static bool for_sm90a(const kb::BuildResult& b) {
    const auto archs = kb::archs_in_build_command(b.command);
    return archs == std::vector<std::string>{"sm_90a"};
  }

  std::unique_ptr<kb::Target> target_;
  TempDir cache_{"sass-build"};
};

}  // namespace

TEST_F(SassBuild, Bf16UpcastExploitFailsAQgmmaRequirement) {
  const kb::BuildResult b = build("exploit-bf16-upcast");
  ASSERT_TRUE(b.ok);
  if (!for_sm90a(b)) GTEST_SKIP() << "a GPU of another arch is present: the build targets it: " << b.command;
  kb::SassReport r = kb::inspect_sass(b.library);
  if (!r.available) GTEST_SKIP() << "no disassembler: " << r.note;
  ASSERT_EQ(r.listing.kernels.size(), 1u);
  const kb::SassKernel& k = r.listing.kernels[0];
  EXPECT_EQ(k.arch, "sm_90a");
  EXPECT_NE(k.demangled.find("fp8_gemm_tile"), std::string::npos) << k.demangled;
  EXPECT_EQ(k.tensor_core().count("HMMA"), 1u);
  EXPECT_EQ(k.tensor_core().count("QGMMA"), 0u);
  EXPECT_TRUE(k.registers.has_value());
  EXPECT_EQ(k.count("STL"), 0u);
  EXPECT_EQ(r.kernel_names(), kb::library_kernel_names(b.library));
  // The same listing from cuobjdump in its sandbox (what the evaluator runs).
  if (kb::probe_worker_sandbox().ok) {
    const kb::SassReport boxed = kb::inspect_sass(b.library, /*sandbox=*/true);
    EXPECT_TRUE(boxed.available) << boxed.note;
    EXPECT_EQ(boxed.kernel_names(), r.kernel_names());
  }
  auto v = kb::check_required_instructions(kRequireQgmma, b.command, r);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->verdict(), kb::Verdict::fail);
  EXPECT_EQ(kb::reason_name(v->reason), "missing_required_instruction");
  EXPECT_NE(v->message.find("HMMA"), std::string::npos) << v->message;
}

TEST_F(SassBuild, HonestWgmmaFp8PassesAQgmmaRequirement) {
  const kb::BuildResult b = build("honest-qgmma");
  ASSERT_TRUE(b.ok);
  if (!for_sm90a(b)) GTEST_SKIP() << "a GPU of another arch is present: the build targets it: " << b.command;
  kb::SassReport r = kb::inspect_sass(b.library);
  if (!r.available) GTEST_SKIP() << "no disassembler: " << r.note;
  ASSERT_EQ(r.listing.kernels.size(), 1u);
  EXPECT_EQ(r.listing.kernels[0].tensor_core().count("QGMMA"), 1u);
  EXPECT_FALSE(kb::check_required_instructions(kRequireQgmma, b.command, r));
  ASSERT_EQ(r.required.size(), 1u);
  EXPECT_TRUE(r.required[0].satisfied());
}

// Without a disassembler the facts are missing with a note naming where kbench looked, the kernel
// names cannot be listed, and a requirement gives an error verdict: never a silent pass.
TEST_F(SassBuild, NoDisassemblerFailsClosed) {
  const kb::BuildResult b = build("honest-qgmma");
  ASSERT_TRUE(b.ok);
  ScopedEnv none("KBENCH_CUOBJDUMP", "/nonexistent/cuobjdump");
  kb::SassReport r = kb::inspect_sass(b.library);
  EXPECT_FALSE(r.available);
  EXPECT_NE(r.note.find("/nonexistent/cuobjdump"), std::string::npos) << r.note;
  EXPECT_THROW(kb::library_kernel_names(b.library), kb::SassUnavailable);
  auto v = kb::check_required_instructions(kRequireQgmma, b.command, r);
  if (!for_sm90a(b)) GTEST_SKIP() << "a GPU of another arch is present: the build targets it: " << b.command;
  ASSERT_TRUE(v);
  EXPECT_EQ(v->verdict(), kb::Verdict::error);
  EXPECT_EQ(v->reason, kb::Reason::instructions_unverified);
  EXPECT_FALSE(kb::check_required_instructions({{"sm_90a", {}}}, b.command, r));
}
