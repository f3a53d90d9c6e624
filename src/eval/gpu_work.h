// The solution's GPU work as the worker attributed it (Device::collect_work; cuda: CUPTI), summed
// up over calls, and the parent's judgement of it: kernels on other streams or launched from the
// solution's own threads (work_outside_stream), persisting-L2 access policies (l2_persistence),
// and kernels the solution's library does not define (foreign_kernel).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "target/target.h"

namespace kb {

// Worker side: what the solution ran over one or more calls.
class WorkLedger {
 public:
  void add(const std::vector<GpuWork>& work);
  // {"monitor": status, "kernels": [...], "records": n, "violations": [{"kind", "name"}...]}
  nlohmann::json to_json(const std::string& monitor_status) const;

  // GPU time from the first start to the last end of `work`, in seconds; NaN when empty or when
  // the call enqueued stream work no record covers (GpuWork::unrecorded).
  static double span_seconds(const std::vector<GpuWork>& work);

 private:
  std::set<std::string> kernels_;
  std::set<std::pair<std::string, std::string>> violations_;  // (kind, name)
  size_t records_ = 0;
  size_t unrecorded_ = 0;
};

struct GpuWorkVerdict {
  const char* failure;  // a reason::*
  std::string message;
};

// Parent side. `library_kernels`: the kernels the solution's library defines (null when unknown:
// the provenance check is then skipped); `allowed_libraries`: the problem's policy (a kernel of an
// allowed library is not foreign). nullopt when the work is clean.
std::optional<GpuWorkVerdict> judge_gpu_work(const nlohmann::json& work, const std::set<std::string>* library_kernels,
                                             const std::vector<std::string>& allowed_libraries);

// Whether the worker attributed work at all (monitor status "cupti").
bool gpu_work_monitored(const nlohmann::json& work);

}  // namespace kb
