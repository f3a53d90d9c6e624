// The worker's W^X rule on the cuda target, shown on kbench's own device code with the CUDA driver
// beneath it (tests/gpu/test_cuda_write_xor_execute.cpp runs this program). It sets up as the
// worker does before kb_setup returns (the device, its stream, buffers, the kernel monitor), installs
// the worker's system-call filter with W^X on, and then does everything the worker and a solution do
// on the GPU after it:
//   honest            a first launch of a kernel that was never launched before (under lazy module
//                     loading the driver loads its code now: to device memory, mapping nothing
//                     executable on the host), kbench's fills, fingerprints, generators,
//                     perturbation, cache flush, cold timer (blocking kernel, events, clock probes)
//                     and hot timer (a CUDA graph), the kernel monitor's records, and the runtime
//                     calls a solution makes (device, pinned, mapped and stream-ordered memory,
//                     streams, events, a host callback, a graph of its own). Exit 0 when all of it
//                     ran and computed right; 1 naming what failed.
//   exec-after-setup  makes a page executable after the filter, as exploit-cuda-jit-toggle does:
//                     killed with SIGSYS (the filter is on, so an honest pass is not vacuous).
// Exit 77 without a CUDA GPU. It prints the driver's module loading mode ("module loading: lazy").
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "deck/problem.h"
#include "target/cuda/cuda_device.h"
#include "target/target.h"
#include "worker/syscall_filter.h"
#include "write_xor_execute_kernel.h"

namespace {

void host_callback(void* flag) { *static_cast<int*>(flag) = 1; }

int failed(const char* what, cudaError_t e) {
  std::fprintf(stderr, "FAILED: %s: %s\n", what, cudaGetErrorString(e));
  return 1;
}

#define CHECK(call)                                           \
  do {                                                        \
    const cudaError_t e_ = (call);                            \
    if (e_ != cudaSuccess) return failed(#call, e_);          \
  } while (0)

// The driver's own answer, through the runtime's entry-point query: linking the driver library
// directly would keep the probe from starting (and skipping) on a machine without a GPU driver.
const char* loading_mode() {
  using GetLoadingMode = CUresult (*)(CUmoduleLoadingMode*);
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  // cuModuleGetLoadingMode exists since CUDA 11.7 (cuda.h).
  if (cudaGetDriverEntryPointByVersion("cuModuleGetLoadingMode", &fn, 11070, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !fn)
    return "unknown";
  CUmoduleLoadingMode mode{};
  if (reinterpret_cast<GetLoadingMode>(fn)(&mode) != CUDA_SUCCESS) return "unknown";
  return mode == CU_MODULE_LAZY_LOADING ? "lazy" : mode == CU_MODULE_EAGER_LOADING ? "eager" : "unknown";
}

int exec_after_setup() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 2;
  std::memset(p, 0xc3, page);  // ret
  if (mprotect(p, page, PROT_READ | PROT_EXEC) != 0) return 2;
  std::fprintf(stderr, "FAILED: a page was made executable after the filter\n");
  return 3;
}

int honest(kb::CudaDevice& dev, float* x, float* y, int n) {
  const auto stream = static_cast<cudaStream_t>(dev.stream());
  const auto launch = [&] {
    return launch_first_after_setup(x, y, n, 2.f, stream) == cudaSuccess ? 0 : 1;
  };
  // The first launch, untimed (as the worker's checks come before its timed calls).
  dev.mark_call(true);
  const int first = launch();
  dev.mark_call(false);
  if (first != 0) return failed("the first launch after the filter", cudaGetLastError());
  dev.synchronize();
  std::vector<float> got(n);
  dev.download(got.data(), y, sizeof(float) * n);
  for (int i = 0; i < n; ++i)
    if (got[i] != 2.f * static_cast<float>(i % 97)) {
      std::fprintf(stderr, "FAILED: y[%d] = %g, want %g\n", i, got[i], 2.f * static_cast<float>(i % 97));
      return 1;
    }
  // kbench's own device work, as the worker does it after kb_setup.
  const uint64_t before = dev.hash(y, sizeof(float) * n, 7);
  dev.fill_pattern(y, sizeof(float) * n, 0x7fc00001u, 4);
  if (dev.hash(y, sizeof(float) * n, 7) == before) return failed("fill_pattern changed nothing", cudaSuccess);
  kb::InitSpec init;
  dev.generate(y, static_cast<int>(kb::DType::f32), n, init, 1, 0);
  dev.perturb(x, 4, n / 4, sizeof(float), 11, 0, false);
  dev.perturb(x, 4, n / 4, sizeof(float), 11, 0, true);
  dev.flush_cache();
  int rc = -1;
  const kb::Device::TimedCall t = dev.time_call(launch, &rc);
  if (rc != 0 || !(t.seconds > 0)) return failed("the cold timer", cudaGetLastError());
  std::string mode;
  const double hot = dev.time_hot(std::vector<std::function<int()>>(10, launch), &rc, &mode);
  if (rc != 0 || !(hot > 0)) return failed("the hot timer", cudaGetLastError());
  std::printf("hot timer: %s\n", mode.c_str());
  (void)dev.tail_check(launch, &rc);
  const auto work = dev.collect_work();
  std::printf("kernel monitor: %s, %zu records\n", dev.monitor_status().c_str(), work ? work->size() : size_t(0));
  // What a solution may do on the GPU after setup.
  void* d = nullptr;
  CHECK(cudaMalloc(&d, 1 << 20));
  CHECK(cudaFree(d));
  void* pinned = nullptr;
  CHECK(cudaMallocHost(&pinned, 1 << 20));
  CHECK(cudaMemcpyAsync(pinned, y, sizeof(float) * n, cudaMemcpyDeviceToHost, stream));
  void* mapped = nullptr;
  CHECK(cudaHostAlloc(&mapped, 1 << 20, cudaHostAllocMapped));
  std::vector<char> registered(1 << 20);
  CHECK(cudaHostRegister(registered.data(), registered.size(), cudaHostRegisterDefault));
  CHECK(cudaMemcpyAsync(y, registered.data(), sizeof(float) * n, cudaMemcpyHostToDevice, stream));
  void* pooled = nullptr;
  CHECK(cudaMallocAsync(&pooled, 1 << 20, stream));
  CHECK(cudaFreeAsync(pooled, stream));
  cudaStream_t own = nullptr;
  CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventRecord(e0, own));
  CHECK(launch_first_after_setup(x, y, n, 3.f, own));
  CHECK(cudaEventRecord(e1, own));
  int called = 0;
  CHECK(cudaLaunchHostFunc(own, host_callback, &called));
  CHECK(cudaStreamSynchronize(own));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  if (!called) return failed("the host callback did not run", cudaSuccess);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaStreamBeginCapture(own, cudaStreamCaptureModeThreadLocal));
  CHECK(launch_first_after_setup(x, y, n, 4.f, own));
  CHECK(cudaStreamEndCapture(own, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, own));
  CHECK(cudaStreamSynchronize(own));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  CHECK(cudaStreamDestroy(own));
  CHECK(cudaHostUnregister(registered.data()));
  CHECK(cudaFreeHost(mapped));
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaDeviceSynchronize());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "honest" && mode != "exec-after-setup") {
    std::fprintf(stderr, "usage: %s honest|exec-after-setup\n", argv[0]);
    return 2;
  }
  if (!kb::cuda_available()) return 77;
  kb::CudaDevice dev(0);
  dev.start_work_monitor();
  // Set-up, as before kb_setup returns in the worker: buffers filled through kbench's own kernels.
  const int n = 1 << 16;
  auto* x = static_cast<float*>(dev.alloc(sizeof(float) * n));
  auto* y = static_cast<float*>(dev.alloc(sizeof(float) * n));
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = static_cast<float>(i % 97);
  dev.upload(x, h.data(), sizeof(float) * n);
  dev.fill_pattern(y, sizeof(float) * n, 0x7fc00001u, 4);
  dev.synchronize();
  std::printf("module loading: %s\n", loading_mode());
  std::fflush(stdout);
  kb::install_worker_sandbox(/*forbid_new_executable_memory=*/true);
  const int rc = mode == "honest" ? honest(dev, x, y, n) : exec_after_setup();
  std::fflush(stdout);
  // Exit at once: the device's destructor and the runtime's teardown are the worker's too, but the
  // verdict here is about the calls above.
  _exit(rc);
}
