// A target is where solutions run: `host` (the CPU, solutions in C++) or `cuda` (an NVIDIA GPU).
// The parent uses a Target to build a solution and to know its ceilings; the worker uses the
// Device it opens to own every buffer, stream and timer a solution touches.
#pragma once

#include <chrono>
#include <cmath>
#include <optional>
#include <set>
#include <vector>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <dlpack/dlpack.h>

#include "core/perturb.h"
#include "deck/problem.h"
#include "target/ceilings.h"
#include "target/gpu_sharing.h"

namespace kb {

struct Problem;
struct ShapeCase;
struct HostTensor;
struct InitSpec;

struct BuildResult {
  bool ok = false;
  std::filesystem::path library;  // the shared library, when ok
  std::string command;            // the compiler command line
  std::string log;                // full compiler output
  double seconds = 0;             // compile time (0 when served from the build cache)
  bool cached = false;
};

struct BuildOptions {
  std::vector<std::string> libraries;          // always linked as -l<name> (a problem's baseline)
  std::vector<std::string> allowed_libraries;  // what solution.toml may use (policy.allowed_libraries)
  // The compiler runs in the build sandbox (target/build_sandbox.h); false runs it as kbench.
  bool sandbox = false;
};

// One piece of GPU work attributed to the solution (cuda: from CUPTI activity records).
struct GpuWork {
  std::string name;            // the kernel's (mangled) name, or "memcpy" / "memset"
  bool kernel = true;          // false for copies and memsets
  bool on_stream = true;       // ran on the stream kbench handed to kb_run
  bool in_call = true;         // launched by kb_run itself (false: by another thread of the solution)
  bool device_launched = false;  // launched from the GPU (dynamic parallelism)
  bool persisting_l2 = false;    // launched with an access policy window that marks lines persisting
  // A marker, not a record: the call enqueued stream work that no activity record covers (a host
  // function, a wait, a graph launch), so the span of the records does not time it.
  bool unrecorded = false;
  uint64_t start_ns = 0, end_ns = 0;  // GPU timestamps
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string description() const = 0;  // "AMD EPYC 7B13, 2 cores" / "NVIDIA H100 80GB HBM3"
  virtual DLDevice dl_device() const = 0;
  virtual void* alloc(size_t bytes) = 0;       // device memory, at least 256-byte aligned
  virtual void release(void* p) = 0;
  virtual void upload(void* dst, const void* src, size_t bytes) = 0;
  virtual void download(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;  // device memory to device memory
  // Fills `bytes` bytes with the repeating `pattern` of `pattern_bytes` (1, 2, 4 or 8) bytes.
  virtual void fill_pattern(void* dst, size_t bytes, uint64_t pattern, int pattern_bytes) = 0;
  virtual uint64_t hash(const void* p, size_t bytes, uint64_t key) = 0;  // buffer_hash of device memory
  // hash() of each buffer, in order. The cuda device hashes them all with one wait for the device
  // (the timing's confirmation fingerprints up to 1024 output sets inside the interval it times).
  virtual std::vector<uint64_t> hash_many(const std::vector<std::pair<const void*, size_t>>& buffers, uint64_t key) {
    std::vector<uint64_t> h;
    h.reserve(buffers.size());
    for (const auto& [p, bytes] : buffers) h.push_back(hash(p, bytes, key));
    return h;
  }
  // Generates a tensor in place, bit-identical to deck/generate.h on the host for the same
  // (seed, stream), when the target can do it for this init (cuda: uniform and normal, not named
  // generators); returns false, writing nothing, when it cannot. `dtype` is a kb::DType enumerator.
  virtual bool generate(void* dst, int dtype, int64_t numel, const InitSpec& init, uint64_t seed, uint32_t stream) {
    (void)dst, (void)dtype, (void)numel, (void)init, (void)seed, (void)stream;
    return false;
  }
  // Swaps, or with `undo` swaps back, the secret pairs of every row of a tensor in place (`rows`
  // rows of `row_len` elements of `elem_bytes` bytes; core/perturb.h), with the same bytes moved as
  // kb::perturb_tensor on the host; done when the device is synchronised. The default works on
  // host memory; a target whose buffers live elsewhere overrides it.
  virtual void perturb(void* data, int64_t rows, int64_t row_len, int elem_bytes, uint64_t key, uint32_t stream,
                       bool undo) {
    perturb_tensor(data, rows, row_len, elem_bytes, key, stream, undo);
  }
  virtual void* stream() = 0;                  // handed to the solution (nullptr on host)
  virtual void synchronize() = 0;              // the whole device
  // Evicts the data caches so the next call starts cold (writes >= 2x the last-level cache).
  virtual void flush_cache() = 0;

  // The least work a solution's call can do, as its call would do it: one empty kernel on the
  // handed stream (cuda), nothing (host). The launch floor (target/launch_floor.h) times it.
  // Returns 0, as a solution's successful kb_run.
  virtual int launch_empty() { return 0; }

  struct TimedCall {
    double seconds = 0;         // the call's duration, measured the target's way
    double sm_clock_mhz = NAN;  // SM clock over the call when the target can tell, else NaN
    double sm_clock_start_mhz = NAN;  // SM clock just before the call (the throttle check's), else NaN
    // The host's time inside the call, from entering it to its return (steady clock): on the host
    // target the call itself; on cuda its launch cost, with the GPU's work possibly still running.
    double host_seconds = NAN;
  };
  // Runs `call` once, cold-timed the target's way; `call` returns the solution's code, stored in *rc.
  virtual TimedCall time_call(const std::function<int()>& call, int* rc) = 0;

  // Hot timing: `calls` back to back with no cache flush in between (on cuda, captured into one
  // CUDA graph when the solution allows capture). Returns seconds per call; *mode says how it was
  // run ("graph", "stream" or "loop"). Stops at the first non-zero return code, stored in *rc.
  virtual double time_hot(const std::vector<std::function<int()>>& calls, int* rc, std::string* mode) = 0;

  // The cross-check against work hidden off the handed stream (cuda): runs `call` without the
  // blocking kernel and reports how long the whole device kept working after kb_run returned.
  // Targets with no asynchronous work return nullopt.
  struct TailCheck {
    double stream_seconds = 0;  // event time of the handed stream around the call
    double tail_seconds = 0;    // host time from kb_run's return to the whole device being idle
    double sync_latency_seconds = 0;  // the same for an empty stream (the floor)
  };
  virtual std::optional<TailCheck> tail_check(const std::function<int()>& call, int* rc) {
    (void)call;
    (void)rc;
    return std::nullopt;
  }
  // Solution-work attribution (cuda: CUPTI). The worker brackets every kb_run with
  // mark_call(true) / mark_call(false) on its own thread; collect_work() returns the GPU work the
  // solution caused since the last collection (launched inside kb_run, or from a thread other than
  // the worker's), after waiting for the device. nullopt when the target cannot attribute work
  // (host) or attribution is unavailable (see monitor_status()).
  // Starts attribution (the worker, before kb_setup, so that any thread it needs exists before
  // the sandbox forbids new ones). The parent process never starts it.
  virtual void start_work_monitor() {}
  virtual void mark_call(bool inside) { (void)inside; }
  virtual std::optional<std::vector<GpuWork>> collect_work() { return std::nullopt; }
  virtual std::string monitor_status() const { return "not applicable"; }
  // Whether time_call holds the stream with a blocking kernel (cuda; see TimingPolicy).
  virtual void set_blocking_kernel(bool on) { (void)on; }
  // Whether time_hot may capture the calls into a CUDA graph (cuda; see TimingPolicy).
  virtual void set_hot_capture(bool on) { (void)on; }
  // The device's maximum SM clock in MHz (cuda), 0 when unknown (host).
  virtual double max_sm_clock_mhz() const { return 0; }
};

class Target {
 public:
  virtual ~Target() = default;
  virtual std::string name() const = 0;         // "host" or "cuda"
  virtual std::string source_file() const = 0;  // "solution.cpp" or "solution.cu"
  // Builds solution_dir into a shared library under build_root (a content-addressed cache), with
  // kbench's fixed flags plus what the folder's solution.toml may add (target/solution_config.h).
  // A rejected solution.toml is a failed build whose log says why.
  virtual BuildResult build(const std::filesystem::path& solution_dir, const std::filesystem::path& build_root,
                            const BuildOptions& options = {}) const = 0;
  virtual std::unique_ptr<Device> open_device() const = 0;
  // The device's description (Device::description()) without opening it: on cuda, read from the
  // device's properties, with no CUDA context in the calling process (a context costs a few tenths
  // of a second and a listing on the GPU; a parent whose problem has no GPU reference needs none).
  virtual std::string device_description() const { return open_device()->description(); }
  // What identifies the hardware a time measured on this target depends on, for caches of measured
  // times (eval/baseline_cache.h): cuda, the GPU's UUID and the driver's CUDA version (as the cuda
  // ceilings cache); host, the machine, CPU model, online CPUs and OpenMP threads (as the host
  // ceilings cache). Throws std::runtime_error when the device cannot be identified.
  virtual std::string device_fingerprint() const = 0;
  // Peaks used for scoring. `hardware_dir` holds the datasheets (cuda); host ceilings are measured.
  //
  // `measure` says whether a target scored against a datasheet may run its own measurement of the
  // device (cuda: ~10-60 s of DRAM, FMA and cuBLASLt GEMM runs), whose figures are reported beside
  // the datasheet's (Ceilings::measured_compute / measured_memory) and cached per device:
  //   measure = false: the datasheet plus the cached measurement if there is one; never measures,
  //                    and so ignores `refresh` (what `kbench eval` asks for);
  //   measure = true:  the datasheet plus the cached measurement, measuring on a miss or when
  //                    `refresh` is set (what `kbench ceilings` asks for).
  // Targets whose scoring ceilings are themselves measured (host) ignore `measure`: they always
  // measure on a cache miss, and again when `refresh` is set.
  virtual Ceilings ceilings(const std::filesystem::path& hardware_dir, bool refresh, bool measure) const = 0;
  // One case's expected outputs from the problem's GPU reference (deck/gpu_reference.h), computed
  // in this (the parent) process on `inputs` and `weights`; `expected` holds one NaN-filled vector
  // per output. Returns false, touching nothing, when the target runs no GPU reference for the
  // problem (then the CPU oracle computes everything).
  virtual bool gpu_reference(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& inputs,
                             const std::vector<HostTensor>& weights,
                             std::vector<std::vector<double>>& expected) const {
    (void)p, (void)shape, (void)inputs, (void)weights, (void)expected;
    return false;
  }
  // How far above a ceiling a time may appear before it is rejected as impossible: 1.0 for
  // datasheet peaks; more for measured host ceilings (a measured STREAM copy is not a hard bound).
  virtual double physics_slack() const = 0;
  // Bytes of a call's writes that a write-back cache may still hold when the call ends, so that
  // they never crossed the memory bus inside the timed interval (the GPU's L2: stores default to
  // write-back, PTX ISA "Cache Operators", st.wb). 0 keeps every byte in the physics check.
  virtual uint64_t write_back_cache_bytes() const { return 0; }
  // Whether processes other than `ours` (kbench's, by pid) compute on the device, where the
  // scheduler statistics cannot show it (target/gpu_sharing.h); nullopt on a target whose only
  // shared resource is the CPU (the host: its load is in the statistics).
  virtual std::optional<GpuSharing> device_sharing(const std::set<long>& ours) const {
    (void)ours;
    return std::nullopt;
  }
};

// "host", "cuda", or "auto" (cuda when this kbench was built with it and a GPU is present).
// Throws std::invalid_argument for an unknown or unavailable target, saying why.
std::unique_ptr<Target> make_target(const std::string& name);

// The options every build of a solution of `p` uses, so that `kbench build` and check/bench/eval
// build the same library under the same cache key: the problem's allowed libraries, the build
// sandbox or not, and the libraries always linked (a baseline's; none for a solution).
BuildOptions solution_build_options(const Problem& p, bool sandbox, std::vector<std::string> libraries = {});
bool cuda_available();

}  // namespace kb
