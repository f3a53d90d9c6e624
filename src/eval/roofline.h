// Roofline scoring: achieved rates against the ceilings, and the physics check.
#pragma once

#include <optional>
#include <string>

#include "deck/problem.h"
#include "target/ceilings.h"

namespace kb {

struct RooflinePoint {
  double flops = 0, bytes = 0, seconds = 0;
  double flops_per_s = 0, bytes_per_s = 0;
  double compute_peak = 0, memory_peak = 0;    // the ceilings used (FLOP/s, B/s)
  double compute_fraction = 0, memory_fraction = 0;
  double peak_fraction = 0;  // the fraction of the problem's declared regime
  double sol_fraction = 0;   // speed of light: max(compute_fraction, memory_fraction)
  // The achievable fraction (with_launch_floor): the largest of compute time, memory time and the
  // device's launch floor (target/launch_floor.h), over the measured time. Unset without a floor.
  std::optional<double> launch_floor_seconds, achievable_fraction;
  std::string compute_key = "compute", memory_key = "memory";  // ceiling names, for messages
};

// Throws std::invalid_argument when seconds <= 0 or a peak <= 0.
RooflinePoint roofline(double flops, double bytes, double seconds, Regime regime,
                       double compute_peak, double memory_peak);
// The same with the peaks looked up in `ceilings` by key (std::out_of_range when absent); the keys
// are kept in the point so that messages name them ("the dram ceiling").
RooflinePoint roofline(double flops, double bytes, double seconds, Regime regime,
                       const Ceilings& ceilings, const std::string& compute_key,
                       const std::string& memory_key);

// The point with its achievable fraction: achievable time = max(flops / compute peak, bytes / memory
// peak, floor_seconds), achievable_fraction = achievable time / seconds = max(sol_fraction,
// floor_seconds / seconds). A call timed at the floor scores 1.0; one timed below it (the floor's
// own noise) a little more, which is reported as it is. Throws std::invalid_argument when the floor
// is not a positive time.
RooflinePoint with_launch_floor(RooflinePoint p, double floor_seconds);

// A message when the point is faster than physics allows, i.e. a fraction exceeds `slack`
// (1.0 = exactly the ceiling; measured host ceilings get more room); nullopt when plausible.
// `cached_writes` bytes of the point's traffic are writes that a write-back cache may hold past
// the end of the timed call: only the rest must have crossed the memory bus in its time.
std::optional<std::string> physics_violation(const RooflinePoint& p, double slack, double cached_writes = 0);

}  // namespace kb
