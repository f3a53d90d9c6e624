// Writing a file so that a reader sees either the old content or the whole new content, never a
// half-written file: the text goes to a temporary name in the same folder, is flushed to disk,
// and is renamed over the target (rename is atomic within one filesystem).
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

namespace kb {

// Throws std::runtime_error naming the file and the system error.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);
// The same for a file made of several pieces, written one after the other: a large file (a dump of
// gigabytes) need not be assembled in memory first.
void write_file_atomically(const std::filesystem::path& path, const std::vector<std::string_view>& pieces);

}  // namespace kb
