// The two passes of l1_cross_entropy's solutions (the problem's kit, docs/problem-format.md: never
// offered to an agent).
//
// Pass 1 cuts each row of logits into `splits` chunks, one block per (chunk, row); each block writes
// its chunk's softmax normaliser as a (max, sum of exp(x - max)) pair. Splitting the rows keeps every
// SM busy when the batch is small (8 rows of 50257 classes: 8 blocks would leave 124 of an H100's 132
// SMs idle). Pass 2 is one block: each thread merges its rows' pairs in chunk order, takes the loss
// log(sum) + (max - x[target]) (both terms >= 0, so no cancellation against a large max), adds its
// rows' losses, and the block sums those and divides by the batch. Every order of addition is fixed
// by the block sizes, so the result is bitwise reproducible.
#pragma once

#include <cstdint>

#include "v3/block_reduce.cuh"

namespace cross_entropy {

constexpr int kChunkThreads = 256;
constexpr int kMeanThreads = 1024;

// Each chunk at least this long, so that a block's 256 threads read 8 logits each before they merge.
constexpr int64_t kMinChunk = 2048;

// Chunks per row: enough blocks for 4 per SM, never chunks shorter than kMinChunk.
inline int64_t splits_for(int64_t batch, int64_t classes, int sms) {
  const int64_t want = (4 * static_cast<int64_t>(sms) + batch - 1) / batch;
  const int64_t most = (classes + kMinChunk - 1) / kMinChunk;
  const int64_t s = want < most ? want : most;
  return s < 1 ? 1 : s;
}

// Pass 1, honest: the online (max, sum) pair of chunk blockIdx.x of row blockIdx.y.
__global__ void __launch_bounds__(kChunkThreads) chunk_max_sum(const float* __restrict__ logits, float2* __restrict__ pairs,
                                                               int64_t classes, int64_t chunk) {
  const int64_t row = blockIdx.y, c0 = static_cast<int64_t>(blockIdx.x) * chunk;
  const int64_t c1 = c0 + chunk < classes ? c0 + chunk : classes;
  const float* x = logits + row * classes;
  v3kit::MaxSum p;
  for (int64_t j = c0 + threadIdx.x; j < c1; j += kChunkThreads) p.add(__ldg(x + j));
  const v3kit::MaxSum r = v3kit::block_max_sum<kChunkThreads>(p);
  if (threadIdx.x == 0) pairs[row * gridDim.x + blockIdx.x] = make_float2(r.m, r.s);
}

// Pass 2: the mean over the rows of log(sum) + (max - x[target]), written to *loss. A target outside
// [0, classes) makes its loss NaN rather than a read outside the row.
__global__ void __launch_bounds__(kMeanThreads) mean_loss(const float* __restrict__ logits, const int64_t* __restrict__ targets,
                                                          const float2* __restrict__ pairs, float* __restrict__ loss,
                                                          int64_t batch, int64_t classes, int64_t splits) {
  float acc = 0.f;
  for (int64_t row = threadIdx.x; row < batch; row += kMeanThreads) {
    v3kit::MaxSum p;
    for (int64_t k = 0; k < splits; ++k) {
      const float2 q = pairs[row * splits + k];
      p.merge(q.x, q.y);
    }
    const int64_t t = targets[row];
    acc += t >= 0 && t < classes ? logf(p.s) + (p.m - __ldg(logits + row * classes + t)) : NAN;
  }
  const float total = v3kit::block_sum<kMeanThreads>(acc);
  if (threadIdx.x == 0) *loss = total / static_cast<float>(batch);
}

}  // namespace cross_entropy
