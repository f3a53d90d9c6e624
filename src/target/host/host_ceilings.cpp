// Host (CPU) ceilings measured on this machine, and their per-machine cache.
//
// Two numbers bound a host solution: how fast all cores can stream memory (STREAM Copy) and how
// many FMAs per second all cores can retire (fp32 and fp64). Both are measured rather than taken
// from a datasheet because the host target runs wherever kbench runs — laptops, VMs, CI runners —
// and no table covers those.
//
// Compiled with -O3 -ffp-contract=fast (CMakeLists.txt): the FMA kernels below are written as
// a*b+c on GCC vector types and rely on contraction to become FMA instructions; nothing in this
// file needs the bit-exact arithmetic that the project-wide -ffp-contract=off protects.
// The vector width is chosen at run time (target attributes + __builtin_cpu_supports) rather than
// with -march=native, so the kbench binary still runs on an older CPU than the one that built it,
// and so the widest vectors are used even where -march=native would tune for 256-bit ones
// (GCC prefers 256-bit vectors on many AVX-512 parts, which would halve the measured peak).
#include "target/ceilings.h"

#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>

#include <fmt/format.h>

namespace kb {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::string read_first_line(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::string line;
  if (f) std::getline(f, line);
  return trim(line);
}

// "491520K" (sysfs cache size) -> bytes.
size_t parse_size(const std::string& s) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return 0;
  switch (*end) {
    case 'K': case 'k': return v << 10;
    case 'M': case 'm': return v << 20;
    case 'G': case 'g': return v << 30;
    default: return v;
  }
}

// ------------------------------------------------------------------------------------------------
// Last-level cache: STREAM sizes its arrays against the sum of all LLCs the run can use, so count
// every distinct LLC instance (one per socket on Intel, one per CCX on AMD) from sysfs, each once.

struct LlcInfo {
  size_t bytes = 0;
  std::string how;
};

LlcInfo last_level_cache() {
  namespace fs = std::filesystem;
  std::error_code ec;
  int best_level = 0;
  std::map<std::string, size_t> instances;  // shared_cpu_list -> size, at best_level
  for (const auto& cpu : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = cpu.path().filename().string();
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0 ||
        !std::all_of(name.begin() + 3, name.end(), [](unsigned char c) { return std::isdigit(c); }))
      continue;
    std::error_code ec2;
    for (const auto& idx : fs::directory_iterator(cpu.path() / "cache", ec2)) {
      if (idx.path().filename().string().rfind("index", 0) != 0) continue;
      if (read_first_line(idx.path() / "type") == "Instruction") continue;
      const int level = std::atoi(read_first_line(idx.path() / "level").c_str());
      const size_t size = parse_size(read_first_line(idx.path() / "size"));
      const std::string shared = read_first_line(idx.path() / "shared_cpu_list");
      if (level <= 0 || size == 0) continue;
      if (level > best_level) {
        best_level = level;
        instances.clear();
      }
      if (level == best_level) instances[shared.empty() ? name : shared] = size;
    }
  }
  if (!instances.empty()) {
    LlcInfo info;
    for (const auto& [cpus, size] : instances) info.bytes += size;
    info.how = fmt::format("{} MiB (L{}, {} instance{}, sysfs)", info.bytes / kMiB, best_level, instances.size(),
                           instances.size() == 1 ? "" : "s");
    return info;
  }
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE); l3 > 0)
    return {static_cast<size_t>(l3), fmt::format("{} MiB (L3, sysconf, one instance)", l3 / kMiB)};
  if (long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE); l2 > 0)
    return {static_cast<size_t>(l2), fmt::format("{} MiB (L2, sysconf, one instance)", l2 / kMiB)};
#endif
  return {32 * kMiB, "unknown, assumed 32 MiB"};
}

size_t available_memory() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  size_t kib = 0;
  std::string unit;
  while (f >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib << 10;
  long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
}

// Anonymous mapping with transparent huge pages requested: first touch of a GiB-sized array in 4 KiB
// pages costs ~250k page faults, most of the measurement's time budget; 2 MiB pages cut that 512x.
class Buffer {
 public:
  explicit Buffer(size_t bytes) : size_(bytes + 2 * kMiB) {
    void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw std::runtime_error(fmt::format("host ceilings: cannot map {} MiB: {}", size_ / kMiB, std::strerror(errno)));
    base_ = p;
    auto aligned = (reinterpret_cast<uintptr_t>(p) + 2 * kMiB - 1) & ~(uintptr_t{2 * kMiB} - 1);
#ifdef MADV_HUGEPAGE
    madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);  // a hint; failure is harmless
#endif
    data_ = reinterpret_cast<double*>(aligned);
  }
  ~Buffer() { munmap(base_, size_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  double* data() const { return data_; }

 private:
  size_t size_;
  void* base_ = nullptr;
  double* data_ = nullptr;
};

// ------------------------------------------------------------------------------------------------
// STREAM Copy (McCalpin): a[i] = b[i] over arrays far larger than the caches, all threads.

struct Bandwidth {
  double bytes_per_s = 0;
  std::string source;
};

Bandwidth measure_copy_bandwidth(int threads) {
  const LlcInfo llc = last_level_cache();
  // STREAM's rule: each array at least 4x the LLC total (and here at least 64 MiB). A server LLC can
  // be hundreds of MiB, and 4x that per array would blow the ~2 s budget on a small VM; past 1 GiB
  // per array we fall back to "both arrays together >= 4x LLC": a sequential stream twice the cache
  // size evicts every line before it is reused under LRU-like replacement, so no pass can hit.
  size_t per_array = std::max<size_t>(64 * kMiB, 4 * llc.bytes);
  std::string sizing = "each array >= 4x LLC, as STREAM requires";
  if (per_array > 1024 * kMiB) {
    per_array = std::max<size_t>(1024 * kMiB, 2 * llc.bytes);
    sizing = "4x LLC per array capped at 1 GiB for time, both arrays together >= 4x LLC";
  }
  // Never take more than half of the memory that is free now: the ceiling is not worth swapping for.
  if (size_t avail = available_memory(); avail > 0 && 2 * per_array > avail / 2) {
    per_array = std::max<size_t>(64 * kMiB, (avail / 4) & ~(2 * kMiB - 1));
    sizing = "limited by free memory, may be below STREAM's 4x LLC rule";
  }
  const size_t n = per_array / sizeof(double);
  Buffer a_buf(per_array), b_buf(per_array);
  double* a = a_buf.data();
  double* b = b_buf.data();

  // First touch in parallel with the copy's own static schedule: each page is then backed by memory
  // local to the thread (NUMA node) that streams it, as in STREAM.
#pragma omp parallel for schedule(static) num_threads(threads)
  for (size_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = static_cast<double>(i & 0xffff) + 0.5;
  }

  // Best of several passes; the first may still pay for TLB misses or page promotion. At least 3
  // passes, then stop at 10 or once ~0.4 s have been spent copying (the time budget is ~2 s).
  double best = 1e300, spent = 0;
  int reps = 0;
  while (reps < 3 || (reps < 10 && spent < 0.4)) {
    const double t0 = omp_get_wtime();
#pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t i = 0; i < n; ++i) a[i] = b[i];
    const double dt = omp_get_wtime() - t0;
    best = std::min(best, dt);
    spent += dt;
    ++reps;
  }
  // The copy must have happened (and so cannot have been elided): check one element per 4 KiB page.
  for (size_t i = 0; i < n; i += 512)
    if (a[i] != b[i]) throw std::runtime_error("host ceilings: STREAM copy verification failed");

  Bandwidth bw;
  // STREAM counts the bytes the kernel names: n read from b plus n written to a. The write-allocate
  // read of a's lines (when the copy does not use streaming stores) is real traffic but is not
  // counted, exactly as STREAM does, so this is the rate a solution's "minimal bytes" are held to.
  bw.bytes_per_s = 2.0 * static_cast<double>(per_array) / best;
  bw.source = fmt::format(
      "measured: STREAM Copy a[i]=b[i] on doubles, {} OpenMP thread{}, 2 arrays x {} MiB, LLC {}: {}; "
      "best of {} passes, bytes read + written (write-allocate traffic not counted, as in STREAM)",
      threads, threads == 1 ? "" : "s", per_array / kMiB, llc.how, sizing, reps);
  return bw;
}

// ------------------------------------------------------------------------------------------------
// FMA throughput: CHAINS independent accumulators of one SIMD register each, acc = acc*m + c.
// An FMA unit is pipelined (latency ~4-5 cycles, 2-4 units per core), so a single dependent chain
// would measure latency; CHAINS >= latency x units keeps every unit busy every cycle. CHAINS must
// also fit in the register file with the two constants, or spills would make it a load/store test:
// 16 zmm of 32 (AVX-512), 12 ymm of 16 (AVX2), 24 of 32 NEON registers (4 FMA pipes x latency 4
// on Neoverse V1/V2 and Apple cores needs 16).
// acc converges to the fixed point c/(1-m): no overflow, no denormals, whatever the trip count.

#define KB_FMA_KERNEL(NAME, TARGET, T, BYTES, CHAINS)                 \
  TARGET __attribute__((noinline)) T NAME(long iters, T mul, T add) { \
    typedef T V __attribute__((vector_size(BYTES)));                  \
    constexpr int lanes = BYTES / sizeof(T);                          \
    V m = V{} + mul, c = V{} + add, acc[CHAINS];                      \
    for (int k = 0; k < CHAINS; ++k)                                  \
      for (int l = 0; l < lanes; ++l) acc[k][l] = add * T(k + l + 1); \
    for (long i = 0; i < iters; ++i)                                  \
      for (int k = 0; k < CHAINS; ++k) acc[k] = acc[k] * m + c;       \
    V s = acc[0];                                                     \
    for (int k = 1; k < CHAINS; ++k) s += acc[k];                     \
    T r = 0;                                                          \
    for (int l = 0; l < lanes; ++l) r += s[l];                        \
    return r;                                                         \
  }

struct FmaKernels {
  const char* isa;
  int f32_lanes, f64_lanes, chains;
  float (*f32)(long, float, float);
  double (*f64)(long, double, double);
};

#if defined(__x86_64__) || defined(__i386__)
KB_FMA_KERNEL(fma_f32_avx512, __attribute__((target("avx512f"))), float, 64, 16)
KB_FMA_KERNEL(fma_f64_avx512, __attribute__((target("avx512f"))), double, 64, 16)
KB_FMA_KERNEL(fma_f32_avx2, __attribute__((target("avx2,fma"))), float, 32, 12)
KB_FMA_KERNEL(fma_f64_avx2, __attribute__((target("avx2,fma"))), double, 32, 12)
// Baseline x86-64 (SSE2) has no FMA: a multiply and an add, still 2 FLOP, on 128-bit registers.
KB_FMA_KERNEL(fma_f32_sse2, , float, 16, 12)
KB_FMA_KERNEL(fma_f64_sse2, , double, 16, 12)

// The kernels worth timing here, widest first. With AVX-512 the AVX2 kernel is timed too: parts with
// a single 512-bit FMA port (Xeon Bronze/Silver, some client cores) or a deep AVX-512 frequency
// drop can retire more FLOP/s with 256-bit vectors, and the ceiling is the best either achieves.
std::vector<FmaKernels> candidate_kernels() {
  __builtin_cpu_init();
  const FmaKernels avx512{"AVX-512", 16, 8, 16, fma_f32_avx512, fma_f64_avx512};
  const FmaKernels avx2{"AVX2+FMA", 8, 4, 12, fma_f32_avx2, fma_f64_avx2};
  // __builtin_cpu_supports also checks that the OS saves the wide registers (XCR0).
  const bool has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (__builtin_cpu_supports("avx512f")) return has_avx2 ? std::vector{avx512, avx2} : std::vector{avx512};
  if (has_avx2) return {avx2};
  return {{"SSE2 (no FMA: mul+add)", 4, 2, 12, fma_f32_sse2, fma_f64_sse2}};
}
#elif defined(__aarch64__)
// AdvSIMD (NEON) FMA is baseline on AArch64. SVE implementations in servers (Neoverse V1/V2, Grace)
// have the same per-core FMA throughput through 128-bit NEON as through SVE.
KB_FMA_KERNEL(fma_f32_neon, , float, 16, 24)
KB_FMA_KERNEL(fma_f64_neon, , double, 16, 24)
std::vector<FmaKernels> candidate_kernels() { return {{"AdvSIMD", 4, 2, 24, fma_f32_neon, fma_f64_neon}}; }
#else
KB_FMA_KERNEL(fma_f32_generic, , float, 16, 8)
KB_FMA_KERNEL(fma_f64_generic, , double, 16, 8)
std::vector<FmaKernels> candidate_kernels() {
  return {{"generic 128-bit", 4, 2, 8, fma_f32_generic, fma_f64_generic}};
}
#endif

// Kept in a volatile so the kernels' results are observably used.
volatile double g_fma_sink = 0;
// Read through volatiles so the compiler cannot fold the recurrence at compile time.
volatile float g_mul32 = 0.9990234375f, g_add32 = 0.001f;
volatile double g_mul64 = 0.9990234375, g_add64 = 0.001;

struct Rate {
  double flops_per_s = 0;
  int reps = 0;
};

// Runs `kernel` on every thread at once; returns the best aggregate rate over a few timed runs.
template <class T>
Rate measure_fma(int threads, int lanes, int chains, T (*kernel)(long, T, T), T mul, T add) {
  auto run = [&](long iters) {
    double t0 = 0, t1 = 0, sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
    {
#pragma omp barrier
#pragma omp master
      t0 = omp_get_wtime();
      sum += static_cast<double>(kernel(iters, mul, add));
#pragma omp barrier
#pragma omp master
      t1 = omp_get_wtime();
    }
    // The fixed point is add/(1-mul) ~ 1 per lane and chain: the result must be finite and positive.
    if (!(std::isfinite(sum) && sum > 0)) throw std::runtime_error("host ceilings: FMA kernel produced no result");
    g_fma_sink = g_fma_sink + sum;
    return t1 - t0;
  };
  // Calibrate on a short run, then size runs of ~50 ms each (long enough to dwarf the barrier and
  // to let the clock settle at its all-core FMA frequency), best of 3.
  long iters = 1 << 14;
  double dt = run(iters);
  while (dt < 0.01) {
    iters *= 4;
    dt = run(iters);
  }
  iters = std::max(1L, static_cast<long>(static_cast<double>(iters) * 0.05 / dt));
  Rate r;
  double best = 1e300;
  for (r.reps = 0; r.reps < 3; ++r.reps) best = std::min(best, run(iters));
  // 2 FLOP per FMA (multiply + add), per lane, per chain, per iteration, per thread.
  r.flops_per_s = 2.0 * lanes * chains * static_cast<double>(iters) * threads / best;
  // No core retires 1 TFLOP/s: a higher figure means the loop was optimised away, not a fast CPU.
  if (r.flops_per_s > 1e12 * threads) throw std::runtime_error("host ceilings: FMA loop was optimised away");
  return r;
}

// ------------------------------------------------------------------------------------------------
// Machine identity for the cache key.

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line, implementer, part;
  while (std::getline(f, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "model name" || key == "cpu model" || key == "Model") return value;  // x86, MIPS, some Arm boards
    if (key == "CPU implementer" && implementer.empty()) implementer = value;
    if (key == "CPU part" && part.empty()) part = value;
  }
  if (!implementer.empty()) return fmt::format("Arm implementer {} part {}", implementer, part);
  return "unknown CPU";
}

std::string machine_id() {
  for (const char* p : {"/etc/machine-id", "/var/lib/dbus/machine-id"})
    if (std::string id = read_first_line(p); !id.empty()) return id;
  return "host:" + hostname();
}

std::string machine_key(int threads) {
  return fmt::format("{} | {} | {} online CPUs | {} OpenMP threads", machine_id(), cpu_model(),
                     sysconf(_SC_NPROCESSORS_ONLN), threads);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string sanitize(std::string s) {
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.') ch = '-';
  return s;
}

// Other work on the machine lowers every figure measured here, and a cached ceiling that is too low
// turns honest solutions into "faster than physics" later. The load is recorded in each source so
// that a ceiling measured on a busy machine can be recognised (and re-measured with refresh).
std::string load_note() {
  double load1 = -1;
  std::ifstream("/proc/loadavg") >> load1;
  if (load1 < 0) return "";
  return fmt::format("; 1-min load average {:.2f} on {} online CPUs when measured", load1, sysconf(_SC_NPROCESSORS_ONLN));
}

}  // namespace

Ceilings measure_host_ceilings() {
  const int threads = std::max(1, omp_get_max_threads());
  Ceilings c;
  c.id = "host-" + sanitize(hostname());
  c.name = fmt::format("{} ({} thread{})", cpu_model(), threads, threads == 1 ? "" : "s");
  c.measured = true;

  const std::string load = load_note();  // before we add our own load
  // For each type, the best rate over the candidate kernels; the source names the winner.
  auto best_of = [&](const char* type, bool f32) {
    Ceiling best;
    std::string timed;  // every kernel's rate, when there was more than one
    const std::vector<FmaKernels> kernels = candidate_kernels();
    for (const FmaKernels& k : kernels) {
      const int lanes = f32 ? k.f32_lanes : k.f64_lanes;
      const Rate r = f32 ? measure_fma<float>(threads, lanes, k.chains, k.f32, g_mul32, g_add32)
                         : measure_fma<double>(threads, lanes, k.chains, k.f64, g_mul64, g_add64);
      const std::string source = fmt::format(
          "measured: {} FMA throughput, {} OpenMP thread{}, {} x {}-lane {} accumulator chains per thread, "
          "best of {} runs of ~50 ms, 2 FLOP per FMA",
          type, threads, threads == 1 ? "" : "s", k.chains, lanes, k.isa, r.reps);
      if (r.flops_per_s > best.value) best = Ceiling{r.flops_per_s, source};
      timed += fmt::format("{}{} {:.1f} GFLOP/s", timed.empty() ? "" : ", ", k.isa, r.flops_per_s / 1e9);
    }
    if (kernels.size() > 1) best.source += " (kernels timed: " + timed + ")";
    return Ceiling{best.value, best.source + load};
  };
  c.compute["fp32"] = best_of("fp32", true);
  c.compute["fp64"] = best_of("fp64", false);

  const Bandwidth bw = measure_copy_bandwidth(threads);
  c.memory["dram"] = Ceiling{bw.bytes_per_s, bw.source + load};
  return c;
}

std::filesystem::path kbench_cache_dir() {
  auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  if (std::string d = env("KBENCH_CACHE_DIR"); !d.empty()) return d;
  // XDG Base Directory spec: a relative XDG_CACHE_HOME is invalid and must be ignored.
  if (std::string d = env("XDG_CACHE_HOME"); !d.empty() && d.front() == '/') return std::filesystem::path(d) / "kbench";
  if (std::string h = env("HOME"); !h.empty()) return std::filesystem::path(h) / ".cache" / "kbench";
  return std::filesystem::temp_directory_path() / fmt::format("kbench-cache-{}", getuid());
}

std::string host_machine_key() { return machine_key(std::max(1, omp_get_max_threads())); }

namespace {

std::string host_cache_key() { return host_machine_key(); }
std::filesystem::path host_cache_file(const std::string& key) {
  return kbench_cache_dir() / fmt::format("host-ceilings-{:016x}.json", fnv1a(key));
}

}  // namespace

std::optional<Ceilings> cached_host_ceilings() {
  const std::string key = host_cache_key();
  if (auto cached = read_ceilings_cache(host_cache_file(key), key))
    if (cached->compute.count("fp32") && cached->compute.count("fp64") && cached->memory.count("dram")) return cached;
  return std::nullopt;
}

Ceilings host_ceilings(bool refresh, const std::function<Ceiling()>& measure_floor) {
  const std::string key = host_cache_key();
  const std::filesystem::path file = host_cache_file(key);
  std::optional<Ceilings> cached = refresh ? std::nullopt : cached_host_ceilings();
  if (cached && (cached->launch_floor || !measure_floor)) return *cached;
  Ceilings c = cached ? *cached : measure_host_ceilings();
  if (measure_floor) c.launch_floor = measure_floor();
  write_ceilings_cache(file, key, c);
  return c;
}

}  // namespace kb
