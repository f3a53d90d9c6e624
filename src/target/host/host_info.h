// Facts about the host CPU used by the host target.
#pragma once

#include <cstddef>
#include <string>

namespace kb {

// "AMD EPYC 7B13 (2 cores)" from /proc/cpuinfo, or the machine name when unavailable.
std::string host_cpu_description();
// Size of the largest data cache (sysfs), or 32 MiB when it cannot be read.
size_t host_last_level_cache_bytes();

}  // namespace kb
