// The host target: solutions are C++ (solution.cpp) built with the system compiler and run on
// the CPU, timed with a monotonic clock after a cache flush.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/hash.h"
#include "target/compile.h"
#include "target/python_solution.h"
#include "target/host/host_info.h"
#include "target/launch_floor.h"
#include "target/target.h"

namespace kb {
namespace fs = std::filesystem;
namespace {

class HostDevice final : public Device {
 public:
  HostDevice() : flush_buffer_(flush_bytes()) {}

  std::string description() const override { return host_cpu_description(); }
  DLDevice dl_device() const override { return DLDevice{kDLCPU, 0}; }

  void* alloc(size_t bytes) override {
    // 256-byte alignment, as the ABI promises on every target; zero-sized tensors get a valid pointer.
    void* p = std::aligned_alloc(256, ((bytes + 255) / 256) * 256 + 256);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void release(void* p) override { std::free(p); }
  void upload(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }

  void fill_pattern(void* dst, size_t bytes, uint64_t pattern, int pattern_bytes) override {
    auto* p = static_cast<unsigned char*>(dst);
    for (size_t i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(pattern >> (8 * (i % pattern_bytes)));
  }
  uint64_t hash(const void* p, size_t bytes, uint64_t key) override { return buffer_hash(p, bytes, key); }
  void* stream() override { return nullptr; }
  void synchronize() override {}

  void flush_cache() override {
    // Reading a buffer of 2x the last-level cache, one load per line, evicts every line the
    // solution's data could occupy and leaves clean lines: writing it would leave dirty lines whose
    // write-back competes with the next timed call. The sum goes to a volatile so the loads stay.
    const size_t n = flush_buffer_.size();
    unsigned sum = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum)
    for (size_t i = 0; i < n; i += 64) sum += flush_buffer_[i];
    flush_sink_ = sum;
  }

  TimedCall time_call(const std::function<int()>& call, int* rc) override {
    const auto t0 = std::chrono::steady_clock::now();
    *rc = call();
    const auto t1 = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(t1 - t0).count();
    return {seconds, NAN, NAN, seconds};
  }

  double time_hot(const std::vector<std::function<int()>>& calls, int* rc, std::string* mode) override {
    *mode = "loop";
    *rc = 0;
    const auto t0 = std::chrono::steady_clock::now();
    size_t done = 0;
    for (const auto& c : calls) {
      ++done;
      if ((*rc = c()) != 0) break;
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / static_cast<double>(done);
  }

 private:
  static size_t flush_bytes() { return std::max<size_t>(2 * host_last_level_cache_bytes(), 64u << 20); }
  std::vector<unsigned char> flush_buffer_;
  volatile unsigned flush_sink_ = 0;
};

class HostTarget final : public Target {
 public:
  std::string name() const override { return "host"; }
  std::string source_file() const override { return "solution.cpp"; }

  BuildResult build(const fs::path& dir, const fs::path& build_root,
                    const BuildOptions& options) const override {
    // A folder with solution.py and no solution.cpp: kbench's Python bridge (target/python_solution.h).
    if (is_python_solution(dir, source_file())) return build_python_solution(dir, name(), build_root);
    const char* cxx = std::getenv("KBENCH_HOST_CXX");
    std::vector<std::string> argv = {cxx && *cxx ? cxx : "g++", "-std=c++20", "-O3", "-march=native", "-fopenmp",
                                     "-shared", "-fPIC", "-fvisibility=hidden",
                                     // Full RELRO: the library's dynamic tables are read-only before
                                     // kb_setup, so no GOT entry can be rewritten (docs/threat-model.md).
                                     "-Wl,-z,relro,-z,now",
                                     "-I" + kbench_include_dir().string(), "-I" + std::string(KBENCH_DLPACK_INCLUDE_DIR)};
    for (const auto& src : solution_sources(fs::absolute(dir), source_file(), {".cpp", ".cc", ".cxx"})) argv.push_back(src.string());
    return compile_solution(std::move(argv), dir, name(), options, build_root);
  }

  std::unique_ptr<Device> open_device() const override { return std::make_unique<HostDevice>(); }
  std::string device_fingerprint() const override { return "host | " + host_machine_key(); }

  // Host ceilings are always measured (and cached), with the launch floor of this target's own
  // device: `measure` changes nothing here. 51 samples, not the default: each one's cache flush
  // reads >= 64 MiB (~5-10 ms), while the empty call's own time hardly varies.
  Ceilings ceilings(const fs::path&, bool refresh, bool /*measure*/) const override {
    return host_ceilings(refresh, [this] { return measure_launch_floor(*open_device(), 51); });
  }

  // Measured host ceilings are not hard bounds: STREAM copy leaves out write-allocate traffic and
  // a solution's working set may partly stay in cache, so allow up to 2x before calling a time
  // impossible.
  double physics_slack() const override { return 2.0; }
};

}  // namespace

std::unique_ptr<Target> make_host_target() { return std::make_unique<HostTarget>(); }

}  // namespace kb
