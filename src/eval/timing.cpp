#include "eval/timing.h"

#include <algorithm>

namespace kb {
namespace {

nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

double cold_sample_seconds(double event_seconds, double span_seconds, bool* used_span) {
  *used_span = false;
  if (!std::isfinite(span_seconds) || span_seconds <= 0 || span_seconds > event_seconds) return event_seconds;
  if (event_seconds - span_seconds > std::max(kSpanAgreementSeconds, kSpanAgreementFraction * event_seconds))
    return event_seconds;
  *used_span = true;
  return span_seconds;
}

std::string StoppingCriterion::should_stop(const std::vector<double>& samples, double elapsed) const {
  if (samples.size() >= p_.max_samples) return "max_samples";
  if (samples.size() >= p_.min_samples && summarize(samples).rel_stdev <= p_.target_rel_stdev) return "noise";
  // The time limit still yields at least one sample, so a slow kernel is measured, not skipped.
  if (!samples.empty() && elapsed >= p_.max_seconds) return "max_time";
  return "";
}

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

nlohmann::json to_json(const TimingRecord& r, bool with_samples) {
  const Summary& s = r.seconds;
  nlohmann::json j = {{"n", s.n}, {"median", s.median}, {"mean", s.mean}, {"min", s.min}, {"max", s.max},
                      {"p10", s.p10}, {"p90", s.p90}, {"q25", s.q25}, {"q75", s.q75}, {"iqr", s.iqr},
                      {"stdev", s.stdev}, {"rel_stdev", s.rel_stdev}, {"warmup_calls", r.warmup_calls},
                      {"stop_reason", r.stop_reason}, {"wall_seconds", r.wall_seconds},
                      {"sm_clock_median_mhz", finite_or_null(r.sm_clock_median_mhz)},
                      {"sm_clock_min_mhz", finite_or_null(r.sm_clock_min_mhz)},
                      {"max_sm_clock_mhz", r.max_sm_clock_mhz}, {"throttled", r.throttled},
                      {"hot", {{"seconds", finite_or_null(r.hot_seconds)}, {"calls", r.hot_calls}, {"mode", r.hot_mode}}},
                      {"tail_checks", r.tail_checks}, {"span_samples", r.span_samples}};
  if (!r.event_samples.empty()) {
    const Summary e = summarize(r.event_samples);
    j["event"] = {{"median", e.median}, {"min", e.min}, {"rel_stdev", e.rel_stdev}};
  }
  if (with_samples) {
    j["samples"] = r.samples;
    j["event_samples"] = r.event_samples;
  }
  return j;
}

}  // namespace kb
