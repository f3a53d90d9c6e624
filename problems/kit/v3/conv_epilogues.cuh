// Per-element tails of KernelBench v3's level-2 convolution chains that more than one of the deck's
// honest solutions applies in the convolution's epilogue (problems/kit/v3/direct_conv2d.cuh):
// BatchNorm in inference (l2_conv2d_mish_batchnorm, l2_conv2d_batchnorm_scale) and Mish.
#pragma once

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

namespace v3epilogue {

// BatchNorm2d in eval mode, per channel c: (v - running_mean) / sqrt(running_var + eps) * weight
// + bias, in PyTorch's order of operations (the statistics are not folded, so each element costs a
// few loads that stay in cache: 16 channels' worth).
struct BatchNormInference {
  const float* weight;
  const float* bias;
  const float* running_mean;
  const float* running_var;
  float eps;

  __device__ float operator()(float v, int64_t c) const {
    const float inv_std = 1.f / sqrtf(__ldg(running_var + c) + eps);
    return (v - __ldg(running_mean + c)) * inv_std * __ldg(weight + c) + __ldg(bias + c);
  }
};

// Mish: x tanh(softplus(x)), softplus = log1p(exp(x)) without a threshold, as PyTorch's CUDA mish
// kernel computes it (aten/src/ATen/native/cuda/ActivationMishKernel.cu); for x > 88 exp overflows
// to inf, log1p(inf) = inf and tanh(inf) = 1: the result is x, as it should be.
__device__ __forceinline__ float mish(float x) { return x * tanhf(log1pf(expf(x))); }

}  // namespace v3epilogue
