// l2_conv3d_softmax_maxpool's fused kernel (the problem's kit: never offered to an agent): the conv, the
// softmax over the 16 channels and both max poolings in one pass, nothing of the (batch, 16, D - 2,
// H - 2, W - 2) intermediate ever written.
//
// Two poolings of 2 (floor rounding) are one max over aligned 4 x 4 x 4 blocks of the softmax. One
// thread per (batch item, output depth i, output row j, conv column w < 4 * out_width): it walks the 16
// conv positions (4i + a, 4j + b, w) of its column, takes the 16 channels' conv (the deck kit's
// v3kit::conv3d_point, fp32 FMA chains), their softmax in fp32 (expf of z - max, then a division), and
// keeps the max per channel. The four threads of one output (w / 4 equal, consecutive lanes) then
// combine their maxes by shuffles, and the first writes the 16 channels. Consecutive threads read
// consecutive columns of x, so every load of a tap is coalesced.
#pragma once

#include <cstdint>

#include "v3/direct_conv3d.cuh"

namespace conv3d_softmax_pool4 {

constexpr int kIn = 3, kOut = 16, kKernel = 3, kPool = 4, kThreads = 256;
using Filters = v3kit::Conv3dFilters<kIn, kOut, kKernel>;

struct Volume {
  int64_t batch, depth, height, width;  // x's
  int64_t od, oh, ow;                   // y's: floor((n - 2) / 4)
};

inline Volume volume_of(const int64_t* dims) {  // dims: batch, depth, height, width
  return {dims[0], dims[1], dims[2], dims[3], (dims[1] - kKernel + 1) / kPool, (dims[2] - kKernel + 1) / kPool,
          (dims[3] - kKernel + 1) / kPool};
}

template <typename Operand>
__global__ void __launch_bounds__(kThreads) fused(const float* __restrict__ x, const float* __restrict__ weight,
                                                  const float* __restrict__ bias, float* __restrict__ y, Volume v, Operand op) {
  __shared__ Filters filters;
  v3kit::stage_conv3d_filters(filters, weight, bias, op);
  const int64_t columns = kPool * v.ow;  // conv columns that reach the output
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const bool active = t < v.batch * v.od * v.oh * columns;
  const int64_t w = t % columns, j = (t / columns) % v.oh, i = (t / (columns * v.oh)) % v.od;
  const int64_t n = t / (columns * v.oh * v.od);
  float best[kOut];
#pragma unroll
  for (int c = 0; c < kOut; ++c) best[c] = -INFINITY;
  if (active) {
    const int64_t depth_stride = v.height * v.width, channel_stride = v.depth * depth_stride;
    for (int a = 0; a < kPool; ++a)
      for (int b = 0; b < kPool; ++b) {
        const float* x0 = x + n * kIn * channel_stride + (kPool * i + a) * depth_stride + (kPool * j + b) * v.width + w;
        float z[kOut];
        v3kit::conv3d_point(filters, x0, channel_stride, depth_stride, v.width, op, z);
        float m = z[0];
#pragma unroll
        for (int c = 1; c < kOut; ++c) m = fmaxf(m, z[c]);
        float s = 0.f;
#pragma unroll
        for (int c = 0; c < kOut; ++c) {
          z[c] = expf(z[c] - m);
          s += z[c];
        }
#pragma unroll
        for (int c = 0; c < kOut; ++c) best[c] = fmaxf(best[c], z[c] / s);
      }
  }
  // The four columns of one output are lanes 4q .. 4q + 3 of a warp (columns is a multiple of 4, and
  // so is every warp's first thread index); inactive lanes hold -inf.
#pragma unroll
  for (int c = 0; c < kOut; ++c) {
    best[c] = fmaxf(best[c], __shfl_xor_sync(0xffffffffu, best[c], 1));
    best[c] = fmaxf(best[c], __shfl_xor_sync(0xffffffffu, best[c], 2));
  }
  if (active && w % kPool == 0) {
    const int64_t plane = v.od * v.oh * v.ow, at = ((n * kOut * v.od + i) * v.oh + j) * v.ow + w / kPool;
#pragma unroll
    for (int c = 0; c < kOut; ++c) y[at + c * plane] = best[c];
  }
}

template <typename Operand>
int launch(const Volume& v, const float* x, const float* weight, const float* bias, float* y, cudaStream_t stream, Operand op) {
  const int64_t threads = v.batch * v.od * v.oh * kPool * v.ow;
  fused<<<static_cast<unsigned>((threads + kThreads - 1) / kThreads), kThreads, 0, stream>>>(x, weight, bias, y, v, op);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

}  // namespace conv3d_softmax_pool4
