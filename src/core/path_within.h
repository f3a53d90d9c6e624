// Whether one path lies inside another, as the file system resolves them.
#pragma once

#include <algorithm>
#include <filesystem>

namespace kb {

// Whether `child` is `parent` or lies below it, both resolved as far as they exist
// (std::filesystem::weakly_canonical: links and `..` of the existing part), so that a link or a
// `..` cannot hide a folder inside another.
inline bool path_within(const std::filesystem::path& child, const std::filesystem::path& parent) {
  const std::filesystem::path c = std::filesystem::weakly_canonical(child), p = std::filesystem::weakly_canonical(parent);
  return std::mismatch(p.begin(), p.end(), c.begin(), c.end()).first == p.end();
}

}  // namespace kb
