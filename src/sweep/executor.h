// Where a sweep's cells run. The sweep (sweep/sweep_runner.h) claims cells and hands each to an
// executor as one `kbench run` command line; the executor starts it somewhere, and reports when it
// has ended. The run directory, not the executor, says how the run went.
//
//   local (sweep/local_executor.h): child processes on this machine, each owning a GPU (or a
//          share of one), or a concurrency limit on the host target.
//   slurm (sweep/slurm_executor.h): jobs of an sbatch array on a cluster.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sweep/cells.h"

namespace kb {

struct CellLaunch {
  Cell cell;
  std::vector<std::string> argv;  // the `kbench run ...` command
  std::filesystem::path log;      // where its console output goes
};

struct CellExit {
  Cell cell;
  std::string slot;   // where it ran ("gpu 1", "host 0", "job 1234_5")
  std::string note;   // how the process ended, when that is news ("exit code 2: ...", "signal 9")
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string name() const = 0;
  // How many more cells can start now.
  virtual int free_slots() const = 0;
  // Starts a cell; returns where ("gpu 0"). Throws std::runtime_error when it cannot.
  virtual std::string start(const CellLaunch& launch) = 0;
  // Submits what start() queued, when the executor batches (Slurm); a no-op otherwise.
  virtual void flush() {}
  // Cells whose command has ended since the last call.
  virtual std::vector<CellExit> poll() = 0;
  // Stops every cell in flight (SIGTERM, or scancel): their runs end `incomplete`. poll() then
  // reports them as they end.
  virtual void stop_all() = 0;
  virtual int in_flight() const = 0;
  // A short description for the progress display ("2 GPUs (0,1) x 1 agent").
  virtual std::string describe() const = 0;
};

}  // namespace kb
