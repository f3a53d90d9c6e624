// The CUDA runtime's resources as owners (the one set of them: the measured ceilings, the GPU
// references and the device use these). Constructors throw std::runtime_error naming the failure;
// destructors ignore errors: after a sticky error nothing can be freed anyway.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "target/cuda/cuda_check.h"

namespace kb::cuda {

// Device memory. `what` names it in the error when the allocation fails (with the free memory).
class DeviceBuffer {
 public:
  DeviceBuffer(size_t bytes, const char* what) : bytes_(bytes) {
    constexpr size_t kMiB = size_t{1} << 20;
    const cudaError_t e = cudaMalloc(&p_, bytes ? bytes : 1);  // a zero-sized buffer still gets a pointer
    if (e != cudaSuccess) {
      (void)cudaGetLastError();  // an allocation failure is not sticky; clear it for the next call
      p_ = nullptr;
      size_t free_b = 0, total_b = 0;
      (void)cudaMemGetInfo(&free_b, &total_b);
      (void)cudaGetLastError();
      throw std::runtime_error(fmt::format("cudaMalloc of {} MiB for {} failed with {} ({} of {} MiB free)",
                                           bytes / kMiB, what, cudaGetErrorName(e), free_b / kMiB, total_b / kMiB));
    }
  }
  ~DeviceBuffer() {
    if (p_) (void)cudaFree(p_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

// A non-blocking stream (it does not synchronise with the legacy default stream).
class Stream {
 public:
  Stream() { KB_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_) (void)cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// `n` timing events.
class Events {
 public:
  explicit Events(size_t n) : e_(n, nullptr) {
    for (auto& e : e_) KB_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~Events() {
    for (auto e : e_)
      if (e) (void)cudaEventDestroy(e);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t operator[](size_t i) const { return e_[i]; }

 private:
  std::vector<cudaEvent_t> e_;
};

}  // namespace kb::cuda
