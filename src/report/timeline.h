// A run's transcript (transcript/events.jsonl, the normalized events of every adapter) made into
// the run page's timeline: tool calls paired with their results, every file write or edit as a
// diff against the file's earlier content (file_tracker.h), `kbench check`/`bench` calls and
// their outcomes, per-turn token counts, subagent sessions as one block. Bad input is shown, not
// fatal: a line that is not JSON, an unknown event kind, a file cut off mid-line, text that is not
// UTF-8 or holds terminal escapes each become a visibly marked item.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kb::report {

struct KbenchCall {
  std::string command;  // "check", "bench" or "submit"
  std::string outcome;  // "pass", "fail" or "" (no result seen)
};

struct Timeline {
  std::vector<nlohmann::json> items;          // in order; each has "i", its index
  std::map<int, int> item_of_line;            // events.jsonl line (1-based) -> item index
  int turns = 0, tool_calls = 0, tool_errors = 0, file_changes = 0, events = 0;
  std::vector<KbenchCall> kbench_calls;
  bool truncated = false;                     // the file ends in the middle of a line
  int unreadable_lines = 0, unknown_kinds = 0;
  bool had_invalid_utf8 = false, had_control = false;
  std::string error;                          // the file could not be read at all (missing, ...)
};

// `workspace`: the run's workspace path as the agent saw it (absolute paths under it are shown
// relative), or empty.
Timeline build_timeline(const std::filesystem::path& events_file, const std::string& workspace = {});

}  // namespace kb::report
