// kbench's Python bridge on the cuda target (src/python/bridge.cpp, docs/python-solutions.md),
// called through the C ABI as the worker calls it: the tensors a Python solution gets are cuda
// tensors at kbench's own device addresses, and `run` executes with kbench's stream as torch's
// current stream (torch.cuda.ExternalStream), so that its work is ordered on the stream kbench
// times. Skipped without a GPU, or where Python solutions are unavailable on cuda (the reason is
// printed: torch without CUDA, triton missing...).
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <vector>

#include "kbench/solution.h"
#include "target/python_solution.h"
#include "target/target.h"

namespace fs = std::filesystem;

namespace {

constexpr const char* kSolution = R"PY(
import torch

def setup(problem):
    assert problem.device == "cuda", problem.device
    return None

def run(state, inputs, outputs):
    x, = inputs
    y, where = outputs
    torch.mul(x, 2.0, out=y)
    where[0] = x.data_ptr()
    where[1] = y.data_ptr()
    where[2] = torch.cuda.current_stream().cuda_stream
    where[3] = int(x.is_cuda and y.is_cuda)
)PY";

DLTensor tensor_of(void* data, DLDevice device, DLDataType type, std::vector<int64_t>& shape) {
  DLTensor t{};
  t.data = data;
  t.device = device;
  t.ndim = static_cast<int>(shape.size());
  t.dtype = type;
  t.shape = shape.data();
  return t;
}

TEST(PythonBridgeCuda, TensorsAreKbenchDeviceBuffersAndRunIsOnKbenchStream) {
  if (!kb::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  if (const auto why = kb::python_unavailable_reason("cuda")) GTEST_SKIP() << "Python solutions unavailable on cuda: " << *why;
  const fs::path root = fs::temp_directory_path() / ("kbench-python-bridge-cuda-" + std::to_string(getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "solution");
  std::ofstream(root / "solution" / "solution.py") << kSolution;
  const kb::BuildResult b = kb::build_python_solution(root / "solution", "cuda", root / "build");
  ASSERT_TRUE(b.ok) << b.log;

  auto device = kb::make_target("cuda")->open_device();
  void* lib = dlopen(b.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto setup = reinterpret_cast<decltype(&kb_setup)>(dlsym(lib, "kb_setup"));
  auto run = reinterpret_cast<decltype(&kb_run)>(dlsym(lib, "kb_run"));
  auto teardown = reinterpret_cast<decltype(&kb_teardown)>(dlsym(lib, "kb_teardown"));
  ASSERT_TRUE(setup && run && teardown);

  kb_problem p{"bridge_test", 0, nullptr, nullptr, nullptr, 0};
  void* state = nullptr;
  ASSERT_EQ(setup(&p, &state), 0);

  const std::vector<float> x_host = {1, 2, 3, 4, 5, 6};
  void* x = device->alloc(x_host.size() * sizeof(float));
  void* y = device->alloc(x_host.size() * sizeof(float));
  void* where = device->alloc(4 * sizeof(int64_t));
  device->upload(x, x_host.data(), x_host.size() * sizeof(float));
  std::vector<int64_t> xy_shape = {2, 3}, where_shape = {4};
  const DLDevice dev = device->dl_device();
  DLTensor in = tensor_of(x, dev, DLDataType{kDLFloat, 32, 1}, xy_shape);
  DLTensor outs[2] = {tensor_of(y, dev, DLDataType{kDLFloat, 32, 1}, xy_shape),
                      tensor_of(where, dev, DLDataType{kDLInt, 64, 1}, where_shape)};
  kb_call c{&in, 1, outs, 2, device->stream()};
  ASSERT_EQ(run(state, &c), 0);
  device->synchronize();

  std::vector<float> y_host(x_host.size());
  std::vector<int64_t> seen(4);
  device->download(y_host.data(), y, y_host.size() * sizeof(float));
  device->download(seen.data(), where, seen.size() * sizeof(int64_t));
  EXPECT_EQ(y_host, (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(seen[0], static_cast<int64_t>(reinterpret_cast<uintptr_t>(x)));
  EXPECT_EQ(seen[1], static_cast<int64_t>(reinterpret_cast<uintptr_t>(y)));
  EXPECT_EQ(seen[2], static_cast<int64_t>(reinterpret_cast<uintptr_t>(device->stream())));
  EXPECT_EQ(seen[3], 1);
  teardown(state);
  device->release(x);
  device->release(y);
  device->release(where);
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace
