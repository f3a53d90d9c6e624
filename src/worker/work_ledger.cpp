#include "worker/work_ledger.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace kb {

void WorkLedger::add(const std::vector<GpuWork>& work) {
  for (const auto& w : work) {
    if (w.unrecorded) {
      ++unrecorded_;
      continue;
    }
    ++records_;
    if (w.kernel) kernels_.insert(w.name);
    // A kernel the solution's own kernel launched from the GPU runs on a device-side stream;
    // the parent kernel (on the handed stream) does not complete before it, so it is not off-stream.
    if (!w.on_stream && !w.device_launched) violations_.insert({"off_stream", w.name});
    if (!w.in_call) violations_.insert({"other_thread", w.name});
    if (w.persisting_l2) violations_.insert({"persisting_l2", w.name});
  }
}

nlohmann::json WorkLedger::to_json(const std::string& monitor_status) const {
  nlohmann::json v = nlohmann::json::array();
  for (const auto& [kind, name] : violations_) v.push_back({{"kind", kind}, {"name", name}});
  return {{"monitor", monitor_status}, {"kernels", kernels_}, {"records", records_},
          {"calls_with_unrecorded_stream_work", unrecorded_}, {"violations", v}};
}

}  // namespace kb
