// GPU reference for topk (deck/gpu_reference.h): the oracle of reference.cpp on the GPU, one block per
// row. Its order is the oracle's, a strict total order: larger first, NaN above +inf, -0 equal to +0,
// ties by the lower column. Position t of a row is the element that ranks first among those ranking
// after position t - 1's: k block-wide selections of O(n) each (k <= 64 and n <= 131072 in the deck:
// milliseconds). Values are the elements of x (floats widened to double, exactly: no flush of
// denormals, which nvcc leaves on unless told otherwise), indices their columns; being the same total
// order, both equal the oracle's, and the evaluator checks the values against the CPU oracle on every
// case (src/eval/expected.cpp; the indices, judged by a comparator, need not agree).
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"

namespace {

constexpr int kThreads = 256;

struct Ranked {
  double value;
  int64_t column;  // -1: no element (ranks after every element)
};

// a ranks before b, as ranks_before in reference.cpp, with "no element" last.
__device__ bool ranks_before(const Ranked& a, const Ranked& b) {
  if (a.column < 0 || b.column < 0) return b.column < 0 && a.column >= 0;
  const bool na = isnan(a.value), nb = isnan(b.value);
  if (na != nb) return na;
  if (!na && a.value != b.value) return a.value > b.value;
  return a.column < b.column;
}

__global__ void topk_rows(const float* x, int64_t n, int64_t k, double* values, double* indices) {
  __shared__ Ranked best[kThreads];
  const float* row = x + blockIdx.x * n;
  Ranked previous{0.0, -1};  // position t - 1's element; none before position 0
  for (int64_t t = 0; t < k; ++t) {
    Ranked mine{0.0, -1};
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      const Ranked e{static_cast<double>(row[j]), j};
      if ((previous.column < 0 || ranks_before(previous, e)) && ranks_before(e, mine)) mine = e;
    }
    best[threadIdx.x] = mine;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
      if (threadIdx.x < half && ranks_before(best[threadIdx.x + half], best[threadIdx.x]))
        best[threadIdx.x] = best[threadIdx.x + half];
      __syncthreads();
    }
    previous = best[0];
    __syncthreads();  // every thread has read best[0] before it is written again
    if (threadIdx.x == 0 && previous.column >= 0) {
      values[blockIdx.x * k + t] = previous.value;
      indices[blockIdx.x * k + t] = static_cast<double>(previous.column);
    }
  }
}

void topk_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t batch = c.dim("batch"), n = c.dim("n"), k = c.dim("k");
  if (c.num_inputs != 1 || c.num_outputs != 2 || c.expected_numel[0] != batch * k || c.expected_numel[1] != batch * k)
    throw std::logic_error("topk GPU reference: expects one input x and two outputs (values, indices) of batch * k");
  if (k > n) throw std::logic_error("topk GPU reference: k is larger than the row");
  if (batch == 0 || k == 0) return;
  topk_rows<<<static_cast<unsigned>(batch), kThreads, 0, static_cast<cudaStream_t>(c.stream)>>>(
      static_cast<const float*>(c.inputs[0]), n, k, c.expected[0], c.expected[1]);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
    throw std::runtime_error(std::string("topk GPU reference: launching its kernel: ") + cudaGetErrorString(e));
}

KB_REGISTER_GPU_REFERENCE("topk", topk_gpu_reference);

}  // namespace
