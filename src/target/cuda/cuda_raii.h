// The CUDA runtime's resources as owners (the one set of them: the measured ceilings, the GPU
// references and the device, CudaDevice, use these). Constructors throw std::runtime_error naming the failure;
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

// One timing event.
class Event {
 public:
  Event() { KB_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() {
    if (e_) (void)cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Pinned host memory mapped into the device's address space: the host reads and writes it while
// kernels run (a release flag, clock stamps), with no copy.
class MappedHostBuffer {
 public:
  explicit MappedHostBuffer(size_t bytes) {
    KB_CUDA_CHECK(cudaHostAlloc(&host_, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    const cudaError_t e = cudaHostGetDevicePointer(&device_, host_, 0);
    if (e != cudaSuccess) {
      (void)cudaFreeHost(host_);
      throw_cuda_error(e, "cudaHostGetDevicePointer", __FILE__, __LINE__);
    }
  }
  ~MappedHostBuffer() {
    if (host_) (void)cudaFreeHost(host_);
  }
  MappedHostBuffer(const MappedHostBuffer&) = delete;
  MappedHostBuffer& operator=(const MappedHostBuffer&) = delete;
  template <typename T>
  T* host() const { return static_cast<T*>(host_); }
  template <typename T>
  T* device() const { return static_cast<T*>(device_); }

 private:
  void* host_ = nullptr;
  void* device_ = nullptr;
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
