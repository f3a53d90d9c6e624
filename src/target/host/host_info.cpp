#include "target/host/host_info.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace kb {

std::string host_cpu_description() {
  std::ifstream in("/proc/cpuinfo");
  std::string model;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  }
  if (model.empty()) model = "unknown CPU";
  return model + " (" + std::to_string(std::thread::hardware_concurrency()) + " cores)";
}

size_t host_last_level_cache_bytes() {
  // /sys/devices/system/cpu/cpu0/cache/index*/size holds e.g. "32768K"; take the largest.
  size_t best = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/devices/system/cpu/cpu0/cache", ec)) {
    std::ifstream in(e.path() / "size");
    std::string s;
    if (!(in >> s) || s.empty()) continue;
    size_t mult = 1;
    if (s.back() == 'K') mult = 1024;
    if (s.back() == 'M') mult = 1024 * 1024;
    try {
      best = std::max<size_t>(best, std::stoull(s) * mult);
    } catch (...) {
    }
  }
  return best ? best : (32u << 20);
}

}  // namespace kb
