// Where the site's rows come from. The leaderboard, the problem pages and the charts read rows
// through this one interface and do not care whether they were read from the run directories
// (the source of truth for artefacts) or from the results store's database.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "report/run_row.h"

namespace kb::report {

class RunSource {
 public:
  virtual ~RunSource() = default;
  // Every run, in a stable order (by id). Problems reading one run are warnings on its row.
  virtual std::vector<RunRow> rows() = 0;
  // "runs/ (12 run directories)", for the site's footer and the command's summary.
  virtual std::string describe() const = 0;
};

// Every run directory directly under `runs_root` (a folder holding a run.json). Throws
// std::invalid_argument naming the folder when it does not exist.
std::unique_ptr<RunSource> runs_dir_source(const std::filesystem::path& runs_root);

}  // namespace kb::report
