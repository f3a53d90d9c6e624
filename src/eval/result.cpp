#include "eval/result.h"

#include <cmath>

namespace kb {
namespace {

using json = nlohmann::json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json to_json(const SeedCheck& c) {
  json outs = json::array();
  for (const auto& o : c.outputs) outs.push_back(to_json(o));
  return {{"seed", c.seed}, {"secret", c.secret}, {"pass", c.pass}, {"failure", reason_name(c.finding.reason)},
          {"message", c.finding.message}, {"outputs", outs}, {"seconds", c.seconds}};
}

json to_json(const RooflinePoint& p) {
  return {{"flops", p.flops}, {"bytes", p.bytes}, {"seconds", p.seconds}, {"flops_per_s", p.flops_per_s},
          {"bytes_per_s", p.bytes_per_s}, {"compute_peak", p.compute_peak}, {"memory_peak", p.memory_peak},
          {"compute_fraction", p.compute_fraction}, {"memory_fraction", p.memory_fraction},
          {"peak_fraction", p.peak_fraction}, {"sol_fraction", p.sol_fraction}};
}

json to_json(const ShapeResult& s, bool with_samples) {
  json dims = json::object();
  for (const auto& [k, v] : s.dims) dims[k] = v;
  json checks = json::array();
  for (const auto& c : s.checks) checks.push_back(to_json(c));
  return {{"index", s.index}, {"label", s.label}, {"dims", dims}, {"pass", s.pass}, {"failure", reason_name(s.finding.reason)},
          {"message", s.finding.message}, {"checks", checks}, {"flops", s.flops}, {"bytes", s.bytes},
          {"timing", s.timing ? to_json(*s.timing, with_samples) : json(nullptr)},
          {"roofline", s.roofline ? to_json(*s.roofline) : json(nullptr)},
          {"gpu_work", s.gpu_work.is_null() ? json(nullptr) : s.gpu_work},
          {"seconds", {{"setup", s.seconds.setup}, {"expected", s.seconds.expected}, {"worker", s.seconds.worker},
                       {"judging", s.seconds.judging}, {"total", s.seconds.total}}},
          {"call_timeout_seconds", s.call_timeout_seconds}};
}

}  // namespace

json to_json(const EvalResult& r, bool with_samples) {
  json shapes = json::array();
  for (const auto& s : r.shapes) shapes.push_back(to_json(s, with_samples));
  return {
      {"schema", kResultSchema},
      {"mode", r.mode},
      {"problem", r.problem},
      {"target", r.target},
      {"device", r.device},
      {"solution_dir", r.solution_dir},
      {"verdict", verdict_name(r.verdict())},
      {"failure", reason_name(r.finding.reason)},
      {"message", r.finding.message},
      {"sandbox", r.sandbox.enabled ? json{{"kind", "bwrap"}, {"version", r.sandbox.version}, {"seccomp", r.sandbox.seccomp}}
                                    : json{{"kind", "none"}, {"reason", r.sandbox.reason}, {"seccomp", r.sandbox.seccomp}}},
      {"build", {{"ok", r.build.ok}, {"cached", r.build.cached}, {"seconds", r.build.seconds},
                 {"command", r.build.command}, {"library", r.build.library},
                 {"log_excerpt", r.build.log_excerpt}}},
      {"sass", r.sass ? to_json(*r.sass) : json(nullptr)},
      {"shapes", shapes},
      {"shapes_not_judged", r.shapes_not_judged},
      {"summary", {{"peak_fraction_geomean", opt(r.peak_fraction_geomean)},
                   {"sol_fraction_geomean", opt(r.sol_fraction_geomean)},
                   {"regime", r.regime},
                   {"compute_peak_key", r.compute_peak_key},
                   {"memory_peak_key", r.memory_peak_key},
                   {"compute_peak", opt(r.compute_peak)},
                   {"memory_peak", opt(r.memory_peak)},
                   {"ceilings", r.ceilings_id},
                   {"ceilings_measured", r.ceilings_measured}}},
      {"timing_policy", to_json(r.timing_policy)},
      {"baseline", r.baseline ? to_json(*r.baseline, with_samples) : json(nullptr)},
      {"baseline_description", r.baseline_description},
      {"kbench_version", r.kbench_version},
      {"started_at", r.started_at},
      {"duration_seconds", r.duration_seconds},
      {"annotation", r.annotation ? to_json(*r.annotation) : json(nullptr)},
  };
}

}  // namespace kb
