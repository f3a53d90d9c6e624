#include "protocol/timing_policy.h"

#include "protocol/fields.h"
#include "protocol/messages.h"

namespace kb {

using wire::field;

TimingPolicy solution_timing_policy(const TimingPolicy& asked, const std::string& target, bool python) {
  TimingPolicy p = asked;
  if (python && target == "cuda") p.steady_floor = true;
  return p;
}

nlohmann::json to_json(const TimingPolicy& p) {
  return {{"warmup_seconds", p.warmup_seconds}, {"min_samples", p.min_samples}, {"max_samples", p.max_samples},
          {"target_rel_stdev", p.target_rel_stdev}, {"target_median_ci", p.target_median_ci},
          {"min_seconds", p.min_seconds}, {"max_seconds", p.max_seconds},
          {"input_sets", p.input_sets}, {"rechecks", p.rechecks}, {"throttle_threshold", p.throttle_threshold},
          {"hot_seconds", p.hot_seconds}, {"tail_checks", p.tail_checks}, {"blocking_kernel", p.blocking_kernel},
          {"hot_capture", p.hot_capture}, {"perturb", p.perturb}, {"steady_floor", p.steady_floor}};
}

TimingPolicy timing_policy_from_json(const nlohmann::json& j) {
  constexpr const char* msg = "timing policy";
  TimingPolicy p;
  p.warmup_seconds = field<double>(j, msg, "warmup_seconds");
  p.min_samples = field<size_t>(j, msg, "min_samples");
  p.max_samples = field<size_t>(j, msg, "max_samples");
  p.target_rel_stdev = field<double>(j, msg, "target_rel_stdev");
  // Absent in results written before the confidence rule existed; such results never used it
  // (0: off) and had no minimum time.
  p.target_median_ci = wire::field_or<double>(j, msg, "target_median_ci", 0.0);
  p.min_seconds = wire::field_or<double>(j, msg, "min_seconds", 0.0);
  p.max_seconds = field<double>(j, msg, "max_seconds");
  p.input_sets = field<int>(j, msg, "input_sets");
  p.rechecks = field<int>(j, msg, "rechecks");
  p.throttle_threshold = field<double>(j, msg, "throttle_threshold");
  p.hot_seconds = field<double>(j, msg, "hot_seconds");
  p.tail_checks = field<int>(j, msg, "tail_checks");
  p.blocking_kernel = field<bool>(j, msg, "blocking_kernel");
  p.hot_capture = field<bool>(j, msg, "hot_capture");
  p.perturb = wire::field_or<bool>(j, msg, "perturb", true);  // absent in results written before it existed
  p.steady_floor = wire::field_or<bool>(j, msg, "steady_floor", false);  // likewise
  return p;
}

void to_json(nlohmann::json& j, const TimingPolicy& p) { j = to_json(p); }
void from_json(const nlohmann::json& j, TimingPolicy& p) { p = timing_policy_from_json(j); }

}  // namespace kb
