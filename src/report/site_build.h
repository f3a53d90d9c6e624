// `kbench site build`: the whole static site from a RunSource, written into one folder that works
// from file:// and from any static host, with no request to any other host. Layout (docs/site.md):
//   index.html                 the leaderboard (one table per device kind) and charts
//   problems/<problem>.html    one page per problem
//   runs/<run>/index.html      the run page (transcript viewer); run.js and events-<k>.js its data
//   data/leaderboard.json      the leaderboard and every run's row (schema kbench.site/1)
//   assets/                    site.js, site.css; highlight.min.js and highlight.css when installed
//   manifest.json              what each run's pages were made from, for incremental rebuilds
// Regeneration is incremental: a run whose files did not change since the last build (same sizes
// and modification times, same kbench version) is not rewritten; the pages of runs that are gone
// are removed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/run_source.h"

namespace kb::report {

// Item bytes per timeline data file: a browser parses one in a few milliseconds, and the page
// loads the next ones only as the reader scrolls to them (a 20 MB transcript is ~80 files).
inline constexpr size_t kChunkBytes = 256 * 1024;
// The head of a log or source shown on a run page; the whole file stays in the run directory.
inline constexpr size_t kMaxShownLogBytes = 256 * 1024;
inline constexpr size_t kMaxShownSourceBytes = 512 * 1024;

struct SiteBuildOptions {
  std::filesystem::path out = "site";
  std::filesystem::path problems_dir;   // the deck, for problem levels and descriptions (optional)
  std::filesystem::path tools_dir;      // the site tools folder (site_tools.h); empty: none
  bool force = false;                   // rewrite every run page
  size_t chunk_bytes = kChunkBytes;
};

struct SiteBuildReport {
  int runs = 0, runs_written = 0, runs_unchanged = 0, runs_removed = 0, problems = 0;
  bool highlighter = false;
  std::vector<std::string> warnings;  // runs with problems (named), a missing highlighter
  std::string source;
};

// Throws std::runtime_error naming the path when the output cannot be written.
SiteBuildReport build_site(RunSource& source, const SiteBuildOptions& o);

}  // namespace kb::report
