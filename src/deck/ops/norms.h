// Normalisations in fp64, as PyTorch computes them (torch.nn.functional.*_norm and the nn
// modules' forward). Statistics are the mean and the biased variance (divide by n, never n - 1),
// computed in two compensated passes (mean first, then the squared deviations from it), so a
// normalised group of millions of elements (LayerNorm over 64x256x256) keeps ~1e-15 accuracy.
//
// Optional affine parameters are pointers (nullptr = none: PyTorch's elementwise_affine=False or
// weight=None). All inputs are contiguous row-major.
#pragma once

#include <cstdint>
#include <vector>

#include "deck/ops/tensor64.h"

namespace kb::ops {

// RMSNorm over the last dims (nn.RMSNorm(normalized_shape, eps)): x / sqrt(mean(x^2) + eps) * weight,
// the mean over the trailing dims `normalized_shape` names; weight has shape normalized_shape.
// PyTorch's eps=None means the dtype's epsilon; an oracle states its eps explicitly.
Tensor64 rms_norm(const Tensor64& x, const std::vector<int64_t>& normalized_shape, const Tensor64* weight, double eps);
// RMSNorm over one axis (the deck's 36_RMSNorm: mean of x^2 over dim 1 of (B, C, H, W)), no weight.
Tensor64 rms_norm_axis(const Tensor64& x, int64_t axis, double eps);

// LayerNorm over the last dims (nn.LayerNorm(normalized_shape, eps, elementwise_affine)):
// (x - mean) / sqrt(var + eps) * weight + bias; weight and bias (each optional) have shape
// normalized_shape.
Tensor64 layer_norm(const Tensor64& x, const std::vector<int64_t>& normalized_shape, const Tensor64* weight,
                    const Tensor64* bias, double eps = 1e-5);

// GroupNorm (nn.GroupNorm(groups, C, eps, affine)) on x (N, C, *): statistics over each group
// of C / groups channels and all their spatial elements; weight and bias (each optional) are (C).
Tensor64 group_norm(const Tensor64& x, int64_t groups, const Tensor64* weight, const Tensor64* bias, double eps = 1e-5);

// InstanceNorm{1,2,3}d with its defaults (affine=False, track_running_stats=False) on x (N, C, *):
// statistics over each (n, c) plane. x must have the batch dim and at least one spatial dim.
Tensor64 instance_norm(const Tensor64& x, double eps = 1e-5);

// BatchNorm{1,2,3}d in inference (eval mode, or training=False): per channel
// (x - running_mean) / sqrt(running_var + eps) * weight + bias on x (N, C, *); running_mean and
// running_var are (C), weight and bias (each optional) are (C).
Tensor64 batch_norm_inference(const Tensor64& x, const Tensor64& running_mean, const Tensor64& running_var,
                              const Tensor64* weight, const Tensor64* bias, double eps = 1e-5);

}  // namespace kb::ops
