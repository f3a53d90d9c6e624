// Helpers shared by the agent-run integration tests: scratch folders, reading files, and finding
// processes by their command line (to prove that none outlived a run).
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace kbtest {

inline std::filesystem::path scratch(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("kbench-it-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The run directories `kbench run` made under `runs` (a test's own --runs-dir).
inline std::vector<std::filesystem::path> run_dirs(const std::filesystem::path& runs) {
  std::vector<std::filesystem::path> dirs;
  for (const auto& e : std::filesystem::directory_iterator(runs)) dirs.push_back(e.path());
  return dirs;
}

// A number no other process on the machine sleeps for: the marker of a test's stray process.
inline std::string marker_seconds(int salt) { return std::to_string(7000000 + (getpid() % 10000) * 10 + salt); }

// Live processes whose argv is exactly `sleep <seconds>` (zombies have an empty cmdline).
inline std::vector<pid_t> sleepers(const std::string& seconds) {
  std::vector<pid_t> out;
  const std::string want = std::string("sleep") + '\0' + seconds + '\0';
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      char* end = nullptr;
      long pid = std::strtol(e->d_name, &end, 10);
      if (!end || *end || pid <= 0) continue;
      const std::string cmd = slurp(std::string("/proc/") + e->d_name + "/cmdline");
      if (cmd == want || (cmd.size() > want.size() && cmd.compare(cmd.size() - want.size(), want.size(), want) == 0 &&
                          cmd[cmd.size() - want.size() - 1] == '/'))
        out.push_back(static_cast<pid_t>(pid));
    }
    closedir(d);
  }
  return out;
}

}  // namespace kbtest
