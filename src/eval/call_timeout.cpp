#include "eval/call_timeout.h"

#include <algorithm>
#include <cmath>

#include "core/dtype.h"
#include "core/tensor.h"

namespace kb {

NaiveRates naive_rates(const std::string& target) {
  if (target == "cuda") return {1e12, 100e9};
  return {1e9, 1e9};
}

double shape_tensor_bytes(const Problem& p, const ShapeCase& shape) {
  double bytes = 0;
  for (const auto* list : {&p.inputs, &p.weights, &p.outputs})
    for (const auto& t : *list)
      bytes += static_cast<double>(numel_of(p.tensor_shape(t, shape))) * static_cast<double>(info(t.dtype).bits) / 8;
  return bytes;
}

namespace {

// A day at most: an expression gone wild must not overflow the clock arithmetic.
std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::ceil(1000 * std::clamp(seconds, 0.001, 86400.0))));
}

}  // namespace

std::chrono::milliseconds CallTimeout::call() const { return to_ms(floor_seconds + slack_seconds); }

std::chrono::milliseconds CallTimeout::calls(int n) const {
  n = std::max(n, 1);
  return fixed ? to_ms(n * floor_seconds) : to_ms(floor_seconds + n * slack_seconds);
}

std::chrono::milliseconds CallTimeout::bench(const TimingPolicy& pol) const {
  const double limits = pol.warmup_seconds + pol.max_seconds;
  if (fixed) return to_ms(limits + 4 * floor_seconds);
  return to_ms(limits + 2 * floor_seconds + (2 + kHotMinCalls + std::max(0, pol.tail_checks)) * slack_seconds);
}

CallTimeout fixed_call_timeout(std::chrono::milliseconds timeout) {
  CallTimeout t;
  t.floor_seconds = static_cast<double>(timeout.count()) / 1000;
  t.fixed = true;
  return t;
}

CallTimeout default_call_timeout(const Problem& p, size_t index, const std::string& target,
                                 std::optional<double> baseline_seconds) {
  const ShapeCase& shape = p.shapes.at(index);
  const double own_work = shape_tensor_bytes(p, shape) / kOwnWorkBytesPerSecond;
  double expected = 0;
  if (baseline_seconds && std::isfinite(*baseline_seconds) && *baseline_seconds > 0) {
    expected = kBaselineSlowdown * *baseline_seconds;
  } else {
    const Variables vars = p.variables(shape);
    const NaiveRates r = naive_rates(target);
    expected = std::max(0.0, p.flops.eval(vars)) / r.flops_per_second + std::max(0.0, p.bytes.eval(vars)) / r.bytes_per_second;
  }
  CallTimeout t;
  t.slack_seconds = std::min(own_work + expected, 86400.0);
  return t;
}

}  // namespace kb
