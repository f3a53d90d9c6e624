// Every CUDA runtime call kbench makes goes through KB_CUDA_CHECK: a failure becomes a
// std::runtime_error naming the call, the error and where, so the worker reports it to the parent
// (which turns it into the solution's failure) instead of carrying on with a broken context.
// Sticky errors (an illegal address in a solution's kernel) make every later call fail too; the
// first check after the solution's call is the one that names it.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace kb {

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string("CUDA error: ") + call + " failed with " + cudaGetErrorName(e) + " (" +
                           cudaGetErrorString(e) + ") at " + file + ":" + std::to_string(line));
}

}  // namespace kb

#define KB_CUDA_CHECK(call)                                                 \
  do {                                                                      \
    const cudaError_t kb_cuda_err_ = (call);                                \
    if (kb_cuda_err_ != cudaSuccess) ::kb::throw_cuda_error(kb_cuda_err_, #call, __FILE__, __LINE__); \
  } while (0)
