#include "eval/gpu_work.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "eval/result.h"

namespace kb {

namespace {
// Enough names to act on; a solution launching thousands of distinct foreign kernels need not
// have every one in its result.
constexpr size_t kMaxListed = 8;

std::string listed(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < kMaxListed; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > kMaxListed) s += fmt::format(" and {} more", names.size() - kMaxListed);
  return s;
}
}  // namespace

bool gpu_work_monitored(const nlohmann::json& work) { return work.is_object() && work.value("monitor", "") == "cupti"; }

std::optional<Finding> judge_gpu_work(const nlohmann::json& work, const std::set<std::string>* library_kernels,
                                      const std::vector<std::string>& allowed_libraries) {
  if (!gpu_work_monitored(work)) return std::nullopt;
  std::vector<std::string> off_stream, other_thread, persisting, foreign;
  for (const auto& v : work.at("violations")) {
    const std::string kind = v.at("kind"), name = v.at("name");
    if (kind == "off_stream") off_stream.push_back(name);
    if (kind == "other_thread") other_thread.push_back(name);
    if (kind == "persisting_l2") persisting.push_back(name);
  }
  if (!other_thread.empty())
    return Finding{Reason::work_outside_stream,
                   fmt::format("GPU work was launched from a thread of the solution's own, outside kb_run ({}): "
                               "every launch must come from kb_run, on c->stream",
                               listed(other_thread))};
  if (!off_stream.empty())
    return Finding{Reason::work_outside_stream,
                   fmt::format("GPU work ran on a stream other than the one kbench handed over ({}): enqueue "
                               "everything on c->stream, which is what kbench times",
                               listed(off_stream))};
  if (!persisting.empty())
    return Finding{Reason::l2_persistence,
                   fmt::format("kernels were launched with an access policy window marking L2 lines persisting "
                               "({}): kbench times cold calls, and keeping data resident across calls is not "
                               "allowed",
                               listed(persisting))};
  // Provenance: with any library allowed, its kernels are legitimate and the names cannot tell
  // them apart, so the check applies to problems that allow none.
  if (library_kernels && allowed_libraries.empty()) {
    for (const auto& k : work.at("kernels")) {
      const std::string name = k.get<std::string>();
      if (!library_kernels->count(name)) foreign.push_back(name);
    }
    if (!foreign.empty())
      return Finding{Reason::foreign_kernel,
                     fmt::format("kernels ran that the solution's own sources do not define ({}): vendor "
                                 "libraries (cuBLAS, cuDNN, ...), torch's own operators (a Python solution's own "
                                 "kernels are those its Triton code compiled in setup), kbench's references and "
                                 "prebuilt kernels are not allowed for this problem",
                                 listed(foreign))};
  }
  return std::nullopt;
}

}  // namespace kb
