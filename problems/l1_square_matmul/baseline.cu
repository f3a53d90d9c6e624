// Baseline (reference line, never scored): cuBLAS cublasSgemm in fp32, the deck kit's
// problems/kit/v3/cublas_sgemm_baseline.cuh, with M = N = K = the one dim N.
#include "v3/cublas_sgemm_baseline.cuh"

extern "C" int kb_setup(const kb_problem* p, void** state) {
  const int64_t n = p->dim_values[0];
  return v3kit::sgemm_baseline_setup(n, n, n, state);
}
extern "C" int kb_run(void* state, const kb_call* c) { return v3kit::sgemm_baseline_run(state, c); }
extern "C" void kb_teardown(void* state) { v3kit::sgemm_baseline_teardown(state); }
