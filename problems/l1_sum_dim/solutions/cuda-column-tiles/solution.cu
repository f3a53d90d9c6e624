// Honest cuda sum over dim 1 for l1_sum_dim: a block per (batch, 32 columns of dim2), 32 x 32
// threads. Thread (lane, row) sums rows row, row + 32, ... of its column in fp32 (a warp reads 32
// neighbouring columns of one row: coalesced), then the 32 partial sums of each column are added in a
// fixed tree through shared memory. Fixed order, no atomics: bitwise reproducible.
#include "kbench/solution.h"

namespace {

constexpr int kColumns = 32, kRowLanes = 32;

__global__ void __launch_bounds__(kColumns* kRowLanes) sum_dim1(const float* __restrict__ x, float* __restrict__ y,
                                                                int64_t dim1, int64_t dim2, int64_t column_tiles) {
  const int64_t b = blockIdx.x / column_tiles, j = (blockIdx.x % column_tiles) * kColumns + threadIdx.x;
  __shared__ float partial[kRowLanes][kColumns + 1];  // +1: no bank conflicts in the transposed reads
  float s = 0.f;
  if (j < dim2) {
    const float* xb = x + b * dim1 * dim2 + j;
    for (int64_t i = threadIdx.y; i < dim1; i += kRowLanes) s += __ldg(xb + i * dim2);
  }
  partial[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  // Warp w adds column w's 32 partial sums with shuffles (a fixed tree).
  const int column = threadIdx.y, lane = threadIdx.x;
  float v = partial[lane][column];
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int64_t jj = (blockIdx.x % column_tiles) * kColumns + column;
  if (lane == 0 && jj < dim2) y[b * dim2 + jj] = v;
}

struct State {
  int64_t batch, dim1, dim2;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new State{p->dim_values[0], p->dim_values[1], p->dim_values[2]};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  const int64_t tiles = (s->dim2 + kColumns - 1) / kColumns;
  sum_dim1<<<static_cast<unsigned>(s->batch * tiles), dim3(kColumns, kRowLanes), 0,
             static_cast<cudaStream_t>(c->stream)>>>(static_cast<const float*>(c->inputs[0].data),
                                                     static_cast<float*>(c->outputs[0].data), s->dim1, s->dim2, tiles);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
