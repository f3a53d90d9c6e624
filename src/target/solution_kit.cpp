#include "target/solution_kit.h"

namespace kb {
namespace fs = std::filesystem;

std::vector<fs::path> solution_kits(const fs::path& solution_dir) {
  std::error_code ec;
  const fs::path dir = fs::canonical(solution_dir, ec);
  if (ec || !fs::is_directory(dir, ec)) return {};
  const fs::path solutions = dir.parent_path();
  const fs::path problem = solutions.parent_path();
  if (solutions.filename() != "solutions" || !fs::is_regular_file(problem / "problem.toml", ec)) return {};
  std::vector<fs::path> kits;
  for (const fs::path& k : {problem / "kit", problem.parent_path() / "kit"}) {
    // The deck's kit is a plain folder, never a problem (a folder named kit with a problem.toml).
    if (fs::is_regular_file(k / "problem.toml", ec)) continue;
    if (fs::path c = fs::canonical(k, ec); !ec && fs::is_directory(c, ec)) kits.push_back(c);
  }
  return kits;
}

}  // namespace kb
