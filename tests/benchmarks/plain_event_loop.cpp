// The simplest honest GPU timing harness, as a yardstick for kbench's own cost: load a built
// solution library, make its inputs, call kb_setup once, then time 30 calls with CUDA events
// around each and print the median. No worker process, no checks, no flushes, no statistics.
// tests/benchmarks/timing-quality compares kbench's wall time for a verdict with this program's.
//
//   kbench_plain_event_loop PROBLEM_DIR LIBRARY SHAPE_INDEX
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "deck/generate.h"
#include "deck/problem.h"
#include "kbench/solution.h"

namespace {

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t e = (x);                                                              \
    if (e != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s failed: %s\n", #x, cudaGetErrorString(e));             \
      std::exit(3);                                                                   \
    }                                                                                 \
  } while (0)

struct Tensors {
  std::vector<DLTensor> dl;
  std::vector<std::vector<int64_t>> shapes;
};

Tensors to_device(const std::vector<kb::HostTensor>& hs) {
  Tensors t;
  t.shapes.reserve(hs.size());
  for (const auto& h : hs) {
    void* p = nullptr;
    CHECK(cudaMalloc(&p, h.bytes.size() ? h.bytes.size() : 256));
    CHECK(cudaMemcpy(p, h.data(), h.bytes.size(), cudaMemcpyHostToDevice));
    t.shapes.push_back(h.shape);
    DLTensor d{};
    d.data = p;
    d.device = {kDLCUDA, 0};
    d.ndim = static_cast<int>(h.shape.size());
    d.dtype = kb::info(h.dtype).dl;
    d.shape = t.shapes.back().data();
    t.dl.push_back(d);
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PROBLEM_DIR LIBRARY SHAPE_INDEX\n", argv[0]);
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const kb::Problem p = kb::load_problem(argv[1]);
  const kb::ShapeCase& shape = p.shapes.at(std::stoul(argv[3]));
  void* lib = dlopen(argv[2], RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  auto setup = reinterpret_cast<int (*)(const kb_problem*, void**)>(dlsym(lib, "kb_setup"));
  auto run = reinterpret_cast<int (*)(void*, const kb_call*)>(dlsym(lib, "kb_run"));
  Tensors weights = to_device(kb::generate_weights(p, shape, 1));
  Tensors inputs = to_device(kb::generate_inputs(p, shape, 1));
  Tensors outputs = to_device(kb::allocate_outputs(p, shape));
  std::vector<const char*> names;
  for (const auto& d : p.dims) names.push_back(d.c_str());
  kb_problem kp{p.name.c_str(), static_cast<int>(names.size()), names.data(), shape.dims.data(), weights.dl.data(),
                static_cast<int>(weights.dl.size())};
  void* state = nullptr;
  if (setup(&kp, &state) != 0) return 1;
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  kb_call c{inputs.dl.data(), static_cast<int>(inputs.dl.size()), outputs.dl.data(), static_cast<int>(outputs.dl.size()), stream};
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  std::vector<float> ms(30);
  for (auto& m : ms) {
    CHECK(cudaEventRecord(a, stream));
    if (run(state, &c) != 0) return 1;
    CHECK(cudaEventRecord(b, stream));
    CHECK(cudaEventSynchronize(b));
    CHECK(cudaEventElapsedTime(&m, a, b));
  }
  std::sort(ms.begin(), ms.end());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("{\"median_us\": %.3f, \"wall_seconds\": %.4f}\n", ms[ms.size() / 2] * 1e3, wall);
  return 0;
}
