// The Slurm executor: the cells a sweep claims go to the cluster as one sbatch job array per
// batch, each array task running one cell's `kbench run` (with --gres=gpu:1 on the cuda target and
// a time limit of budget + grace + the sweep's margin). Partition, account, QoS and extra sbatch
// options come from the sweep file's [executor.slurm]. The run directories must be on a filesystem
// the nodes share; the database stays with the sweep process, which alone writes it.
//
// State is read back with squeue (a task no longer listed has ended) and, where the cluster keeps
// accounting, sacct (how it ended). The run directory says how the run went, as for local cells.
// Stopping the sweep cancels its jobs (scancel); a job cancelled by hand ends its run `incomplete`
// and its cell is queued again, in this sweep or the next one.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sweep/executor.h"
#include "sweep/sweep_spec.h"

namespace kb {

// Throws SweepError when sbatch/squeue/scancel are not on PATH.
std::unique_ptr<Executor> make_slurm_executor(const SweepSpec& s);

// The sbatch command line for an array of `tasks` tasks running `script` (exposed for tests).
std::vector<std::string> sbatch_command(const SweepSpec& s, const std::string& target, int tasks,
                                        const std::string& script, const std::string& output_pattern);

}  // namespace kb
