#include "agent/run_record.h"

#include "store/run_dir.h"

namespace kb {
using json = nlohmann::json;

namespace {

json strings(const std::vector<std::string>& v) {
  json a = json::array();
  for (const auto& s : v) a.push_back(s);
  return a;
}

json sandbox_json(const AgentSandboxRecord& s) {
  json j;
  if (s.enabled) {
    j = {{"enabled", true}, {"tool", "bwrap"}, {"version", s.version}, {"network", s.network}};
    if (s.read_only) j["read_only"] = strings(*s.read_only);
    if (s.gpu_devices) j["gpu_devices"] = strings(*s.gpu_devices);
  } else {
    j = {{"enabled", false}, {"reason", s.reason}, {"available", s.available}};
    if (s.probe_error) j["probe_error"] = *s.probe_error;
  }
  return j;
}

json gateway_json(const GatewayRecord& g) {
  json j = {{"mode", g.mode}, {"source", g.source}, {"url", g.url}, {"log", g.log}};
  if (g.usage)
    j["usage"] = {{"exchanges", g.usage->exchanges}, {"errors", g.usage->errors}, {"total_tokens", g.usage->total_tokens},
                  {"cost_usd", g.usage->cost_usd}, {"cost_complete", g.usage->cost_complete}};
  if (g.usage_error) j["usage_error"] = *g.usage_error;
  return j;
}

json gpu_lock_json(const GpuLockRecord& g) {
  json j = {{"file", g.file}};
  if (g.uses) j["uses"] = *g.uses;
  if (g.wait_seconds) j["wait_seconds"] = *g.wait_seconds;
  if (g.hold_seconds) j["hold_seconds"] = *g.hold_seconds;
  return j;
}

json agent_process_json(const AgentProcessRecord& p) {
  json j = {{"exit_code", p.exit_code},
            {"signal", p.signal},
            {"seconds", p.seconds},
            {"killed_at_budget", p.killed_at_budget},
            {"sigterm_sent", p.sigterm_sent},
            {"sigkill_sent", p.sigkill_sent},
            {"strays_after_exit", p.strays_after_exit},
            {"survivors", p.survivors}};
  if (p.start_failure) j["start_failure"] = *p.start_failure;
  return j;
}

json verdict_json(const VerdictRecord& v) {
  json j = {{"verdict", v.verdict}, {"failure", v.failure}, {"message", v.message}};
  if (v.peak_fraction) j["peak_fraction"] = *v.peak_fraction;
  if (v.annotation) j["annotation"] = *v.annotation;
  return j;
}

}  // namespace

RunRecord RunRecord::incomplete(std::string reason, std::chrono::system_clock::time_point now) const {
  RunRecord r = *this;
  r.status = run_status::incomplete;
  r.incomplete_reason = std::move(reason);
  r.finished_at = iso_utc(now);
  return r;
}

json to_json(const RunRecord& r) {
  json j = {
      {"schema", kRunSchema},
      {"id", r.id},
      {"status", r.status},
      {"agent", r.agent},
      {"model", r.model},
      {"effort", r.effort.empty() ? json(nullptr) : json(r.effort)},
      {"problem", r.problem},
      {"target", r.target},
      {"device", r.device},
      {"trial", r.trial},
      {"kbench_version", r.kbench_version},
      {"budget_seconds", r.budget_seconds},
      {"grace_seconds", r.grace_seconds},
      {"check_only", r.check_only},
      {"started_at", r.started_at},
      {"process", r.process},
      {"sandbox", sandbox_json(r.sandbox)},
  };
  if (!r.limits.is_null()) j["limits"] = r.limits;
  if (!r.sweep.is_null()) j["sweep"] = r.sweep;
  if (r.gateway) j["gateway"] = gateway_json(*r.gateway);
  if (r.gpu_lock) j["gpu_lock"] = gpu_lock_json(*r.gpu_lock);
  if (r.agent_command) j["agent_command"] = *r.agent_command;
  if (r.agent_version) j["agent_version"] = *r.agent_version;
  if (r.agent_env) j["agent_env"] = strings(*r.agent_env);
  if (r.workspace) j["workspace"] = *r.workspace;
  if (r.home) j["home"] = *r.home;
  if (r.agent_started_at) j["agent_started_at"] = *r.agent_started_at;
  if (r.agent_finished_at) j["agent_finished_at"] = *r.agent_finished_at;
  if (r.agent_process) j["agent_process"] = agent_process_json(*r.agent_process);
  if (r.transcript) {
    j["transcript"] = {{"events", r.transcript->events}};
    if (r.transcript->usage) j["transcript"]["usage"] = usage_to_json(*r.transcript->usage);
  }
  if (r.transcript_error) j["transcript_error"] = *r.transcript_error;
  if (r.solution_limits)
    j["solution_limits"] = {{"max_file_bytes", r.solution_limits->max_file_bytes},
                            {"max_total_bytes", r.solution_limits->max_total_bytes},
                            {"max_hole_bytes", r.solution_limits->max_hole_bytes},
                            {"regular_files_only", true}};
  if (r.solution_files) j["solution_files"] = strings(*r.solution_files);
  if (!r.solution_notes.empty()) j["solution_notes"] = strings(r.solution_notes);
  if (r.workspace_cleanup_error) j["workspace_cleanup_error"] = *r.workspace_cleanup_error;
  if (r.archive_error) j["archive_error"] = *r.archive_error;
  if (r.verdict) j["verdict"] = verdict_json(*r.verdict);
  if (r.finished_at) j["finished_at"] = *r.finished_at;
  if (r.incomplete_reason) j["incomplete_reason"] = *r.incomplete_reason;
  return j;
}

}  // namespace kb
