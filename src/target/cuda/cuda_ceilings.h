// The ceilings of the current GPU, measured the way NVBench and the vendors' own tools measure
// them (`kbench ceilings --target cuda`). They are reported beside the datasheet figures
// (hardware/*.toml), which remain what peak_fraction is scored against. docs/hardware.md describes
// each measurement.
#pragma once

#include <filesystem>
#include <string>

#include "target/ceilings.h"

namespace kb {

// Measures CUDA device `device` (an ordinal of what CUDA_VISIBLE_DEVICES shows), about 10-30 s on
// an H100 (budgeted to stay under ~60 s on slower parts):
//   memory  "dram":    best of a 16-byte vectorised copy kernel and cudaMemcpyAsync device-to-device,
//                      two buffers of >= 8x L2 (2 GiB each when memory allows), bytes read + written;
//   compute "fp32", "fp64": FMA throughput of the CUDA cores (independent FMA chains, all SMs);
//           "fp64_tc", "tf32_tc", "bf16_tc", "fp16_tc", "fp8_tc": cuBLASLt GEMMs at M=N=K=8192 on random
//                      non-zero inputs, the best of up to 8 heuristic algorithms.
// Returns measured == true, id "cuda-<device name>", the figures it got in compute/memory, and for
// every key it could not measure the reason in `unmeasured` ("failed: ..." for errors, "not on this
// GPU: ..." for what the GPU lacks). Never throws: a failure costs only the keys it affects.
Ceilings measure_cuda_ceilings(int device);

// The cuBLASLt library the GEMM measurements use, "path (version 13.0.0)". cuBLASLt is loaded with
// dlopen on first use (never linked: see CMakeLists.txt); this loads it and needs no GPU. Throws
// std::runtime_error naming every path tried when it cannot be loaded or lacks a function.
std::string cublaslt_library();

// What the cache of a GPU's measurement is keyed on: the device UUID (cudaDeviceProp::uuid, as
// nvidia-smi prints it: "GPU-xxxxxxxx-xxxx-...") and the driver's CUDA version (cudaDriverGetVersion),
// since a driver update can change clocks and cuBLASLt's choices. The name is for people.
struct CudaDeviceIdentity {
  std::string uuid;        // "GPU-8e2f...-..."
  std::string name;        // "NVIDIA H100 80GB HBM3"
  int driver_version = 0;  // 13000 for CUDA 13.0
};
CudaDeviceIdentity cuda_device_identity(int device);  // throws std::runtime_error on a CUDA error
std::string cuda_ceilings_cache_key(const CudaDeviceIdentity& id);  // stored in the file and checked
// kbench_cache_dir()/ceilings/cuda-<uuid>-driver<version>.json
std::filesystem::path cuda_ceilings_cache_file(const CudaDeviceIdentity& id);
// "GPU-" and the 16 bytes of a cudaDeviceProp::uuid in nvidia-smi's 8-4-4-4-12 grouping.
std::string format_cuda_uuid(const unsigned char bytes[16]);

}  // namespace kb
