// Runs a problem's GPU reference (deck/gpu_reference.h) in the parent process: uploads the case's
// inputs and weights, hands the reference NaN-filled double outputs, and copies them back.
#include "target/cuda/cuda_gpu_reference.h"

#include <cmath>
#include <memory>

#include "core/tensor.h"
#include "deck/gpu_reference.h"
#include "deck/problem.h"
#include "target/cuda/cuda_check.h"
#include "target/cuda/cuda_raii.h"

namespace kb {
namespace {

using cuda::DeviceBuffer;

std::vector<std::unique_ptr<DeviceBuffer>> upload(const std::vector<HostTensor>& ts, std::vector<const void*>& ptrs,
                                                  cudaStream_t s) {
  std::vector<std::unique_ptr<DeviceBuffer>> bufs;
  for (const auto& t : ts) {
    bufs.push_back(std::make_unique<DeviceBuffer>(t.bytes.size(), "a GPU reference's input"));
    KB_CUDA_CHECK(cudaMemcpyAsync(bufs.back()->get(), t.data(), t.bytes.size(), cudaMemcpyHostToDevice, s));
    ptrs.push_back(bufs.back()->get());
  }
  return bufs;
}

}  // namespace

bool run_cuda_gpu_reference(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& inputs,
                            const std::vector<HostTensor>& weights, std::vector<std::vector<double>>& expected) {
  GpuReferenceFn fn = find_gpu_reference(p.name);
  if (!fn) return false;
  const cuda::Stream stream;
  const cudaStream_t s = stream.get();
  std::vector<const void*> in_ptrs, w_ptrs;
  auto in_bufs = upload(inputs, in_ptrs, s);
  auto w_bufs = upload(weights, w_ptrs, s);
  std::vector<std::unique_ptr<DeviceBuffer>> out_bufs;
  std::vector<double*> out_ptrs;
  std::vector<int64_t> numel;
  for (auto& e : expected) {
    out_bufs.push_back(std::make_unique<DeviceBuffer>(e.size() * sizeof(double), "a GPU reference's output"));
    out_ptrs.push_back(static_cast<double*>(out_bufs.back()->get()));
    numel.push_back(static_cast<int64_t>(e.size()));
    // All-ones bytes are a NaN in double: whatever the reference leaves unwritten stays NaN.
    KB_CUDA_CHECK(cudaMemsetAsync(out_bufs.back()->get(), 0xFF, e.size() * sizeof(double), s));
  }
  std::vector<const char*> names;
  for (const auto& d : p.dims) names.push_back(d.c_str());
  GpuReferenceCase c;
  c.problem = p.name.c_str();
  c.num_dims = static_cast<int>(names.size());
  c.dim_names = names.data();
  c.dims = shape.dims.data();
  c.num_inputs = static_cast<int>(in_ptrs.size());
  c.inputs = in_ptrs.data();
  c.num_weights = static_cast<int>(w_ptrs.size());
  c.weights = w_ptrs.data();
  c.num_outputs = static_cast<int>(out_ptrs.size());
  c.expected = out_ptrs.data();
  c.expected_numel = numel.data();
  c.stream = s;
  fn(c);
  KB_CUDA_CHECK(cudaGetLastError());
  for (size_t i = 0; i < expected.size(); ++i)
    KB_CUDA_CHECK(cudaMemcpyAsync(expected[i].data(), out_ptrs[i], expected[i].size() * sizeof(double),
                                  cudaMemcpyDeviceToHost, s));
  KB_CUDA_CHECK(cudaStreamSynchronize(s));
  return true;
}

}  // namespace kb
