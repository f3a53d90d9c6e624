/* kbench solution ABI — the only header a solution needs.
 *
 * A solution is a folder holding solution.cu (cuda target) or solution.cpp (host target). kbench
 * builds it into a shared library and calls three C functions (a folder holding solution.py instead
 * implements them in Python, through kbench's bridge: docs/python-solutions.md):
 *
 *   kb_setup     once per shape, untimed: may repack weights and allocate scratch into *state.
 *   kb_run       timed: compute every output from this call's inputs and the weights. On cuda,
 *                enqueue all device work on c->stream; the call is done when that stream is.
 *   kb_teardown  once per shape: free what kb_setup made.
 *
 * Return 0 on success; any other value is reported as the solution's error.
 *
 * Tensors are DLPack DLTensors, dense and row-major (strides == NULL), in the order the problem's
 * problem.toml lists them. Rules kbench enforces (docs/threat-model.md):
 *   - inputs and weights are read-only;
 *   - every output element is written on every call (outputs are poisoned before each call);
 *   - the result depends only on this call's inputs and the weights: nothing cached across calls;
 *   - all work is enqueued on c->stream (cuda) and finished when it is;
 *   - only code built from the solution's own sources runs (unless the problem allows a library);
 *   - no threads, processes or timers of your own (the host target may use OpenMP), and no access
 *     to kbench's memory.
 */
#ifndef KBENCH_SOLUTION_H
#define KBENCH_SOLUTION_H

#include <stdint.h>
#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* DLPack type codes for 8-bit floats, numbered as in DLPack 1.1 (enum DLDataTypeCode). Older
 * dlpack.h headers (Debian 12 ships 0.6) lack them, so kbench names them here. */
#define KB_DL_FLOAT8_E4M3FN 10 /* kDLFloat8_e4m3fn: OCP FP8 E4M3, finite + NaN, no inf */
#define KB_DL_FLOAT8_E5M2 12   /* kDLFloat8_e5m2: OCP FP8 E5M2, IEEE-like with inf */
/* Packed 4-bit integers travel as kDLUInt with bits = 8: two values per byte, low nibble first. */

typedef struct kb_problem {          /* one shape of one problem */
  const char* name;                  /* e.g. "fp8_gemm" */
  int n_dims;
  const char* const* dim_names;      /* "M", "N", "K" ... in problem.toml order */
  const int64_t* dim_values;
  const DLTensor* weights;           /* read-only parameters, order of problem.toml */
  int n_weights;
} kb_problem;

typedef struct kb_call {
  const DLTensor* inputs;            /* read-only activations */
  int n_inputs;
  DLTensor* outputs;                 /* allocated by kbench; write every element */
  int n_outputs;
  void* stream;                      /* cudaStream_t on cuda, NULL on host */
} kb_call;

#if defined(_WIN32)
#define KB_EXPORT __declspec(dllexport)
#else
#define KB_EXPORT __attribute__((visibility("default")))
#endif

KB_EXPORT int kb_setup(const kb_problem* p, void** state);
KB_EXPORT int kb_run(void* state, const kb_call* c);
KB_EXPORT void kb_teardown(void* state);

#ifdef __cplusplus
}
#endif

#endif /* KBENCH_SOLUTION_H */
