#include "eval/baseline_stage.h"

#include "target/python_solution.h"

namespace kb {
namespace fs = std::filesystem;

fs::path baseline_source(const Problem& p, const std::string& target) {
  const fs::path native = p.dir / (target == "cuda" ? "baseline.cu" : "baseline.cpp");
  std::error_code ec;
  if (!fs::is_regular_file(native, ec) && fs::is_regular_file(p.dir / kPythonBaselineFile, ec))
    return p.dir / kPythonBaselineFile;
  return native;
}

bool is_python_baseline(const fs::path& source) { return source.filename() == kPythonBaselineFile; }

std::vector<fs::path> baseline_kits(const Problem& p) {
  std::vector<fs::path> kits;
  std::error_code ec;
  for (const fs::path& k : {p.dir / "kit", p.dir.parent_path() / "kit"}) {
    if (fs::is_regular_file(k / "problem.toml", ec)) continue;  // a problem named kit, not a kit
    if (fs::is_directory(k, ec)) kits.push_back(k);
  }
  return kits;
}

std::optional<fs::path> stage_baseline(const Problem& p, const std::string& target, const fs::path& work_dir) {
  const fs::path src = baseline_source(p, target);
  if (!fs::is_regular_file(src)) return std::nullopt;
  const fs::path dir = work_dir / "baseline-source";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(src, dir / ("solution" + src.extension().string()));
  // A Python baseline takes the kits' Python modules (its shared code: problems/kit/torch_baselines.py),
  // the problem's first; their C++ headers are no part of a Python build.
  if (is_python_baseline(src)) {
    for (const fs::path& kit : baseline_kits(p))
      for (const fs::path& f : python_files(kit)) {
        if (fs::exists(dir / f)) continue;
        fs::create_directories((dir / f).parent_path());
        fs::copy_file(kit / f, dir / f);
      }
    return dir;
  }
  // The problem's kit first: a file the deck's kit also has is then the problem's (skip_existing).
  for (const fs::path& kit : baseline_kits(p))
    fs::copy(kit, dir, fs::copy_options::recursive | fs::copy_options::skip_existing);
  return dir;
}

}  // namespace kb
