// Running a sweep: register it (or find it, to resume), take over the cells of sweep processes
// that died, then claim cells one by one and hand each to the executor as a `kbench run`, until no
// cell is left to run. Each ended attempt is judged from its run directory (sweep/cells.h). Stopped
// by a signal, the sweep stops its runs (they end `incomplete`), puts their cells back in the
// queue, and returns; running the same command again resumes.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/sqlite.h"
#include "sweep/cells.h"
#include "sweep/executor.h"
#include "sweep/sweep_spec.h"

namespace kb {

// One thing that happened, for the progress display and --json-events.
struct SweepEvent {
  std::string kind;   // sweep_started, cells_reclaimed, cell_started, cell_finished, sweep_stopping, sweep_finished
  std::string time;   // ISO 8601 UTC
  std::optional<Cell> cell;
  std::string slot;   // where the cell ran
  std::string state;  // the cell's state after the event (done, queued, failed, running)
  std::string verdict, failure, infra_failure, note;
  std::optional<double> peak_fraction;
  int count = 0;      // cells_reclaimed: how many; sweep_started: cells in the plan
};
nlohmann::json to_json(const SweepEvent& e);
std::string event_line(const SweepEvent& e);  // one line of plain text

struct SweepRunOptions {
  std::filesystem::path kbench_binary;          // the `kbench` each cell runs
  std::filesystem::path problems_dir, hardware_dir;
  std::function<void(const SweepEvent&)> on_event;
  std::function<void()> on_tick;                // about once a second
  const std::atomic<int>* stop = nullptr;       // a signal number, set by a handler: stop the sweep
};

struct SweepOutcome {
  int done = 0, failed = 0, queued = 0, running_elsewhere = 0;
  int stopped_by = 0;  // the signal that stopped it, 0 if it ran out of cells
};

// The `kbench run` command line of one attempt at a cell.
std::vector<std::string> cell_command(const SweepSpec& s, const Cell& c, const std::string& run_name, int attempt,
                                      const SweepRunOptions& o);
// The run directory's name of an attempt: <timestamp>_<agent>_<model>_<problem>_<trial>_<sweep>-c<ordinal>a<attempt>.
std::string attempt_run_name(const SweepSpec& s, const Cell& c);

SweepOutcome run_sweep(const SweepSpec& s, sql::Database& db, Executor& ex, const SweepRunOptions& o);

}  // namespace kb
