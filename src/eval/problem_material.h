// What of a problem folder a cache key must see: every file but the deck's solutions, by relative
// path and content (eval/baseline_cache.h, eval/expected_cache.h). A new solution is not the problem
// and must not invalidate what was computed for it.
#pragma once

#include <filesystem>
#include <string>

namespace kb {

// Every regular file under `dir` but its top-level solutions/, sorted by path, each as
// "relative path \0 content \0". Throws std::filesystem::filesystem_error when `dir` cannot be read.
std::string problem_material(const std::filesystem::path& dir);

}  // namespace kb
