// The second half of the deck's honest solutions of KernelBench v3's level-2 convolution chains
// (l2_conv2d_*): what reads the convolution's stored result (problems/kit/v3/direct_conv2d.cuh)
// back, because it needs more than one element:
//   - segment_stats: mean and 1 / sqrt(biased variance + eps) of contiguous segments, one block
//     each: an (n, c) plane for InstanceNorm, an (n, group) run of channels for GroupNorm (NCHW
//     keeps a group's channels contiguous). Two passes in fp32 (the mean, then the squared
//     deviations from it), as PyTorch's kernels compute them: no E[x^2] - E[x]^2 cancellation;
//   - pool2d: max or average pooling with a square window and no padding (v3's MaxPool2d(2) and
//     AvgPool2d(2)), each element first mapped by a functor `pre(v, n, c)` (a normalisation, a
//     scale) and each result by `post(v, n, c)` (a clamp): the whole tail of a chain in one pass;
//   - map_planes: the elementwise `fn(v, n, c)` over NCHW planes.
// The functors take the image n and the channel c, so per-channel and per-group parameters are
// theirs to look up. Reductions come from problems/kit/v3/block_reduce.cuh (deterministic order).
#pragma once

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "v3/block_reduce.cuh"

namespace v3planes {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    segment_stats_kernel(const float* data, int64_t length, float eps, float* mean, float* rstd) {
  const float* s = data + static_cast<int64_t>(blockIdx.x) * length;
  float sum = 0.f;
  for (int64_t i = threadIdx.x; i < length; i += kThreads) sum += s[i];
  const float m = v3kit::block_sum<kThreads>(sum) / static_cast<float>(length);
  float squares = 0.f;
  for (int64_t i = threadIdx.x; i < length; i += kThreads) {
    const float d = s[i] - m;
    squares = fmaf(d, d, squares);
  }
  const float var = v3kit::block_sum<kThreads>(squares) / static_cast<float>(length);
  if (threadIdx.x == 0) {
    mean[blockIdx.x] = m;
    rstd[blockIdx.x] = 1.f / sqrtf(var + eps);
  }
}

// mean[i], rstd[i] of data[i * length, (i + 1) * length) for i < segments.
inline cudaError_t segment_stats(const float* data, int64_t segments, int64_t length, float eps, float* mean, float* rstd,
                                 cudaStream_t stream) {
  if (segments < 1 || segments > 0x7fffffff || length < 1) return cudaErrorInvalidValue;
  segment_stats_kernel<<<static_cast<unsigned>(segments), kThreads, 0, stream>>>(data, length, eps, mean, rstd);
  return cudaGetLastError();
}

struct Identity {
  __device__ float operator()(float v, int64_t, int64_t) const { return v; }
};

struct Planes {
  int64_t batch = 0, channels = 0, height = 0, width = 0;
};

template <bool kMax, class Pre, class Post>
__global__ void __launch_bounds__(kThreads)
    pool2d_kernel(const float* src, float* dst, Planes p, int64_t window, int64_t out_h, int64_t out_w, Pre pre, Post post) {
  const int64_t outputs = p.batch * p.channels * out_h * out_w;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; o < outputs; o += step) {
    const int64_t j = o % out_w, i = o / out_w % out_h, plane = o / (out_w * out_h);
    const int64_t n = plane / p.channels, c = plane % p.channels;
    const float* s = src + plane * p.height * p.width + i * window * p.width + j * window;
    float acc = kMax ? -INFINITY : 0.f;
    for (int64_t di = 0; di < window; ++di)
      for (int64_t dj = 0; dj < window; ++dj) {
        const float v = pre(s[di * p.width + dj], n, c);
        if (kMax) {
          if (v > acc || v != v) acc = v;  // NaN wins, as in PyTorch
        } else {
          acc += v;
        }
      }
    dst[o] = post(kMax ? acc : acc / static_cast<float>(window * window), n, c);
  }
}

// dst (batch, channels, height / window, width / window) = post(pool(pre(src))) with a window x
// window window of stride window and no padding (PyTorch's MaxPool2d(window) / AvgPool2d(window),
// ceil_mode False: a last row or column that fills no window is dropped).
template <bool kMax, class Pre = Identity, class Post = Identity>
cudaError_t pool2d(const float* src, float* dst, const Planes& p, int64_t window, cudaStream_t stream, Pre pre = {},
                   Post post = {}) {
  if (window < 1 || p.height < window || p.width < window) return cudaErrorInvalidValue;
  const int64_t outputs = p.batch * p.channels * (p.height / window) * (p.width / window);
  const int64_t blocks = (outputs + kThreads - 1) / kThreads;
  pool2d_kernel<kMax><<<static_cast<unsigned>(blocks < 8192 ? blocks : 8192), kThreads, 0, stream>>>(
      src, dst, p, window, p.height / window, p.width / window, pre, post);
  return cudaGetLastError();
}

template <class Fn>
__global__ void __launch_bounds__(kThreads) map_planes_kernel(const float* src, float* dst, Planes p, Fn fn) {
  const int64_t plane_size = p.height * p.width, numel = p.batch * p.channels * plane_size;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; e < numel; e += step) {
    const int64_t plane = e / plane_size;
    dst[e] = fn(src[e], plane / p.channels, plane % p.channels);
  }
}

// dst[n, c, i, j] = fn(src[n, c, i, j], n, c); src and dst may be the same memory.
template <class Fn>
cudaError_t map_planes(const float* src, float* dst, const Planes& p, cudaStream_t stream, Fn fn) {
  const int64_t blocks = (p.batch * p.channels * p.height * p.width + kThreads - 1) / kThreads;
  if (blocks < 1) return cudaErrorInvalidValue;
  map_planes_kernel<<<static_cast<unsigned>(blocks < 8192 ? blocks : 8192), kThreads, 0, stream>>>(src, dst, p, fn);
  return cudaGetLastError();
}

}  // namespace v3planes
