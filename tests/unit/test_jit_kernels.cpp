// A Python solution's own kernels (eval/jit_kernels.h): the kernels the .cubin files of its JIT
// cache define, minus names that look like a library's. The exploit this exists for names a
// Triton kernel after a library kernel (cuBLAS's nvjet_..., a mangled aten name) so that the
// library kernel, launched by a torch operator, would pass provenance as the solution's own: such
// names are set aside, while an honest Triton kernel's name is taken. Cubins are compiled here by
// nvcc (no GPU needed); their names are read from the ELF file, their machine code with cuobjdump
// where it is at hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/subprocess.h"
#include "eval/jit_kernels.h"
#include "test_support.h"

namespace fs = std::filesystem;
using kb::testing_support::TempDir;

namespace {

TEST(JitKernels, LibraryKernelNamesAreRecognisedAndTritonNamesAreNot) {
  for (const char* library : {"_ZN2at6native29vectorized_elementwise_kernelILi4EEEviT_", "_Z7mangledPf",
                              "nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT", "sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n",
                              "sm80_xmma_fprop_implicit_gemm", "ampere_sgemm_128x64_nn", "volta_fp16_s884gemm_fp16_128x128",
                              "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4", "xmma_gemm_kernel"})
    EXPECT_TRUE(kb::looks_like_library_kernel(library)) << library;
  for (const char* own : {"_softmax_rows", "matmul_kernel", "fp8_gemm", "_fwd_kernel_stage1", "gemm_sm90", "xmm_load",
                          "Z_kernel", "attention_ampere"})
    EXPECT_FALSE(kb::looks_like_library_kernel(own)) << own;
}

TEST(JitKernels, AnEmptyOrMissingCacheIsReadableAndDefinesNothing) {
  TempDir dir("jit-empty");
  fs::create_directories(dir.path());
  for (const fs::path& cache : {dir.path(), dir.path() / "absent"}) {
    const kb::JitKernels j = kb::jit_kernels(cache, false);
    EXPECT_TRUE(j.available);
    EXPECT_TRUE(j.names.empty());
    EXPECT_EQ(j.cubins, 0u);
  }
}

TEST(JitKernels, TheCachesCubinsNameTheSolutionsKernelsAndSetLibraryNamesAside) {
#if !KBENCH_WITH_CUDA
  GTEST_SKIP() << "kbench was built without the CUDA toolkit";
#else
  std::string looked;
  const fs::path nvcc = kb::testing_support::nvcc_for_tests(&looked);
  if (nvcc.empty()) GTEST_SKIP() << "nvcc not found at " << looked;
  TempDir dir("jit-cubins");
  fs::create_directories(dir.path());
  // Triton's layout: one folder per compiled kernel, named by a hash, holding <name>.cubin.
  const fs::path src = dir.path() / "kernels.cu";
  std::ofstream(src) << "extern \"C\" __global__ void _softmax_rows(float* x) { x[threadIdx.x] = 1.0f; }\n"
                        "extern \"C\" __global__ void nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT(float* x) { x[0] = 2.0f; }\n"
                        "__global__ void mangled(float* x) { x[0] = 3.0f; }\n";
  const fs::path hashed = dir.path() / "cache" / "K3J2ZQ4V";
  fs::create_directories(hashed);
  const kb::CommandResult r = kb::run_command(
      {nvcc.string(), "-cubin", "-arch=sm_90", "-o", (hashed / "_softmax_rows.cubin").string(), src.string()},
      std::chrono::minutes(3));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ofstream(hashed / "_softmax_rows.json") << "{\"name\": \"_softmax_rows\"}";  // not a cubin: not read
  const kb::JitKernels j = kb::jit_kernels(dir.path() / "cache", false);
  ASSERT_TRUE(j.available) << j.note;
  EXPECT_EQ(j.cubins, 1u);
  EXPECT_EQ(j.names, (std::set<std::string>{"_softmax_rows"}));
  std::vector<std::string> refused = j.refused;
  std::sort(refused.begin(), refused.end());
  EXPECT_EQ(refused, (std::vector<std::string>{"_Z7mangledPf", "nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NNT"}));
  EXPECT_NE(j.note.find("look like a library's"), std::string::npos) << j.note;
  // The merged machine code carries the archs and kernels the required-instruction check reads,
  // where cuobjdump is at hand; without it the facts are missing and say why.
  if (kb::find_cuobjdump()) {
    EXPECT_TRUE(j.sass.available) << j.sass.note;
    EXPECT_EQ(j.sass.listing.archs.count("sm_90"), 1u);
    EXPECT_EQ(j.sass.listing.kernels.size(), 3u);
  } else {
    EXPECT_FALSE(j.sass.available);
    EXPECT_NE(j.sass.note.find("was not read"), std::string::npos) << j.sass.note;
  }
#endif
}

// A file named .cubin that is not one (truncated, or text) adds no name and says so; nor does an
// ELF header whose section table points past the end of the file.
TEST(JitKernels, AFileThatIsNotACubinDefinesNothing) {
  TempDir dir("jit-bad");
  fs::create_directories(dir.path());
  std::ofstream(dir.path() / "text.cubin") << "not an ELF file";
  std::string elf(64, '\0');
  elf.replace(0, 4, "\x7f" "ELF");
  elf[4] = 2;                    // ELFCLASS64
  elf[0x28] = 0x7f;              // e_shoff far beyond the file
  elf[0x3a] = 64;                // e_shentsize
  elf[0x3c] = 3;                 // e_shnum
  std::ofstream(dir.path() / "header.cubin", std::ios::binary) << elf;
  EXPECT_FALSE(kb::cubin_functions(dir.path() / "text.cubin").has_value());
  EXPECT_FALSE(kb::cubin_functions(dir.path() / "header.cubin").has_value());
  const kb::JitKernels j = kb::jit_kernels(dir.path(), false);
  EXPECT_TRUE(j.available);
  EXPECT_TRUE(j.names.empty());
  EXPECT_EQ(j.cubins, 2u);
  EXPECT_NE(j.note.find("header.cubin"), std::string::npos) << j.note;
  EXPECT_NE(j.note.find("text.cubin"), std::string::npos) << j.note;
}

// The annotation names the source line of each Triton kernel: the def of the function under a jit
// decorator, however the decorators are written; plain functions and a decorator separated from
// its def are not kernels.
TEST(JitKernels, TritonKernelsAreFoundAtTheirDefsWhateverTheirDecorators) {
  TempDir dir("jit-defs");
  fs::create_directories(dir.path() / "pkg");
  std::ofstream(dir.path() / "solution.py") << R"PY(import triton
import triton.language as tl
from triton import jit


@triton.jit
def plain(x_ptr, n):
    pass


@triton.autotune(
    configs=[triton.Config({"BLOCK": 128}, num_warps=4),
             triton.Config({"BLOCK": 256}, num_warps=8)],  # (a comment)
    key=["n"],
)
# a comment between decorators
@triton.jit(do_not_specialize=["n"])
def tuned(x_ptr, n, BLOCK: tl.constexpr):
    pass


@jit
def bare(x_ptr):
    pass


def setup(problem):
    return None


@staticmethod
def not_a_kernel():
    pass


@triton.jit
x = 1
def orphan():
    pass
)PY";
  std::ofstream(dir.path() / "pkg/kernels.py") << "import triton\n\n    @triton.jit\n    def nested(a):\n        pass\n";
  const auto defs = kb::triton_kernel_definitions(dir.path());
  ASSERT_EQ(defs.size(), 4u);
  EXPECT_EQ(defs.at("plain").file, "solution.py");
  EXPECT_EQ(defs.at("plain").line, 7);
  EXPECT_EQ(defs.at("tuned").line, 18);
  EXPECT_EQ(defs.at("bare").line, 23);
  EXPECT_EQ(defs.at("nested").file, "pkg/kernels.py");
  EXPECT_EQ(defs.at("nested").line, 4);
  EXPECT_FALSE(defs.count("setup"));
  EXPECT_FALSE(defs.count("not_a_kernel"));
  EXPECT_FALSE(defs.count("orphan"));
}

}  // namespace
