#include "target/gpu_sharing.h"

#include <sstream>
#include <vector>

#include "core/subprocess.h"

namespace kb {

const char* gpu_sharing_name(GpuSharing s) {
  switch (s) {
    case GpuSharing::exclusive: return "exclusive";
    case GpuSharing::shared: return "shared";
    case GpuSharing::unknown: return "unknown";
  }
  return "unknown";
}

namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

GpuSharing parse_compute_apps(const std::string& csv, const std::string& gpu_uuid, const std::set<long>& ours) {
  bool sees_us = false, others = false;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    if (trim(line).empty()) continue;
    const size_t comma = line.find(',');
    if (comma == std::string::npos) return GpuSharing::unknown;  // not the listing asked for
    const std::string pid_text = trim(line.substr(0, comma)), uuid = trim(line.substr(comma + 1));
    long pid = 0;
    try {
      size_t used = 0;
      pid = std::stol(pid_text, &used);
      if (used != pid_text.size() || pid <= 0) return GpuSharing::unknown;
    } catch (const std::exception&) {
      return GpuSharing::unknown;  // "[N/A]", "[Insufficient Permissions]", an error message
    }
    if (uuid != gpu_uuid) continue;  // another GPU of the machine
    if (ours.count(pid)) sees_us = true;
    else others = true;
  }
  if (!sees_us) return GpuSharing::unknown;
  return others ? GpuSharing::shared : GpuSharing::exclusive;
}

GpuSharing gpu_sharing(const std::string& gpu_uuid, const std::set<long>& ours, std::chrono::milliseconds timeout) {
  CommandResult r;
  try {
    r = run_command({"nvidia-smi", "--query-compute-apps=pid,gpu_uuid", "--format=csv,noheader"}, timeout);
  } catch (const std::exception&) {
    return GpuSharing::unknown;  // no nvidia-smi on PATH
  }
  if (r.timed_out || r.signal != 0 || r.exit_code != 0) return GpuSharing::unknown;
  return parse_compute_apps(r.output, gpu_uuid, ours);
}

}  // namespace kb
