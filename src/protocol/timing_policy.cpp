#include "protocol/timing_policy.h"

namespace kb {

nlohmann::json to_json(const TimingPolicy& p) {
  return {{"warmup_seconds", p.warmup_seconds}, {"min_samples", p.min_samples}, {"max_samples", p.max_samples},
          {"target_rel_stdev", p.target_rel_stdev}, {"max_seconds", p.max_seconds},
          {"input_sets", p.input_sets}, {"rechecks", p.rechecks}, {"throttle_threshold", p.throttle_threshold},
          {"hot_seconds", p.hot_seconds}, {"tail_checks", p.tail_checks}, {"blocking_kernel", p.blocking_kernel},
          {"hot_capture", p.hot_capture}, {"perturb", p.perturb}};
}

TimingPolicy timing_policy_from_json(const nlohmann::json& j) {
  TimingPolicy p;
  p.warmup_seconds = j.at("warmup_seconds");
  p.min_samples = j.at("min_samples");
  p.max_samples = j.at("max_samples");
  p.target_rel_stdev = j.at("target_rel_stdev");
  p.max_seconds = j.at("max_seconds");
  p.input_sets = j.at("input_sets");
  p.rechecks = j.at("rechecks");
  p.throttle_threshold = j.at("throttle_threshold");
  p.hot_seconds = j.at("hot_seconds");
  p.tail_checks = j.at("tail_checks");
  p.blocking_kernel = j.at("blocking_kernel");
  p.hot_capture = j.at("hot_capture");
  p.perturb = j.value("perturb", true);  // absent in results written before it existed
  return p;
}

}  // namespace kb
