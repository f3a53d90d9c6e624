// A sweep's cells in the results database: the plan (entrant x problem x trial), and the state
// machine that makes each cell run exactly once however often the sweep is stopped and resumed and
// however many sweep processes share the database.
//
//   queued --claim--> running --finish--> done     (its run counts)
//                        |            \--> queued   (an infrastructure failure, retries left)
//                        |             \-> failed   (infrastructure failures past the limit)
//                        \--reclaim (lease dead)--> done (the run had finished) | queued
//
// A claim is a lease: the claiming process's identity and an expiry time, renewed by its heartbeat.
// A lease is dead when it expired, or at once when its holder ran on this host and its process is
// gone (SIGKILL, crash). Every transition is one IMMEDIATE transaction, so two processes never
// claim one cell.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite.h"
#include "sweep/sweep_spec.h"

namespace kb {

struct Cell {
  std::string entrant, problem;
  int trial = 1;
  int ordinal = 0;        // index in the plan
  int attempts = 0;       // attempts started, this one included once claimed
  int infra_failures = 0;
  std::string run_id;     // the run directory's name of the attempt (or of the counted run)
  std::string state;
};

// Every cell of the sweep, in plan order: trial-major (every entrant and problem once before any
// second trial), so that an interrupted sweep has the widest early coverage.
std::vector<Cell> plan_cells(const SweepSpec& s);

// How long a lease lives without a heartbeat: long enough for a loaded machine's slow write, short
// enough that another host's sweep takes over a dead one's cells within minutes.
inline constexpr std::chrono::seconds kLeaseTime{120};
inline constexpr std::chrono::seconds kHeartbeat{15};

class CellStore {
 public:
  // `db` must outlive the store. `owner` is this process's identity (process_identity()).
  CellStore(sql::Database& db, std::string sweep_id, nlohmann::json owner);

  // Records the sweep and its cells, or checks that the recorded sweep has the same plan (a
  // SweepError naming what differs otherwise). Writes the plan file into the runs folder.
  void register_sweep(const SweepSpec& s, const std::vector<Cell>& cells);

  // Takes the first queued cell: state running, attempts + 1, a lease for this process, and the
  // name its run directory will have (name_for(cell) is called inside the transaction).
  template <class NameFor>
  std::optional<Cell> claim(NameFor name_for) {
    return claim_impl([&](const Cell& c) { return std::string(name_for(c)); });
  }
  // Renews the leases this process holds.
  void heartbeat();
  // Ends this process's attempt at a cell from its run directory (indexed into `runs`): done when
  // the run counts, else an infrastructure failure (queued again, or failed past the limit), or an
  // interruption (queued again, not counted against the cell). `note` goes into last_error.
  // Returns the cell's new state.
  std::string finish(const Cell& c, const std::filesystem::path& run_dir, const std::string& note = "");
  // Cells whose lease is dead: each is finished from its run directory as above (a run that had
  // completed counts; one still "running" is read as interrupted). Returns how many.
  int reclaim_dead(const std::filesystem::path& runs_dir);

  struct Counts {
    int queued = 0, running = 0, done = 0, failed = 0;
    int running_here = 0;  // leases held by this process
  };
  Counts counts();
  int infra_retries() const { return infra_retries_; }

 private:
  std::optional<Cell> claim_impl(const std::function<std::string(const Cell&)>& name_for);
  sql::Database& db_;
  std::string sweep_;
  nlohmann::json owner_;
  std::string owner_text_;
  int infra_retries_ = 2;
};

// Whether a lease holder (process_identity() JSON) is certainly gone: it ran on this host and its
// process no longer exists. Unknown (another host) is not gone; its lease expires instead.
bool lease_holder_gone(const nlohmann::json& owner);

double unix_now();

}  // namespace kb
