#include "target/launch_floor.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/stats.h"
#include "target/call_timing.h"

namespace kb {

double launch_floor_of(const std::vector<double>& samples) {
  if (samples.empty()) throw std::invalid_argument("launch floor: no samples");
  for (double s : samples)
    if (!std::isfinite(s) || s <= 0)
      throw std::invalid_argument(fmt::format("launch floor: a sample of {} s is not a positive time", s));
  return summarize(samples).median;
}

Ceiling measure_launch_floor(Device& device, size_t samples) {
  if (samples < 1) throw std::invalid_argument("launch floor: samples must be at least 1");
  device.start_work_monitor();
  // Marked as the worker marks kb_run, so that work attribution counts the empty kernel as the
  // call's own work and its span times it, as it would time a solution's kernel.
  auto call = [&device] {
    device.mark_call(true);
    const int rc = device.launch_empty();
    device.mark_call(false);
    return rc;
  };
  auto check = [](int rc) {
    if (rc != 0) throw std::runtime_error(fmt::format("launch floor: the empty call returned {}", rc));
  };
  // Untimed calls first: the first launch of a kernel loads its module (lazy loading).
  for (int i = 0; i < 10; ++i) check(call());
  device.synchronize();
  (void)device.collect_work();

  std::vector<double> times;
  size_t from_span = 0;
  for (size_t i = 0; i < samples; ++i) {
    device.synchronize();
    device.flush_cache();
    int rc = 0;
    const Device::TimedCall t = device.time_call(call, &rc);
    check(rc);
    const auto work = device.collect_work();
    bool used_span = false;
    times.push_back(cold_sample_seconds(t.seconds, work ? work_span_seconds(*work) : NAN, &used_span));
    from_span += used_span;
  }
  const Summary s = summarize(times);
  const double floor = launch_floor_of(times);
  const std::string timer = from_span == 0 ? "timed by the target's timer"
                           : from_span == samples
                               ? "timed by the activity span of their work"
                               : fmt::format("{} timed by the activity span of their work, the rest by the target's timer", from_span);
  return Ceiling{floor, fmt::format("measured: median of {} cold-timed calls doing the least a call can ({}), each after "
                                    "a cache flush, {}; p10 {:.3g} us, p90 {:.3g} us",
                                    samples, device.stream() ? "one empty kernel on kbench's stream" : "an empty call", timer,
                                    s.p10 * 1e6, s.p90 * 1e6)};
}

}  // namespace kb
