#include "target/cuda/cuda_device.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "core/dtype.h"
#include "core/hash.h"
#include "deck/problem.h"
#include "target/cuda/cuda_check.h"
#include "target/cuda/cuda_generate.h"
#include "target/cuda/cuda_perturb.h"
#include "target/cuda/cuda_kernels.h"

namespace kb {

std::string cuda_device_description(int ordinal) {
  cudaDeviceProp p{};
  KB_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
  int driver = 0;
  KB_CUDA_CHECK(cudaDriverGetVersion(&driver));
  return fmt::format("{}, {} SMs, cc {}.{}, driver {}.{}, L2 {} MiB", p.name, p.multiProcessorCount, p.major, p.minor,
                     driver / 1000, (driver % 1000) / 10, p.l2CacheSize >> 20);
}

namespace {
// cudaSetDevice before anything is made on the device: CudaDevice's first initialiser.
int select_device(int ordinal) {
  KB_CUDA_CHECK(cudaSetDevice(ordinal));
  return ordinal;
}

size_t l2_cache_bytes(int ordinal) {
  int l2 = 0;
  KB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ordinal));
  return static_cast<size_t>(l2);
}
}  // namespace

CudaDevice::CudaDevice(int ordinal)
    : ordinal_(select_device(ordinal)),
      l2_bytes_(l2_cache_bytes(ordinal_)),
      // Twice the L2: NVBench's l2flush (nvbench/detail/l2flush.cuh) memsets one L2 size; touching 2x
      // leaves no line of the solution's data resident whatever the replacement policy.
      flush_words_(std::max<size_t>(2 * l2_bytes_, 1u << 20) / sizeof(uint32_t)),
      description_(cuda_device_description(ordinal_)),
      clock_stamps_(2 * sizeof(cuda::ClockStamp)),
      flags_(2 * sizeof(int32_t)),
      hash_acc_(sizeof(unsigned long long), "the device hash's accumulator"),
      flush_buffer_(flush_words_ * sizeof(uint32_t), "the L2 flush buffer") {
  int clock_khz = 0;  // cudaDevAttrClockRate: the peak SM clock in kHz
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal_) == cudaSuccess) max_clock_mhz_ = clock_khz / 1e3;
  flags_.host<int32_t>()[0] = flags_.host<int32_t>()[1] = 0;
  KB_CUDA_CHECK(cudaMemset(flush_buffer(), 0, flush_words_ * sizeof(uint32_t)));  // launch_flush relies on zeros
  KB_CUDA_CHECK(cudaDeviceSynchronize());
}

CudaDevice::~CudaDevice() {
  // Destructors must not throw; after a sticky error these calls fail and there is nothing to do.
  // The owners free the rest, after this body.
  flags_.host<int32_t>()[0] = 1;  // never leave a blocking kernel spinning
  (void)cudaDeviceSynchronize();
}

void* CudaDevice::alloc(size_t bytes) {
  // cudaMalloc returns 256-byte aligned memory (CUDA C++ Programming Guide, "Device Memory
  // Accesses"); zero-sized tensors still get a valid, distinct pointer.
  void* p = nullptr;
  KB_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 256));
  return p;
}

void CudaDevice::release(void* p) {
  // Called from destructors (DeviceTensor), also while unwinding after a solution's sticky error:
  // a failure here must not throw, and the original error has already been reported.
  (void)cudaFree(p);
}

// Copies go through the solution's stream so they are ordered after anything already enqueued on
// it (fills, hashes, the solution's own work), then wait for it.
void CudaDevice::upload(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  KB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_.get()));
  KB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
}

void CudaDevice::download(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  KB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_.get()));
  KB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
}

void CudaDevice::copy(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  KB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_.get()));
  KB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
}

void CudaDevice::fill_pattern(void* dst, size_t bytes, uint64_t pattern, int pattern_bytes) {
  if (pattern_bytes != 1 && pattern_bytes != 2 && pattern_bytes != 4 && pattern_bytes != 8)
    throw std::invalid_argument(fmt::format("fill_pattern: pattern of {} bytes (expected 1, 2, 4 or 8)", pattern_bytes));
  uint64_t word8 = 0;
  for (int i = 0; i < 8; ++i) word8 |= ((pattern >> (8 * (i % pattern_bytes))) & 0xFFu) << (8 * i);
  KB_CUDA_CHECK(cuda::launch_fill(dst, bytes, word8, stream_.get()));
}

uint64_t CudaDevice::hash(const void* p, size_t bytes, uint64_t key) {
  KB_CUDA_CHECK(cudaMemsetAsync(hash_acc(), 0, sizeof(unsigned long long), stream_.get()));
  KB_CUDA_CHECK(cuda::launch_hash_sum(p, bytes, key, hash_acc(), stream_.get()));
  unsigned long long sum = 0;
  KB_CUDA_CHECK(cudaMemcpyAsync(&sum, hash_acc(), sizeof(sum), cudaMemcpyDeviceToHost, stream_.get()));
  KB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  return mix64(static_cast<uint64_t>(sum) ^ mix64(bytes + key));  // as kb::buffer_hash finishes
}

std::vector<uint64_t> CudaDevice::hash_many(const std::vector<std::pair<const void*, size_t>>& buffers, uint64_t key) {
  if (buffers.empty()) return {};
  // One accumulator per buffer, zeroed and read back at once: the hashes queue behind each other on
  // the stream with a single wait, instead of one per buffer (~10 us each on an H100).
  cuda::DeviceBuffer acc(buffers.size() * sizeof(unsigned long long), "the device hashes' accumulators");
  auto* sums = static_cast<unsigned long long*>(acc.get());
  KB_CUDA_CHECK(cudaMemsetAsync(sums, 0, acc.bytes(), stream_.get()));
  for (size_t i = 0; i < buffers.size(); ++i)
    KB_CUDA_CHECK(cuda::launch_hash_sum(buffers[i].first, buffers[i].second, key, sums + i, stream_.get()));
  std::vector<unsigned long long> host(buffers.size());
  KB_CUDA_CHECK(cudaMemcpyAsync(host.data(), sums, acc.bytes(), cudaMemcpyDeviceToHost, stream_.get()));
  KB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  std::vector<uint64_t> h;
  h.reserve(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i)
    h.push_back(mix64(static_cast<uint64_t>(host[i]) ^ mix64(buffers[i].second + key)));  // as hash() finishes
  return h;
}

void CudaDevice::perturb(void* data, int64_t rows, int64_t row_len, int elem_bytes, uint64_t key, uint32_t stream,
                         bool undo) {
  KB_CUDA_CHECK(cuda::launch_perturb(data, rows, row_len, elem_bytes, key, stream, undo, stream_.get()));
}

bool CudaDevice::generate(void* dst, int dtype, int64_t numel, const InitSpec& init, uint64_t seed, uint32_t stream) {
  cuda::GenerateKind kind;
  double p0 = 0, p1 = 0;
  switch (init.kind) {
    case InitSpec::Kind::uniform:
      kind = info(static_cast<DType>(dtype)).is_float ? cuda::GenerateKind::uniform_float : cuda::GenerateKind::uniform_int;
      p0 = init.low;
      p1 = init.high;
      break;
    case InitSpec::Kind::normal:
      kind = cuda::GenerateKind::normal;
      p0 = init.mean;
      p1 = init.std;
      break;
    default:
      return false;  // a named generator: host code only (deck/registry.h)
  }
  KB_CUDA_CHECK(cuda::launch_generate(dst, dtype, numel, kind, seed, stream, p0, p1, stream_.get()));
  KB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  return true;
}

void CudaDevice::synchronize() {
  KB_CUDA_CHECK(cudaDeviceSynchronize());
  // A failed launch (bad configuration) is not sticky and does not show in the synchronisation;
  // it stays as the thread's last error, so report it here, after the solution's call.
  KB_CUDA_CHECK(cudaGetLastError());
}

void CudaDevice::flush_cache() {
  // Lines marked persisting (cudaAccessPolicyWindow) would survive the writes below.
  KB_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
  // Reading (not writing) 2x L2 leaves only clean lines behind: no write-back traffic from the
  // flush competes with the timed call, as none does under Nsight Compute's cache control.
  KB_CUDA_CHECK(cuda::launch_flush(flush_buffer(), flush_words_, static_cast<uint32_t*>(hash_acc_.get()) /* sink, never written */, stream_.get()));
}

int CudaDevice::launch_empty() {
  KB_CUDA_CHECK(cuda::launch_empty(stream_.get()));
  return 0;
}

Device::TimedCall CudaDevice::time_call(const std::function<int()>& call, int* rc) {
  // NVBench's cold measurement (nvbench/detail/measure_cold.cu): hold the stream with the blocking
  // kernel, record start, let the solution enqueue, record stop, release. The solution's kernels
  // then run back to back with no host launch gaps inside the measurement.
  volatile int32_t* flags = flags_.host<int32_t>();
  flags[0] = 0;
  flags[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (blocking_kernel_)
    KB_CUDA_CHECK(cuda::launch_blocking(flags_.device<int32_t>(), flags_.device<int32_t>() + 1,
                                        static_cast<uint64_t>(kBlockingTimeoutSeconds * 1e9), stream_.get()));
  double host_seconds = NAN;
  struct Release {  // whatever happens below, the blocking kernel is released
    volatile int32_t* f;
    ~Release() {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      f[0] = 1;
    }
  };
  {
    Release release{flags};
    auto* stamps = clock_stamps_.device<cuda::ClockStamp>();
    // Clock probes just outside the events: the SM clock over the call, for throttle detection.
    KB_CUDA_CHECK(cuda::launch_clock_probe(stamps, kClockProbeSpinNs, stream_.get()));
    // Without the blocking kernel the call is timed from an idle stream: the start event is
    // stamped as soon as it is recorded, so the host's time until the solution's first launch, and
    // between its launches, is inside the sample (a Python solution's interpreter and launcher
    // cost, TimingPolicy::blocking_kernel), not hidden behind the flush and the probe still running.
    if (!blocking_kernel_) KB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    KB_CUDA_CHECK(cudaEventRecord(start_.get(), stream_.get()));
    const auto h0 = std::chrono::steady_clock::now();
    *rc = call();
    host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count();
    const cudaError_t launch = cudaGetLastError();
    if (launch != cudaSuccess) throw_cuda_error(launch, "a kernel launch inside the solution's kb_run", __FILE__, __LINE__);
    KB_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_.get()));
    KB_CUDA_CHECK(cuda::launch_clock_probe(stamps + 1, kClockProbeSpinNs, stream_.get()));
  }
  // The whole device, so that work the solution left on other streams is finished (and its errors
  // surface) before the next call.
  KB_CUDA_CHECK(cudaDeviceSynchronize());
  if (flags[1])
    throw std::runtime_error(fmt::format(
        "the blocking kernel timed out after {:.0f} s: kb_run waited for the device (a synchronisation, "
        "cudaMalloc, blocking copy, or the first launch of a lazily loaded kernel) inside the timed call; enqueue all "
        "work on c->stream and return without waiting",
        kBlockingTimeoutSeconds));
  float ms = 0;
  KB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
  const auto* stamps = clock_stamps_.host<const cuda::ClockStamp>();
  return {ms * 1e-3, sm_clock_between(stamps), probe_clock(stamps[0]), host_seconds};
}

// The SM clock over a timed call: from the first probe's start to the second's end when both ran
// on the same SM (cycle counters of different SMs are unrelated), else the slower of the two
// probes' own spins, which bracket the call (clocks move over milliseconds: a throttled GPU shows
// in both). NaN when the stamps make no sense.
namespace {
double clock_rate_mhz(uint64_t c0, uint64_t n0, uint64_t c1, uint64_t n1) {
  return c1 > c0 && n1 > n0 ? static_cast<double>(c1 - c0) / static_cast<double>(n1 - n0) * 1e3 : NAN;
}
}  // namespace

double CudaDevice::sm_clock_between(const cuda::ClockStamp* s) {
  if (s[0].smid == s[1].smid) return clock_rate_mhz(s[0].cycles_begin, s[0].ns_begin, s[1].cycles_end, s[1].ns_end);
  return std::fmin(probe_clock(s[0]), probe_clock(s[1]));
}

// One probe's own spin: the SM clock at that moment (the probe before a call: the GPU's state as
// the call began, before its own power draw could lower it).
double CudaDevice::probe_clock(const cuda::ClockStamp& s) {
  return clock_rate_mhz(s.cycles_begin, s.ns_begin, s.cycles_end, s.ns_end);
}

double CudaDevice::time_hot(const std::vector<std::function<int()>>& calls, int* rc, std::string* mode) {
  *rc = 0;
  if (calls.empty()) return 0;
  // Preferred: capture every call into one CUDA graph and time one launch of it, which removes
  // the host's launch overhead between calls (what a framework replaying a graph would see).
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  bool captured = hot_capture_ && cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal) == cudaSuccess;
  if (captured) {
    for (const auto& c : calls)
      if ((*rc = c()) != 0) break;
    // A solution that synchronises or allocates inside kb_run invalidates the capture, and one
    // that launches a CUDA graph of its own fails under capture (CUDA refuses a graph launch into
    // a capturing stream) and returns its error code. Both are legal outside capture, so either
    // way fall back to plain back-to-back launches, where a real error still shows.
    captured = cudaStreamEndCapture(stream_.get(), &graph) == cudaSuccess && graph && *rc == 0 &&
               cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    (void)cudaGetLastError();
    *rc = 0;
  }
  float ms = 0;
  if (captured) {
    *mode = "graph";
    KB_CUDA_CHECK(cudaGraphLaunch(exec, stream_.get()));  // warm: uploads the graph
    KB_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
    KB_CUDA_CHECK(cudaEventRecord(start_.get(), stream_.get()));
    KB_CUDA_CHECK(cudaGraphLaunch(exec, stream_.get()));
    KB_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_.get()));
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    KB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    (void)cudaGraphExecDestroy(exec);
    (void)cudaGraphDestroy(graph);
  } else {
    *mode = "stream";
    if (graph) (void)cudaGraphDestroy(graph);
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    KB_CUDA_CHECK(cudaEventRecord(start_.get(), stream_.get()));
    for (const auto& c : calls)
      if ((*rc = c()) != 0) return 0;
    KB_CUDA_CHECK(cudaGetLastError());
    KB_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_.get()));
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    KB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
  }
  return ms * 1e-3 / static_cast<double>(calls.size());
}

std::optional<Device::TailCheck> CudaDevice::tail_check(const std::function<int()>& call, int* rc) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  TailCheck t;
  // The floor: an event on an idle stream, then a device-wide synchronisation (best of three).
  t.sync_latency_seconds = 1e30;
  for (int i = 0; i < 3; ++i) {
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    const auto t0 = Clock::now();
    KB_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_.get()));
    KB_CUDA_CHECK(cudaDeviceSynchronize());
    t.sync_latency_seconds = std::min(t.sync_latency_seconds, seconds(Clock::now() - t0));
  }
  KB_CUDA_CHECK(cudaEventRecord(start_.get(), stream_.get()));
  *rc = call();
  KB_CUDA_CHECK(cudaGetLastError());
  KB_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_.get()));
  const auto returned = Clock::now();
  KB_CUDA_CHECK(cudaDeviceSynchronize());
  t.tail_seconds = seconds(Clock::now() - returned);
  float ms = 0;
  KB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
  t.stream_seconds = ms * 1e-3;
  return t;
}

void CudaDevice::start_work_monitor() {
  std::string why;
  monitor_ = KernelMonitor::start(stream_.get(), &why);
  monitor_status_ = monitor_ ? "cupti" : "unavailable: " + why;
}

void CudaDevice::mark_call(bool inside) {
  if (monitor_) monitor_->mark_call(inside);
}

std::optional<std::vector<GpuWork>> CudaDevice::collect_work() {
  if (!monitor_) return std::nullopt;
  synchronize();
  return monitor_->collect();
}

}  // namespace kb
