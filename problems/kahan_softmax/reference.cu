// GPU reference for kahan_softmax (deck/gpu_reference.h): the definition of reference.cpp in double,
// one block per row: the row's max (the oracle's std::max, which keeps the running max against a
// NaN), the sum of exp(x - max) in double, then exp(x - max) / sum for every element. The sum is a
// tree instead of the oracle's left-to-right loop; both are double sums of at most 2^18 terms in
// [0, 1], which agree to ~2^18 * 2^-53 of the sum, far inside the evaluator's 1e-9 agreement test
// (src/eval/expected.cpp), which checks this reference against the CPU oracle on every case.
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"

namespace {

constexpr int kThreads = 256;

// The block's threads combine `v` with `op`; every thread gets the result.
template <class Op>
__device__ double block_reduce(double v, Op op, double* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) scratch[threadIdx.x] = op(scratch[threadIdx.x], scratch[threadIdx.x + half]);
    __syncthreads();
  }
  const double r = scratch[0];
  __syncthreads();  // scratch is reused by the next reduction
  return r;
}

__global__ void softmax_rows(const float* x, int64_t cols, double* y) {
  __shared__ double scratch[kThreads];
  const float* row = x + blockIdx.x * cols;
  double* out = y + blockIdx.x * cols;
  // As std::max(mx, v) in the oracle: v replaces mx only when mx < v.
  auto larger = [](double a, double b) { return a < b ? b : a; };
  double mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < cols; j += kThreads) mx = larger(mx, static_cast<double>(row[j]));
  mx = block_reduce(mx, larger, scratch);
  double sum = 0;
  for (int64_t j = threadIdx.x; j < cols; j += kThreads) sum += exp(static_cast<double>(row[j]) - mx);
  sum = block_reduce(sum, [](double a, double b) { return a + b; }, scratch);
  for (int64_t j = threadIdx.x; j < cols; j += kThreads) out[j] = exp(static_cast<double>(row[j]) - mx) / sum;
}

void kahan_softmax_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t batch = c.dim("batch"), vocab = c.dim("vocab");
  if (c.num_inputs != 1 || c.num_outputs != 1 || c.expected_numel[0] != batch * vocab)
    throw std::logic_error("kahan_softmax GPU reference: expects one input x and one output y of batch * vocab");
  if (batch == 0 || vocab == 0) return;
  softmax_rows<<<static_cast<unsigned>(batch), kThreads, 0, static_cast<cudaStream_t>(c.stream)>>>(
      static_cast<const float*>(c.inputs[0]), vocab, c.expected[0]);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    throw std::runtime_error(std::string("kahan_softmax GPU reference: launching its kernel: ") + cudaGetErrorString(e));
}

KB_REGISTER_GPU_REFERENCE("kahan_softmax", kahan_softmax_gpu_reference);

}  // namespace
