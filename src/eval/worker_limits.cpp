#include "eval/worker_limits.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "eval/call_timeout.h"

namespace kb {

uint64_t machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

uint64_t default_memory_limit(const Problem& p, const ShapeCase& shape, const std::string& target) {
  if (target != "host") return 0;
  const double wanted = kMemoryShapeFactor * shape_tensor_bytes(p, shape) + static_cast<double>(kMemoryHeadroomBytes);
  double limit = wanted;
  if (const uint64_t machine = machine_memory_bytes(); machine > 0)
    limit = std::min(limit, kMemoryMachineFraction * static_cast<double>(machine));
  // A limit beyond what uint64_t holds is no limit.
  return limit >= 1.8e19 ? 0 : static_cast<uint64_t>(limit);
}

bool apply_worker_limits(const WorkerLimits& limits) {
  // No core files: a crashing worker's memory is of no use to anyone, and dumping it could write
  // gigabytes (and take seconds) where the log limit holds the log to megabytes.
  const rlimit no_core{0, 0};
  bool ok = setrlimit(RLIMIT_CORE, &no_core) == 0;
  if (limits.log_bytes > 0) {
    const rlimit r{limits.log_bytes, limits.log_bytes};
    ok = setrlimit(RLIMIT_FSIZE, &r) == 0 && ok;
  }
  if (limits.memory_bytes > 0) {
    const rlimit r{limits.memory_bytes, limits.memory_bytes};
    ok = setrlimit(RLIMIT_DATA, &r) == 0 && ok;
  }
  return ok;
}

std::string byte_size_text(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{} bytes", bytes);
  return v == std::floor(v) ? fmt::format("{:.0f} {}", v, kUnits[u]) : fmt::format("{:.1f} {}", v, kUnits[u]);
}

}  // namespace kb
