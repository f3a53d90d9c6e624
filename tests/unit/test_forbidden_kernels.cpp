// The check of library kernels compiled into the solution's module (eval/forbidden_kernels.h) on
// hand-made SASS facts. The exploit it exists for (topk/exploit-cuda-hidden-cub-sort, CUB's sort
// under a pasted name) is built with nvcc and checked in tests/unit/test_cuda_build.cpp.
#include <gtest/gtest.h>

#include "eval/forbidden_kernels.h"

namespace kb {
namespace {

SassKernel kernel(const std::string& name, const std::string& demangled, const std::string& arch = "sm_90a") {
  SassKernel k;
  k.name = name;
  k.demangled = demangled;
  k.arch = arch;
  return k;
}

SassReport report(std::vector<SassKernel> kernels) {
  SassReport r;
  r.available = true;
  r.listing.kernels = std::move(kernels);
  return r;
}

// topk's policy.forbidden, as in problems/topk/problem.toml.
const std::vector<std::string> kTopk = {"cub::", "thrust::", "<cub/", "<thrust/",
                                        "std::(ranges::)?(sort|stable_sort|partial_sort|partial_sort_copy|nth_element)\\b",
                                        "cudnn", "cublas"};

TEST(ForbiddenKernels, ALibraryKernelInTheModuleIsCaughtByItsDemangledName) {
  const auto f = check_forbidden_kernels(
      kTopk, report({kernel("_Z12keep_first_kPKfPKilPfPl", "keep_first_k(float const*, int const*, long, float*, long*)"),
                     kernel("_ZN3cub18CUB_300000_SM_900_31DeviceSegmentedRadixSortKernelE",
                            "void cub::CUB_300000_SM_900::DeviceSegmentedRadixSortKernel<Policy, true>(float const*)")}));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->reason, Reason::forbidden_kernel);
  EXPECT_NE(f->message.find("1 kernel of a library"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("DeviceSegmentedRadixSortKernel"), std::string::npos) << f->message;
  EXPECT_NE(f->message.find("pattern 'cub::'"), std::string::npos) << f->message;
  ASSERT_EQ(f->evidence.size(), 1u);
  EXPECT_EQ(f->evidence[0].kind, "kernel");
  EXPECT_EQ(f->evidence[0].kernel, "_ZN3cub18CUB_300000_SM_900_31DeviceSegmentedRadixSortKernelE");
}

TEST(ForbiddenKernels, TheSolutionsOwnKernelsPass) {
  EXPECT_FALSE(check_forbidden_kernels(
      kTopk, report({kernel("_Z14radix_select_kPKfliPfPl", "radix_select_k(float const*, long, int, float*, long*)"),
                     kernel("plain_c_kernel", "")})));
}

// A kernel built for two archs is one kernel; a name that is not mangled is matched as it is.
TEST(ForbiddenKernels, EachKernelCountsOnceAndUnmangledNamesAreMatched) {
  const auto f = check_forbidden_kernels(
      {"cutlass"}, report({kernel("_ZN7cutlass6KernelE", "cutlass::Kernel<Gemm>", "sm_80"),
                           kernel("_ZN7cutlass6KernelE", "cutlass::Kernel<Gemm>", "sm_90a"), kernel("my_cutlass_copy", "")}));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->evidence.size(), 2u);
  EXPECT_NE(f->message.find("2 kernels"), std::string::npos) << f->message;
}

TEST(ForbiddenKernels, NothingToCheckIsNoFinding) {
  SassReport unread = report({kernel("_ZN3cub6KernelE", "cub::Kernel")});
  unread.available = false;
  EXPECT_FALSE(check_forbidden_kernels(kTopk, unread)) << "without the SASS, runtime provenance is what applies";
  EXPECT_FALSE(check_forbidden_kernels({}, report({kernel("_ZN3cub6KernelE", "cub::Kernel")})));
}

// A pattern that is not a valid regex is matched literally, as the static scan does.
TEST(ForbiddenKernels, AnInvalidRegexIsALiteral) {
  EXPECT_TRUE(check_forbidden_kernels({"flash_attn("}, report({kernel("x", "flash_attn(float*)")})));
  EXPECT_FALSE(check_forbidden_kernels({"flash_attn("}, report({kernel("x", "flash_attn_fwd")})));
}

}  // namespace
}  // namespace kb
