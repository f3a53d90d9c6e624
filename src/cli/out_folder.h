// The folder that `check`, `bench` and `eval` write into (--out): worker logs, the baseline's
// staged source and logs, and eval's result.json. kbench replaces its own files there from one run
// to the next, so it writes only into a folder it made: one that is new, empty, or carries its
// marker file. A folder holding anything else (a user's files, which a worker log of the same
// name would have truncated and `baseline-source/` removed) is refused unless told (--force).
#pragma once

#include <filesystem>

namespace kb::cli {

inline constexpr const char* kOutFolderMarker = ".kbench-out";

// Creates `dir` if needed and marks it as kbench's. Throws UsageError naming `option` and the
// folder when it cannot be created, is not a folder, or holds files kbench did not write (and
// `force` is false).
void claim_out_folder(const std::filesystem::path& dir, const char* option, bool force);

}  // namespace kb::cli
