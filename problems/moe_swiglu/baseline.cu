// Baseline (reference line, never scored): cuBLAS grouped GEMM, cublasGemmGroupedBatchedEx (bf16 in,
// bf16 out, fp32 compute), one group per expert with rows holding its two GEMMs (gate and up), then
// a SwiGLU epilogue kernel. cuBLAS takes the per-expert row counts on the host, so every call copies
// expert_offsets back and waits for it: the price of a host-driven grouped GEMM, which fused device-
// side scheduling avoids. g and u are rounded to bf16 before the epilogue (kernel 2 of CALIBRATION.md).
//
// Row-major out = x W is, in cuBLAS's column-major terms, out^T (I x rows) = W^T (I x H) x^T (H x rows):
// A = W[e] viewed column-major (m = I, k = H, lda = I), B = x's rows of expert e (k = H, n = rows,
// ldb = H), C = g or u's rows (ldc = I), no transposes.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "kbench/solution.h"

namespace {

struct State {
  int64_t rows = 0, experts = 0, hidden = 0, inter = 0;
  const __nv_bfloat16* w_gate = nullptr;
  const __nv_bfloat16* w_up = nullptr;
  cublasHandle_t handle = nullptr;
  __nv_bfloat16* g = nullptr;  // [rows, inter] scratch: x W_gate, then x W_up
  __nv_bfloat16* u = nullptr;
  void** pointers = nullptr;  // device: A, B and C pointer arrays, 2 problems per expert each
  std::vector<int> offsets;
};

__global__ void swiglu_epilogue(const __nv_bfloat16* __restrict__ g, const __nv_bfloat16* __restrict__ u,
                                __nv_bfloat16* __restrict__ out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float gv = __bfloat162float(g[i]), uv = __bfloat162float(u[i]);
    out[i] = __float2bfloat16(gv / (1.0f + expf(-gv)) * uv);
  }
}

int64_t dim(const kb_problem* p, const char* name) {
  for (int i = 0; i < p->n_dims; ++i)
    if (std::strcmp(p->dim_names[i], name) == 0) return p->dim_values[i];
  return -1;
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  s->rows = dim(p, "num_tokens") * dim(p, "top_k");
  s->experts = dim(p, "num_experts");
  s->hidden = dim(p, "hidden_size");
  s->inter = dim(p, "intermediate_size");
  s->w_gate = static_cast<const __nv_bfloat16*>(p->weights[0].data);
  s->w_up = static_cast<const __nv_bfloat16*>(p->weights[1].data);
  s->offsets.resize(static_cast<size_t>(s->experts + 1));
  if (cublasCreate(&s->handle) != CUBLAS_STATUS_SUCCESS) return 1;
  const size_t scratch = static_cast<size_t>(s->rows * s->inter) * sizeof(__nv_bfloat16);
  if (cudaMalloc(&s->g, scratch) != cudaSuccess || cudaMalloc(&s->u, scratch) != cudaSuccess) return 2;
  if (cudaMalloc(reinterpret_cast<void**>(&s->pointers), 3 * 2 * static_cast<size_t>(s->experts) * sizeof(void*)) != cudaSuccess) return 2;
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<State*>(state);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const auto* x = static_cast<const __nv_bfloat16*>(c->inputs[0].data);
  if (cudaMemcpyAsync(s->offsets.data(), c->inputs[1].data, s->offsets.size() * sizeof(int), cudaMemcpyDeviceToHost,
                      stream) != cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess)
    return 3;
  // One group per expert with rows: two problems (gate, up) sharing m, n, k.
  std::vector<cublasOperation_t> trans;
  std::vector<int> m, n, k, lda, ldb, ldc, group_size;
  std::vector<float> alpha, beta;
  std::vector<const void*> a, b, cc;
  for (int64_t e = 0; e < s->experts; ++e) {
    const int count = s->offsets[static_cast<size_t>(e + 1)] - s->offsets[static_cast<size_t>(e)];
    if (count <= 0) continue;
    const int64_t row0 = s->offsets[static_cast<size_t>(e)];
    trans.push_back(CUBLAS_OP_N);
    m.push_back(static_cast<int>(s->inter));
    n.push_back(count);
    k.push_back(static_cast<int>(s->hidden));
    lda.push_back(static_cast<int>(s->inter));
    ldb.push_back(static_cast<int>(s->hidden));
    ldc.push_back(static_cast<int>(s->inter));
    group_size.push_back(2);
    alpha.push_back(1.0f);
    beta.push_back(0.0f);
    a.push_back(s->w_gate + e * s->hidden * s->inter);
    a.push_back(s->w_up + e * s->hidden * s->inter);
    b.push_back(x + row0 * s->hidden);
    b.push_back(x + row0 * s->hidden);
    cc.push_back(s->g + row0 * s->inter);
    cc.push_back(s->u + row0 * s->inter);
  }
  const size_t problems = a.size();
  std::vector<const void*> all(a);
  all.insert(all.end(), b.begin(), b.end());
  all.insert(all.end(), cc.begin(), cc.end());
  // From pageable host memory the copy is staged before cudaMemcpyAsync returns, so `all` may go.
  if (cudaMemcpyAsync(s->pointers, all.data(), all.size() * sizeof(void*), cudaMemcpyHostToDevice, stream) != cudaSuccess)
    return 4;
  if (cublasSetStream(s->handle, stream) != CUBLAS_STATUS_SUCCESS) return 5;
  const cublasStatus_t st = cublasGemmGroupedBatchedEx(
      s->handle, trans.data(), trans.data(), m.data(), n.data(), k.data(), alpha.data(), s->pointers, CUDA_R_16BF,
      lda.data(), s->pointers + problems, CUDA_R_16BF, ldb.data(), beta.data(),
      s->pointers + 2 * problems, CUDA_R_16BF, ldc.data(),
      static_cast<int>(group_size.size()), group_size.data(), CUBLAS_COMPUTE_32F);
  if (st != CUBLAS_STATUS_SUCCESS) return 6;
  swiglu_epilogue<<<1024, 256, 0, stream>>>(s->g, s->u, static_cast<__nv_bfloat16*>(c->outputs[0].data),
                                            s->rows * s->inter);
  return cudaGetLastError() == cudaSuccess ? 0 : 7;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (s->handle) cublasDestroy(s->handle);
  cudaFree(s->g);
  cudaFree(s->u);
  cudaFree(s->pointers);
  delete s;
}
