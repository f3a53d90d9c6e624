// The site's HTML pages, written by kbench: complete and readable without JavaScript (tables,
// verdicts, sources, logs are in the HTML); site.js adds sorting, filtering, tabs, highlighting
// and the transcript timeline, which it loads from the run's data files. Every piece of text from
// a run is escaped here; nothing from a run becomes markup.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/leaderboard.h"
#include "report/run_row.h"
#include "report/timeline.h"

namespace kb::report {

struct ProblemInfo {
  std::string name;
  std::string level;  // the deck and v3 level, as the site groups problems: "hard", "v3 L1"
  std::string description;
};

// What every page's header and footer say.
struct SiteContext {
  std::string source;           // where the rows came from ("runs/ (12 run directories)")
  std::string generated_at;     // ISO 8601 UTC
  std::string kbench_version;
  std::map<std::string, ProblemInfo> problems;  // from the deck, when it could be read
  bool highlighter = false;     // assets/highlight.min.js was copied into the site
};

// Paths inside the site, relative to its root. Ids and names are made safe for a file name.
std::string site_run_dir(const std::string& run_id);          // "runs/<id>"
std::string site_problem_page(const std::string& problem);    // "problems/<name>.html"

// The CSS classes for heat buckets (.heat-0 ... .heat-20), written as part of the site's CSS.
std::string heat_css();
std::string heat_class(double fraction);

std::string leaderboard_html(const std::vector<DeviceBoard>& boards, const std::vector<RunRow>& rows, const SiteContext& ctx);

// What a problem page shows beside the rows: read from the runs' prompt.md and result.json.
struct ProblemPageData {
  std::string prompt;                  // the prompt as the agent saw it (the latest run's prompt.md)
  nlohmann::json shapes = nlohmann::json::array();  // [{label, dims, flops, bytes}]
  nlohmann::json ceilings;             // {device, compute_peak_key, compute_peak, memory_peak_key, memory_peak, ceilings, regime}
  nlohmann::json baseline;             // {description, peak_fraction, shapes:[{flops_per_s, bytes_per_s}]} or null
  std::vector<std::string> rooflines;  // SVG per shape
};
std::string problem_html(const std::string& problem, const std::vector<const RunRow*>& runs, const ProblemPageData& d,
                         const SiteContext& ctx);

struct SourceFile {
  std::string name;           // as in the run directory: "solution/solution.cu"
  std::string text;
  bool truncated = false;
  size_t bytes = 0;
};

struct RunPageData {
  Timeline timeline;                          // items go to the data files, the counts to the page
  nlohmann::json result;                      // result.json, or null
  nlohmann::json record;                      // run.json, or null
  std::vector<SourceFile> solution;           // solution/ files
  std::vector<SourceFile> logs;               // eval.log, transcript/stderr.log, ... (heads of large files)
  nlohmann::json hand_annotation;             // validate_hand_annotation's JSON, or null
  std::vector<std::string> chunk_files;       // the timeline's data files, in order
};
std::string run_html(const RunRow& row, const RunPageData& d, const SiteContext& ctx);

// Where a quote of a run file points on the run page: an anchor id, or "" when it is not shown.
std::string quote_anchor(const RunPageData& d, const std::string& file, int line);

}  // namespace kb::report
