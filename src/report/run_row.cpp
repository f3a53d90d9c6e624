#include "report/run_row.h"

#include <fstream>
#include <sstream>

#include "eval/hand_annotation.h"
#include "store/run_dir.h"

namespace kb::report {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A JSON file of the run, or null with a warning saying why it could not be read.
json read_json_file(const fs::path& p, std::vector<std::string>& warnings, bool required) {
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) {
    if (required) warnings.push_back(p.filename().string() + " is missing");
    return nullptr;
  }
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return json::parse(ss.str());
  } catch (const std::exception& e) {
    warnings.push_back(p.filename().string() + " is not valid JSON (" + e.what() + ")");
    return nullptr;
  }
}

std::string str(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<double> num(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

std::optional<int64_t> count(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? std::optional<int64_t>(it->get<int64_t>()) : std::nullopt;
}

TokenCounts tokens_of(const json& u) {
  return {count(u, "input_tokens"), count(u, "output_tokens"), count(u, "cache_read_tokens"), count(u, "cache_write_tokens"),
          count(u, "reasoning_tokens")};
}

}  // namespace

std::string entrant_label(const RunRow& r) {
  if (!r.entrant.empty()) return r.entrant;
  return r.agent + "/" + r.model + (r.effort.empty() ? "" : " [" + r.effort + "]");
}

bool known_adapter(const std::string& agent) {
  for (const char* a : {"claude-code", "codex", "opencode", "gemini", "kimi", "kbench", "generic"})
    if (agent == a) return true;
  return false;
}

std::optional<RunRow> read_run_row(const fs::path& dir) {
  RunRow r;
  r.id = dir.filename().string();
  r.dir = dir;
  std::error_code ec;
  if (!fs::exists(dir / "run.json", ec)) return std::nullopt;
  const json rec = read_json_file(dir / "run.json", r.warnings, true);
  if (rec.is_object()) {
    r.agent = str(rec, "agent");
    r.model = str(rec, "model");
    r.effort = str(rec, "effort");
    r.problem = str(rec, "problem");
    r.target = str(rec, "target");
    r.device = str(rec, "device");
    if (rec.contains("trial") && rec["trial"].is_number_integer()) r.trial = rec["trial"].get<int>();
    r.check_only = rec.value("check_only", false);
    r.started_at = str(rec, "started_at");
    try {
      r.status = effective_status(rec);
    } catch (const std::exception&) {
      r.status = str(rec, "status");
    }
    if (rec.contains("agent_process")) r.agent_seconds = num(rec["agent_process"], "seconds");
    if (rec.contains("solution_files") && rec["solution_files"].is_array())
      r.solution_files = static_cast<int>(rec["solution_files"].size());
    if (rec.contains("transcript") && rec["transcript"].contains("usage")) {
      r.tokens = tokens_of(rec["transcript"]["usage"]);
      r.tokens_source = "transcript";
      r.cost_usd = num(rec["transcript"]["usage"], "cost_usd");
    }
  }
  if (r.agent.empty()) r.warnings.push_back("run.json names no agent");
  else if (!known_adapter(r.agent)) r.warnings.push_back("unknown adapter '" + r.agent + "': its transcript is shown as recorded");
  if (r.problem.empty()) r.problem = "(unknown problem)";
  if (r.device.empty()) r.device = "(unknown device)";

  // The gateway's counts are kbench's own (docs/gateway.md): preferred over the CLI's figures.
  const json usage = read_json_file(dir / "usage.json", r.warnings, false);
  if (usage.is_object()) {
    r.tokens = tokens_of(usage);
    r.tokens_source = "gateway";
    r.cost_usd = num(usage, "cost_usd");
    r.cost_complete = usage.value("cost_complete", false);
  }

  const bool finished = r.status == "complete" || r.status == "killed_at_budget";
  const json result = read_json_file(dir / "result.json", r.warnings, finished);
  if (result.is_object()) {
    r.verdict = str(result, "verdict");
    r.failure = str(result, "failure");
    r.message = str(result, "message");
    if (result.contains("summary")) {
      r.peak_fraction = num(result["summary"], "peak_fraction_geomean");
      r.sol_fraction = num(result["summary"], "sol_fraction_geomean");
    }
    if (result.contains("annotation") && result["annotation"].is_object()) r.annotation = str(result["annotation"], "verdict");
  }
  if (fs::exists(dir / "annotation.toml", ec)) {
    const auto check = validate_hand_annotation(dir / "annotation.toml", dir);
    if (check.annotation) r.hand_annotation = check.annotation->verdict;
    if (!check.valid()) r.warnings.push_back("annotation.toml has " + std::to_string(check.issues.size()) + " problem(s)");
  }
  return r;
}

json to_json(const RunRow& r) {
  auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  return {{"id", r.id},
          {"agent", r.agent},
          {"model", r.model},
          {"effort", r.effort},
          {"entrant", entrant_label(r)},
          {"problem", r.problem},
          {"target", r.target},
          {"device", r.device},
          {"trial", r.trial},
          {"status", r.status},
          {"verdict", r.verdict},
          {"failure", r.failure},
          {"check_only", r.check_only},
          {"peak_fraction", opt(r.peak_fraction)},
          {"sol_fraction", opt(r.sol_fraction)},
          {"annotation", r.annotation},
          {"hand_annotation", r.hand_annotation},
          {"tokens",
           {{"input", opt(r.tokens.input)},
            {"output", opt(r.tokens.output)},
            {"cache_read", opt(r.tokens.cache_read)},
            {"cache_write", opt(r.tokens.cache_write)},
            {"reasoning", opt(r.tokens.reasoning)},
            {"source", r.tokens_source}}},
          {"cost_usd", opt(r.cost_usd)},
          {"cost_complete", r.cost_complete},
          {"agent_seconds", opt(r.agent_seconds)},
          {"started_at", r.started_at},
          {"counted", r.counted},
          {"infra_failure", r.infra_failure},
          {"warnings", r.warnings}};
}

}  // namespace kb::report
