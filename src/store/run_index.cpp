#include "store/run_index.h"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "store/run_dir.h"

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json read_json_file(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return json();
  const json j = json::parse(in, nullptr, false);
  return j.is_discarded() ? json() : j;
}

template <class T>
std::optional<T> opt(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return std::nullopt;
  try {
    return j[key].get<T>();
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

std::string str(const json& j, const char* key) { return opt<std::string>(j, key).value_or(""); }

bool mentions_no_space(const json& j) {
  return j.dump().find("No space left on device") != std::string::npos;
}

// Errors that were the upstream's (429 or 5xx), not the gateway's own budget refusals, counted
// from the gateway log: {upstream errors, exchanges, successful exchanges}.
struct GatewayCounts {
  int upstream_errors = 0, exchanges = 0, ok = 0;
};

GatewayCounts count_gateway(const fs::path& log) {
  GatewayCounts c;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    const json r = json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.is_object() || !r.contains("response")) continue;
    ++c.exchanges;
    const int status = r["response"].value("status", 0);
    const std::string error = r.value("error", "");
    if (status < 300 && error.empty()) ++c.ok;
    const bool own_budget = error.rfind("kbench gateway: token budget", 0) == 0 || error.rfind("kbench gateway: cost budget", 0) == 0;
    if ((status == 429 || status >= 500) && !own_budget) ++c.upstream_errors;
  }
  return c;
}

}  // namespace

std::string entrant_label(const std::string& agent, const std::string& model, const std::string& effort) {
  return effort.empty() ? agent + "/" + model : fmt::format("{}/{} [{}]", agent, model, effort);
}

std::optional<std::string> infra_failure(const json& record, const fs::path& run_dir) {
  const std::string status = effective_status(record);
  if (mentions_no_space(record.value("incomplete_reason", json())) || mentions_no_space(record.value("archive_error", json())))
    return "disk_full";
  if (status != run_status::complete && status != run_status::killed_at_budget) {
    // Stopped from outside (a signal, or its process gone: SIGKILL, power loss) is the sweep's own
    // interruption; anything else that left no verdict is kbench failing around the run.
    const std::string why = record.value("incomplete_reason", "");
    const bool stopped = record.value("status", "") == run_status::running || why.rfind("kbench was stopped by a signal", 0) == 0 ||
                         why.rfind("kbench got signal", 0) == 0;
    return stopped ? "interrupted" : "incomplete";
  }
  {
    // The agent ended by a kill signal kbench did not send: something outside killed it -- scancel or preemption of a Slurm job, the OOM
    // killer, an operator. Its work was cut short, not finished.
    const json ap = record.value("agent_process", json::object());
    // Through the sandbox (bwrap) or a shell, a child killed by signal N shows as exit code 128+N.
    const int code = ap.value("exit_code", 0);
    const int sig = ap.value("signal", 0) != 0 ? ap.value("signal", 0) : code > 128 && code < 160 ? code - 128 : 0;
    const bool kill_signal = sig == SIGTERM || sig == SIGKILL || sig == SIGINT || sig == SIGHUP;
    // kbench signals the agent itself only at its budget (killed_at_budget) or when kbench is
    // stopped (the run is then incomplete); sigterm_sent also counts strays ended after the agent
    // exited, so it says nothing about who ended the agent.
    if (kill_signal && !ap.value("killed_at_budget", false)) return "agent_killed";
  }
  if (record.value("agent_process", json::object()).contains("start_failure")) return "agent_start_failure";
  if (record.contains("gateway") && fs::exists(run_dir / "gateway.jsonl")) {
    const GatewayCounts g = count_gateway(run_dir / "gateway.jsonl");
    const json ap = record.value("agent_process", json::object());
    const bool exited_badly = !ap.value("killed_at_budget", false) &&
                              (ap.value("exit_code", 0) != 0 || ap.value("signal", 0) != 0);
    if (g.ok == 0 && exited_badly) return "agent_start_failure";
    if (g.upstream_errors >= 3 && 2 * g.upstream_errors >= g.exchanges) return "provider_errors";
  }
  return std::nullopt;
}

RunRow read_run_dir(const fs::path& dir) {
  const fs::path rec_file = dir / "run.json";
  std::ifstream in(rec_file);
  if (!in) throw std::runtime_error(rec_file.string() + ": cannot be read");
  const json rec = json::parse(in, nullptr, false);
  if (rec.is_discarded() || !rec.is_object()) throw std::runtime_error(rec_file.string() + ": not a JSON object");
  if (str(rec, "schema") != kRunSchema)
    throw std::runtime_error(fmt::format("{}: schema '{}', expected '{}'", rec_file.string(), str(rec, "schema"), kRunSchema));

  RunRow r;
  r.id = dir.filename().string();
  r.dir = fs::absolute(dir).lexically_normal().string();
  r.agent = str(rec, "agent");
  r.model = str(rec, "model");
  r.effort = opt<std::string>(rec, "effort");
  r.problem = str(rec, "problem");
  r.target = str(rec, "target");
  r.device = str(rec, "device");
  r.trial = rec.value("trial", 1);
  r.status = effective_status(rec);
  r.infra_failure = infra_failure(rec, dir);
  r.started_at = str(rec, "started_at");
  r.finished_at = str(rec, "finished_at");
  r.kbench_version = str(rec, "kbench_version");
  const json sweep = rec.value("sweep", json());
  if (sweep.is_object()) {
    r.sweep_id = opt<std::string>(sweep, "id");
    r.entrant = str(sweep, "entrant");
    r.attempt = opt<int>(sweep, "attempt");
  }
  if (r.entrant.empty()) r.entrant = entrant_label(r.agent, r.model, r.effort.value_or(""));
  const json ap = rec.value("agent_process", json());
  r.agent_exit_code = opt<int64_t>(ap, "exit_code");
  r.agent_signal = opt<int64_t>(ap, "signal");
  r.agent_seconds = opt<double>(ap, "seconds");
  const json lock = rec.value("gpu_lock", json());
  r.gpu_lock_wait_s = opt<double>(lock, "wait_seconds");
  r.gpu_lock_hold_s = opt<double>(lock, "hold_seconds");

  // Usage: the gateway's count (usage.json) is kbench's; without a gateway, what the agent's own
  // output reported (transcript.usage), whose cost is never complete.
  const json usage = read_json_file(dir / "usage.json");
  const json tusage = rec.value("transcript", json::object()).value("usage", json());
  const json& u = usage.is_object() ? usage : tusage;
  if (u.is_object()) {
    r.input_tokens = opt<int64_t>(u, "input_tokens");
    r.output_tokens = opt<int64_t>(u, "output_tokens");
    r.cache_read_tokens = opt<int64_t>(u, "cache_read_tokens");
    r.cache_write_tokens = opt<int64_t>(u, "cache_write_tokens");
    r.reasoning_tokens = opt<int64_t>(u, "reasoning_tokens");
    r.total_tokens = opt<int64_t>(u, "total_tokens");
    if (!r.total_tokens)
      r.total_tokens = r.input_tokens.value_or(0) + r.output_tokens.value_or(0) + r.cache_read_tokens.value_or(0) +
                       r.cache_write_tokens.value_or(0);
    r.cost_usd = opt<double>(u, "cost_usd");
    r.cost_complete = usage.is_object() ? opt<bool>(usage, "cost_complete") : std::optional<bool>(false);
    if (r.cost_complete.value_or(false) && !r.cost_usd) r.cost_complete = false;
  }

  const json v = rec.value("verdict", json());
  r.verdict = opt<std::string>(v, "verdict");
  r.failure = opt<std::string>(v, "failure");
  r.message = opt<std::string>(v, "message");
  r.peak_fraction = opt<double>(v, "peak_fraction");
  r.annotation = opt<std::string>(v, "annotation");
  const json result = read_json_file(dir / "result.json");
  if (result.is_object()) {
    const json summary = result.value("summary", json::object());
    r.sol_fraction = opt<double>(summary, "sol_fraction_geomean");
    if (!r.peak_fraction) r.peak_fraction = opt<double>(summary, "peak_fraction_geomean");
    r.beats_baseline = opt<bool>(summary, "beats_baseline");
    r.speedup_vs_baseline = opt<double>(summary, "speedup_vs_baseline");
    for (const auto& s : result.value("shapes", json::array())) {
      ShapeRow sr;
      sr.index = s.value("index", 0);
      sr.label = str(s, "label");
      sr.dims = s.value("dims", json::object());
      sr.pass = s.value("pass", false);
      sr.failure = str(s, "failure");
      sr.median_seconds = opt<double>(s.value("timing", json()), "median");
      const json rf = s.value("roofline", json());
      sr.peak_fraction = opt<double>(rf, "peak_fraction");
      sr.sol_fraction = opt<double>(rf, "sol_fraction");
      sr.compute_fraction = opt<double>(rf, "compute_fraction");
      sr.memory_fraction = opt<double>(rf, "memory_fraction");
      r.shapes.push_back(std::move(sr));
    }
  }
  return r;
}

void upsert_run(sql::Database& db, const RunRow& r) {
  db.prepare("DELETE FROM shape_results WHERE run_id = ?").bind_all(r.id).run();
  auto st = db.prepare(
      "INSERT OR REPLACE INTO runs (id, dir, sweep_id, entrant, agent, model, effort, problem, target, device, trial, attempt, "
      "status, infra_failure, started_at, finished_at, agent_exit_code, agent_signal, agent_seconds, input_tokens, "
      "output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, total_tokens, cost_usd, cost_complete, "
      "verdict, failure, message, peak_fraction, sol_fraction, annotation, kbench_version, gpu_lock_wait_s, gpu_lock_hold_s, "
      "beats_baseline, speedup_vs_baseline) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  std::optional<int64_t> attempt;
  if (r.attempt) attempt = *r.attempt;
  std::optional<int64_t> cost_complete;
  if (r.cost_complete) cost_complete = *r.cost_complete ? 1 : 0;
  std::optional<int64_t> beats_baseline;
  if (r.beats_baseline) beats_baseline = *r.beats_baseline ? 1 : 0;
  st.bind_all(r.id, r.dir, r.sweep_id, r.entrant, r.agent, r.model, r.effort, r.problem, r.target, r.device,
              static_cast<int64_t>(r.trial), attempt, r.status, r.infra_failure, r.started_at, r.finished_at, r.agent_exit_code,
              r.agent_signal, r.agent_seconds, r.input_tokens, r.output_tokens, r.cache_read_tokens, r.cache_write_tokens,
              r.reasoning_tokens, r.total_tokens, r.cost_usd, cost_complete, r.verdict, r.failure, r.message, r.peak_fraction,
              r.sol_fraction, r.annotation, r.kbench_version, r.gpu_lock_wait_s, r.gpu_lock_hold_s, beats_baseline,
              r.speedup_vs_baseline);
  st.run();
  auto sh = db.prepare(
      "INSERT INTO shape_results (run_id, idx, label, dims, pass, failure, median_seconds, peak_fraction, sol_fraction, "
      "compute_fraction, memory_fraction) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& s : r.shapes) {
    sh.reset();
    sh.bind_all(r.id, static_cast<int64_t>(s.index), s.label, s.dims.dump(), s.pass, s.failure, s.median_seconds, s.peak_fraction,
                s.sol_fraction, s.compute_fraction, s.memory_fraction);
    sh.run();
  }
}

std::vector<fs::path> list_run_dirs(const fs::path& runs_dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(runs_dir, ec))
    if (e.is_directory() && fs::exists(e.path() / "run.json")) out.push_back(e.path());
  if (ec) throw std::runtime_error(fmt::format("{}: cannot list: {}", runs_dir.string(), ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

RebuildReport rebuild_from_runs(sql::Database& db, const fs::path& runs_dir) {
  if (!fs::is_directory(runs_dir)) throw std::runtime_error(runs_dir.string() + ": no such runs folder");
  RebuildReport rep;
  sql::Transaction t(db);
  // The sweeps and their planned cells first, from the plans they left in the runs folder.
  std::vector<fs::path> plans;
  for (const auto& e : fs::directory_iterator(runs_dir)) {
    const std::string n = e.path().filename().string();
    if (e.is_regular_file() && n.size() > std::string(kSweepPlanSuffix).size() &&
        n.compare(n.size() - std::string(kSweepPlanSuffix).size(), std::string::npos, kSweepPlanSuffix) == 0)
      plans.push_back(e.path());
  }
  std::sort(plans.begin(), plans.end());
  std::map<std::string, int> retry_limit;
  for (const auto& p : plans) {
    const json plan = read_json_file(p);
    if (!plan.is_object() || !plan.contains("id") || !plan.contains("cells")) {
      rep.skipped.push_back(p.string() + ": not a sweep plan");
      continue;
    }
    const std::string id = plan["id"].get<std::string>();
    db.prepare("INSERT INTO sweeps (id, spec, spec_hash, runs_dir, created_at) VALUES (?,?,?,?,?)")
        .bind_all(id, plan.value("spec", json::object()).dump(), str(plan, "spec_hash"),
                  fs::absolute(runs_dir).lexically_normal().string(), str(plan, "created_at"))
        .run();
    retry_limit[id] = plan.value("spec", json::object()).value("retry", json::object()).value("infra_retries", 2);
    for (const auto& c : plan["cells"]) {
      db.prepare("INSERT INTO cells (sweep_id, entrant, problem, trial, ordinal, state) VALUES (?,?,?,?,?,'queued')")
          .bind_all(id, c.at("entrant").get<std::string>(), c.at("problem").get<std::string>(), c.at("trial").get<int64_t>(),
                    c.at("ordinal").get<int64_t>())
          .run();
      ++rep.cells;
    }
    ++rep.sweeps;
  }
  for (const auto& d : list_run_dirs(runs_dir)) {
    try {
      upsert_run(db, read_run_dir(d));
      ++rep.runs;
    } catch (const std::exception& e) {
      rep.skipped.push_back(d.string() + ": " + e.what());
    }
  }
  // Each cell's state from its runs: the same rule the sweep applies as it goes.
  struct Key {
    std::string sweep, entrant, problem;
    int64_t trial;
  };
  std::vector<Key> keys;
  for (auto cells = db.prepare("SELECT sweep_id, entrant, problem, trial FROM cells"); cells.step();)
    keys.push_back({cells.text(0), cells.text(1), cells.text(2), cells.int64(3)});
  for (const auto& [sweep, entrant, problem, trial] : keys) {
    auto runs = db.prepare(
        "SELECT id, status, infra_failure FROM runs WHERE sweep_id = ? AND entrant = ? AND problem = ? AND trial = ? "
        "ORDER BY started_at, id");
    runs.bind_all(sweep, entrant, problem, trial);
    int attempts = 0, infra = 0;
    std::string counted;
    while (runs.step()) {
      ++attempts;
      const std::string status = runs.text(1);
      if (runs.is_null(2) && (status == run_status::complete || status == run_status::killed_at_budget)) {
        if (counted.empty()) counted = runs.text(0);
      } else if (status != run_status::running && runs.text(2) != "interrupted") {
        ++infra;  // an interrupted attempt (the sweep was stopped) is not the cell's failure
      }
    }
    const std::string state = !counted.empty() ? "done" : infra > retry_limit[sweep] ? "failed" : "queued";
    db.prepare("UPDATE cells SET state = ?, attempts = ?, infra_failures = ?, run_id = ? "
               "WHERE sweep_id = ? AND entrant = ? AND problem = ? AND trial = ?")
        .bind_all(state, static_cast<int64_t>(attempts), static_cast<int64_t>(infra),
                  counted.empty() ? std::optional<std::string>() : std::optional<std::string>(counted), sweep, entrant, problem,
                  trial)
        .run();
  }
  t.commit();
  return rep;
}

}  // namespace kb
