// The local executor: each cell is a `kbench run` child process of the sweep.
//
// On the cuda target every cell owns one GPU for its whole run (CUDA_VISIBLE_DEVICES names it), so
// no two runs' timings overlap; with agents_per_gpu K, K cells share each GPU. On the host target
// `concurrency` cells run at once (1 by default: timings on a shared CPU disturb each other).
//
// A child dies with the sweep: it gets SIGTERM when the sweep process ends, however it ends
// (PR_SET_PDEATHSIG), and writes its run's `incomplete` record.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "sweep/executor.h"

namespace kb {

struct LocalSlots {
  std::vector<std::string> gpus;  // CUDA_VISIBLE_DEVICES values; empty: the host target
  int per_gpu = 1;                // cells per GPU
  int host_concurrency = 1;       // host target: cells at once
  std::filesystem::path lock_dir; // per_gpu > 1: where each GPU's lock file is (core/gpu_lock.h)
};

// The GPUs a cuda sweep uses: `requested` when given, else CUDA_VISIBLE_DEVICES's entries, else
// every /dev/nvidiaN. Empty when there are none.
std::vector<std::string> visible_gpus(const std::vector<int>& requested);

class LocalExecutor : public Executor {
 public:
  explicit LocalExecutor(LocalSlots slots);
  ~LocalExecutor() override;
  std::string name() const override { return "local"; }
  int free_slots() const override;
  std::string start(const CellLaunch& launch) override;
  std::vector<CellExit> poll() override;
  void stop_all() override;
  int in_flight() const override { return static_cast<int>(children_.size()); }
  std::string describe() const override;

 private:
  struct Child {
    Cell cell;
    size_t slot;
    std::filesystem::path log;
  };
  LocalSlots slots_;
  std::vector<int> used_;  // cells running per slot (per GPU, or one slot for the host)
  std::map<pid_t, Child> children_;
  std::string slot_name(size_t slot) const;
};

}  // namespace kb
