#include "deck/ops/loss.h"

#include <cmath>
#include <string>

namespace kb::ops {

namespace {

void check_cross_entropy(const char* op, const Tensor64& logits, std::span<const int64_t> targets, int64_t ignore_index) {
  if (logits.rank() != 2) detail::fail(op, "logits must be (N, C), got shape " + shape_string(logits.shape));
  if (static_cast<int64_t>(targets.size()) != logits.shape[0])
    detail::fail(op, "targets has " + std::to_string(targets.size()) + " elements but logits " + shape_string(logits.shape) +
                         " has " + std::to_string(logits.shape[0]) + " samples");
  for (size_t i = 0; i < targets.size(); ++i)
    if (targets[i] != ignore_index && (targets[i] < 0 || targets[i] >= logits.shape[1]))
      detail::fail(op, "targets[" + std::to_string(i) + "] = " + std::to_string(targets[i]) + " is not a class index in [0, " +
                           std::to_string(logits.shape[1]) + ")");
}

}  // namespace

Tensor64 cross_entropy_per_sample(const Tensor64& logits, std::span<const int64_t> targets, int64_t ignore_index) {
  check_cross_entropy("cross_entropy_per_sample", logits, targets, ignore_index);
  const int64_t n = logits.shape[0], c = logits.shape[1];
  Tensor64 loss({n});
#pragma omp parallel for schedule(static) if (logits.numel() > (1 << 16))
  for (int64_t i = 0; i < n; ++i) {
    const int64_t t = targets[static_cast<size_t>(i)];
    if (t == ignore_index) continue;
    const double* row = logits.data.data() + i * c;
    // -log_softmax(row)[t] = logsumexp(row) - row[t], with the max subtracted for stability.
    double mx = -INFINITY;
    bool nan = false;
    for (int64_t j = 0; j < c; ++j) {
      nan |= std::isnan(row[j]);
      mx = std::fmax(mx, row[j]);
    }
    detail::CompensatedSum s;
    for (int64_t j = 0; j < c; ++j) s.add(std::exp(row[j] - mx));
    // log(sum) + (max - row[t]): both terms >= 0, no cancellation of a large max.
    loss[i] = nan ? NAN : std::log(s.value()) + (mx - row[t]);
  }
  return loss;
}

double cross_entropy(const Tensor64& logits, std::span<const int64_t> targets, int64_t ignore_index) {
  const Tensor64 loss = cross_entropy_per_sample(logits, targets, ignore_index);
  detail::CompensatedSum total;
  int64_t counted = 0;
  for (int64_t i = 0; i < loss.numel(); ++i)
    if (targets[static_cast<size_t>(i)] != ignore_index) {
      total.add(loss[i]);
      ++counted;
    }
  return total.value() / static_cast<double>(counted);
}

}  // namespace kb::ops
