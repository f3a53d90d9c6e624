// Honest: fp32 FMA chains on the CUDA cores, 128 x 128 tiles, one grid layer per batch
// (problems/kit/v3/fp32_tiled_gemm.cuh, shared with the other matrix products of KernelBench v3's
// level 1).
#include "kbench/solution.h"
#include "v3/fp32_tiled_gemm.cuh"

namespace {
struct Dims {
  int64_t batch, m, n, k;  // problem.toml's order: batch, M, N, K
};
}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new Dims{p->dim_values[0], p->dim_values[1], p->dim_values[2], p->dim_values[3]};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const Dims& d = *static_cast<const Dims*>(state);
  v3gemm::Gemm g;
  g.a = static_cast<const float*>(c->inputs[0].data);
  g.b = static_cast<const float*>(c->inputs[1].data);
  g.c = static_cast<float*>(c->outputs[0].data);
  g.batch = d.batch, g.m = d.m, g.n = d.n, g.k = d.k;
  g.lda = d.k, g.ldb = d.n, g.ldc = d.n;
  g.stride_a = d.m * d.k, g.stride_b = d.k * d.n, g.stride_c = d.m * d.n;
  return v3gemm::fp32_tiled_gemm(g, static_cast<cudaStream_t>(c->stream)) == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<Dims*>(state); }
