// The Device of the cuda target: one GPU (CUDA device 0 of what CUDA_VISIBLE_DEVICES shows).
// It owns every buffer, the stream handed to the solution, and the NVBench-style cold timer.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <optional>
#include <vector>
#include <string>

#include "target/cuda/cuda_kernels.h"
#include "target/cuda/cuda_raii.h"
#include "target/cuda/kernel_monitor.h"
#include "target/target.h"

namespace kb {

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int ordinal = 0);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  std::string description() const override { return description_; }
  DLDevice dl_device() const override { return DLDevice{kDLCUDA, ordinal_}; }
  void* alloc(size_t bytes) override;
  void release(void* p) override;
  void upload(void* dst, const void* src, size_t bytes) override;
  void download(void* dst, const void* src, size_t bytes) override;
  void copy(void* dst, const void* src, size_t bytes) override;
  void fill_pattern(void* dst, size_t bytes, uint64_t pattern, int pattern_bytes) override;
  uint64_t hash(const void* p, size_t bytes, uint64_t key) override;
  std::vector<uint64_t> hash_many(const std::vector<std::pair<const void*, size_t>>& buffers, uint64_t key) override;
  bool generate(void* dst, int dtype, int64_t numel, const InitSpec& init, uint64_t seed, uint32_t stream) override;
  void perturb(void* data, int64_t rows, int64_t row_len, int elem_bytes, uint64_t key, uint32_t stream,
               bool undo) override;
  void* stream() override { return stream_.get(); }
  void synchronize() override;
  void flush_cache() override;
  int launch_empty() override;
  TimedCall time_call(const std::function<int()>& call, int* rc) override;
  double time_hot(const std::vector<std::function<int()>>& calls, int* rc, std::string* mode) override;
  std::optional<TailCheck> tail_check(const std::function<int()>& call, int* rc) override;
  double max_sm_clock_mhz() const override { return max_clock_mhz_; }
  void set_blocking_kernel(bool on) override { blocking_kernel_ = on; }
  void set_hot_capture(bool on) override { hot_capture_ = on; }
  void start_work_monitor() override;
  void mark_call(bool inside) override;
  std::optional<std::vector<GpuWork>> collect_work() override;
  std::string monitor_status() const override { return monitor_status_; }

  size_t l2_bytes() const { return l2_bytes_; }

  // How long the blocking kernel holds the stream before giving up (a call that waits on the
  // device inside kb_run would otherwise deadlock against it; so does the first launch of a kernel
  // whose module CUDA loads lazily, which is why callers make an untimed call first, as the worker
  // does with its check and warm-up calls).
  static constexpr double kBlockingTimeoutSeconds = 10.0;
  // How long each clock probe spins (one before and one after every timed call, outside its
  // events): long enough to read the SM clock within a fraction of a percent on its own, so that
  // calls of a few microseconds get a clock and a throttle check too; short beside the L2 flush
  // that precedes every cold sample (2x L2 read: ~30 us on an H100).
  static constexpr uint64_t kClockProbeSpinNs = 10000;

 private:
  static double sm_clock_between(const cuda::ClockStamp* stamps);
  static double probe_clock(const cuda::ClockStamp& stamp);
  unsigned long long* hash_acc() const { return static_cast<unsigned long long*>(hash_acc_.get()); }
  uint32_t* flush_buffer() const { return static_cast<uint32_t*>(flush_buffer_.get()); }

  // Declared first: its initialiser selects the device every owner below is made on. The owners
  // (cuda_raii.h) free what was made if a later one fails, so a constructor that throws leaks nothing.
  int ordinal_ = 0;
  size_t l2_bytes_ = 0;
  size_t flush_words_ = 0;  // of flush_buffer_: 2x the L2, in 32-bit words
  std::string description_;
  double max_clock_mhz_ = 0;
  bool blocking_kernel_ = true;
  bool hot_capture_ = true;
  KernelMonitor* monitor_ = nullptr;
  std::string monitor_status_ = "not started";
  cuda::MappedHostBuffer clock_stamps_;  // two cuda::ClockStamp
  // Non-blocking: the legacy default stream (which any library or cudaMemcpy without a stream
  // uses) does not serialise with it, so nothing outside the solution's own work enters its timing.
  cuda::Stream stream_;
  cuda::Event start_, stop_;
  cuda::MappedHostBuffer flags_;  // int32_t [0] release flag, [1] timed-out flag
  cuda::DeviceBuffer hash_acc_;   // one unsigned long long
  cuda::DeviceBuffer flush_buffer_;
};

// Name, SM count, compute capability and driver of a device ("NVIDIA H100 80GB HBM3, 132 SMs,
// cc 9.0, driver 13.0").
std::string cuda_device_description(int ordinal);

}  // namespace kb
