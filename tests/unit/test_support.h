// Helpers shared by unit tests: an environment variable set for one scope, temporary folders that
// clean up after themselves, and an editable copy of a deck problem.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace kb::testing_support {

// Sets (or, with nullptr, unsets) an environment variable until the end of the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ScopedEnv(const char* name, const std::string& value) : ScopedEnv(name, value.c_str()) {}
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A copy of a deck problem's folder at `to`, its solutions/ left out: a problem a test may edit
// (the caches' keys read every file but the solutions).
inline void copy_problem_without_solutions(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::filesystem::create_directories(to);
  for (const auto& e : std::filesystem::directory_iterator(from))
    if (e.path().filename() != "solutions")
      std::filesystem::copy(e.path(), to / e.path().filename(), std::filesystem::copy_options::recursive);
}

// A fresh, empty folder under the system temp dir, named after `tag`, this process and a counter;
// it does not exist until the test creates it, and is removed with everything in it at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("kbench-" + tag + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A fresh, existing folder for one test (removed first if a previous run left it behind).
inline std::filesystem::path fresh_temp_dir(const std::string& name) {
  std::filesystem::path d = std::filesystem::temp_directory_path() / ("kbench-unit-" + name + "-" + std::to_string(getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

#if KBENCH_WITH_CUDA
// The nvcc the tests compile with: $KBENCH_NVCC when set, else the one kbench was built with;
// empty when that file does not exist (the test then skips, naming `looked`).
inline std::filesystem::path nvcc_for_tests(std::string* looked = nullptr) {
  const char* env = std::getenv("KBENCH_NVCC");
  const std::filesystem::path nvcc = env && *env ? env : KBENCH_NVCC;
  if (looked) *looked = nvcc.string();
  return std::filesystem::exists(nvcc) ? nvcc : std::filesystem::path();
}
#endif

}  // namespace kb::testing_support
