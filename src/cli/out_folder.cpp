#include "cli/out_folder.h"

#include <fmt/format.h>

#include <fstream>

#include "cli/app.h"

namespace kb::cli {
namespace fs = std::filesystem;

void claim_out_folder(const fs::path& dir, const char* option, bool force) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw UsageError(fmt::format("{} {}: not a folder", option, dir.string()));
  if (fs::is_directory(dir, ec) && !fs::exists(dir / kOutFolderMarker, ec) && !force) {
    std::string names;
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (n < 3) names += (n ? ", " : "") + e.path().filename().string();
      ++n;
    }
    if (n > 0)
      throw UsageError(fmt::format("{} {}: the folder already holds {} entr{} that kbench did not write ({}{}); kbench "
                                   "replaces its worker logs there, so it writes only into a new or empty folder or one "
                                   "it made: pick another, or add --force where the command has it",
                                   option, dir.string(), n, n == 1 ? "y" : "ies", names, n > 3 ? ", ..." : ""));
  }
  if (fs::create_directories(dir, ec); ec)
    throw UsageError(fmt::format("{} {}: cannot create the folder: {}", option, dir.string(), ec.message()));
  std::ofstream marker(dir / kOutFolderMarker);
  marker << "This folder was written by kbench check/bench/eval; a later run with --out here replaces its files.\n";
  if (!marker) throw UsageError(fmt::format("{} {}: cannot write into the folder", option, dir.string()));
}

}  // namespace kb::cli
