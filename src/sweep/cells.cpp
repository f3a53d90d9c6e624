#include "sweep/cells.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include "core/atomic_file.h"
#include "store/run_dir.h"
#include "store/run_index.h"

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

bool lease_holder_gone(const json& owner) {
  // effective_status() already knows how to tell that a recorded process is gone on this host.
  return effective_status(json{{"status", run_status::running}, {"process", owner}}) != run_status::running;
}

std::vector<Cell> plan_cells(const SweepSpec& s) {
  std::vector<Cell> out;
  for (int t = 1; t <= s.trials; ++t)
    for (const auto& e : s.entrants)
      for (const auto& p : s.problems) {
        Cell c;
        c.entrant = e.label;
        c.problem = p;
        c.trial = t;
        c.ordinal = static_cast<int>(out.size());
        c.state = "queued";
        out.push_back(c);
      }
  return out;
}

CellStore::CellStore(sql::Database& db, std::string sweep_id, json owner)
    : db_(db), sweep_(std::move(sweep_id)), owner_(std::move(owner)), owner_text_(owner_.dump()) {}

void CellStore::register_sweep(const SweepSpec& s, const std::vector<Cell>& cells) {
  infra_retries_ = s.infra_retries;
  const std::string hash = sweep_plan_hash(s);
  const json spec = sweep_to_json(s);
  std::string created_at = iso_utc(std::chrono::system_clock::now());
  {
    sql::Transaction t(db_);
    auto st = db_.prepare("SELECT spec_hash, spec, created_at FROM sweeps WHERE id = ?");
    st.bind_all(sweep_);
    if (st.step()) {
      if (st.text(0) != hash) {
        // Say what changed, as far as the plans' JSON shows it.
        const json old = json::parse(st.text(1), nullptr, false);
        std::string diff;
        for (const char* k : {"entrants", "problems", "trials", "budget_seconds", "level_budget_seconds", "grace_seconds",
                              "target", "check_only", "sandbox", "network", "prices"})
          if (old.is_object() && old.value(k, json()) != spec.value(k, json())) diff += (diff.empty() ? "" : ", ") + std::string(k);
        throw SweepError(fmt::format("sweep '{}' in {} was started with another plan (differs in: {}); resume it with the "
                                     "same sweep file, or give this one another name",
                                     sweep_, db_.file().string(), diff.empty() ? "settings" : diff));
      }
      created_at = st.text(2);
    } else {
      db_.prepare("INSERT INTO sweeps (id, spec, spec_hash, runs_dir, created_at) VALUES (?,?,?,?,?)")
          .bind_all(sweep_, spec.dump(), hash, s.runs_dir.string(), created_at)
          .run();
      auto ins = db_.prepare("INSERT INTO cells (sweep_id, entrant, problem, trial, ordinal, state, updated_at) VALUES (?,?,?,?,?,'queued',?)");
      for (const auto& c : cells) {
        ins.reset();
        ins.bind_all(sweep_, c.entrant, c.problem, static_cast<int64_t>(c.trial), static_cast<int64_t>(c.ordinal), created_at);
        ins.run();
      }
    }
    t.commit();
  }
  // The plan beside the runs, for `kbench db rebuild`.
  json plan = {{"schema", "kbench.sweep-plan/1"}, {"id", sweep_}, {"spec", spec}, {"spec_hash", hash}, {"created_at", created_at}};
  json jc = json::array();
  for (const auto& c : cells)
    jc.push_back({{"entrant", c.entrant}, {"problem", c.problem}, {"trial", c.trial}, {"ordinal", c.ordinal}});
  plan["cells"] = jc;
  fs::create_directories(s.runs_dir);
  write_file_atomically(s.runs_dir / (sweep_ + kSweepPlanSuffix), plan.dump(1) + "\n");
}

std::optional<Cell> CellStore::claim_impl(const std::function<std::string(const Cell&)>& name_for) {
  sql::Transaction t(db_);
  auto st = db_.prepare(
      "SELECT entrant, problem, trial, ordinal, attempts, infra_failures FROM cells WHERE sweep_id = ? AND state = 'queued' "
      "ORDER BY ordinal LIMIT 1");
  st.bind_all(sweep_);
  if (!st.step()) return std::nullopt;
  Cell c;
  c.entrant = st.text(0);
  c.problem = st.text(1);
  c.trial = static_cast<int>(st.int64(2));
  c.ordinal = static_cast<int>(st.int64(3));
  c.attempts = static_cast<int>(st.int64(4)) + 1;
  c.infra_failures = static_cast<int>(st.int64(5));
  c.state = "running";
  c.run_id = name_for(c);
  db_.prepare("UPDATE cells SET state = 'running', attempts = ?, run_id = ?, lease_owner = ?, lease_expires = ?, updated_at = ? "
              "WHERE sweep_id = ? AND ordinal = ?")
      .bind_all(static_cast<int64_t>(c.attempts), c.run_id, owner_text_, unix_now() + static_cast<double>(kLeaseTime.count()),
                iso_utc(std::chrono::system_clock::now()), sweep_, static_cast<int64_t>(c.ordinal))
      .run();
  t.commit();
  return c;
}

void CellStore::heartbeat() {
  sql::Transaction t(db_);
  db_.prepare("UPDATE cells SET lease_expires = ? WHERE sweep_id = ? AND state = 'running' AND lease_owner = ?")
      .bind_all(unix_now() + static_cast<double>(kLeaseTime.count()), sweep_, owner_text_)
      .run();
  t.commit();
}

namespace {

// The new state of a cell whose attempt ended with this run directory (or none).
struct Outcome {
  std::string state;
  bool infra = false;
  std::string error;
  std::optional<RunRow> row;
};

Outcome judge_attempt(const fs::path& run_dir, int infra_failures, int retries, const std::string& note) {
  Outcome o;
  if (!fs::exists(run_dir / "run.json")) {
    // The run never started (its process failed before making the folder): an infrastructure failure.
    o.infra = true;
    o.error = note.empty() ? "the run made no run directory" : note;
  } else {
    try {
      o.row = read_run_dir(run_dir);
    } catch (const std::exception& e) {
      o.infra = true;
      o.error = e.what();
    }
    if (o.row) {
      if (!o.row->infra_failure) {
        o.state = "done";
        return o;
      }
      if (*o.row->infra_failure == "interrupted") {
        o.state = "queued";
        o.error = "interrupted";
        return o;
      }
      o.infra = true;
      o.error = *o.row->infra_failure + (note.empty() ? "" : ": " + note);
    }
  }
  o.state = infra_failures + 1 > retries ? "failed" : "queued";
  return o;
}

}  // namespace

std::string CellStore::finish(const Cell& c, const fs::path& run_dir, const std::string& note) {
  sql::Transaction t(db_);
  auto st = db_.prepare("SELECT infra_failures, state, lease_owner FROM cells WHERE sweep_id = ? AND ordinal = ?");
  st.bind_all(sweep_, static_cast<int64_t>(c.ordinal));
  if (!st.step()) throw std::runtime_error(fmt::format("sweep {}: no cell {}", sweep_, c.ordinal));
  const int infra = static_cast<int>(st.int64(0));
  if (st.text(1) != "running" || st.text(2) != owner_text_) {
    // Another process reclaimed it (this one's lease had expired): its view stands. The run is
    // still indexed, so that nothing it did is lost.
    if (fs::exists(run_dir / "run.json")) upsert_run(db_, read_run_dir(run_dir));
    t.commit();
    return st.text(1);
  }
  const Outcome o = judge_attempt(run_dir, infra, infra_retries_, note);
  if (o.row) upsert_run(db_, *o.row);
  db_.prepare("UPDATE cells SET state = ?, infra_failures = ?, run_id = ?, lease_owner = NULL, lease_expires = NULL, "
              "last_error = ?, updated_at = ? WHERE sweep_id = ? AND ordinal = ?")
      .bind_all(o.state, static_cast<int64_t>(infra + (o.infra ? 1 : 0)),
                o.state == "done" ? std::optional<std::string>(c.run_id) : std::optional<std::string>(),
                o.error.empty() ? std::optional<std::string>() : std::optional<std::string>(o.error),
                iso_utc(std::chrono::system_clock::now()), sweep_, static_cast<int64_t>(c.ordinal))
      .run();
  t.commit();
  return o.state;
}

int CellStore::reclaim_dead(const fs::path& runs_dir) {
  sql::Transaction t(db_);
  auto st = db_.prepare(
      "SELECT ordinal, coalesce(run_id, ''), coalesce(lease_owner, 'null'), coalesce(lease_expires, 0), infra_failures "
      "FROM cells WHERE sweep_id = ? AND state = 'running'");
  st.bind_all(sweep_);
  struct Dead {
    int64_t ordinal;
    std::string run_id;
    int infra;
  };
  std::vector<Dead> dead;
  const double now = unix_now();
  while (st.step()) {
    const json owner = json::parse(st.text(2), nullptr, false);
    if (st.text(2) == owner_text_) continue;  // this process's own
    if (st.real(3) < now || (owner.is_object() && lease_holder_gone(owner)))
      dead.push_back({st.int64(0), st.text(1), static_cast<int>(st.int64(4))});
  }
  for (const auto& d : dead) {
    if (!d.run_id.empty() && !fs::exists(runs_dir / d.run_id)) {
      // The attempt never made its folder. It may still start later (a Slurm job left pending
      // by the dead sweep): the folder is made here first, so that such a job finds its name
      // taken and ends without running (RunDir::create_named refuses an existing folder). If
      // the job made it in the meantime, it runs, and the next round looks at it.
      std::error_code ec;
      fs::create_directories(runs_dir, ec);
      if (::mkdir((runs_dir / d.run_id).c_str(), 0755) != 0) continue;
      write_file_atomically(runs_dir / d.run_id / "NOT-STARTED",
                            "kbench sweep: this attempt had not started when its sweep process stopped; its cell was "
                            "queued again and this name kept from being used.\n");
    }
    const Outcome o = judge_attempt(runs_dir / d.run_id, d.infra, infra_retries_, "its sweep process stopped");
    if (o.row && o.row->status == run_status::running) {
      // The run's own process still lives (it is being stopped, or runs on another host whose
      // record this host cannot check): wait for it rather than start the cell a second time.
      const json rec = RunDir(runs_dir / d.run_id).read_record();
      if (rec.value("process", json::object()).value("hostname", "") == process_identity().value("hostname", "")) continue;
    }
    if (o.row) upsert_run(db_, *o.row);
    // An attempt whose run directory never appeared, or that was still running, was interrupted
    // with its sweep: queued again without counting against the cell.
    const bool interrupted = !o.row || o.error == "interrupted";
    const std::string state = interrupted ? "queued" : o.state;
    db_.prepare("UPDATE cells SET state = ?, infra_failures = ?, run_id = ?, lease_owner = NULL, lease_expires = NULL, "
                "last_error = ?, updated_at = ? WHERE sweep_id = ? AND ordinal = ?")
        .bind_all(state, static_cast<int64_t>(d.infra + (!interrupted && o.infra ? 1 : 0)),
                  state == "done" ? std::optional<std::string>(d.run_id) : std::optional<std::string>(),
                  std::optional<std::string>(state == "done" ? "" : interrupted ? "interrupted (its sweep process stopped)" : o.error),
                  iso_utc(std::chrono::system_clock::now()), sweep_, d.ordinal)
        .run();
  }
  t.commit();
  return static_cast<int>(dead.size());  // (those skipped above are counted too: they are being reclaimed)
}

CellStore::Counts CellStore::counts() {
  Counts c;
  auto st = db_.prepare("SELECT state, lease_owner = ?, count(*) FROM cells WHERE sweep_id = ? GROUP BY state, lease_owner = ?");
  st.bind(1, owner_text_).bind(2, sweep_).bind(3, owner_text_);
  while (st.step()) {
    const std::string s = st.text(0);
    const int n = static_cast<int>(st.int64(2));
    if (s == "queued") c.queued += n;
    else if (s == "running") {
      c.running += n;
      if (st.int64(1) == 1) c.running_here += n;
    } else if (s == "done") c.done += n;
    else if (s == "failed") c.failed += n;
  }
  return c;
}

}  // namespace kb
