// Measured GPU ceilings (cuda_ceilings.h): DRAM copy bandwidth, CUDA-core FMA rates and cuBLASLt
// GEMM rates of the current GPU, each with a source string that says how it was measured.
//
// Robustness: every CUDA and cuBLASLt status is checked; a failure throws inside the measurement of
// one key, which is then reported in Ceilings::unmeasured with the reason ("failed: ...") while the
// other keys are still measured. Every buffer, event, stream and cuBLASLt object is owned by an RAII
// wrapper, so a failure frees what it allocated.
//
// Timing: CUDA events around each run on one stream, untimed warm-up runs first (clocks ramp up,
// lazy module loading, cuBLASLt's first-call set-up), best of several timed runs, as NVBench's
// "cold" timer and cuBLAS's own benchmarks do. "Best" rather than median because a ceiling is
// what the hardware can reach; other work on the GPU only ever lowers a figure.
#include "target/cuda/cuda_ceilings.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "target/cuda/cuda_ceilings_kernels.h"
#include "target/cuda/cuda_check.h"
#include "target/cuda/cuda_device.h"
#include "target/cuda/cuda_raii.h"

namespace kb {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGiB = size_t{1} << 30;
// Bump when a measurement changes meaning, so that old cache files are re-measured.
constexpr int kMeasurementVersion = 1;

// ------------------------------------------------------------------------------------------------
// cuBLASLt, loaded on first use. Linking it would load its 540 MB library into every kbench process
// (workers included): measured at +70 ms start-up and ~94 MB of private dirty memory per process
// (its relocations), for a library only this measurement uses. It also keeps kbench runnable where
// only the driver is installed (cudart is linked statically): without cuBLASLt, the GEMM keys report
// "failed: cannot load cuBLASLt ..." and everything else works.

struct CublasLt {
  std::string path;  // the library that was loaded
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtGetVersion) get_version = nullptr;
  decltype(&cublasLtGetStatusName) status_name = nullptr;
  decltype(&cublasLtGetStatusString) status_string = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

// The library of the cuBLAS major version kbench was built against: first by name (LD_LIBRARY_PATH,
// the ldconfig cache, kbench's RUNPATH), then from the toolkit that built kbench. Loaded once per
// process and never unloaded; throws std::runtime_error naming every path tried and why it failed.
const CublasLt& cublaslt() {
  static std::once_flag once;
  static CublasLt api;
  static std::string error;
  std::call_once(once, [] {
    const std::string name = fmt::format("libcublasLt.so.{}", CUBLAS_VER_MAJOR);
    std::vector<std::string> candidates = {name};
#ifdef KBENCH_CUDA_LIBRARY_DIR
    candidates.push_back(std::string(KBENCH_CUDA_LIBRARY_DIR) + "/" + name);
#endif
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* root = std::getenv(env); root && *root) candidates.push_back(std::string(root) + "/lib64/" + name);
    candidates.push_back("/usr/local/cuda/lib64/" + name);
    void* lib = nullptr;
    std::string tried;
    for (const auto& c : candidates) {
      lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (lib) {
        api.path = c;
        break;
      }
      const char* why = dlerror();
      tried += fmt::format("{}{} ({})", tried.empty() ? "" : "; ", c, why ? why : "not found");
    }
    if (!lib) {
      error = "cannot load cuBLASLt: " + tried;
      return;
    }
    std::string missing;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", name);
    };
    sym(api.create, "cublasLtCreate");
    sym(api.destroy, "cublasLtDestroy");
    sym(api.get_version, "cublasLtGetVersion");
    sym(api.status_name, "cublasLtGetStatusName");
    sym(api.status_string, "cublasLtGetStatusString");
    sym(api.desc_create, "cublasLtMatmulDescCreate");
    sym(api.desc_destroy, "cublasLtMatmulDescDestroy");
    sym(api.desc_set, "cublasLtMatmulDescSetAttribute");
    sym(api.layout_create, "cublasLtMatrixLayoutCreate");
    sym(api.layout_destroy, "cublasLtMatrixLayoutDestroy");
    sym(api.pref_create, "cublasLtMatmulPreferenceCreate");
    sym(api.pref_destroy, "cublasLtMatmulPreferenceDestroy");
    sym(api.pref_set, "cublasLtMatmulPreferenceSetAttribute");
    sym(api.heuristic, "cublasLtMatmulAlgoGetHeuristic");
    sym(api.matmul, "cublasLtMatmul");
    if (!missing.empty()) error = fmt::format("cuBLASLt at {} lacks {}", api.path, missing);
  });
  if (!error.empty()) throw std::runtime_error(error);
  return api;
}

}  // namespace

std::string cublaslt_library() {
  const CublasLt& api = cublaslt();
  const size_t v = api.get_version();
  return fmt::format("{} (version {}.{}.{})", api.path, v / 10000, v % 10000 / 100, v % 100);
}

namespace {

[[noreturn]] void throw_cublas_error(cublasStatus_t s, const char* call, const char* file, int line) {
  const CublasLt& lt = cublaslt();
  throw std::runtime_error(fmt::format("cuBLASLt error: {} failed with {} ({}) at {}:{}", call, lt.status_name(s),
                                       lt.status_string(s), file, line));
}

#define KB_CUBLAS_CHECK(call)                                                                          \
  do {                                                                                                 \
    const cublasStatus_t kb_cublas_status_ = (call);                                                   \
    if (kb_cublas_status_ != CUBLAS_STATUS_SUCCESS) throw_cublas_error(kb_cublas_status_, #call, __FILE__, __LINE__); \
  } while (0)

// A key the GPU does not have (reported as "not on this GPU: <what>").
class NotOnThisGpu : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using cuda::DeviceBuffer;
using cuda::Events;
using cuda::Stream;

// Runs `enqueue` (which enqueues one run on `stream` and throws on a launch error) `warmups` times
// untimed, then `reps` times between events; returns the shortest timed run in seconds.
double best_seconds(cudaStream_t stream, int warmups, int reps, const std::function<void()>& enqueue) {
  for (int i = 0; i < warmups; ++i) enqueue();
  KB_CUDA_CHECK(cudaStreamSynchronize(stream));
  Events start(reps), stop(reps);
  for (int i = 0; i < reps; ++i) {
    KB_CUDA_CHECK(cudaEventRecord(start[i], stream));
    enqueue();
    KB_CUDA_CHECK(cudaEventRecord(stop[i], stream));
  }
  KB_CUDA_CHECK(cudaStreamSynchronize(stream));
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    KB_CUDA_CHECK(cudaEventElapsedTime(&ms, start[i], stop[i]));
    if (ms > 0) best = std::min(best, ms * 1e-3);
  }
  if (best >= 1e300) throw std::runtime_error("every timed run took 0 ms: the event timer is not working");
  return best;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Gpu {
  int ordinal = 0;
  cudaDeviceProp prop{};
  int sms = 0;
  size_t l2 = 0;
  bool cc_at_least(int major, int minor) const {
    return prop.major > major || (prop.major == major && prop.minor >= minor);
  }
  std::string cc() const { return fmt::format("{}.{}", prop.major, prop.minor); }
};

std::string tb_s(double bytes_per_s) { return fmt::format("{:.3f} TB/s", bytes_per_s / 1e12); }

// ------------------------------------------------------------------------------------------------
// DRAM bandwidth

Ceiling measure_dram(const Gpu& gpu, cudaStream_t stream) {
  size_t free_b = 0, total_b = 0;
  KB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  // Two buffers of 2 GiB when they fit in 40% of the free memory (leaving room for other work and
  // for the driver); each at least 8x L2, so that no reuse through L2 survives a pass (the passes
  // stream sequentially; 2x L2 would already evict every line, 8x leaves no doubt).
  const size_t min_bytes = std::max<size_t>(8 * gpu.l2, 64 * kMiB);
  size_t bytes = std::min<size_t>(2 * kGiB, free_b / 5);
  bytes = bytes / (2 * kMiB) * (2 * kMiB);  // whole 2 MiB pages, a multiple of the 16-byte word
  if (bytes < min_bytes)
    throw std::runtime_error(fmt::format("only {} MiB of {} MiB device memory free; the copy needs 2 x {} MiB (8x the "
                                         "{} MiB L2)",
                                         free_b / kMiB, total_b / kMiB, min_bytes / kMiB, gpu.l2 / kMiB));
  DeviceBuffer src(bytes, "the copy source"), dst(bytes, "the copy destination");
  const size_t n16 = bytes / 16;
  // Random contents (not zeros), and the destination first touched too, so that neither a
  // compression-capable memory system nor first-touch page mapping flatters the figure.
  KB_CUDA_CHECK(cuda::launch_fill_random(src.get(), bytes / 4, cuda::RandomType::f32, 0x5eed, stream));
  KB_CUDA_CHECK(cudaMemsetAsync(dst.get(), 0, bytes, stream));
  KB_CUDA_CHECK(cudaStreamSynchronize(stream));

  constexpr int kWarmups = 3, kReps = 20;
  constexpr int kThreads = 256;
  const double moved = 2.0 * static_cast<double>(bytes);  // bytes read + bytes written

  // Checks that the last copy really copied: the first and last 256 bytes of dst equal src.
  auto verify = [&](const char* what) {
    std::array<unsigned char, 256> a{}, b{};
    for (size_t off : {size_t(0), bytes - a.size()}) {
      KB_CUDA_CHECK(cudaMemcpy(a.data(), static_cast<const char*>(src.get()) + off, a.size(), cudaMemcpyDeviceToHost));
      KB_CUDA_CHECK(cudaMemcpy(b.data(), static_cast<const char*>(dst.get()) + off, b.size(), cudaMemcpyDeviceToHost));
      if (a != b) throw std::runtime_error(fmt::format("{} did not copy the data (mismatch at offset {})", what, off));
    }
    KB_CUDA_CHECK(cudaMemsetAsync(dst.get(), 0, 256, stream));
    KB_CUDA_CHECK(cudaMemsetAsync(static_cast<char*>(dst.get()) + bytes - 256, 0, 256, stream));
    KB_CUDA_CHECK(cudaStreamSynchronize(stream));
  };

  // (a) the copy kernel, in two shapes: 1 and 4 independent 16-byte loads per thread in flight.
  double kernel_rate = 0;
  std::string kernel_what, kernel_error;
  for (int unroll : {4, 1}) {
    try {
      int per_sm = 0;
      KB_CUDA_CHECK(cuda::copy16_blocks_per_sm(unroll, kThreads, &per_sm));
      per_sm = std::max(per_sm, 1);
      const int blocks = per_sm * gpu.sms;
      const double s = best_seconds(stream, kWarmups, kReps, [&] {
        KB_CUDA_CHECK(cuda::launch_copy16(dst.get(), src.get(), n16, unroll, blocks, kThreads, stream));
      });
      verify("the copy kernel");
      if (moved / s > kernel_rate) {
        kernel_rate = moved / s;
        kernel_what = fmt::format("{}-load unrolled, {} SMs x {} blocks x {} threads", unroll, gpu.sms, per_sm, kThreads);
      }
    } catch (const std::exception& e) {
      (void)cudaGetLastError();
      kernel_error = e.what();
    }
  }
  // (b) cudaMemcpyAsync device-to-device: the driver's own copy kernel.
  double memcpy_rate = 0;
  std::string memcpy_error;
  try {
    const double s = best_seconds(stream, kWarmups, kReps, [&] {
      KB_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    });
    verify("cudaMemcpyAsync");
    memcpy_rate = moved / s;
  } catch (const std::exception& e) {
    (void)cudaGetLastError();
    memcpy_error = e.what();
  }
  if (kernel_rate <= 0 && memcpy_rate <= 0)
    throw std::runtime_error(fmt::format("copy kernel: {}; cudaMemcpyAsync: {}", kernel_error, memcpy_error));

  const bool kernel_won = kernel_rate >= memcpy_rate;
  const std::string kernel_part =
      kernel_rate > 0 ? fmt::format("16-byte vectorised grid-stride copy kernel ({}) {}", kernel_what, tb_s(kernel_rate))
                      : "copy kernel failed: " + kernel_error;
  const std::string memcpy_part = memcpy_rate > 0 ? fmt::format("cudaMemcpyAsync device-to-device {}", tb_s(memcpy_rate))
                                                  : "cudaMemcpyAsync failed: " + memcpy_error;
  return Ceiling{std::max(kernel_rate, memcpy_rate),
                 fmt::format("measured: {} (best of: {}; {}); 2 x {} MiB buffers ({:.0f}x the {} MiB L2), bytes read + "
                             "written, best of {} runs after {} warm-ups",
                             kernel_won ? "copy kernel" : "cudaMemcpyAsync D2D", kernel_part, memcpy_part, bytes / kMiB,
                             static_cast<double>(bytes) / static_cast<double>(std::max<size_t>(gpu.l2, 1)),
                             gpu.l2 / kMiB, kReps, kWarmups)};
}

// ------------------------------------------------------------------------------------------------
// CUDA-core FMA rate

Ceiling measure_fma(const Gpu& gpu, cudaStream_t stream, bool f64) {
  constexpr int kThreads = 256;
  int per_sm = 0;
  KB_CUDA_CHECK(cuda::fma_blocks_per_sm(f64, kThreads, &per_sm));
  per_sm = std::max(per_sm, 1);
  const int blocks = per_sm * gpu.sms;
  const size_t threads_total = static_cast<size_t>(blocks) * kThreads;
  DeviceBuffer out(threads_total * (f64 ? sizeof(double) : sizeof(float)), "the FMA kernel's output");
  // acc = acc * 0.999 + 0.001 converges to 1: finite and never -1 (`never`), so nothing is written.
  auto launch = [&](long long iters) {
    if (f64)
      KB_CUDA_CHECK(cuda::launch_fma_f64(static_cast<double*>(out.get()), iters, 0.9990234375, 0.001, -1.0, blocks,
                                         kThreads, stream));
    else
      KB_CUDA_CHECK(cuda::launch_fma_f32(static_cast<float*>(out.get()), iters, 0.9990234375f, 0.001f, -1.0f, blocks,
                                         kThreads, stream));
  };
  // Calibrate: grow the loop until a run takes >= 5 ms, then size runs of ~30 ms (long enough for
  // the clocks to settle under the FMA load, short enough to stay below any watchdog).
  long long iters = 64;
  double s = best_seconds(stream, 1, 1, [&] { launch(iters); });
  while (s < 5e-3 && iters < (1LL << 40)) {
    iters *= 4;
    s = best_seconds(stream, 0, 1, [&] { launch(iters); });
  }
  iters = std::max(1LL, static_cast<long long>(static_cast<double>(iters) * 0.03 / s));
  constexpr int kReps = 5;
  s = best_seconds(stream, 1, kReps, [&] { launch(iters); });
  const double fma_per_thread = static_cast<double>(cuda::kFmaChains) * cuda::kFmaUnroll * static_cast<double>(iters);
  const double rate = 2.0 * fma_per_thread * static_cast<double>(threads_total) / s;
  // No GPU's CUDA cores retire 10 PFLOP/s (a B200 does ~80 TFLOP/s fp32): above that, the loop was
  // optimised away.
  if (!(rate > 0 && rate < 1e16))
    throw std::runtime_error(fmt::format("implausible FMA rate {:.3g} FLOP/s: the loop was optimised away", rate));
  return Ceiling{rate, fmt::format("measured: {} FMA throughput ({}), {} SMs x {} blocks x {} threads, {} independent "
                                   "FMA chains per thread, {} runs of ~{:.0f} ms after a warm-up, best taken, 2 FLOP per FMA",
                                   f64 ? "fp64" : "fp32", f64 ? "DFMA" : "FFMA", gpu.sms, per_sm, kThreads,
                                   cuda::kFmaChains, kReps, s * 1e3)};
}

// ------------------------------------------------------------------------------------------------
// cuBLASLt GEMMs

struct GemmSpec {
  const char* key;
  const char* label;            // for the source: "bf16->fp32"
  cudaDataType_t ab, cd;        // A/B inputs, C/D output
  size_t ab_bytes, cd_bytes;    // element sizes
  cublasComputeType_t compute;
  cudaDataType_t scale;         // alpha/beta type
  cuda::RandomType fill;
  bool fp8;                     // scale pointers
  bool fast_accum = false;      // fp8 only: CUBLASLT_MATMUL_DESC_FAST_ACCUM
};

template <class T>
struct LtHandle {
  T h = nullptr;
  cublasStatus_t (*destroy)(T) = nullptr;
  ~LtHandle() {
    if (h && destroy) (void)destroy(h);
  }
};

// One GEMM key: D[MxN] = A^T B with A stored K x M and B stored K x N (column-major, "TN": both
// operands K-major, the layout cuBLASLt requires for fp8 and uses for every type here).
Ceiling measure_gemm(const Gpu& gpu, cudaStream_t stream, cublasLtHandle_t lt, const GemmSpec& g) {
  constexpr int64_t kN = 8192;  // M = N = K
  constexpr size_t kWorkspace = 256 * kMiB;
  constexpr int kMaxAlgos = 8, kReps = 5;
  // Each fp8 scale factor in its own 256-byte slot: cuBLASLt may require aligned scale pointers.
  constexpr size_t kScaleStride = 64;
  // Per key: stop trying further algorithms once this much wall time has gone (a GPU with slow FP64
  // tensor math would otherwise spend minutes here); the source says how many were timed.
  constexpr double kBudgetSeconds = 8.0;
  const double t0 = steady_seconds();

  const size_t elems = static_cast<size_t>(kN) * kN;
  DeviceBuffer a(elems * g.ab_bytes, "GEMM A"), b(elems * g.ab_bytes, "GEMM B"), d(elems * g.cd_bytes, "GEMM D"),
      ws(kWorkspace, "the cuBLASLt workspace"), scales(2 * kScaleStride * sizeof(float), "the fp8 scale factors");
  // Random non-zero inputs: with zeros (or other constant data) the tensor cores toggle fewer bits
  // and draw less power, so the GPU holds higher clocks and a GEMM runs measurably faster than it
  // does on real data; random data gives the rate real work sees.
  KB_CUDA_CHECK(cuda::launch_fill_random(a.get(), elems, g.fill, 0xA11CE, stream));
  KB_CUDA_CHECK(cuda::launch_fill_random(b.get(), elems, g.fill, 0xB0B, stream));
  const float one = 1.0f;
  for (int i = 0; i < 2; ++i)
    KB_CUDA_CHECK(cudaMemcpyAsync(static_cast<float*>(scales.get()) + i * kScaleStride, &one, sizeof one,
                                  cudaMemcpyHostToDevice, stream));
  KB_CUDA_CHECK(cudaMemsetAsync(d.get(), 0, d.bytes(), stream));
  KB_CUDA_CHECK(cudaStreamSynchronize(stream));

  const CublasLt& api = cublaslt();
  LtHandle<cublasLtMatmulDesc_t> desc{nullptr, api.desc_destroy};
  KB_CUBLAS_CHECK(api.desc_create(&desc.h, g.compute, g.scale));
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  KB_CUBLAS_CHECK(api.desc_set(desc.h, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t));
  KB_CUBLAS_CHECK(api.desc_set(desc.h, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n));
  if (g.fp8) {
    // Per-tensor scales of 1.0 (device floats), as cuBLASLt's fp8 path expects them to be set.
    const void* sa = scales.get();
    const void* sb = static_cast<const float*>(scales.get()) + kScaleStride;
    KB_CUBLAS_CHECK(api.desc_set(desc.h, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
    KB_CUBLAS_CHECK(api.desc_set(desc.h, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
    // The fastest fp8 path (no periodic promotion of the partial sums) when the library offers it:
    // a ceiling is the most the hardware can do with fp8 inputs.
    const int8_t fast = g.fast_accum ? 1 : 0;
    KB_CUBLAS_CHECK(api.desc_set(desc.h, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  }
  LtHandle<cublasLtMatrixLayout_t> la{nullptr, api.layout_destroy}, lb{nullptr, api.layout_destroy},
      ld{nullptr, api.layout_destroy};
  KB_CUBLAS_CHECK(api.layout_create(&la.h, g.ab, kN, kN, kN));  // A: K x M, ld K (op T)
  KB_CUBLAS_CHECK(api.layout_create(&lb.h, g.ab, kN, kN, kN));  // B: K x N, ld K
  KB_CUBLAS_CHECK(api.layout_create(&ld.h, g.cd, kN, kN, kN));  // C = D: M x N, ld M
  LtHandle<cublasLtMatmulPreference_t> pref{nullptr, api.pref_destroy};
  KB_CUBLAS_CHECK(api.pref_create(&pref.h));
  const uint64_t ws_bytes = kWorkspace;
  KB_CUBLAS_CHECK(api.pref_set(pref.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
  cublasLtMatmulHeuristicResult_t results[kMaxAlgos] = {};
  int returned = 0;
  KB_CUBLAS_CHECK(api.heuristic(lt, desc.h, la.h, lb.h, ld.h, ld.h, pref.h, kMaxAlgos, results, &returned));
  if (returned <= 0)
    throw std::runtime_error(fmt::format("cuBLASLt has no algorithm for {} {}^3 on this GPU (cc {})", g.label, kN, gpu.cc()));

  const double alpha64 = 1.0, beta64 = 0.0;
  const float alpha32 = 1.0f, beta32 = 0.0f;
  const void* alpha = g.scale == CUDA_R_64F ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = g.scale == CUDA_R_64F ? static_cast<const void*>(&beta64) : &beta32;

  double best_s = 1e300;
  int best_index = -1, timed = 0;
  bool out_of_time = false;
  std::string errors;
  for (int i = 0; i < returned; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS || results[i].workspaceSize > kWorkspace) continue;
    if (timed > 0 && steady_seconds() - t0 > kBudgetSeconds) {
      out_of_time = true;
      break;
    }
    try {
      const double s = best_seconds(stream, 1, kReps, [&] {
        KB_CUBLAS_CHECK(api.matmul(lt, desc.h, alpha, a.get(), la.h, b.get(), lb.h, beta, d.get(), ld.h, d.get(), ld.h,
                                   &results[i].algo, ws.get(), kWorkspace, stream));
      });
      ++timed;
      if (s < best_s) {
        best_s = s;
        best_index = i;
      }
    } catch (const std::exception& e) {
      // One algorithm failing (not supported for this shape after all) is not the key failing.
      KB_CUDA_CHECK(cudaStreamSynchronize(stream));  // a sticky error surfaces here and fails the key
      (void)cudaGetLastError();
      errors += fmt::format("{}algorithm {}: {}", errors.empty() ? "" : "; ", i, e.what());
    }
  }
  if (best_index < 0)
    throw std::runtime_error(fmt::format("none of the {} cuBLASLt algorithms for {} ran: {}", returned, g.label,
                                         errors.empty() ? "none was usable" : errors));

  // The GEMM must have written D: with random non-zero inputs an all-zero corner means it did nothing.
  std::array<unsigned char, 64> corner{};
  KB_CUDA_CHECK(cudaMemcpy(corner.data(), d.get(), corner.size(), cudaMemcpyDeviceToHost));
  if (std::all_of(corner.begin(), corner.end(), [](unsigned char c) { return c == 0; }))
    throw std::runtime_error(fmt::format("the {} GEMM left D all zero: it did not run", g.label));

  const double flops = 2.0 * static_cast<double>(kN) * static_cast<double>(kN) * static_cast<double>(kN);
  const double rate = flops / best_s;
  if (!(rate > 0 && rate < 1e17))
    throw std::runtime_error(fmt::format("implausible GEMM rate {:.3g} FLOP/s for {}", rate, g.label));
  const size_t v = api.get_version();
  return Ceiling{rate, fmt::format("measured: cuBLASLt {}.{}.{} {}^3 {} (TN, random non-zero inputs), best of {} of {} "
                                   "heuristic algorithms (#{} won), {} runs each after a warm-up, 2*M*N*K FLOP{}",
                                   v / 10000, v % 10000 / 100, v % 100, kN, g.label, timed, returned, best_index, kReps,
                                   (out_of_time ? fmt::format("; stopped at the {:.0f}-s budget", kBudgetSeconds) : "") +
                                       (errors.empty() ? "" : "; some algorithms failed: " + errors))};
}

std::string sanitize(std::string s) {
  for (char& ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    ch = std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '-';
  }
  return s;
}

}  // namespace

std::string format_cuda_uuid(const unsigned char bytes[16]) {
  std::string hex;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
    hex += fmt::format("{:02x}", bytes[i]);
  }
  return "GPU-" + hex;
}

CudaDeviceIdentity cuda_device_identity(int device) {
  cudaDeviceProp p{};
  KB_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  int driver = 0;
  KB_CUDA_CHECK(cudaDriverGetVersion(&driver));
  return CudaDeviceIdentity{format_cuda_uuid(reinterpret_cast<const unsigned char*>(p.uuid.bytes)), p.name, driver};
}

std::string cuda_ceilings_cache_key(const CudaDeviceIdentity& id) {
  return fmt::format("{} | {} | CUDA driver {} | kbench cuda ceilings v{}", id.uuid, id.name, id.driver_version,
                     kMeasurementVersion);
}

std::filesystem::path cuda_ceilings_cache_file(const CudaDeviceIdentity& id) {
  return device_ceilings_cache_file(fmt::format("cuda-{}-driver{}", id.uuid, id.driver_version));
}

Ceilings measure_cuda_ceilings(int device) {
  Ceilings c;
  c.measured = true;
  c.id = fmt::format("cuda-{}", device);
  c.name = fmt::format("CUDA device {}", device);
  const std::vector<std::string> keys = {"dram", "fp32", "fp64", "fp64_tc", "tf32_tc", "bf16_tc", "fp16_tc", "fp8_tc"};

  Gpu gpu;
  std::optional<Stream> stream;
  LtHandle<cublasLtHandle_t> lt{nullptr, nullptr};  // cuBLASLt loaded and its handle created before the first GEMM
  std::string lt_error;
  try {
    gpu.ordinal = device;
    KB_CUDA_CHECK(cudaSetDevice(device));
    KB_CUDA_CHECK(cudaGetDeviceProperties(&gpu.prop, device));
    gpu.sms = gpu.prop.multiProcessorCount;
    gpu.l2 = static_cast<size_t>(std::max(gpu.prop.l2CacheSize, 0));
    c.id = "cuda-" + sanitize(gpu.prop.name);
    c.name = cuda_device_description(device);
    stream.emplace();
  } catch (const std::exception& e) {
    (void)cudaGetLastError();
    for (const auto& k : keys) c.unmeasured[k] = std::string("failed: the GPU could not be opened: ") + e.what();
    return c;
  }

  auto attempt = [&](const std::string& key, bool memory, const std::function<Ceiling()>& measure) {
    try {
      (memory ? c.memory : c.compute)[key] = measure();
    } catch (const NotOnThisGpu& e) {
      c.unmeasured[key] = std::string("not on this GPU: ") + e.what();
    } catch (const std::exception& e) {
      (void)cudaGetLastError();  // clear a non-sticky error; a sticky one fails the keys after too
      (void)cudaStreamSynchronize(stream->get());
      (void)cudaGetLastError();
      c.unmeasured[key] = std::string("failed: ") + e.what();
    }
  };

  const cudaStream_t s = stream->get();
  attempt("dram", true, [&] { return measure_dram(gpu, s); });
  attempt("fp32", false, [&] { return measure_fma(gpu, s, false); });
  attempt("fp64", false, [&] { return measure_fma(gpu, s, true); });

  const bool fp64_tc = (gpu.prop.major == 8 && gpu.prop.minor == 0) || (gpu.prop.major == 9 && gpu.prop.minor == 0) ||
                       (gpu.prop.major == 10 && gpu.prop.minor == 0);
  const GemmSpec gemms[] = {
      {"fp64_tc", "fp64->fp64", CUDA_R_64F, CUDA_R_64F, 8, 8, CUBLAS_COMPUTE_64F, CUDA_R_64F, cuda::RandomType::f64, false},
      {"tf32_tc", "fp32 inputs, tf32 tensor math (CUBLAS_COMPUTE_32F_FAST_TF32)->fp32", CUDA_R_32F, CUDA_R_32F, 4, 4,
       CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, cuda::RandomType::f32, false},
      {"bf16_tc", "bf16->fp32 accumulate, D bf16", CUDA_R_16BF, CUDA_R_16BF, 2, 2, CUBLAS_COMPUTE_32F, CUDA_R_32F,
       cuda::RandomType::bf16, false},
      {"fp16_tc", "fp16->fp32 accumulate, D fp16", CUDA_R_16F, CUDA_R_16F, 2, 2, CUBLAS_COMPUTE_32F, CUDA_R_32F,
       cuda::RandomType::f16, false},
      {"fp8_tc", "fp8 e4m3->fp32 accumulate (fast accumulation, scales 1.0), D bf16", CUDA_R_8F_E4M3, CUDA_R_16BF, 1, 2,
       CUBLAS_COMPUTE_32F, CUDA_R_32F, cuda::RandomType::e4m3, true, true},
  };
  // cuBLASLt versions differ in which fp8 output types and accumulation modes they support; the
  // ceiling is the best configuration that runs, tried in this order.
  const GemmSpec fp8_fallbacks[] = {
      {"fp8_tc", "fp8 e4m3->fp32 accumulate (scales 1.0), D bf16", CUDA_R_8F_E4M3, CUDA_R_16BF, 1, 2,
       CUBLAS_COMPUTE_32F, CUDA_R_32F, cuda::RandomType::e4m3, true, false},
      {"fp8_tc", "fp8 e4m3->fp32 accumulate (fast accumulation, scales 1.0), D fp32", CUDA_R_8F_E4M3, CUDA_R_32F, 1, 4,
       CUBLAS_COMPUTE_32F, CUDA_R_32F, cuda::RandomType::e4m3, true, true},
  };
  for (const GemmSpec& g : gemms) {
    attempt(g.key, false, [&]() -> Ceiling {
      const std::string key = g.key;
      if (key == "fp64_tc" && !fp64_tc)
        throw NotOnThisGpu(fmt::format("cc {} has no FP64 tensor cores (only cc 8.0, 9.0 and 10.0 do: A100, H100/H200, "
                                       "B200); a DGEMM here runs on the CUDA cores, see fp64",
                                       gpu.cc()));
      if ((key == "tf32_tc" || key == "bf16_tc") && !gpu.cc_at_least(8, 0))
        throw NotOnThisGpu(fmt::format("{} tensor math needs compute capability >= 8.0; this GPU is cc {}",
                                       key.substr(0, 4), gpu.cc()));
      if (key == "fp8_tc" && !gpu.cc_at_least(8, 9))
        throw NotOnThisGpu(fmt::format("fp8 tensor math needs compute capability >= 8.9; this GPU is cc {}", gpu.cc()));
      if (!lt.h) {
        if (!lt_error.empty()) throw std::runtime_error(lt_error);
        try {
          const CublasLt& api = cublaslt();
          KB_CUBLAS_CHECK(api.create(&lt.h));
          lt.destroy = api.destroy;
        } catch (const std::exception& e) {
          lt.h = nullptr;
          lt_error = e.what();  // reported once per key, not retried
          throw;
        }
      }
      if (!g.fp8) return measure_gemm(gpu, s, lt.h, g);
      std::string errors;
      try {
        return measure_gemm(gpu, s, lt.h, g);
      } catch (const std::exception& e) {
        errors = std::string(g.label) + ": " + e.what();
      }
      for (const GemmSpec& f : fp8_fallbacks) {
        try {
          return measure_gemm(gpu, s, lt.h, f);
        } catch (const std::exception& e) {
          errors += std::string("; ") + f.label + ": " + e.what();
        }
      }
      throw std::runtime_error(errors);
    });
  }
  return c;
}

}  // namespace kb
