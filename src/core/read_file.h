// The whole content of a file, as bytes; empty when it cannot be read (a missing input is the
// caller's to notice: the build cache and the baseline cache hash what they read).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace kb {

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kb
