// One cuBLASLt GEMM as the deck's GEMM baselines call it: row-major y (M, N) = x (M, K) times the
// weight, with fp32 accumulation (CUBLAS_COMPUTE_32F, alpha 1, beta 0), the algorithm chosen once
// by cuBLASLt's heuristic with a 32 MiB workspace (what cuBLAS recommends for Hopper).
//
// cuBLASLt is column-major, so the row-major product is computed as y^T (N x M, ld N) =
// op(A) (N x K) B (K x M): B is x, a K x M column-major matrix (ld K), op N; A is the weight:
//   WeightLayout::NK, W (N, K) row-major (a linear layer's weight, y = x W^T): K x N column-major
//     (ld K), op T. This "TN" form is the only one cuBLASLt's FP8 kernels take.
//   WeightLayout::KN, W (K, N) row-major (y = x W): N x K column-major (ld N), op N.
// Per-tensor scales (FP8) are device pointers: D = a_scale * b_scale * (A B), A the weight's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include <cublasLt.h>
#include <cuda_runtime.h>

namespace lt_gemm {

enum class WeightLayout { NK, KN };

struct Gemm {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  void* workspace = nullptr;
};

constexpr size_t kWorkspaceBytes = size_t{32} << 20;

inline void destroy(Gemm& g) {
  if (g.a) cublasLtMatrixLayoutDestroy(g.a);
  if (g.b) cublasLtMatrixLayoutDestroy(g.b);
  if (g.d) cublasLtMatrixLayoutDestroy(g.d);
  if (g.desc) cublasLtMatmulDescDestroy(g.desc);
  if (g.handle) cublasLtDestroy(g.handle);
  cudaFree(g.workspace);
  g = Gemm{};
}

// Sets the per-tensor scale pointer of the weight (A) or of x (B). A scale that changes with every
// call (x's, when it arrives with x or is computed per call) is set again before each run; any
// device pointer serves for choosing the algorithm.
inline bool set_weight_scale(Gemm& g, const void* scale) {
  return cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale, sizeof scale) ==
         CUBLAS_STATUS_SUCCESS;
}
inline bool set_x_scale(Gemm& g, const void* scale) {
  return cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale, sizeof scale) ==
         CUBLAS_STATUS_SUCCESS;
}

// Creates the handle, descriptors, workspace and algorithm; false on any cuBLASLt or CUDA failure.
// `ld_k` is the leading dimension of x and of an NK weight (K, or K padded to what FP8 needs).
// With scales (both non-null), the FP8 per-tensor scale pointers are set.
inline bool create(Gemm& g, int64_t M, int64_t N, int64_t K, int64_t ld_k, WeightLayout layout, cudaDataType weight_type,
                   cudaDataType x_type, cudaDataType y_type, const void* weight_scale = nullptr,
                   const void* x_scale = nullptr) {
  if (cudaMalloc(&g.workspace, kWorkspaceBytes) != cudaSuccess) return false;
  if (cublasLtCreate(&g.handle) != CUBLAS_STATUS_SUCCESS) return false;
  if (cublasLtMatmulDescCreate(&g.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return false;
  const cublasOperation_t op_a = layout == WeightLayout::NK ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a);
  cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b);
  if (weight_scale && x_scale && !(set_weight_scale(g, weight_scale) && set_x_scale(g, x_scale))) return false;
  const bool a_ok = layout == WeightLayout::NK
                        ? cublasLtMatrixLayoutCreate(&g.a, weight_type, K, N, ld_k) == CUBLAS_STATUS_SUCCESS
                        : cublasLtMatrixLayoutCreate(&g.a, weight_type, N, K, N) == CUBLAS_STATUS_SUCCESS;
  if (!a_ok || cublasLtMatrixLayoutCreate(&g.b, x_type, K, M, ld_k) != CUBLAS_STATUS_SUCCESS ||
      cublasLtMatrixLayoutCreate(&g.d, y_type, N, M, N) != CUBLAS_STATUS_SUCCESS)
    return false;
  cublasLtMatmulPreference_t pref = nullptr;
  if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS) return false;
  const uint64_t ws = kWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(g.handle, g.desc, g.a, g.b, g.d, g.d, pref, 1, &result, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || returned < 1) return false;
  g.algo = result.algo;
  return true;
}

// y = x times the weight on `stream`; false when cuBLASLt refuses, with its status on stderr (the
// worker's log).
inline bool run(Gemm& g, const void* weight, const void* x, void* y, cudaStream_t stream) {
  const float alpha = 1.f, beta = 0.f;
  const cublasStatus_t st = cublasLtMatmul(g.handle, g.desc, &alpha, weight, g.a, x, g.b, &beta, y, g.d, y, g.d, &g.algo,
                                           g.workspace, kWorkspaceBytes, stream);
  if (st != CUBLAS_STATUS_SUCCESS) std::fprintf(stderr, "cublasLtMatmul: status %d\n", static_cast<int>(st));
  return st == CUBLAS_STATUS_SUCCESS;
}

}  // namespace lt_gemm
