#include "eval/timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace kb {
namespace {

nlohmann::json finite_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

std::vector<double> steady_floored(const std::vector<double>& cold_samples, double steady_seconds) {
  std::vector<double> out = cold_samples;
  for (double& v : out) v = std::max(v, steady_seconds);
  return out;
}

std::optional<Summary> host_call_summary(const TimingRecord& r) {
  std::vector<double> host;
  std::copy_if(r.host_call_samples.begin(), r.host_call_samples.end(), std::back_inserter(host),
               [](double v) { return std::isfinite(v); });
  if (host.empty()) return std::nullopt;
  return summarize(host);
}

std::optional<double> cold_median(const TimingRecord& r) {
  if (r.cold_samples.empty()) return std::nullopt;
  return quantile(r.cold_samples, 0.5);
}

std::optional<std::string> warmup_unlike_timed_calls(std::vector<double> warm, const TimingRecord& r) {
  if (warm.size() < 4) return std::nullopt;
  warm.erase(warm.begin(), warm.begin() + static_cast<std::ptrdiff_t>(warm.size() / 2));
  const double warm_median = quantile(warm, 0.5);
  const std::optional<Summary> host = host_call_summary(r);
  const double timed = std::max(r.seconds.median, host ? host->median : 0.0);
  if (warm_median <= 3 * timed + 250e-6) return std::nullopt;
  return fmt::format("untimed warm-up calls took {:.1f} us each (median of {}, launch to synchronised) against {:.1f} us "
                     "for the timed calls (their median, or the host's time inside them where longer): the solution "
                     "behaves differently when it is timed (it may detect the held stream); every call must do the same "
                     "work",
                     warm_median * 1e6, warm.size(), timed * 1e6);
}

Finding warmup_finding(const std::string& why, std::optional<GpuSharing> sharing) {
  if (!sharing || *sharing == GpuSharing::exclusive) return {Reason::timing_dependent, why};
  return {Reason::timing_unconfirmed,
          fmt::format("{}; but {}, which slows untimed calls and not the timed ones' GPU time: kbench cannot tell "
                      "this from a solution that behaves differently when timed; judge it again with the GPU to itself",
                      why,
                      *sharing == GpuSharing::shared
                          ? "other processes had a context on the GPU (nvidia-smi)"
                          : "kbench could not see which processes used the GPU (nvidia-smi did not list its own)")};
}

nlohmann::json to_json(const TimingRecord& r, bool with_samples) {
  const Summary& s = r.seconds;
  nlohmann::json j = {{"n", s.n}, {"median", s.median}, {"mean", s.mean}, {"min", s.min}, {"max", s.max},
                      {"p10", s.p10}, {"p90", s.p90}, {"q25", s.q25}, {"q75", s.q75}, {"iqr", s.iqr},
                      {"stdev", s.stdev}, {"rel_stdev", s.rel_stdev},
                      {"median_ci95", {s.median_ci_low, s.median_ci_high}}, {"warmup_calls", r.warmup_calls},
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
  if (const auto h = host_call_summary(r)) j["host_call"] = {{"median", h->median}, {"min", h->min}, {"p90", h->p90}};
  if (r.confirmation) {
    const ConfirmationRecord& c = *r.confirmation;
    j["confirmation"] = {{"calls", c.calls},
                         {"attempts", c.attempts},
                         {"wall_seconds", c.wall_seconds},
                         {"per_call_seconds", c.per_call_seconds},
                         {"allowance", {{"per_call_seconds", c.allowance_per_call}, {"fixed_seconds", c.allowance_fixed}}},
                         {"judged_call", c.judged_call},
                         {"enforced", c.enforced},
                         {"gpu_sharing", c.gpu_sharing.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.gpu_sharing)}};
  }
  if (r.steady) {
    nlohmann::json st = {{"seconds", r.steady->seconds}, {"calls", r.steady->calls},
                         {"batch_seconds", r.steady->batch_seconds},
                         {"host_batch_seconds", r.steady->host_batch_seconds}};
    if (const auto cold = cold_median(r)) st["cold_median"] = *cold;  // the GPU's time, beside the steady cost
    j["steady"] = st;
  }
  if (with_samples) {
    if (r.steady) j["cold_samples"] = r.cold_samples;
    j["samples"] = r.samples;
    j["event_samples"] = r.event_samples;
    if (!r.host_call_samples.empty()) j["host_call_samples"] = r.host_call_samples;
  }
  return j;
}

}  // namespace kb
