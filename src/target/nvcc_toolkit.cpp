#include "target/nvcc_toolkit.h"

#include <map>
#include <mutex>
#include <sstream>
#include <string>

#include "core/subprocess.h"
#include "target/build_sandbox.h"

namespace kb {
namespace fs = std::filesystem;

namespace {

// TOP from a dry run: nvcc prints its settings ("#$ TOP=/usr/local/cuda-13.0/bin/..") and the
// commands it would run, and runs none of them.
fs::path dry_run_top(const fs::path& nvcc) {
  const CommandResult r =
      run_command({nvcc.string(), "--dryrun", "-x", "cu", "-E", "/dev/null", "-o", "/dev/null"}, std::chrono::seconds(30));
  if (r.exit_code != 0 || r.timed_out) return {};
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) {
    constexpr std::string_view kTop = "#$ TOP=";
    if (line.rfind(kTop, 0) == 0) return canonical_dir(line.substr(kTop.size()));
  }
  return {};
}

}  // namespace

fs::path nvcc_toolkit_root(const fs::path& nvcc) {
  static std::mutex m;
  static std::map<fs::path, fs::path> known;
  std::lock_guard lock(m);
  if (auto it = known.find(nvcc); it != known.end()) return it->second;
  fs::path root = dry_run_top(nvcc);
  if (root.empty()) root = folder_above_bin(nvcc.string());
  return known[nvcc] = root;
}

}  // namespace kb
