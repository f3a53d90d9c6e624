// CudaDevice on a real GPU: its fingerprint equals the host's, fills repeat the pattern exactly,
// the cache flush runs, and the cold timer measures a kernel of known duration. Skipped (and
// reported skipped by ctest) without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "core/dtype.h"
#include "core/hash.h"
#include "core/random.h"
#include "deck/problem.h"
#include "spin_kernel.h"

#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <vector>
#include "target/cuda/cuda_device.h"
#include "target/target.h"

namespace {

class CudaDeviceTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!kb::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
    dev = std::make_unique<kb::CudaDevice>(0);
  }
  std::unique_ptr<kb::CudaDevice> dev;
};

TEST_F(CudaDeviceTest, HashEqualsHostBufferHashForOddSizesAndOffsets) {
  std::mt19937_64 rng(42);
  for (size_t bytes : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(9), size_t(1001), size_t(65537),
                       size_t(3) << 20, (size_t(5) << 20) + 3}) {
    std::vector<unsigned char> h(bytes + 16);
    for (auto& b : h) b = static_cast<unsigned char>(rng());
    auto* d = static_cast<unsigned char*>(dev->alloc(h.size()));
    dev->upload(d, h.data(), h.size());
    for (size_t off : {size_t(0), size_t(3), size_t(8)}) {
      const uint64_t key = rng();
      EXPECT_EQ(dev->hash(d + off, bytes, key), kb::buffer_hash(h.data() + off, bytes, key))
          << bytes << " bytes at offset " << off;
    }
    dev->release(d);
  }
  EXPECT_FALSE(dev->description().empty());
}

TEST_F(CudaDeviceTest, FillPatternRepeatsThePatternFromTheStart) {
  const uint64_t pattern = 0x0123456789ABCDEFull;
  for (int pb : {1, 2, 4, 8})
    for (size_t off : {size_t(0), size_t(1), size_t(5)})
      for (size_t bytes : {size_t(1), size_t(13), size_t(4099)}) {
        auto* d = static_cast<unsigned char*>(dev->alloc(bytes + 8));
        dev->fill_pattern(d + off, bytes, pattern, pb);
        std::vector<unsigned char> got(bytes);
        dev->synchronize();
        dev->download(got.data(), d + off, bytes);
        for (size_t i = 0; i < bytes; ++i)
          ASSERT_EQ(got[i], static_cast<unsigned char>(pattern >> (8 * (i % pb))))
              << "pattern " << pb << " bytes, offset " << off << ", length " << bytes << ", byte " << i;
        dev->release(d);
      }
}

TEST_F(CudaDeviceTest, FlushCacheRuns) {
  EXPECT_GT(dev->l2_bytes(), 0u);
  for (int i = 0; i < 3; ++i) dev->flush_cache();
  dev->synchronize();
}

TEST_F(CudaDeviceTest, TimeCallMeasuresAKnownKernelWithinTenPercent) {
  const double want = 100e-6;
  // One untimed launch first: with lazy module loading (CUDA_MODULE_LOADING=LAZY, the default since
  // CUDA 12.2) the first launch of a kernel loads its module, which waits for the device and so
  // deadlocks against the blocking kernel until its timeout (seen on the H100: the first timed call
  // threw). The worker is safe: the untimed check and warm-up calls always come first.
  ASSERT_EQ(launch_spin(1000, static_cast<cudaStream_t>(dev->stream())), cudaSuccess);
  dev->synchronize();
  std::vector<double> t;
  for (int i = 0; i < 9; ++i) {
    dev->flush_cache();
    int rc = -1;
    const auto timed = dev->time_call(
        [&] { return launch_spin(static_cast<uint64_t>(want * 1e9), static_cast<cudaStream_t>(dev->stream())) ==
                             cudaSuccess ? 0 : 1; },
        &rc);
    t.push_back(timed.seconds);
    EXPECT_EQ(rc, 0);
    // The SM clock is known and physically sensible.
    ASSERT_TRUE(std::isfinite(timed.sm_clock_mhz));
    EXPECT_GT(timed.sm_clock_mhz, 0.3 * dev->max_sm_clock_mhz());
    EXPECT_LT(timed.sm_clock_mhz, 1.1 * dev->max_sm_clock_mhz());
  }
  std::sort(t.begin(), t.end());
  const double median = t[t.size() / 2];
  EXPECT_NEAR(median, want, 0.1 * want) << "median of 9 timed calls of a 100 us kernel";
}

// The clock probes measure on their own: a call of a few microseconds (too short to read the clock
// across, with %globaltimer ticking about every microsecond) still gets its SM clock, so the
// throttle check covers small kernels too (it read nothing below 20 us before).
TEST_F(CudaDeviceTest, TimeCallKnowsTheSmClockOfAShortCall) {
  const auto stream = static_cast<cudaStream_t>(dev->stream());
  ASSERT_EQ(launch_spin(1000, stream), cudaSuccess);  // module load outside the timed calls
  dev->synchronize();
  for (int i = 0; i < 5; ++i) {
    int rc = -1;
    const auto timed = dev->time_call([&] { return launch_spin(2000, stream) == cudaSuccess ? 0 : 1; }, &rc);
    EXPECT_EQ(rc, 0);
    ASSERT_TRUE(std::isfinite(timed.sm_clock_mhz)) << "call " << i;
    EXPECT_GT(timed.sm_clock_mhz, 0.3 * dev->max_sm_clock_mhz());
    EXPECT_LT(timed.sm_clock_mhz, 1.1 * dev->max_sm_clock_mhz());
    EXPECT_LT(timed.seconds, 50e-6) << "the probes' spins are outside the events";
  }
}

TEST_F(CudaDeviceTest, TimeCallReportsTheSolutionsReturnCode) {
  int rc = 0;
  const double s = dev->time_call([] { return 7; }, &rc).seconds;
  EXPECT_EQ(rc, 7);
  EXPECT_GE(s, 0.0);
}

TEST_F(CudaDeviceTest, HotTimingCapturesAGraphAndReportsPerCallTime) {
  const double want = 50e-6;
  auto stream = static_cast<cudaStream_t>(dev->stream());
  std::vector<std::function<int()>> calls(20, [&] { return launch_spin(static_cast<uint64_t>(want * 1e9), stream) == cudaSuccess ? 0 : 1; });
  int rc = -1;
  std::string mode;
  const double per_call = dev->time_hot(calls, &rc, &mode);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(mode, "graph");
  EXPECT_NEAR(per_call, want, 0.1 * want);
}

// A call that launches a CUDA graph of its own is legal on the handed stream, but CUDA refuses a
// graph launch into a capturing stream: hot timing falls back to back-to-back calls, and a call
// that fails outside capture too is still reported.
TEST_F(CudaDeviceTest, HotTimingFallsBackWhenACallCannotBeCaptured) {
  const double want = 50e-6;
  auto stream = static_cast<cudaStream_t>(dev->stream());
  cudaStream_t side = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(launch_spin(static_cast<uint64_t>(want * 1e9), side), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(side, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  std::vector<std::function<int()>> calls(20, [&] { return cudaGraphLaunch(exec, stream) == cudaSuccess ? 0 : 1; });
  int rc = -1;
  std::string mode;
  const double per_call = dev->time_hot(calls, &rc, &mode);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(mode, "stream");
  EXPECT_NEAR(per_call, want, 0.2 * want);
  std::vector<std::function<int()>> failing(3, [] { return 7; });
  dev->time_hot(failing, &rc, &mode);
  EXPECT_EQ(rc, 7);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(side);
}

TEST_F(CudaDeviceTest, TailCheckSeesWorkLeftOnAnotherStream) {
  cudaStream_t side = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), cudaSuccess);
  auto stream = static_cast<cudaStream_t>(dev->stream());
  int rc = -1;
  // Honest: 200 us on the handed stream; the device is idle soon after the stream is.
  ASSERT_EQ(launch_spin(1000, stream), cudaSuccess);  // first launch loads the module
  auto honest = dev->tail_check([&] { return launch_spin(200000, stream) == cudaSuccess ? 0 : 1; }, &rc);
  ASSERT_TRUE(honest.has_value());
  EXPECT_LT(honest->tail_seconds - honest->stream_seconds - honest->sync_latency_seconds, 50e-6);
  // Hidden: the same work on a side stream; the handed stream sees nothing, the device is busy.
  auto hidden = dev->tail_check([&] { return launch_spin(200000, side) == cudaSuccess ? 0 : 1; }, &rc);
  ASSERT_TRUE(hidden.has_value());
  EXPECT_LT(hidden->stream_seconds, 20e-6);
  EXPECT_GT(hidden->tail_seconds, 150e-6);
  cudaStreamDestroy(side);
}

// Device generation is bit-identical to the host's for every dtype and distribution: the worker
// generates inputs on the GPU while the parent generates the same ones on the host for the oracle.
TEST_F(CudaDeviceTest, DeviceGenerationIsBitIdenticalToTheHostForEveryDtype) {
  using kb::DType;
  const int64_t n = 100003;  // not a multiple of any block size
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::e4m3, DType::e5m2, DType::i64, DType::i32,
                  DType::i16, DType::i8, DType::u8}) {
    const bool is_float = kb::info(t).is_float;
    std::vector<kb::InitSpec> inits(2);
    inits[0].kind = kb::InitSpec::Kind::uniform;
    inits[0].low = is_float ? -3.5 : 0;
    inits[0].high = is_float ? 7.25 : 100;
    inits[1].kind = kb::InitSpec::Kind::normal;
    inits[1].mean = 0.5;
    inits[1].std = is_float ? 2.0 : 30.0;
    for (const auto& init : inits) {
      const uint64_t seed = 0x9E3779B97F4A7C15ull;
      const uint32_t stream = 3;
      const size_t bytes = static_cast<size_t>(n) * kb::element_bytes(t);
      std::vector<std::byte> host(bytes);
      for (int64_t i = 0; i < n; ++i) {
        const auto idx = static_cast<uint64_t>(i);
        double v = 0;
        if (init.kind == kb::InitSpec::Kind::normal)
          v = kb::normal(seed, stream, idx, init.mean, init.std);
        else if (is_float)
          v = kb::uniform(seed, stream, idx, init.low, init.high);
        else
          v = static_cast<double>(kb::uniform_int(seed, stream, idx, static_cast<int64_t>(init.low), static_cast<int64_t>(init.high)));
        kb::store_from_double(t, host.data(), i, v);
      }
      void* d = dev->alloc(bytes);
      ASSERT_TRUE(dev->generate(d, static_cast<int>(t), n, init, seed, stream));
      std::vector<std::byte> got(bytes);
      dev->download(got.data(), d, bytes);
      dev->release(d);
      size_t first_diff = bytes;
      for (size_t b = 0; b < bytes && first_diff == bytes; ++b)
        if (got[b] != host[b]) first_diff = b;
      EXPECT_EQ(first_diff, bytes) << "dtype " << kb::name(t) << ", "
                                   << (init.kind == kb::InitSpec::Kind::normal ? "normal" : "uniform")
                                   << ": first differing byte " << first_diff;
    }
  }
  kb::InitSpec named;
  named.kind = kb::InitSpec::Kind::generator;
  named.generator = "kahan_tail";
  void* d = dev->alloc(64);
  EXPECT_FALSE(dev->generate(d, static_cast<int>(DType::f32), 16, named, 1, 0)) << "named generators run on the host";
  dev->release(d);
}

// CUPTI attribution: work launched inside a marked call on the handed stream is the solution's and
// on-stream; the same kernel on another stream is off-stream; kbench's own launches (unmarked, on
// this thread) are not reported; a launch from another thread is reported as not in the call.
TEST_F(CudaDeviceTest, KernelMonitorAttributesStreamsCallsAndThreads) {
  dev->start_work_monitor();
  if (dev->monitor_status() != "cupti") GTEST_SKIP() << "CUPTI unavailable: " << dev->monitor_status();
  auto stream = static_cast<cudaStream_t>(dev->stream());
  cudaStream_t side = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(launch_spin(1000, stream), cudaSuccess);  // unmarked: kbench's own
  dev->mark_call(true);
  ASSERT_EQ(launch_spin(20000, stream), cudaSuccess);
  ASSERT_EQ(launch_spin(20000, side), cudaSuccess);
  dev->mark_call(false);
  auto work = dev->collect_work();
  ASSERT_TRUE(work.has_value());
  ASSERT_EQ(work->size(), 2u);
  int on = 0, off = 0;
  for (const auto& w : *work) {
    EXPECT_TRUE(w.kernel);
    EXPECT_TRUE(w.in_call);
    EXPECT_NE(w.name.find("spin"), std::string::npos) << w.name;
    EXPECT_GT(w.end_ns, w.start_ns + 15000) << "a 20 us kernel";
    (w.on_stream ? on : off)++;
  }
  EXPECT_EQ(on, 1);
  EXPECT_EQ(off, 1);
  // A thread other than the worker's launches, outside any call.
  std::thread other([&] { (void)launch_spin(5000, stream); });
  other.join();
  work = dev->collect_work();
  ASSERT_TRUE(work.has_value());
  ASSERT_EQ(work->size(), 1u);
  EXPECT_FALSE((*work)[0].in_call);
  // Nothing left over.
  work = dev->collect_work();
  ASSERT_TRUE(work.has_value());
  EXPECT_TRUE(work->empty());
  cudaStreamDestroy(side);
}

}  // namespace
