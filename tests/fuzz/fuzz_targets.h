// The parsers of outside input that kbench must survive whatever the bytes, as fuzz targets: each
// takes one input and either returns or throws the error its contract names (a message for the
// user); anything else (another exception, a crash, a hang) is a finding. The property-based driver
// (fuzz_driver.cpp) mutates the seed corpus under tests/fuzz/corpus/<target>/ for a bounded time in
// CI; the same functions are libFuzzer's entry points where clang's -fsanitize=fuzzer is used.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kb::fuzz {

// A broken property: the input made the parser fail other than its contract allows.
class Finding : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Target {
  const char* name;                              // also the corpus folder's name
  void (*run)(std::string_view input);           // throws Finding
  std::vector<std::string> dictionary;           // tokens the mutator inserts
};

// problem_toml, solution_toml, annotation_toml, expr, channel.
const std::vector<Target>& targets();

// Where file-based targets write their input (set once by the driver; a fresh temporary folder).
void set_scratch_dir(const std::filesystem::path& dir);

}  // namespace kb::fuzz
