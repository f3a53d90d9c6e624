// Where the site's rows come from. Every source goes through the results store (store/results.h):
// the leaderboard's cells are the store's own aggregation (load_results, per device kind), so the
// site's numbers are `kbench results`'s numbers by construction, whether they are read from a
// results database (--db) or from run directories (--runs: indexed first into a temporary
// database, as `kbench db rebuild` would). The run directories stay the source of the artefacts a
// run page shows.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "report/run_row.h"
#include "store/results.h"

namespace kb::report {

struct SiteData {
  std::vector<RunRow> rows;                      // every run, by id
  std::map<std::string, kb::Results> by_device;  // the store's results, one per device kind
  std::vector<std::string> warnings;             // run folders the store could not index, ...
};

class RunSource {
 public:
  virtual ~RunSource() = default;
  virtual SiteData load() = 0;
  // "runs/ (12 run directories)", for the site's footer and the command's summary.
  virtual std::string describe() const = 0;
};

// Every run directory directly under `runs_root`. Throws std::invalid_argument naming the folder
// when it does not exist.
std::unique_ptr<RunSource> runs_dir_source(const std::filesystem::path& runs_root);

// A results database (`kbench sweep` / `kbench db rebuild`). Each run's artefacts are read from the
// directory the database recorded, else from `runs_root`/<id> when given. Throws
// std::invalid_argument naming the file when it is not a results database this kbench can read.
std::unique_ptr<RunSource> store_source(const std::filesystem::path& db_file, const std::filesystem::path& runs_root = {});

}  // namespace kb::report
