#include "sweep/sweep_runner.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "store/run_dir.h"
#include "store/run_index.h"

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string now_iso() { return iso_utc(std::chrono::system_clock::now()); }

const Entrant& entrant_of(const SweepSpec& s, const std::string& label) {
  for (const auto& e : s.entrants)
    if (e.label == label) return e;
  throw std::runtime_error("sweep " + s.name + ": no entrant labelled '" + label + "' in the plan");
}

std::string ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + "ms"; }

}  // namespace

json to_json(const SweepEvent& e) {
  json j = {{"event", e.kind}, {"time", e.time}};
  if (e.cell)
    j["cell"] = {{"entrant", e.cell->entrant}, {"problem", e.cell->problem}, {"trial", e.cell->trial},
                 {"ordinal", e.cell->ordinal}, {"attempt", e.cell->attempts}, {"run_id", e.cell->run_id}};
  if (!e.slot.empty()) j["slot"] = e.slot;
  if (!e.state.empty()) j["state"] = e.state;
  if (!e.verdict.empty()) j["verdict"] = e.verdict;
  if (!e.failure.empty()) j["failure"] = e.failure;
  if (e.peak_fraction) j["peak_fraction"] = *e.peak_fraction;
  if (!e.infra_failure.empty()) j["infra_failure"] = e.infra_failure;
  if (!e.note.empty()) j["note"] = e.note;
  if (e.count) j["count"] = e.count;
  return j;
}

std::string event_line(const SweepEvent& e) {
  const std::string cell =
      e.cell ? fmt::format("{} / {} / trial {}", e.cell->entrant, e.cell->problem, e.cell->trial) : std::string();
  if (e.kind == "sweep_started") return fmt::format("sweep: {} cells; {}", e.count, e.note);
  if (e.kind == "cells_reclaimed") return fmt::format("sweep: took over {} cells whose sweep process had stopped", e.count);
  if (e.kind == "cell_started")
    return fmt::format("start   {} (attempt {}) on {}  -> {}", cell, e.cell->attempts, e.slot, e.cell->run_id);
  if (e.kind == "cell_finished") {
    if (e.state == "done")
      return fmt::format("done    {}: {}{}{}", cell, e.verdict.empty() ? "no verdict" : e.verdict,
                         e.failure.empty() ? "" : " (" + e.failure + ")",
                         e.peak_fraction ? fmt::format(", peak fraction {:.3f}", *e.peak_fraction) : "");
    return fmt::format("{} {}: {}{}", e.state == "failed" ? "failed " : "retry  ", cell,
                       e.infra_failure.empty() ? "infrastructure failure" : e.infra_failure, e.note.empty() ? "" : " -- " + e.note);
  }
  if (e.kind == "sweep_stopping") return "sweep: " + e.note;
  if (e.kind == "sweep_finished") return "sweep: " + e.note;
  return e.kind + " " + cell;
}

std::string attempt_run_name(const SweepSpec& s, const Cell& c) {
  const Entrant& e = entrant_of(s, c.entrant);
  return fmt::format("{}_{}-c{}a{}", run_dir_name(RunKey{e.agent, e.model, c.problem, c.trial}, std::chrono::system_clock::now()),
                     path_component(s.name), c.ordinal, c.attempts);
}

std::vector<std::string> cell_command(const SweepSpec& s, const Cell& c, const std::string& run_name, int attempt,
                                      const SweepRunOptions& o) {
  const Entrant& e = entrant_of(s, c.entrant);
  std::vector<std::string> a = {o.kbench_binary.string(), "run", "--agent", e.agent, "--model", e.model, "--problem", c.problem,
                                "--target", s.target, "--grace", ms(s.grace), "--trial",
                                std::to_string(c.trial), "--runs-dir", s.runs_dir.string(), "--run-name", run_name};
  // A budget the sweep was given is the run's option; without one, `kbench run` picks the same
  // budget cell_budget() does (the level's or kbench's) and records where it came from.
  if (s.budget_given) a.insert(a.end(), {"--budget", ms(s.budget)});
  if (!o.problems_dir.empty()) a.insert(a.end(), {"--problems", o.problems_dir.string()});
  if (!o.hardware_dir.empty()) a.insert(a.end(), {"--hardware", o.hardware_dir.string()});
  a.push_back("--sweep-cell");
  a.push_back(json{{"id", s.name}, {"entrant", e.label}, {"ordinal", c.ordinal}, {"attempt", attempt}}.dump());
  if (!e.effort.empty()) a.insert(a.end(), {"--effort", e.effort});
  if (!e.gateway.empty()) a.insert(a.end(), {"--gateway", e.gateway});
  if (!e.gateway_key_env.empty()) a.insert(a.end(), {"--gateway-key-env", e.gateway_key_env});
  for (const auto& p : e.provider_order) a.insert(a.end(), {"--gateway-provider", p});
  if (e.max_tokens) a.insert(a.end(), {"--gateway-max-tokens", std::to_string(*e.max_tokens)});
  if (e.max_cost_usd) a.insert(a.end(), {"--gateway-max-cost", fmt::format("{}", *e.max_cost_usd)});
  if (!s.prices.empty()) a.insert(a.end(), {"--gateway-prices", s.prices.string()});
  if (!e.command.empty()) a.insert(a.end(), {"--command", e.command});
  if (!e.agent_bin.empty()) a.insert(a.end(), {"--agent-bin", e.agent_bin});
  for (const auto& r : e.ro_bind) a.insert(a.end(), {"--ro-bind", r});
  if (e.max_turns) a.insert(a.end(), {"--max-turns", std::to_string(*e.max_turns)});
  if (s.check_only) a.push_back("--check-only");
  if (!s.sandbox) a.push_back("--no-sandbox");
  if (!s.network) a.push_back("--no-network");
  return a;
}

SweepOutcome run_sweep(const SweepSpec& s, sql::Database& db, Executor& ex, const SweepRunOptions& o) {
  auto emit = [&](SweepEvent e) {
    e.time = now_iso();
    if (o.on_event) o.on_event(e);
  };
  CellStore store(db, s.name, process_identity());
  const std::vector<Cell> plan = plan_cells(s);
  store.register_sweep(s, plan);
  fs::create_directories(s.runs_dir / "_logs");
  {
    SweepEvent e;
    e.kind = "sweep_started";
    e.count = static_cast<int>(plan.size());
    const auto c = store.counts();
    e.note = fmt::format("{} done, {} failed, {} to run; executor {} ({}); runs in {}", c.done, c.failed, c.queued + c.running,
                         ex.name(), ex.describe(), s.runs_dir.string());
    emit(e);
  }
  auto reclaim = [&] {
    if (const int n = store.reclaim_dead(s.runs_dir); n > 0) {
      SweepEvent e;
      e.kind = "cells_reclaimed";
      e.count = n;
      emit(e);
    }
  };
  reclaim();

  auto finish = [&](const CellExit& x) {
    const fs::path dir = s.runs_dir / x.cell.run_id;
    SweepEvent e;
    e.kind = "cell_finished";
    e.cell = x.cell;
    e.slot = x.slot;
    e.state = store.finish(x.cell, dir, x.note);
    if (fs::exists(dir / "run.json")) {
      try {
        const RunRow r = read_run_dir(dir);
        e.verdict = r.verdict.value_or("");
        e.failure = r.failure.value_or("");
        e.peak_fraction = r.peak_fraction;
        e.infra_failure = r.infra_failure.value_or("");
      } catch (const std::exception&) {
      }
    }
    if (e.state != "done") e.note = x.note;
    emit(e);
  };

  SweepOutcome out;
  auto last_beat = Clock::now(), last_tick = Clock::time_point{};
  bool stopping = false;
  while (true) {
    if (!stopping && o.stop && o.stop->load() != 0) {
      stopping = true;
      out.stopped_by = o.stop->load();
      SweepEvent e;
      e.kind = "sweep_stopping";
      e.note = fmt::format("signal {}: stopping {} runs (they end incomplete and are run again on resume)", out.stopped_by,
                           ex.in_flight());
      emit(e);
      ex.stop_all();
    }
    for (const auto& x : ex.poll()) finish(x);
    if (Clock::now() - last_beat >= kHeartbeat) {
      store.heartbeat();
      reclaim();
      last_beat = Clock::now();
    }
    if (!stopping) {
      while (ex.free_slots() > 0) {
        std::optional<Cell> c = store.claim([&](const Cell& cell) { return attempt_run_name(s, cell); });
        if (!c) break;
        CellLaunch l;
        l.cell = *c;
        l.argv = cell_command(s, *c, c->run_id, c->attempts, o);
        l.log = s.runs_dir / "_logs" / (c->run_id + ".log");
        SweepEvent e;
        e.kind = "cell_started";
        e.cell = c;
        e.state = "running";
        try {
          e.slot = ex.start(l);
        } catch (const std::exception& err) {
          // Could not even start it: an infrastructure failure of this attempt.
          finish(CellExit{*c, "", std::string("could not start: ") + err.what()});
          continue;
        }
        emit(e);
      }
      ex.flush();
    }
    if (Clock::now() - last_tick >= std::chrono::seconds(1)) {
      if (o.on_tick) o.on_tick();
      last_tick = Clock::now();
    }
    if (ex.in_flight() == 0) {
      const auto c = store.counts();
      if (stopping || c.queued == 0) {
        if (c.queued == 0 && c.running > 0 && !stopping) {
          // Cells held by another sweep process: wait for them while their holder lives, take
          // them over if it dies (a sweep ends when every cell is done or failed).
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
          continue;
        }
        out.done = c.done;
        out.failed = c.failed;
        out.queued = c.queued;
        out.running_elsewhere = c.running;
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  SweepEvent e;
  e.kind = "sweep_finished";
  e.note = fmt::format("{} done, {} failed{}{}", out.done, out.failed,
                       out.queued ? fmt::format(", {} queued (resume to run them)", out.queued) : "",
                       out.stopped_by ? fmt::format("; stopped by signal {}", out.stopped_by) : "");
  emit(e);
  return out;
}

}  // namespace kb
