// The solution's GPU work as the worker attributed it (Device::collect_work; cuda: CUPTI), summed
// up over calls, for the reply; the parent judges it (eval/gpu_work.h).
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "target/target.h"

namespace kb {

// What the solution ran over one or more calls.
class WorkLedger {
 public:
  void add(const std::vector<GpuWork>& work);
  // {"monitor": status, "kernels": [...], "records": n, "violations": [{"kind", "name"}...]}
  nlohmann::json to_json(const std::string& monitor_status) const;

 private:
  std::set<std::string> kernels_;
  std::set<std::pair<std::string, std::string>> violations_;  // (kind, name)
  size_t records_ = 0;
  size_t unrecorded_ = 0;
};

}  // namespace kb
