#include "core/data_dir.h"

#include <cstdlib>

#include "core/self_executable.h"
#include "core/version.h"

namespace kb {
namespace fs = std::filesystem;

fs::path installed_data_dir() {
  std::error_code ec;
  const fs::path exe = self_executable(ec);
  if (ec) return {};
  // <prefix>/bin/kbench -> <prefix>/share/kbench. problems/ is the marker: a build tree's folder
  // (build/kbench) has no ../share/kbench, so a build keeps reading its source tree.
  const fs::path share = (exe.parent_path().parent_path() / "share" / "kbench").lexically_normal();
  return fs::is_directory(share / "problems", ec) ? share : fs::path();
}

fs::path data_dir() {
  if (const char* env = std::getenv("KBENCH_DATA_DIR"); env && *env) return env;
  if (fs::path installed = installed_data_dir(); !installed.empty()) return installed;
  return source_dir();
}

fs::path solution_include_dir(const fs::path& data) {
  std::error_code ec;
  for (const fs::path& dir : {data / "include", (data / ".." / ".." / "include").lexically_normal()})
    if (fs::is_regular_file(dir / "kbench" / "solution.h", ec)) return dir;
  return {};
}

}  // namespace kb
