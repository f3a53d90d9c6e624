// Attribution of GPU work to the solution, through CUPTI's activity and callback APIs: every
// kernel, copy and memset that runs is recorded with its stream, GPU start/end times and the
// correlation id of the API call that launched it; a callback on every runtime and driver API call
// notes which calls came from kb_run (the worker marks the call, thread-locally) and which from a
// thread other than the worker's. Work the worker itself launches (flush, blocking kernel, fills,
// hashes, kb_setup's one-off work) is dropped.
//
// What this gives the evaluator (docs/threat-model.md, "Kernel provenance"): the kernel names the
// solution really ran (checked against the kernels its own library defines), work on streams other
// than the handed one, work launched after kb_run returned from a thread of the solution's, and
// GPU-side start/end times of the solution's work (the cold timer's activity span).
//
// CUPTI state is per process, so there is one monitor per process (the worker).
#pragma once

#include <cuda_runtime_api.h>

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "target/target.h"

namespace kb {

class KernelMonitor {
 public:
  // Starts CUPTI on the current context, attributing `stream` as the handed one. Returns the
  // monitor, or nullptr with *why set when CUPTI cannot be used (missing library, another profiler
  // attached, KBENCH_NO_KERNEL_MONITOR=1).
  static KernelMonitor* start(cudaStream_t stream, std::string* why);

  void mark_call(bool inside);
  // Flushes CUPTI's buffers (the caller has synchronised the device) and returns the solution's
  // work recorded since the last call.
  std::vector<GpuWork> collect();

  // Called by CUPTI (static trampolines in the .cpp).
  void on_api_enter(uint32_t correlation_id, bool unrecorded_stream_work);
  void on_record(const void* record);

 private:
  KernelMonitor() = default;

  struct Origin {
    bool in_call = false;   // from kb_run on the worker's thread; else from another thread
    uint64_t generation = 0;  // collect() round in which the launch was made
    bool seen = false;        // a record has named it
  };
  std::mutex mu_;
  // The solution's launches by correlation id. A CUDA graph launch yields many records under one
  // id, so entries live until the collect() after their launch, not until their first record.
  std::unordered_map<uint32_t, Origin> origins_;
  std::vector<GpuWork> work_;
  uint64_t generation_ = 0;
  bool unrecorded_stream_work_ = false;  // since the last collect()
  uint32_t stream_id_ = 0;
};

}  // namespace kb
