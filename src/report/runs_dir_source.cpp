// RunSource over a folder of run directories (docs/agent-runs.md).
#include <algorithm>
#include <stdexcept>

#include "report/run_source.h"

namespace kb::report {
namespace fs = std::filesystem;

namespace {

class RunsDirSource : public RunSource {
 public:
  explicit RunsDirSource(fs::path root) : root_(std::move(root)) {}

  std::vector<RunRow> rows() override {
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root_))
      if (e.is_directory()) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    std::vector<RunRow> out;
    for (const auto& d : dirs)
      if (auto row = read_run_row(d)) out.push_back(std::move(*row));
    count_ = out.size();
    return out;
  }

  std::string describe() const override {
    return root_.filename().string() + "/ (" + std::to_string(count_) + " run director" + (count_ == 1 ? "y" : "ies") + ")";
  }

 private:
  fs::path root_;
  size_t count_ = 0;
};

}  // namespace

std::unique_ptr<RunSource> runs_dir_source(const fs::path& runs_root) {
  std::error_code ec;
  if (!fs::is_directory(runs_root, ec))
    throw std::invalid_argument("--runs " + runs_root.string() + ": no such folder (a folder of run directories, as `kbench run --runs-dir` makes)");
  return std::make_unique<RunsDirSource>(runs_root);
}

}  // namespace kb::report
