// A direct 3-D convolution at one output position, all output channels at once, for the deck's
// honest solutions of KernelBench v3's 3-D convolutions (l2_conv3d_softmax_maxpool). Stride 1, no
// padding, no dilation, groups 1, as nn.Conv3d(in, out, k) computes it; the caller adds its epilogue.
//
// The filters are staged once per block in shared memory, transposed to [tap][out channel] (tap = input
// channel, kd, kh, kw), so that the kOut weights of one tap are consecutive: each input value is loaded
// once and multiplied into all kOut accumulators with the tap's weights read as float4 broadcasts (every
// thread of a warp reads the same address). Each accumulator is one fp32 FMA chain, bias first, then the
// taps in (input channel, kd, kh, kw) order. `Operand` maps every x and weight value as it is read
// (the identity for an honest kernel).
// In the deck's kit (problems/kit/, docs/problem-format.md): never offered to an agent.
#pragma once

#include <cuda_runtime.h>

namespace v3kit {

struct ExactOperand {
  __device__ __forceinline__ float operator()(float v) const { return v; }
};

template <int kIn, int kOut, int kK>
struct Conv3dFilters {
  static_assert(kOut % 4 == 0, "out channels are read as float4");
  static constexpr int kTaps = kIn * kK * kK * kK;
  float4 w[kTaps][kOut / 4];  // [tap][out channel], four channels per float4
  float bias[kOut];
};

// Stages weight (kOut, kIn, kK, kK, kK) and bias (kOut) into `f` (shared memory); every thread of the
// block must call it, and it synchronises the block.
template <int kIn, int kOut, int kK, typename Operand>
__device__ __forceinline__ void stage_conv3d_filters(Conv3dFilters<kIn, kOut, kK>& f, const float* __restrict__ weight,
                                                     const float* __restrict__ bias, Operand op) {
  constexpr int kTaps = Conv3dFilters<kIn, kOut, kK>::kTaps;
  float* flat = reinterpret_cast<float*>(f.w);
  for (int i = threadIdx.x; i < kTaps * kOut; i += blockDim.x) {
    const int co = i / kTaps, tap = i % kTaps;
    flat[tap * kOut + co] = op(__ldg(weight + i));
  }
  for (int i = threadIdx.x; i < kOut; i += blockDim.x) f.bias[i] = __ldg(bias + i);
  __syncthreads();
}

// z[co] = bias[co] + sum over taps of w[co][tap] * x at the tap, for the output position whose window
// starts at `x0` (x0 points at input channel 0, the window's first depth, row and column); the input
// channels are `channel_stride` floats apart, depths `depth_stride`, rows `row_stride`.
template <int kIn, int kOut, int kK, typename Operand>
__device__ __forceinline__ void conv3d_point(const Conv3dFilters<kIn, kOut, kK>& f, const float* __restrict__ x0,
                                             int64_t channel_stride, int64_t depth_stride, int64_t row_stride, Operand op,
                                             float (&z)[kOut]) {
#pragma unroll
  for (int co = 0; co < kOut; ++co) z[co] = f.bias[co];
#pragma unroll 1
  for (int ci = 0; ci < kIn; ++ci)
#pragma unroll
    for (int kd = 0; kd < kK; ++kd)
#pragma unroll
      for (int kh = 0; kh < kK; ++kh)
#pragma unroll
        for (int kw = 0; kw < kK; ++kw) {
          const float v = op(__ldg(x0 + ci * channel_stride + kd * depth_stride + kh * row_stride + kw));
          const int tap = ((ci * kK + kd) * kK + kh) * kK + kw;
#pragma unroll
          for (int q = 0; q < kOut / 4; ++q) {
            const float4 w4 = f.w[tap][q];
            z[4 * q] = fmaf(w4.x, v, z[4 * q]);
            z[4 * q + 1] = fmaf(w4.y, v, z[4 * q + 1]);
            z[4 * q + 2] = fmaf(w4.z, v, z[4 * q + 2]);
            z[4 * q + 3] = fmaf(w4.w, v, z[4 * q + 3]);
          }
        }
}

}  // namespace v3kit
