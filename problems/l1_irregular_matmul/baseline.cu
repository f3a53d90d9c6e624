// Baseline (reference line, never scored): cuBLAS cublasSgemm in fp32, the deck kit's
// problems/kit/v3/cublas_sgemm_baseline.cuh, on dims M, N, K (problem.toml's order).
#include "v3/cublas_sgemm_baseline.cuh"

extern "C" int kb_setup(const kb_problem* p, void** state) {
  return v3kit::sgemm_baseline_setup(p->dim_values[0], p->dim_values[1], p->dim_values[2], state);
}
extern "C" int kb_run(void* state, const kb_call* c) { return v3kit::sgemm_baseline_run(state, c); }
extern "C" void kb_teardown(void* state) { v3kit::sgemm_baseline_teardown(state); }
