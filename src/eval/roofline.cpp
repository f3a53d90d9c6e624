// Roofline scoring and the "faster than physics" check.
#include "eval/roofline.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace kb {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("roofline: " + what);
}

// About three significant digits, trailing zeros dropped: 3.1, 2.75, 989, 1000 (never "1e+03").
std::string digits3(double x) {
  const double a = std::fabs(x);
  std::string s = fmt::format("{:.{}f}", x, a >= 100 ? 0 : a >= 10 ? 1 : 2);
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

// 3.1e12 B/s -> "3.1 TB/s"; 2.75e14 FLOP/s -> "275 TFLOP/s".
std::string si_rate(double v, const char* unit) {
  static const struct {
    double scale;
    const char* prefix;
  } prefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& p : prefixes)
    if (std::fabs(v) >= p.scale) return digits3(v / p.scale) + " " + p.prefix + unit;
  return digits3(v) + " " + unit;
}

// Two decimals, unless that would print a ratio just above 1 as "1.00x".
std::string ratio(double r) {
  std::string s = fmt::format("{:.2f}", r);
  if (s == "1.00" && r > 1.0) s = fmt::format("{:.4f}", r);
  return s + "x";
}

}  // namespace

RooflinePoint roofline(double flops, double bytes, double seconds, Regime regime, double compute_peak,
                       double memory_peak) {
  require(std::isfinite(seconds) && seconds > 0, fmt::format("seconds must be positive, got {}", seconds));
  require(std::isfinite(compute_peak) && compute_peak > 0,
          fmt::format("compute peak must be a positive FLOP/s, got {}", compute_peak));
  require(std::isfinite(memory_peak) && memory_peak > 0,
          fmt::format("memory peak must be a positive B/s, got {}", memory_peak));
  // Zero is fine (a pure data-movement problem has no FLOPs); negative counts are a formula bug.
  require(std::isfinite(flops) && flops >= 0, fmt::format("flops must be >= 0, got {}", flops));
  require(std::isfinite(bytes) && bytes >= 0, fmt::format("bytes must be >= 0, got {}", bytes));

  RooflinePoint p;
  p.flops = flops;
  p.bytes = bytes;
  p.seconds = seconds;
  p.flops_per_s = flops / seconds;
  p.bytes_per_s = bytes / seconds;
  p.compute_peak = compute_peak;
  p.memory_peak = memory_peak;
  p.compute_fraction = p.flops_per_s / compute_peak;
  p.memory_fraction = p.bytes_per_s / memory_peak;
  p.peak_fraction = regime == Regime::memory ? p.memory_fraction : p.compute_fraction;
  p.sol_fraction = std::max(p.compute_fraction, p.memory_fraction);
  return p;
}

RooflinePoint roofline(double flops, double bytes, double seconds, Regime regime, const Ceilings& ceilings,
                       const std::string& compute_key, const std::string& memory_key) {
  RooflinePoint p = roofline(flops, bytes, seconds, regime, ceilings.compute_peak(compute_key).value,
                             ceilings.memory_peak(memory_key).value);
  p.compute_key = compute_key;
  p.memory_key = memory_key;
  return p;
}

RooflinePoint with_launch_floor(RooflinePoint p, double floor_seconds) {
  require(std::isfinite(floor_seconds) && floor_seconds > 0,
          fmt::format("the launch floor must be a positive time, got {} s", floor_seconds));
  const double achievable = std::max({p.flops / p.compute_peak, p.bytes / p.memory_peak, floor_seconds});
  p.launch_floor_seconds = floor_seconds;
  p.achievable_fraction = achievable / p.seconds;
  return p;
}

std::optional<std::string> physics_violation(const RooflinePoint& p, double slack, double cached_writes) {
  if (!(std::isfinite(slack) && slack >= 1.0))
    throw std::invalid_argument(fmt::format("physics_violation: slack must be >= 1.0 (1.0 = the ceiling), got {}", slack));
  if (!(std::isfinite(cached_writes) && cached_writes >= 0))
    throw std::invalid_argument(fmt::format("physics_violation: cached writes must be >= 0 bytes, got {}", cached_writes));
  std::string msg;
  auto check = [&](double fraction, double achieved, double peak, const std::string& key, const char* unit) {
    if (!(fraction > slack)) return;  // NaN never passes a comparison: treat as no evidence
    if (!msg.empty()) msg += "; ";
    msg += fmt::format("achieved {} is {} the {} ceiling of {}", si_rate(achieved, unit), ratio(fraction), key,
                       si_rate(peak, unit));
  };
  // Memory first: a kernel "faster than DRAM" is the commonest sign of a timing or caching bug.
  const double crossed = std::max(0.0, p.bytes - cached_writes) / p.seconds;
  check(crossed / p.memory_peak, crossed, p.memory_peak, p.memory_key, "B/s");
  if (cached_writes > 0 && !msg.empty())
    msg += fmt::format(" (counting only the bytes beyond the {} of writes a write-back cache can hold)",
                       si_rate(cached_writes, "B"));
  check(p.compute_fraction, p.flops_per_s, p.compute_peak, p.compute_key, "FLOP/s");
  if (msg.empty()) return std::nullopt;
  if (slack > 1.0) msg += fmt::format(" (allowed up to {})", ratio(slack));
  return msg + ": faster than physics allows; the timing or the solution is suspect";
}

}  // namespace kb
