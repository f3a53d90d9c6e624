// The measured ceilings of the GPU present (`kbench ceilings --target cuda`): plausible against
// physics and the datasheet, and cached so that `kbench eval` reads them without measuring.
// Skipped (reported skipped by ctest) without a GPU, or on one older than sm_80.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>

#include "core/subprocess.h"
#include "target/ceilings.h"
#include "target/cuda/cuda_ceilings.h"
#include "target/target.h"

namespace kb {
namespace {

std::filesystem::path hardware_dir() { return std::filesystem::path(KBENCH_SOURCE_DIR) / "hardware"; }

const std::vector<std::string>& gpu_keys() {
  static const std::vector<std::string> k = {"dram", "fp32", "fp64", "fp64_tc", "tf32_tc", "bf16_tc", "fp16_tc", "fp8_tc"};
  return k;
}

class CudaCeilingsTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
    cudaDeviceProp p{};
    ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
    if (p.major < 8) GTEST_SKIP() << p.name << " is cc " << p.major << "." << p.minor << "; these checks need sm_80+";
    name_ = p.name;
    static const std::vector<HardwareSpec> specs = load_hardware(hardware_dir());
    spec_ = match_hardware(specs, name_);
  }

  // One measurement (10-30 s) shared by the tests of this binary.
  static const Ceilings& measured() {
    static const Ceilings c = [] {
      const auto t0 = std::chrono::steady_clock::now();
      Ceilings m = measure_cuda_ceilings(0);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("[ measured  ] %s in %.1f s\n", m.name.c_str(), s);
      for (const auto& [k, v] : m.compute) std::printf("[ measured  ] %-8s %10.2f TFLOP/s  %s\n", k.c_str(), v.value / 1e12, v.source.c_str());
      for (const auto& [k, v] : m.memory) std::printf("[ measured  ] %-8s %10.2f GB/s     %s\n", k.c_str(), v.value / 1e9, v.source.c_str());
      for (const auto& [k, why] : m.unmeasured) std::printf("[ measured  ] %-8s not measured: %s\n", k.c_str(), why.c_str());
      EXPECT_LT(s, 120.0) << "the measurement should take well under a minute on an H100";
      return m;
    }();
    return c;
  }

  std::string name_;
  const HardwareSpec* spec_ = nullptr;
};

TEST_F(CudaCeilingsTest, EveryKeyIsMeasuredOrSaysWhyNot) {
  const Ceilings& m = measured();
  EXPECT_TRUE(m.measured);
  EXPECT_EQ(m.id.rfind("cuda-", 0), 0u) << m.id;
  for (const auto& k : gpu_keys()) {
    const bool got = m.compute.count(k) || m.memory.count(k);
    EXPECT_NE(got, m.unmeasured.count(k) > 0) << k << ": exactly one of a figure and a reason";
  }
  for (const auto& [k, why] : m.unmeasured) EXPECT_NE(why.rfind("failed:", 0), 0u) << k << ": " << why;
  for (const auto* t : {&m.compute, &m.memory})
    for (const auto& [k, v] : *t) EXPECT_EQ(v.source.rfind("measured: ", 0), 0u) << k << ": " << v.source;
  // On sm_80+ these always exist.
  for (const char* k : {"fp32", "fp64", "tf32_tc", "bf16_tc", "fp16_tc"}) EXPECT_TRUE(m.compute.count(k)) << k;
  EXPECT_TRUE(m.memory.count("dram"));
}

TEST_F(CudaCeilingsTest, FiguresArePhysicallyPlausible) {
  const Ceilings& m = measured();
  ASSERT_TRUE(m.memory.count("dram")) << (m.unmeasured.count("dram") ? m.unmeasured.at("dram") : "");
  ASSERT_TRUE(m.compute.count("fp32"));
  ASSERT_TRUE(m.compute.count("bf16_tc"));
  const double dram = m.memory.at("dram").value;
  EXPECT_GT(dram, 100e9) << "every sm_80+ GPU copies faster than 100 GB/s";
  // Tensor cores are the point of bf16: at least twice the CUDA-core fp32 rate on every sm_80+ GPU
  // (A100 16x, H100 15x, RTX 3090 2x with fp32 accumulate).
  EXPECT_GE(m.compute.at("bf16_tc").value, 2.0 * m.compute.at("fp32").value);

  if (!spec_) {
    std::printf("[ note      ] no datasheet matches '%s': datasheet comparisons skipped\n", name_.c_str());
    return;
  }
  const Ceilings& ds = spec_->ceilings;
  // A measurement may exceed a datasheet figure only by clock variation (boost above the listed
  // clock); 10% more means the measurement is wrong.
  EXPECT_LE(dram, 1.1 * ds.memory.at("dram").value) << "dram measured " << dram / 1e9 << " GB/s";
  for (const auto& [k, v] : m.compute) {
    auto it = ds.compute.find(k);
    if (it == ds.compute.end()) continue;
    std::printf("[ vs sheet  ] %-8s %8.1f of %8.1f TFLOP/s (%3.0f%%)\n", k.c_str(), v.value / 1e12, it->second.value / 1e12,
                100 * v.value / it->second.value);
    EXPECT_LE(v.value, 1.1 * it->second.value) << k << " measured above 1.1x the datasheet";
  }
  std::printf("[ vs sheet  ] dram     %8.1f of %8.1f GB/s    (%3.0f%%)\n", dram / 1e9, ds.memory.at("dram").value / 1e9,
              100 * dram / ds.memory.at("dram").value);
}

class ScopedCacheDir {
 public:
  ScopedCacheDir() {
    path_ = std::filesystem::temp_directory_path() / ("kbench-gpu-ceil-" + std::to_string(getpid()));
    std::filesystem::remove_all(path_);
    if (const char* old = std::getenv("KBENCH_CACHE_DIR")) old_ = old;
    setenv("KBENCH_CACHE_DIR", path_.c_str(), 1);
  }
  ~ScopedCacheDir() {
    if (old_)
      setenv("KBENCH_CACHE_DIR", old_->c_str(), 1);
    else
      unsetenv("KBENCH_CACHE_DIR");
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

 private:
  std::filesystem::path path_;
  std::optional<std::string> old_;
};

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST_F(CudaCeilingsTest, TargetServesTheCachedMeasurementAndEvalNeverMeasures) {
  ScopedCacheDir cache;
  auto target = make_target("cuda");
  if (!spec_) {
    EXPECT_THROW(target->ceilings(hardware_dir(), false, /*measure=*/false), HardwareError);
    return;
  }
  // No cache, measure = false (kbench eval): the datasheet alone, at once.
  Ceilings c;
  double s = seconds_of([&] { c = target->ceilings(hardware_dir(), /*refresh=*/true, /*measure=*/false); });
  EXPECT_LT(s, 5.0) << "measure = false must not measure";
  EXPECT_FALSE(c.measured);
  EXPECT_EQ(c.id, spec_->ceilings.id);
  EXPECT_TRUE(c.measured_compute.empty());
  EXPECT_TRUE(c.measured_memory.empty());

  // This GPU's measurement in its cache file (as `kbench ceilings` leaves it): both reads use it.
  const CudaDeviceIdentity id = cuda_device_identity(0);
  EXPECT_EQ(id.uuid.rfind("GPU-", 0), 0u) << id.uuid;
  ASSERT_TRUE(write_ceilings_cache(cuda_ceilings_cache_file(id), cuda_ceilings_cache_key(id), measured()));
  for (bool measure : {false, true}) {
    s = seconds_of([&] { c = target->ceilings(hardware_dir(), false, measure); });
    EXPECT_LT(s, 5.0) << "a cache hit must not measure (measure = " << measure << ")";
    EXPECT_FALSE(c.measured) << "scoring stays on the datasheet";
    EXPECT_EQ(c.compute_peak("fp32").value, spec_->ceilings.compute_peak("fp32").value);
    ASSERT_TRUE(c.measured_memory.count("dram"));
    EXPECT_EQ(c.measured_memory.at("dram").value, measured().memory.at("dram").value);
    EXPECT_EQ(c.measured_compute.size(), measured().compute.size());
  }

  // A corrupt cache: eval still gets the datasheet (no measured figures), without measuring.
  std::ofstream(cuda_ceilings_cache_file(id), std::ios::trunc) << "{ not json";
  s = seconds_of([&] { c = target->ceilings(hardware_dir(), false, /*measure=*/false); });
  EXPECT_LT(s, 5.0);
  EXPECT_TRUE(c.measured_compute.empty());
  EXPECT_EQ(c.compute_peak("fp32").value, spec_->ceilings.compute_peak("fp32").value);
}

// The launch floor (target/launch_floor.h): measured by `kbench ceilings` (measure = true) when the
// cached measurement lacks one, cached with it, and served to eval (measure = false) from the cache.
TEST_F(CudaCeilingsTest, LaunchFloorIsMeasuredWithTheCeilingsAndCached) {
  if (!spec_) GTEST_SKIP() << "no datasheet matches " << name_;
  ScopedCacheDir cache;
  auto target = make_target("cuda");
  const CudaDeviceIdentity id = cuda_device_identity(0);
  Ceilings without = measured();
  without.launch_floor.reset();  // as a cache written before the floor existed
  ASSERT_TRUE(write_ceilings_cache(cuda_ceilings_cache_file(id), cuda_ceilings_cache_key(id), without));
  EXPECT_FALSE(target->ceilings(hardware_dir(), false, /*measure=*/false).launch_floor) << "eval never measures";

  Ceilings c;
  const double s = seconds_of([&] { c = target->ceilings(hardware_dir(), false, /*measure=*/true); });
  ASSERT_TRUE(c.launch_floor) << (c.unmeasured.count("launch_floor") ? c.unmeasured.at("launch_floor") : "");
  std::printf("[ floor     ] %.3f us in %.2f s: %s\n", c.launch_floor->value * 1e6, s, c.launch_floor->source.c_str());
  // An empty kernel's span is about a microsecond or two on an H100/H200; events around it a few.
  EXPECT_GT(c.launch_floor->value, 0.2e-6);
  EXPECT_LT(c.launch_floor->value, 20e-6);
  EXPECT_NE(c.launch_floor->source.find("one empty kernel"), std::string::npos) << c.launch_floor->source;
  EXPECT_LT(s, 10.0) << "adding a floor to a cached measurement must not measure the rest again";
  // The rest of the measurement is the cached one, untouched.
  EXPECT_EQ(c.measured_memory.at("dram").value, measured().memory.at("dram").value);

  // Cached: eval reads the same floor, without measuring.
  const Ceilings e = target->ceilings(hardware_dir(), false, /*measure=*/false);
  ASSERT_TRUE(e.launch_floor);
  EXPECT_EQ(e.launch_floor->value, c.launch_floor->value);
}

TEST_F(CudaCeilingsTest, CliPrintsDatasheetAndMeasuredSideBySide) {
  if (!spec_) GTEST_SKIP() << "no datasheet matches " << name_;
  ScopedCacheDir cache;  // the child kbench inherits KBENCH_CACHE_DIR
  const CudaDeviceIdentity id = cuda_device_identity(0);
  ASSERT_TRUE(write_ceilings_cache(cuda_ceilings_cache_file(id), cuda_ceilings_cache_key(id), measured()));
  auto kbench = [&](std::vector<std::string> args) {
    args.insert(args.begin(), KBENCH_BINARY);
    args.insert(args.end(), {"--hardware", hardware_dir().string()});
    return run_command(args, std::chrono::minutes(3));
  };
  auto r = kbench({"ceilings", "--target", "cuda", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  EXPECT_FALSE(j["measured"].get<bool>());
  EXPECT_EQ(j["id"], spec_->ceilings.id);
  EXPECT_EQ(j["compute"]["bf16_tc"]["value"].get<double>(), spec_->ceilings.compute_peak("bf16_tc").value);
  EXPECT_EQ(j["measured_compute"]["bf16_tc"]["value"].get<double>(), measured().compute.at("bf16_tc").value);
  EXPECT_EQ(j["measured_memory"]["dram"]["value"].get<double>(), measured().memory.at("dram").value);

  r = kbench({"ceilings", "--target", "cuda"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::printf("%s", r.output.c_str());
  EXPECT_NE(r.output.find("datasheet"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" measured ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  floor "), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kb
