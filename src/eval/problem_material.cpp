#include "eval/problem_material.h"

#include <algorithm>
#include <vector>

#include "core/read_file.h"

namespace kb {
namespace fs = std::filesystem;

std::string problem_material(const fs::path& dir) {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    if (it.depth() == 0 && it->is_directory() && it->path().filename() == "solutions") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  std::string material;
  for (const auto& f : files) material += fs::relative(f, dir).string() + '\0' + read_file(f) + '\0';
  return material;
}

}  // namespace kb
