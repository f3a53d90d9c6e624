// The per-GPU lock of a sweep with several agents on one GPU (`kbench sweep --agents-per-gpu K`):
// every check, bench and eval an agent runs through its workspace's ./kbench, and the official
// evaluation of each run, holds the GPU's lock while it works, so that no two timings on one GPU
// overlap while the agents themselves think in parallel. The wait and hold times of every use are
// recorded and summed into run.json's "gpu_lock" (KernelBench-Hard published them as
// gpu_lock_wait/active seconds).
//
// The lock is flock(2) on one file per GPU (<runs_dir>/_locks/gpu-<id>.lock). Each run gets a hard
// link to it in its private folder, which the sandbox binds read-only (flock works on a read-only
// descriptor, and the link is the same inode); KBENCH_GPU_LOCK names the file, KBENCH_GPU_LOCK_LOG
// the JSON Lines file (in the run's private HOME) each use is appended to.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace kb {

class GpuLock {
 public:
  // Blocks until the lock is held. Throws std::runtime_error naming the file.
  GpuLock(const std::filesystem::path& file, std::filesystem::path log, std::string what);
  ~GpuLock();  // releases it and appends {"what","wait_seconds","hold_seconds"} to the log
  GpuLock(const GpuLock&) = delete;
  GpuLock& operator=(const GpuLock&) = delete;
  double wait_seconds() const { return wait_; }

 private:
  int fd_ = -1;
  std::filesystem::path log_;
  std::string what_;
  double wait_ = 0, t_held_ = 0;
};

inline constexpr const char* kGpuLockEnv = "KBENCH_GPU_LOCK";
inline constexpr const char* kGpuLockLogEnv = "KBENCH_GPU_LOCK_LOG";

// The lock named by KBENCH_GPU_LOCK (logging to KBENCH_GPU_LOCK_LOG), or null when it is not set.
std::unique_ptr<GpuLock> gpu_lock_from_environment(const std::string& what);

// {"uses", "wait_seconds", "hold_seconds"} summed over a log; null when there is no log.
nlohmann::json summarize_gpu_lock_log(const std::filesystem::path& log);

}  // namespace kb
