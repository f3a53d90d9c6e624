// An honest direct 2-D convolution in fp32, shared by the deck's solutions of KernelBench v3's
// convolutions (l1_conv2d, l1_depthwise_conv2d and the level-2 chains l2_conv2d_*): PyTorch's
// F.conv2d (cross-correlation) on NCHW fp32 tensors, x (batch, in_channels, height, width), weight
// (out_channels, in_channels / groups, kernel, kernel), optional bias (out_channels), with stride,
// zero padding, dilation and groups (depthwise is groups == in_channels == out_channels).
//
// Every output element is one fp32 FMA chain over (input channel of its group, kh, kw) in that
// order, starting from 0, then + bias: the arithmetic the problems' tolerances are calibrated for
// (their CALIBRATION.md; tests/unit/v3_conv_support.h emulates exactly this). No tensor
// cores, no operand narrowed to TF32 or bf16. Taps that fall in the padding are skipped (they
// would add 0 * w, which changes nothing).
//
// A thread owns one output pixel of one image and kChannels consecutive output channels of one
// group: it loads each input tap once and multiplies it into all of them, the weights of those
// channels sitting in shared memory (a broadcast read). Consecutive threads own consecutive pixels
// of the flattened (out_h, out_w) plane, so their stores are coalesced and their loads of one tap
// mostly share cache lines. kChannels = 8 when a group has at least 8 output channels, else 1
// (depthwise), chosen at launch.
//
// The value v = conv + bias goes through an epilogue functor before it is stored:
// `float operator()(float v, int64_t n, int64_t c) const` (n the image, c the output channel), so a
// level-2 chain's elementwise tail (activation, BatchNorm with its statistics folded per channel,
// scale) costs no second pass. Normalisations over a whole plane and pooling read the stored
// result back (problems/kit/v3/plane_ops.cuh).
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

namespace v3conv {

struct Conv2d {
  const float* x = nullptr;
  const float* weight = nullptr;
  const float* bias = nullptr;  // nullptr: no bias
  float* y = nullptr;
  int64_t batch = 0, in_channels = 0, height = 0, width = 0;
  int64_t out_channels = 0, kernel = 0, stride = 1, padding = 0, dilation = 1, groups = 1;

  // PyTorch's Conv2d output size: floor((L + 2 padding - dilation (kernel - 1) - 1) / stride) + 1.
  __host__ __device__ int64_t out_h() const { return (height + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1; }
  __host__ __device__ int64_t out_w() const { return (width + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1; }
};

// The identity epilogue: y = conv + bias.
struct Store {
  __device__ float operator()(float v, int64_t, int64_t) const { return v; }
};

constexpr int kThreads = 256;

template <int kChannels, class Epilogue>
__global__ void __launch_bounds__(kThreads) direct_conv2d_kernel(Conv2d c, Epilogue epilogue) {
  extern __shared__ float w_shared[];  // [channel j][input channel of the group][kh][kw]
  const int64_t in_per_group = c.in_channels / c.groups, out_per_group = c.out_channels / c.groups;
  const int64_t taps = in_per_group * c.kernel * c.kernel;
  const int64_t blocks_per_group = (out_per_group + kChannels - 1) / kChannels;
  const int64_t group = blockIdx.z / blocks_per_group;
  const int64_t first = group * out_per_group + (blockIdx.z % blocks_per_group) * kChannels;
  const int64_t group_end = (group + 1) * out_per_group;
  // This block's weights; channels past the group's end (a partial last block) load zeros.
  for (int64_t e = threadIdx.x; e < kChannels * taps; e += blockDim.x) {
    const int64_t j = e / taps;
    w_shared[e] = first + j < group_end ? c.weight[(first + j) * taps + e % taps] : 0.f;
  }
  __syncthreads();

  const int64_t oh_count = c.out_h(), ow_count = c.out_w();
  const int64_t pixel = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pixel >= oh_count * ow_count) return;
  const int64_t n = blockIdx.y, oh = pixel / ow_count, ow = pixel % ow_count;
  const int64_t h0 = oh * c.stride - c.padding, w0 = ow * c.stride - c.padding;
  const float* xg = c.x + (n * c.in_channels + group * in_per_group) * c.height * c.width;

  float acc[kChannels];
#pragma unroll
  for (int j = 0; j < kChannels; ++j) acc[j] = 0.f;
  for (int64_t ci = 0; ci < in_per_group; ++ci) {
    const float* xc = xg + ci * c.height * c.width;
    for (int64_t kh = 0; kh < c.kernel; ++kh) {
      const int64_t h = h0 + kh * c.dilation;
      if (h < 0 || h >= c.height) continue;
      for (int64_t kw = 0; kw < c.kernel; ++kw) {
        const int64_t w = w0 + kw * c.dilation;
        if (w < 0 || w >= c.width) continue;
        const float xv = __ldg(xc + h * c.width + w);
        const int64_t tap = (ci * c.kernel + kh) * c.kernel + kw;
#pragma unroll
        for (int j = 0; j < kChannels; ++j) acc[j] = fmaf(xv, w_shared[j * taps + tap], acc[j]);
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kChannels; ++j) {
    const int64_t co = first + j;
    if (co >= group_end) break;
    const float v = c.bias != nullptr ? acc[j] + __ldg(c.bias + co) : acc[j];
    c.y[((n * c.out_channels + co) * oh_count + oh) * ow_count + ow] = epilogue(v, n, co);
  }
}

// Enqueues the convolution on `stream`. Fails (cudaErrorInvalidValue) on sizes it cannot take:
// channels not divisible by groups, an empty output, a batch over 65535 (grid dim y), or one
// block's weights over 48 KiB of shared memory (8 channels of in_channels / groups * kernel^2
// taps: up to 170 input channels per group at kernel 3, far beyond the deck's shapes).
template <class Epilogue = Store>
cudaError_t direct_conv2d(const Conv2d& c, cudaStream_t stream, Epilogue epilogue = {}) {
  if (c.groups < 1 || c.in_channels % c.groups != 0 || c.out_channels % c.groups != 0 || c.kernel < 1 ||
      c.stride < 1 || c.dilation < 1 || c.padding < 0 || c.batch < 1 || c.batch > 65535)
    return cudaErrorInvalidValue;
  const int64_t pixels = c.out_h() * c.out_w();
  if (c.out_h() < 1 || c.out_w() < 1) return cudaErrorInvalidValue;
  const int64_t out_per_group = c.out_channels / c.groups;
  const int64_t taps = c.in_channels / c.groups * c.kernel * c.kernel;
  const bool wide = out_per_group >= 8;
  const int channels = wide ? 8 : 1;
  const int64_t shared_bytes = channels * taps * static_cast<int64_t>(sizeof(float));
  const int64_t channel_blocks = c.groups * ((out_per_group + channels - 1) / channels);
  if (shared_bytes > 48 * 1024 || channel_blocks > 65535) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>((pixels + kThreads - 1) / kThreads), static_cast<unsigned>(c.batch),
                  static_cast<unsigned>(channel_blocks));
  if (wide) direct_conv2d_kernel<8><<<grid, kThreads, shared_bytes, stream>>>(c, epilogue);
  else direct_conv2d_kernel<1><<<grid, kThreads, shared_bytes, stream>>>(c, epilogue);
  return cudaGetLastError();
}

}  // namespace v3conv
