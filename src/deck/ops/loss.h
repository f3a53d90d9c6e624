// Cross-entropy in fp64, as torch.nn.functional.cross_entropy(logits, targets) computes it with
// class-index targets: per sample -log_softmax(logits)[target], then reduction="mean" over the
// samples whose target is not ignore_index (-100 by default, as PyTorch). Every sample ignored
// gives NaN (0 / 0), as in PyTorch. No class weights, no label smoothing.
#pragma once

#include <cstdint>
#include <span>

#include "deck/ops/tensor64.h"

namespace kb::ops {

constexpr int64_t kCrossEntropyIgnoreIndex = -100;

// logits (N, C), targets N class indices in [0, C) (or ignore_index) -> the scalar mean loss.
// A target outside [0, C) that is not ignore_index throws std::invalid_argument naming it.
double cross_entropy(const Tensor64& logits, std::span<const int64_t> targets,
                     int64_t ignore_index = kCrossEntropyIgnoreIndex);
// reduction="none": the N per-sample losses (0 for ignored samples, as PyTorch writes them).
Tensor64 cross_entropy_per_sample(const Tensor64& logits, std::span<const int64_t> targets,
                                  int64_t ignore_index = kCrossEntropyIgnoreIndex);

}  // namespace kb::ops
