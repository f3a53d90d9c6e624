// The cuda target: solutions are CUDA C++ (solution.cu, plus any .cu/.cpp beside it) built with
// nvcc for the GPU present, run through CudaDevice, and scored against the GPU's datasheet peaks
// (hardware/*.toml).
#include <fmt/format.h>

#include <cstdlib>
#include <optional>

#include "target/compile.h"
#include "target/python_solution.h"
#include "target/cuda/cuda_ceilings.h"
#include "target/launch_floor.h"
#include "target/cuda/cuda_check.h"
#include "target/cuda/cuda_device.h"
#include "target/cuda/cuda_gpu_reference.h"
#include "target/nvcc_toolkit.h"
#include "target/target.h"

#ifndef KBENCH_NVCC
#define KBENCH_NVCC "nvcc"
#endif

namespace kb {
namespace fs = std::filesystem;

bool cuda_device_present() {
  // cudart_static reports a missing driver (cudaErrorInsufficientDriver) or no device
  // (cudaErrorNoDevice) as an error code here; neither is sticky, so this never poisons later calls.
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return n > 0;
}

// The -gencode target for a compute capability. The "a" variants (sm_90a, sm_100a, sm_120a) add
// the architecture-specific instructions (wgmma, tcgen05, setmaxnreg, ...) that fast Hopper and
// Blackwell kernels need; their SASS runs only on that exact architecture, which is the one present.
std::string cuda_arch_for(int major, int minor) {
  if (major == 9 && minor == 0) return "sm_90a";
  if (major == 10 && minor == 0) return "sm_100a";
  if (major == 12 && minor == 0) return "sm_120a";
  return fmt::format("sm_{}{}", major, minor);
}

namespace {

// The GPU's arch; with no GPU visible (building in CI), $KBENCH_CUDA_ARCH or sm_90a (H100).
std::string solution_arch() {
  if (cuda_device_present()) {
    int major = 0, minor = 0;
    KB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    KB_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
    return cuda_arch_for(major, minor);
  }
  const char* env = std::getenv("KBENCH_CUDA_ARCH");
  return env && *env ? env : "sm_90a";
}

class CudaTarget final : public Target {
 public:
  std::string name() const override { return "cuda"; }
  std::string source_file() const override { return "solution.cu"; }

  BuildResult build(const fs::path& dir, const fs::path& build_root,
                    const BuildOptions& options) const override {
    // A folder with solution.py and no solution.cu: kbench's Python bridge (target/python_solution.h).
    if (is_python_solution(dir, source_file())) return build_python_solution(dir, name(), build_root);
    const char* nvcc = std::getenv("KBENCH_NVCC");
    const std::string arch = solution_arch();          // "sm_90a"
    const std::string compute = "compute_" + arch.substr(3);  // "compute_90a"
    std::vector<std::string> argv = {nvcc && *nvcc ? nvcc : KBENCH_NVCC,
                                     "-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC",
                                     // Only kb_setup/kb_run/kb_teardown (KB_EXPORT) are visible.
                                     "-Xcompiler", "-fvisibility=hidden",
                                     // Full RELRO, as on the host target (docs/threat-model.md).
                                     "-Xlinker", "-z,relro,-z,now",
                                     "--expt-relaxed-constexpr",
                                     // Line info costs nothing at run time and lets profilers map SASS to source.
                                     "-lineinfo",
                                     "-gencode=arch=" + compute + ",code=" + arch,
                                     "-I" + kbench_include_dir().string(),
                                     "-I" + std::string(KBENCH_DLPACK_INCLUDE_DIR)};
    for (const auto& src : solution_sources(fs::absolute(dir), source_file(), {".cu", ".cpp", ".cc", ".cxx"}))
      argv.push_back(src.string());
    // The toolkit's headers are allowed inputs; nvcc on PATH may be a wrapper outside the toolkit.
    const fs::path toolkit = nvcc_toolkit_root(argv[0]);
    return compile_solution(std::move(argv), dir, name(), options, build_root, toolkit);
  }

  std::unique_ptr<Device> open_device() const override { return std::make_unique<CudaDevice>(0); }
  std::string device_description() const override { return cuda_device_description(0); }
  std::string device_fingerprint() const override {
    const CudaDeviceIdentity id = cuda_device_identity(0);
    return fmt::format("cuda | {} | {} | CUDA driver {}", id.uuid, id.name, id.driver_version);
  }

  std::optional<GpuSharing> device_sharing(const std::set<long>& ours) const override {
    return gpu_sharing(cuda_device_identity(0).uuid, ours);
  }

  bool gpu_reference(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& inputs,
                     const std::vector<HostTensor>& weights, std::vector<std::vector<double>>& expected) const override {
    return run_cuda_gpu_reference(p, shape, inputs, weights, expected);
  }

  // The datasheet entry matched by device name (scoring uses it), with the figures measured on this
  // GPU beside it (measured_compute / measured_memory), from the cache keyed by device UUID and
  // driver version, or measured now when `measure` is set and the cache has none (or `refresh`).
  Ceilings ceilings(const fs::path& hardware_dir, bool refresh, bool measure) const override {
    if (!cuda_device_present()) throw HardwareError("cuda ceilings: no CUDA GPU is visible on this machine");
    cudaDeviceProp p{};
    KB_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    const auto specs = load_hardware(hardware_dir);
    const HardwareSpec* s = match_hardware(specs, p.name);
    const std::string no_datasheet = fmt::format(
        "no datasheet in {} matches the GPU '{}' (cc {}.{}): add hardware/<id>.toml with its dense peaks, "
        "a `match` substring of that name and the sources of each figure (see hardware/h100_sxm.toml and "
        "docs/hardware.md)",
        hardware_dir.string(), p.name, p.major, p.minor);
    // Scoring needs a datasheet; a measurement alone (`kbench ceilings`) is still worth showing.
    if (!s && !measure) throw HardwareError(no_datasheet);
    Ceilings c;
    if (s) {
      c = s->ceilings;
    } else {
      c.id = "cuda-unknown";
      c.name = p.name;
    }
    c.measured = false;

    std::optional<Ceilings> m;
    if (measure) {
      const CudaDeviceIdentity id = cuda_device_identity(0);
      // With the launch floor (well under a second), which a cached measurement from before the
      // floor existed gains without the rest being measured again.
      m = cached_measurement(cuda_ceilings_cache_file(id), cuda_ceilings_cache_key(id), refresh, /*measure=*/true,
                             [] { return measure_cuda_ceilings(0); }, [this] { return measure_launch_floor(*open_device()); });
    } else {
      // Only a cache read (what `kbench eval` asks for): anything going wrong here just means no
      // measured figures beside the datasheet, never a failed evaluation.
      try {
        const CudaDeviceIdentity id = cuda_device_identity(0);
        m = cached_measurement(cuda_ceilings_cache_file(id), cuda_ceilings_cache_key(id), /*refresh=*/false,
                               /*measure=*/false, {});
      } catch (const std::exception&) {
        (void)cudaGetLastError();
      }
    }
    if (m) c = with_measurement(std::move(c), *m);
    // No datasheet: empty compute/memory tables, which `kbench ceilings` reports as such.
    if (!s && m) c.id = m->id;
    return c;
  }

  // Datasheet peaks are at the maximum boost clock; GPU Boost may briefly run above the listed
  // boost clock and memory clocks vary by a few percent between boards (NVIDIA GPU Boost,
  // nvidia-smi -q -d CLOCK "Max Clocks"), so a time up to 5% faster than the peak allows is taken
  // as clock variation rather than proof of cheating.
  double physics_slack() const override { return 1.05; }

  // The L2 (device 0, the one kbench times on); 0 when the query fails: every byte then counts.
  uint64_t write_back_cache_bytes() const override {
    int bytes = 0;
    if (!cuda_device_present() || cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, 0) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return static_cast<uint64_t>(bytes);
  }
};

}  // namespace

std::unique_ptr<Target> make_cuda_target() { return std::make_unique<CudaTarget>(); }

}  // namespace kb
