// A scratch folder of the test process's own under the temporary directory. The name carries the
// process id: ctest runs tests in parallel processes, and CI runs on the machine the session used,
// /tmp included, where a folder an interrupted earlier run left must never be met (kbench rightly
// refuses an --out that already holds a result.json).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace kb::test {

// temp/kbench-<name>-<pid>, emptied; made unless `make` is false (for an --out kbench makes itself).
inline std::filesystem::path scratch_dir(const std::string& name, bool make = true) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() / ("kbench-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(p);
  if (make) std::filesystem::create_directories(p);
  return p;
}

}  // namespace kb::test
