#include "eval/result.h"

#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

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
          {"peak_fraction", p.peak_fraction}, {"sol_fraction", p.sol_fraction},
          {"launch_floor_seconds", opt(p.launch_floor_seconds)}, {"achievable_fraction", opt(p.achievable_fraction)}};
}

// A record's named seconds (a shape's phases, the preparation's steps), by their result.json names;
// `always`: in every record written, so a reader requires it (the others came later, and an older
// record without them reads as 0).
template <class Phases>
struct SecondsField {
  const char* key;
  double Phases::*field;
  bool always;
};
constexpr SecondsField<ShapePhases> kShapePhaseFields[] = {
    {"setup", &ShapePhases::setup, true},       {"expected", &ShapePhases::expected, true},
    {"worker", &ShapePhases::worker, true},     {"judging", &ShapePhases::judging, true},
    {"total", &ShapePhases::total, true},       {"start", &ShapePhases::start, false},
    {"checks", &ShapePhases::checks, false},    {"repeats", &ShapePhases::repeats, false},
    {"timing", &ShapePhases::timing, false},    {"confirmation", &ShapePhases::confirmation, false}};
using Preparation = EvalResult::Preparation;
constexpr SecondsField<Preparation> kPreparationFields[] = {
    {"sandbox", &Preparation::sandbox, false}, {"device", &Preparation::device, false},
    {"scan", &Preparation::scan, false},       {"build", &Preparation::build, false},
    {"sass", &Preparation::sass, false},       {"ceilings", &Preparation::ceilings, false}};

template <class Phases, size_t N>
json seconds_json(const Phases& p, const SecondsField<Phases> (&fields)[N]) {
  json j = json::object();
  for (const auto& f : fields) j[f.key] = p.*f.field;
  return j;
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
          {"seconds", seconds_json(s.seconds, kShapePhaseFields)},
          {"expected_cached", s.expected_cached},
          {"call_timeout_seconds", s.call_timeout_seconds}};
}

// --- The inverse of the writers above (eval_result_from_json) ---------------------------------

template <class T>
T get(const json& j, const char* key) {
  return j.at(key).get<T>();
}

// The inverse of seconds_json: a field every record has is required, a later one defaults to 0.
template <class Phases, size_t N>
Phases seconds_from(const json& j, const SecondsField<Phases> (&fields)[N]) {
  Phases p;
  for (const auto& f : fields)
    if (f.always || j.contains(f.key)) p.*f.field = get<double>(j, f.key);
  return p;
}

double opt_double(const json& v) { return v.is_null() ? NAN : v.get<double>(); }

std::optional<double> opt_from(const json& v) {
  return v.is_null() ? std::nullopt : std::optional<double>(v.get<double>());
}

std::optional<int> opt_int(const json& v) { return v.is_null() ? std::nullopt : std::optional<int>(v.get<int>()); }

// judge.cpp writes a non-finite error as its text ("inf", "nan").
double number_or_text(const json& v) { return v.is_string() ? std::stod(v.get<std::string>()) : v.get<double>(); }

Reason reason_from(const json& v) {
  const auto name = v.get<std::string>();
  if (auto r = parse_reason(name)) return *r;
  throw std::invalid_argument("unknown failure reason \"" + name + "\"");
}

Evidence evidence_from(const json& j) {
  Evidence e;
  e.kind = get<std::string>(j, "kind");
  e.text = get<std::string>(j, "text");
  e.file = j.value("file", "");
  e.line = j.value("line", 0);
  e.kernel = j.value("kernel", "");
  e.note = j.value("note", "");
  return e;
}

OutputVerdict output_verdict_from(const json& j) {
  OutputVerdict v;
  v.output = get<std::string>(j, "output");
  v.pass = get<bool>(j, "pass");
  v.failure = reason_from(j.at("failure"));
  v.checked = get<int64_t>(j, "checked");
  v.failed = get<int64_t>(j, "failed");
  v.unwritten = get<int64_t>(j, "unwritten");
  v.max_abs_err = number_or_text(j.at("max_abs_err"));
  v.max_rel_err = number_or_text(j.at("max_rel_err"));
  v.max_ulp_err = number_or_text(j.at("max_ulp_err"));
  v.rel_l2 = number_or_text(j.at("rel_l2"));
  for (const auto& w : j.at("worst")) {
    ElementError e;
    e.coords = get<std::vector<int64_t>>(w, "index");
    e.expected = number_or_text(w.at("expected"));
    e.got = number_or_text(w.at("got"));
    e.abs_err = number_or_text(w.at("abs_err"));
    e.rel_err = number_or_text(w.at("rel_err"));
    e.ulp_err = number_or_text(w.at("ulp_err"));
    v.worst.push_back(std::move(e));
  }
  v.message = get<std::string>(j, "message");
  return v;
}

SeedCheck seed_check_from(const json& j) {
  SeedCheck c;
  c.seed = get<uint64_t>(j, "seed");
  c.secret = get<bool>(j, "secret");
  c.pass = get<bool>(j, "pass");
  c.finding = Finding(reason_from(j.at("failure")), get<std::string>(j, "message"));
  for (const auto& o : j.at("outputs")) c.outputs.push_back(output_verdict_from(o));
  c.seconds = get<double>(j, "seconds");
  return c;
}

// The inverse of timing.cpp's writer with samples. The summaries are derived from the samples, as
// the evaluator derives them (t.seconds = summarize(t.samples)) and as the writer derives "event":
// rebuilt the same way, they are written out exactly as they were read.
TimingRecord timing_from(const json& j) {
  TimingRecord t;
  t.warmup_calls = get<size_t>(j, "warmup_calls");
  t.stop_reason = get<std::string>(j, "stop_reason");
  t.wall_seconds = get<double>(j, "wall_seconds");
  t.sm_clock_median_mhz = opt_double(j.at("sm_clock_median_mhz"));
  t.sm_clock_min_mhz = opt_double(j.at("sm_clock_min_mhz"));
  t.max_sm_clock_mhz = get<double>(j, "max_sm_clock_mhz");
  t.throttled = get<size_t>(j, "throttled");
  const json& hot = j.at("hot");
  t.hot_seconds = opt_double(hot.at("seconds"));
  t.hot_calls = get<size_t>(hot, "calls");
  t.hot_mode = get<std::string>(hot, "mode");
  t.tail_checks = j.at("tail_checks");
  t.span_samples = get<size_t>(j, "span_samples");
  // Without its samples a record cannot be rebuilt as written (its summaries, "event").
  t.samples = get<std::vector<double>>(j, "samples");
  t.event_samples = get<std::vector<double>>(j, "event_samples");
  t.host_call_samples = j.value("host_call_samples", std::vector<double>{});
  if (j.contains("steady")) {  // results timed under the steady floor (TimingPolicy::steady_floor)
    const json& st = j.at("steady");
    t.steady = SteadyRecord{get<double>(st, "seconds"), get<size_t>(st, "calls"),
                            get<std::vector<double>>(st, "batch_seconds"),
                            get<std::vector<double>>(st, "host_batch_seconds")};
    t.cold_samples = get<std::vector<double>>(j, "cold_samples");
  }
  t.seconds = summarize(t.samples);  // throws on no samples: a record the evaluator never writes
  return t;
}

RooflinePoint roofline_from(const json& j) {
  RooflinePoint p;
  p.flops = get<double>(j, "flops");
  p.bytes = get<double>(j, "bytes");
  p.seconds = get<double>(j, "seconds");
  p.flops_per_s = get<double>(j, "flops_per_s");
  p.bytes_per_s = get<double>(j, "bytes_per_s");
  p.compute_peak = get<double>(j, "compute_peak");
  p.memory_peak = get<double>(j, "memory_peak");
  p.compute_fraction = get<double>(j, "compute_fraction");
  p.memory_fraction = get<double>(j, "memory_fraction");
  p.peak_fraction = get<double>(j, "peak_fraction");
  p.sol_fraction = get<double>(j, "sol_fraction");
  // Optional: results written before the launch floor existed lack them.
  p.launch_floor_seconds = opt_from(j.value("launch_floor_seconds", json(nullptr)));
  p.achievable_fraction = opt_from(j.value("achievable_fraction", json(nullptr)));
  return p;
}

ShapeResult shape_from(const json& j) {
  ShapeResult s;
  s.index = get<size_t>(j, "index");
  s.label = get<std::string>(j, "label");
  // In key order: the writer's object is sorted too, so to_json is unchanged (the problem's own
  // order of its dimensions is not recorded).
  for (const auto& [k, v] : j.at("dims").items()) s.dims.emplace_back(k, v.get<int64_t>());
  s.pass = get<bool>(j, "pass");
  s.finding = Finding(reason_from(j.at("failure")), get<std::string>(j, "message"));
  for (const auto& c : j.at("checks")) s.checks.push_back(seed_check_from(c));
  s.flops = get<double>(j, "flops");
  s.bytes = get<double>(j, "bytes");
  if (!j.at("timing").is_null()) s.timing = timing_from(j.at("timing"));
  if (!j.at("roofline").is_null()) s.roofline = roofline_from(j.at("roofline"));
  s.gpu_work = j.at("gpu_work");
  s.seconds = seconds_from(j.at("seconds"), kShapePhaseFields);
  s.call_timeout_seconds = get<double>(j, "call_timeout_seconds");
  s.expected_cached = j.value("expected_cached", size_t{0});  // absent before it was recorded
  return s;
}

// A kernel's instruction classes come back as far as the writer shows them: the tensor-core, TMA
// and tensor-memory classes by name, the local stores and loads as STL and LDL.
SassReport sass_from(const json& j) {
  SassReport r;
  r.available = get<bool>(j, "available");
  r.tool = get<std::string>(j, "tool");
  r.note = get<std::string>(j, "note");
  r.listing.archs = get<std::set<std::string>>(j, "archs");
  for (const auto& k : j.at("kernels")) {
    SassKernel kernel;
    kernel.name = get<std::string>(k, "name");
    kernel.demangled = get<std::string>(k, "demangled");
    kernel.arch = get<std::string>(k, "arch");
    kernel.instructions = get<size_t>(k, "instructions");
    for (const char* family : {"tensor_core", "tma", "tensor_memory"})
      for (const auto& [cls, n] : k.at(family).items()) kernel.classes[cls] = n.get<size_t>();
    if (size_t n = get<size_t>(k, "local_stores")) kernel.classes["STL"] = n;
    if (size_t n = get<size_t>(k, "local_loads")) kernel.classes["LDL"] = n;
    kernel.registers = opt_int(k.at("registers"));
    kernel.stack_bytes = opt_int(k.at("stack_bytes"));
    kernel.shared_bytes = opt_int(k.at("shared_bytes"));
    kernel.local_bytes = opt_int(k.at("local_bytes"));
    kernel.evidence = get<std::vector<std::string>>(k, "evidence");
    kernel.source_file = k.value("source_file", "");
    kernel.source_line = k.value("source_line", 0);
    r.listing.kernels.push_back(std::move(kernel));
  }
  for (const auto& q : j.at("required")) {
    RequiredInstructions req;
    req.arch = get<std::string>(q, "arch");
    req.key = get<std::string>(q, "key");
    req.classes = get<std::vector<std::string>>(q, "classes");
    req.found = get<std::vector<std::string>>(q, "found");
    req.tensor_core_found = get<std::map<std::string, size_t>>(q, "tensor_core_found");
    r.required.push_back(std::move(req));
  }
  return r;
}

Annotation annotation_from(const json& j) {
  Annotation a;
  a.verdict = get<std::string>(j, "verdict");
  a.summary = get<std::string>(j, "summary");
  a.failure = get<std::string>(j, "failure");
  a.needs_review = get<bool>(j, "needs_review");
  for (const auto& e : j.at("evidence")) a.evidence.push_back(evidence_from(e));
  return a;
}

}  // namespace

EvalResult eval_result_from_json(const json& j) {
  if (j.value("schema", "") != kResultSchema)
    throw std::invalid_argument("not a " + std::string(kResultSchema) + " record");
  EvalResult r;
  r.mode = get<std::string>(j, "mode");
  r.problem = get<std::string>(j, "problem");
  r.target = get<std::string>(j, "target");
  r.device = get<std::string>(j, "device");
  r.solution_dir = get<std::string>(j, "solution_dir");
  r.finding = Finding(reason_from(j.at("failure")), get<std::string>(j, "message"));
  const json& sandbox = j.at("sandbox");
  r.sandbox.enabled = get<std::string>(sandbox, "kind") == "bwrap";
  r.sandbox.version = sandbox.value("version", "");
  r.sandbox.reason = sandbox.value("reason", "");
  r.sandbox.seccomp = get<bool>(sandbox, "seccomp");
  // Results written before the field existed: W^X was on wherever the filter was, on the host
  // target only.
  r.sandbox.write_xor_execute = sandbox.value("write_xor_execute", r.sandbox.seccomp && r.target == "host");
  const json& build = j.at("build");
  r.build = BuildRecord{get<bool>(build, "ok"), get<bool>(build, "cached"), get<double>(build, "seconds"),
                        get<std::string>(build, "command"), get<std::string>(build, "library"),
                        get<std::string>(build, "log_excerpt")};
  if (!j.at("sass").is_null()) r.sass = sass_from(j.at("sass"));
  for (const auto& s : j.at("shapes")) r.shapes.push_back(shape_from(s));
  r.shapes_not_judged = get<std::vector<size_t>>(j, "shapes_not_judged");
  const json& summary = j.at("summary");
  r.peak_fraction_geomean = opt_from(summary.at("peak_fraction_geomean"));
  r.sol_fraction_geomean = opt_from(summary.at("sol_fraction_geomean"));
  r.achievable_fraction_geomean = opt_from(summary.value("achievable_fraction_geomean", json(nullptr)));
  r.launch_floor_seconds = opt_from(summary.value("launch_floor_seconds", json(nullptr)));
  // Absent from results written before v3's metric was added: read as null, like a result without
  // a baseline.
  r.speedup_vs_baseline = opt_from(summary.value("speedup_vs_baseline", json(nullptr)));
  if (const json b = summary.value("beats_baseline", json(nullptr)); !b.is_null()) r.beats_baseline = b.get<bool>();
  r.regime = get<std::string>(summary, "regime");
  r.compute_peak_key = get<std::string>(summary, "compute_peak_key");
  r.memory_peak_key = get<std::string>(summary, "memory_peak_key");
  r.compute_peak = opt_from(summary.at("compute_peak"));
  r.memory_peak = opt_from(summary.at("memory_peak"));
  r.ceilings_id = get<std::string>(summary, "ceilings");
  r.ceilings_measured = get<bool>(summary, "ceilings_measured");
  r.timing_policy = timing_policy_from_json(j.at("timing_policy"));
  if (!j.at("baseline").is_null()) r.baseline = std::make_shared<EvalResult>(eval_result_from_json(j.at("baseline")));
  r.baseline_description = get<std::string>(j, "baseline_description");
  r.kbench_version = get<std::string>(j, "kbench_version");
  r.started_at = get<std::string>(j, "started_at");
  r.duration_seconds = get<double>(j, "duration_seconds");
  if (const json prep = j.value("preparation_seconds", json(nullptr)); prep.is_object())  // absent before it was recorded
    r.preparation_seconds = seconds_from(prep, kPreparationFields);
  if (!j.at("annotation").is_null()) r.annotation = annotation_from(j.at("annotation"));
  return r;
}

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
      {"sandbox", r.sandbox.enabled ? json{{"kind", "bwrap"}, {"version", r.sandbox.version}, {"seccomp", r.sandbox.seccomp},
                                           {"write_xor_execute", r.sandbox.write_xor_execute}}
                                    : json{{"kind", "none"}, {"reason", r.sandbox.reason}, {"seccomp", r.sandbox.seccomp},
                                           {"write_xor_execute", r.sandbox.write_xor_execute}}},
      {"build", {{"ok", r.build.ok}, {"cached", r.build.cached}, {"seconds", r.build.seconds},
                 {"command", r.build.command}, {"library", r.build.library},
                 {"log_excerpt", r.build.log_excerpt}}},
      {"sass", r.sass ? to_json(*r.sass) : json(nullptr)},
      {"shapes", shapes},
      {"shapes_not_judged", r.shapes_not_judged},
      {"summary", {{"peak_fraction_geomean", opt(r.peak_fraction_geomean)},
                   {"sol_fraction_geomean", opt(r.sol_fraction_geomean)},
                   {"achievable_fraction_geomean", opt(r.achievable_fraction_geomean)},
                   {"regime", r.regime},
                   {"compute_peak_key", r.compute_peak_key},
                   {"memory_peak_key", r.memory_peak_key},
                   {"compute_peak", opt(r.compute_peak)},
                   {"memory_peak", opt(r.memory_peak)},
                   {"launch_floor_seconds", opt(r.launch_floor_seconds)},
                   {"speedup_vs_baseline", opt(r.speedup_vs_baseline)},
                   {"beats_baseline", r.beats_baseline ? json(*r.beats_baseline) : json(nullptr)},
                   {"ceilings", r.ceilings_id},
                   {"ceilings_measured", r.ceilings_measured}}},
      {"timing_policy", to_json(r.timing_policy)},
      {"baseline", r.baseline ? to_json(*r.baseline, with_samples) : json(nullptr)},
      {"baseline_description", r.baseline_description},
      {"kbench_version", r.kbench_version},
      {"started_at", r.started_at},
      {"duration_seconds", r.duration_seconds},
      {"preparation_seconds", seconds_json(r.preparation_seconds, kPreparationFields)},
      {"annotation", r.annotation ? to_json(*r.annotation) : json(nullptr)},
  };
}

}  // namespace kb
