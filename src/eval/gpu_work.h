// The parent's judgement of the solution's GPU work as the worker attributed and reported it
// (worker/work_ledger.h): kernels on other streams or launched from the
// solution's own threads (work_outside_stream), persisting-L2 access policies (l2_persistence),
// and kernels the solution's library does not define (foreign_kernel).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "verdict/finding.h"

namespace kb {

// Parent side. `library_kernels`: the kernels the solution's library defines (null when unknown:
// the provenance check is then skipped); `allowed_libraries`: the problem's policy (a kernel of an
// allowed library is not foreign). nullopt when the work is clean.
std::optional<Finding> judge_gpu_work(const nlohmann::json& work, const std::set<std::string>* library_kernels,
                                      const std::vector<std::string>& allowed_libraries);

// Whether the worker attributed work at all (monitor status "cupti").
bool gpu_work_monitored(const nlohmann::json& work);

}  // namespace kb
