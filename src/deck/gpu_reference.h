// A problem's GPU reference (problems/<id>/reference.cu): computes one case's expected outputs on
// the GPU, in double, for shapes whose fp64 CPU oracle would take too long in full. It runs in the
// parent kbench process (never in the worker, where the solution lives), on the inputs the parent
// generated itself. The CPU oracle (registry.h) then recomputes a random sample of rows of every
// output, and the whole output on small shapes, and the evaluation stops with an internal error if
// the two disagree: the GPU reference is itself checked on every case.
//
// This header is included by nvcc (C++17) as well as by the C++20 engine, so it holds plain types
// only: no Problem, no HostTensor.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kb {

struct GpuReferenceCase {
  const char* problem = nullptr;
  // The shape's dims, in problem.toml's `dims` order (as kb_problem hands them to a solution).
  int num_dims = 0;
  const char* const* dim_names = nullptr;
  const int64_t* dims = nullptr;
  // Device pointers to the tensors' bytes, exactly as the solution sees them, in problem.toml order.
  int num_inputs = 0;
  const void* const* inputs = nullptr;
  int num_weights = 0;
  const void* const* weights = nullptr;
  // One device array of doubles per output (numel long, pre-filled with NaN): the expected values.
  int num_outputs = 0;
  double* const* expected = nullptr;
  const int64_t* expected_numel = nullptr;
  void* stream = nullptr;  // a cudaStream_t: enqueue everything on it; the caller synchronises

  // The value of a named dim; throws for a name the problem does not declare.
  int64_t dim(const char* name) const {
    for (int i = 0; i < num_dims; ++i)
      if (std::string(dim_names[i]) == name) return dims[i];
    throw std::logic_error(std::string("GPU reference of ") + problem + ": no dim named '" + name + "'");
  }
};
using GpuReferenceFn = void (*)(const GpuReferenceCase&);

void register_gpu_reference(const std::string& problem, GpuReferenceFn fn);
GpuReferenceFn find_gpu_reference(const std::string& problem);  // nullptr when none is compiled in

namespace detail {
struct GpuReferenceRegistrar {
  GpuReferenceRegistrar(const char* problem, GpuReferenceFn fn) { register_gpu_reference(problem, fn); }
};
}  // namespace detail

#define KB_GPU_REF_CONCAT_INNER(a, b) a##b
#define KB_GPU_REF_CONCAT(a, b) KB_GPU_REF_CONCAT_INNER(a, b)
#define KB_REGISTER_GPU_REFERENCE(problem, fn)                                                       \
  static ::kb::detail::GpuReferenceRegistrar KB_GPU_REF_CONCAT(kb_gpu_reference_registrar_, __LINE__)( \
      problem, static_cast<::kb::GpuReferenceFn>(fn))

}  // namespace kb
