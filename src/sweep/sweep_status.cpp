#include "sweep/sweep_status.h"

#include <fmt/format.h>

#include <ctime>
#include <iomanip>
#include <map>
#include <sstream>

#include "sweep/cells.h"
#include "verdict/reason.h"

namespace kb {
using json = nlohmann::json;

std::optional<double> parse_iso_utc(const std::string& s) {
  std::tm tm{};
  std::istringstream in(s);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  if (in.fail()) return std::nullopt;
  return static_cast<double>(timegm(&tm));
}

std::string duration_text(double s) {
  const int64_t t = static_cast<int64_t>(s + 0.5);
  if (t >= 3600) return fmt::format("{}h{:02}m", t / 3600, t / 60 % 60);
  if (t >= 60) return fmt::format("{}m{:02}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

std::vector<std::string> sweep_ids(sql::Database& db) {
  std::vector<std::string> out;
  for (auto st = db.prepare("SELECT id FROM sweeps ORDER BY created_at DESC, id"); st.step();) out.push_back(st.text(0));
  return out;
}

SweepStatus read_sweep_status(sql::Database& db, const std::string& sweep) {
  SweepStatus s;
  s.id = sweep;
  {
    auto st = db.prepare("SELECT created_at, runs_dir FROM sweeps WHERE id = ?");
    st.bind_all(sweep);
    if (!st.step()) throw std::runtime_error(fmt::format("{}: no sweep named '{}'", db.file().string(), sweep));
    s.created_at = st.text(0);
    s.runs_dir = st.text(1);
  }
  const double now = unix_now();
  if (auto t = parse_iso_utc(s.created_at)) s.elapsed_seconds = now - *t;

  std::map<std::string, EntrantProgress> ents;
  auto cells = db.prepare(
      "SELECT entrant, problem, trial, state, attempts, infra_failures, coalesce(run_id, ''), coalesce(lease_owner, 'null'), "
      "coalesce(lease_expires, 0), coalesce(updated_at, '') FROM cells WHERE sweep_id = ? ORDER BY ordinal");
  cells.bind_all(sweep);
  while (cells.step()) {
    const std::string entrant = cells.text(0), state = cells.text(3);
    EntrantProgress& e = ents[entrant];
    e.entrant = entrant;
    ++e.cells;
    ++s.total;
    s.infra_failures += static_cast<int>(cells.int64(5));
    if (state == "queued") ++s.queued;
    else if (state == "done") ++s.done, ++e.done;
    else if (state == "failed") ++s.failed, ++e.failed;
    else if (state == "running") {
      ++s.running;
      RunningCell r;
      r.entrant = entrant;
      r.problem = cells.text(1);
      r.trial = static_cast<int>(cells.int64(2));
      r.attempt = static_cast<int>(cells.int64(4));
      r.run_id = cells.text(6);
      const json owner = json::parse(cells.text(7), nullptr, false);
      if (owner.is_object()) {
        r.owner_host = owner.value("hostname", "");
        r.owner_pid = owner.value("pid", int64_t{0});
      }
      r.lease_left_seconds = cells.real(8) - now;
      r.since = cells.text(9);
      s.running_cells.push_back(r);
    }
  }
  // What the counted runs of done cells passed, cost and took.
  auto runs = db.prepare(
      "SELECT r.entrant, coalesce(r.verdict, ''), coalesce(r.total_tokens, 0), r.cost_usd, coalesce(r.cost_complete, 0), "
      "r.started_at, r.finished_at, c.state = 'done' AND c.run_id = r.id FROM runs r LEFT JOIN cells c "
      "ON c.sweep_id = r.sweep_id AND c.entrant = r.entrant AND c.problem = r.problem AND c.trial = r.trial "
      "WHERE r.sweep_id = ?");
  runs.bind_all(sweep);
  double wall = 0;
  int timed = 0;
  while (runs.step()) {
    EntrantProgress& e = ents[runs.text(0)];
    e.entrant = runs.text(0);
    const bool counted = runs.int64(7) == 1;
    if (counted && parse_verdict(runs.text(1)) == Verdict::pass) ++e.passes, ++s.passes;
    e.tokens += runs.int64(2);
    s.tokens += runs.int64(2);
    e.cost_usd += runs.opt_real(3).value_or(0);
    s.cost_usd += runs.opt_real(3).value_or(0);
    if (runs.is_null(3) || runs.int64(4) == 0) e.cost_complete = s.cost_complete = false;
    if (!runs.is_null(3)) e.cost_known = s.cost_known = true;
    if (counted) {
      const auto a = parse_iso_utc(runs.text(5)), b = parse_iso_utc(runs.text(6));
      if (a && b && *b >= *a) wall += *b - *a, ++timed;
    }
  }
  for (auto& [_, e] : ents) s.entrants.push_back(e);
  const int left = s.queued + s.running;
  if (timed > 0 && left > 0) s.remaining_seconds = wall / timed * left / std::max(1, s.running);
  if (left == 0) s.remaining_seconds = 0;
  return s;
}

json sweep_status_json(const SweepStatus& s) {
  json running = json::array(), ents = json::array();
  for (const auto& r : s.running_cells)
    running.push_back({{"entrant", r.entrant}, {"problem", r.problem}, {"trial", r.trial}, {"attempt", r.attempt},
                       {"run_id", r.run_id}, {"host", r.owner_host}, {"pid", r.owner_pid},
                       {"lease_left_seconds", r.lease_left_seconds}, {"since", r.since}});
  for (const auto& e : s.entrants)
    ents.push_back({{"entrant", e.entrant}, {"cells", e.cells}, {"done", e.done}, {"passes", e.passes}, {"failed", e.failed},
                    {"tokens", e.tokens}, {"cost_usd", e.cost_known ? json(e.cost_usd) : json(nullptr)}, {"cost_complete", e.cost_complete}});
  return {{"sweep", s.id},
          {"created_at", s.created_at},
          {"runs_dir", s.runs_dir},
          {"cells", {{"total", s.total}, {"queued", s.queued}, {"running", s.running}, {"done", s.done}, {"failed", s.failed}}},
          {"passes", s.passes},
          {"infra_failures", s.infra_failures},
          {"tokens", s.tokens},
          {"cost_usd", s.cost_known ? json(s.cost_usd) : json(nullptr)},
          {"cost_complete", s.cost_complete},
          {"elapsed_seconds", s.elapsed_seconds},
          {"remaining_seconds", s.remaining_seconds ? json(*s.remaining_seconds) : json(nullptr)},
          {"running", running},
          {"entrants", ents}};
}

std::string sweep_status_text(const SweepStatus& s, bool with_running) {
  std::ostringstream o;
  o << fmt::format("sweep {}: {}/{} done, {} running, {} queued, {} failed  |  {} passed  |  elapsed {}, remaining {}\n", s.id,
                   s.done, s.total, s.running, s.queued, s.failed, s.passes, duration_text(s.elapsed_seconds),
                   s.remaining_seconds ? duration_text(*s.remaining_seconds) : std::string("?"));
  auto cost = [](double usd, bool complete, bool known) {
    return !known ? std::string("cost unknown") : fmt::format("${:.2f}{}", usd, complete ? "" : "+");
  };
  o << fmt::format("tokens {}  {}{}{}\n", s.tokens, cost(s.cost_usd, s.cost_complete, s.cost_known),
                   s.cost_known && !s.cost_complete ? " (some costs unknown)" : "",
                   s.infra_failures ? fmt::format("  |  {} infrastructure failures retried", s.infra_failures) : "");
  size_t w = 7;
  for (const auto& e : s.entrants) w = std::max(w, e.entrant.size());
  for (const auto& e : s.entrants)
    o << fmt::format("  {:<{}}  {:>3}/{:<3} done  {:>3} passed{}  {:>9} tok  {}\n", e.entrant, w, e.done, e.cells, e.passes,
                     e.failed ? fmt::format(" {} failed", e.failed) : "", e.tokens, cost(e.cost_usd, e.cost_complete, e.cost_known));
  if (with_running)
    for (const auto& r : s.running_cells)
      o << fmt::format("  running  {} / {} / trial {} (attempt {}) on {} pid {}{}\n", r.entrant, r.problem, r.trial, r.attempt,
                       r.owner_host, r.owner_pid, r.lease_left_seconds < 0 ? "  [lease expired]" : "");
  return o.str();
}

}  // namespace kb
