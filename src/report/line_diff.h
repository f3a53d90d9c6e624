// A line diff of two versions of a file, as unified-diff hunks: what the run page shows for every
// file the agent wrote or edited.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kb::report {

struct DiffHunk {
  int old_start = 0, old_lines = 0;  // 1-based, as in a unified diff's "@@ -a,b +c,d @@"
  int new_start = 0, new_lines = 0;
  std::vector<std::string> lines;    // each prefixed with ' ' (context), '-' (removed) or '+' (added)
};

struct LineDiff {
  std::vector<DiffHunk> hunks;
  int added = 0, removed = 0;
  // The two versions differed in too many lines to align (more than kMaxAlignedCells line pairs):
  // the differing middle is shown as removed then added, still correct, just not minimal.
  bool approximate = false;
};

// Line pairs the aligner compares at most (the middle of the files after their common beginning
// and end are taken off): 4M pairs keep a diff within ~4 MB of memory and well under a second,
// and no real source edit comes near it.
inline constexpr size_t kMaxAlignedCells = size_t{4} << 20;

std::vector<std::string> split_lines(std::string_view text);

// A minimal (longest-common-subsequence) line diff with `context` unchanged lines around changes.
LineDiff diff_lines(const std::vector<std::string>& before, const std::vector<std::string>& after, int context = 3);

nlohmann::json to_json(const LineDiff& d);

}  // namespace kb::report
