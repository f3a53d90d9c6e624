// Ceilings with measured figures beside the datasheet ones: their JSON form, and the cache of a
// device's measurement (what `kbench ceilings --target cuda` writes and `kbench eval` only reads).
// No GPU needed: the measurement is a stand-in function.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "target/ceilings.h"
#include "test_support.h"
#ifdef KBENCH_WITH_CUDA
#include "target/cuda/cuda_ceilings.h"
#endif

namespace kb {
namespace {

using testing_support::ScopedEnv;

// A temporary cache folder for one test.
class TempDir : public testing_support::TempDir {
 public:
  TempDir() : testing_support::TempDir("ceilcache-test") {}
};

Ceilings datasheet() {
  Ceilings c;
  c.id = "test_gpu";
  c.name = "Test GPU";
  c.measured = false;
  c.compute["fp32"] = {66.9e12, "whitepaper, FP32"};
  c.compute["bf16_tc"] = {989.4e12, "whitepaper, BF16 dense"};
  c.compute["fp8_tc"] = {1978.9e12, "whitepaper, FP8 dense"};
  c.memory["dram"] = {3.35e12, "datasheet, HBM3"};
  return c;
}

Ceilings measurement(double bf16 = 812.3e12) {
  Ceilings m;
  m.id = "cuda-test-gpu";
  m.name = "Test GPU, 132 SMs";
  m.measured = true;
  m.compute["fp32"] = {59.1e12, "measured: fp32 FMA throughput"};
  m.compute["bf16_tc"] = {bf16, "measured: cuBLASLt 8192^3 bf16->fp32"};
  m.memory["dram"] = {2.95e12, "measured: copy kernel"};
  m.unmeasured["fp8_tc"] = "not on this GPU: fp8 tensor math needs compute capability >= 8.9";
  return m;
}

TEST(CeilingsMeasured, JsonCarriesBothFiguresAndRoundTrips) {
  const Ceilings c = with_measurement(datasheet(), measurement());
  // Scoring figures stay the datasheet's; the measurement sits beside them.
  EXPECT_FALSE(c.measured);
  EXPECT_EQ(c.compute_peak("bf16_tc").value, 989.4e12);
  EXPECT_EQ(c.measured_compute.at("bf16_tc").value, 812.3e12);
  EXPECT_EQ(c.measured_memory.at("dram").value, 2.95e12);
  EXPECT_EQ(c.unmeasured.at("fp8_tc").rfind("not on this GPU", 0), 0u);

  const nlohmann::json j = to_json(c);
  EXPECT_EQ(j["compute"]["bf16_tc"]["value"].get<double>(), 989.4e12);
  EXPECT_EQ(j["measured_compute"]["bf16_tc"]["value"].get<double>(), 812.3e12);
  EXPECT_EQ(j["measured_compute"]["bf16_tc"]["source"].get<std::string>(), "measured: cuBLASLt 8192^3 bf16->fp32");
  EXPECT_EQ(j["measured_memory"]["dram"]["value"].get<double>(), 2.95e12);
  EXPECT_TRUE(j["unmeasured"]["fp8_tc"].is_string());

  const Ceilings back = ceilings_from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.measured, false);
  ASSERT_EQ(back.measured_compute.size(), 2u);
  for (const auto& [k, v] : c.measured_compute) {
    EXPECT_EQ(back.measured_compute.at(k).value, v.value) << k;
    EXPECT_EQ(back.measured_compute.at(k).source, v.source) << k;
  }
  EXPECT_EQ(back.measured_memory.at("dram").value, 2.95e12);
  EXPECT_EQ(back.unmeasured, c.unmeasured);
  EXPECT_EQ(back.compute.at("fp32").value, 66.9e12);
}

TEST(CeilingsMeasured, DocumentsWithoutMeasuredFiguresStillParseAndBadOnesAreRejected) {
  nlohmann::json j = to_json(datasheet());
  j.erase("measured_compute");
  j.erase("measured_memory");
  j.erase("unmeasured");
  const Ceilings old = ceilings_from_json(j);  // written before measured figures existed
  EXPECT_TRUE(old.measured_compute.empty());
  EXPECT_TRUE(old.measured_memory.empty());
  EXPECT_TRUE(old.unmeasured.empty());

  j = to_json(with_measurement(datasheet(), measurement()));
  j["measured_compute"]["bf16_tc"]["value"] = -1;
  EXPECT_THROW(ceilings_from_json(j), std::runtime_error);
  j = to_json(with_measurement(datasheet(), measurement()));
  j["measured_memory"] = 3;
  EXPECT_THROW(ceilings_from_json(j), std::runtime_error);
  j = to_json(with_measurement(datasheet(), measurement()));
  j["unmeasured"]["fp8_tc"] = 7;
  EXPECT_THROW(ceilings_from_json(j), std::runtime_error);
  j = to_json(with_measurement(datasheet(), measurement()));
  j["unmeasured"]["fp8_tc"] = "";
  EXPECT_THROW(ceilings_from_json(j), std::runtime_error);
}

TEST(CeilingsMeasured, FailedReasonsAreTransient) {
  Ceilings m = measurement();
  EXPECT_FALSE(measurement_failed_somewhere(m));  // "not on this GPU" is a property of the GPU
  m.unmeasured["fp64_tc"] = "failed: cudaMalloc of 512 MiB for GEMM A failed with cudaErrorMemoryAllocation";
  EXPECT_TRUE(measurement_failed_somewhere(m));
}

TEST(CeilingsCache, DeviceCacheFileLivesUnderCeilingsOfTheCacheDir) {
  TempDir dir;
  ScopedEnv env("KBENCH_CACHE_DIR", dir.path().string());
  const auto f = device_ceilings_cache_file("cuda-GPU-0123abcd-driver13000");
  EXPECT_EQ(f, dir.path() / "ceilings" / "cuda-GPU-0123abcd-driver13000.json");
  // Characters that are unsafe in a file name are replaced; the result stays inside ceilings/.
  const auto g = device_ceilings_cache_file("../x/y z");
  EXPECT_EQ(g.parent_path(), dir.path() / "ceilings");
  EXPECT_EQ(g.filename().string().find('/'), std::string::npos);
  EXPECT_NE(g.filename().string()[0], '.');
}

TEST(CeilingsCache, RoundTripRefreshCorruptionForeignKeyAndNoMeasureOnMiss) {
  TempDir dir;
  ScopedEnv env("KBENCH_CACHE_DIR", dir.path().string());
  const auto file = device_ceilings_cache_file("cuda-GPU-test-driver13000");
  const std::string key = "GPU-test | Test GPU | CUDA driver 13000 | v1";
  int calls = 0;
  double bf16 = 812.3e12;
  auto measure = [&] {
    ++calls;
    return measurement(bf16);
  };

  // measure = false on a miss (what `kbench eval` asks for): nothing is measured, nothing written.
  EXPECT_FALSE(cached_measurement(file, key, false, false, measure).has_value());
  EXPECT_FALSE(cached_measurement(file, key, /*refresh=*/true, false, measure).has_value());
  EXPECT_EQ(calls, 0);
  EXPECT_FALSE(std::filesystem::exists(file));

  // Miss with measure: measured once, written (creating ceilings/), returned.
  auto m = cached_measurement(file, key, false, true, measure);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(m->measured);
  ASSERT_TRUE(std::filesystem::exists(file));
  EXPECT_EQ(m->compute.at("bf16_tc").value, 812.3e12);

  // Hit, with and without measure: from the file, not measured again.
  bf16 = 700e12;
  for (bool may_measure : {true, false}) {
    auto hit = cached_measurement(file, key, false, may_measure, measure);
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(hit->compute.at("bf16_tc").value, 812.3e12);
    EXPECT_EQ(hit->compute.at("bf16_tc").source, "measured: cuBLASLt 8192^3 bf16->fp32");
    EXPECT_EQ(hit->memory.at("dram").value, 2.95e12);
    EXPECT_EQ(hit->unmeasured, measurement().unmeasured);
  }
  // The file is the documented form: {format, machine_key, measured_at, ceilings}.
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(file));
  EXPECT_EQ(doc["machine_key"], key);
  EXPECT_TRUE(doc["measured_at"].is_string());
  EXPECT_EQ(doc["ceilings"]["compute"]["bf16_tc"]["value"].get<double>(), 812.3e12);

  // Refresh: measured again and rewritten.
  auto refreshed = cached_measurement(file, key, true, true, measure);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(refreshed->compute.at("bf16_tc").value, 700e12);
  EXPECT_EQ(read_ceilings_cache(file, key)->compute.at("bf16_tc").value, 700e12);

  // Another GPU or driver (another key): a miss, re-measured and replaced.
  bf16 = 650e12;
  EXPECT_FALSE(read_ceilings_cache(file, key + " other").has_value());
  auto other = cached_measurement(file, key + " other", false, true, measure);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(other->compute.at("bf16_tc").value, 650e12);

  // Corrupt (truncated) file: a miss; with measure it is re-measured and rewritten whole.
  std::ofstream(file, std::ios::trunc) << "{ \"format\": 1, \"machine_key\": \"" << key << "\", \"ceilings\": {";
  EXPECT_FALSE(cached_measurement(file, key, false, false, measure).has_value());
  EXPECT_EQ(calls, 3);
  bf16 = 640e12;
  auto healed = cached_measurement(file, key, false, true, measure);
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(healed->compute.at("bf16_tc").value, 640e12);
  EXPECT_EQ(read_ceilings_cache(file, key)->compute.at("bf16_tc").value, 640e12);
  // No temporary files left beside the cache.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(file.parent_path())) {
    ++files;
    EXPECT_EQ(e.path(), file);
  }
  EXPECT_EQ(files, 1);
}

// The launch floor through the cache (what the cuda target's `kbench ceilings` does): measured with
// a fresh measurement, added to a cached one that lacks it without measuring the rest again, never
// measured when measuring is not allowed, and a failed floor is returned but not cached.
TEST(CeilingsCache, TheLaunchFloorIsMeasuredWithTheCeilingsAndAddedToACacheWithoutOne) {
  TempDir dir;
  ScopedEnv env("KBENCH_CACHE_DIR", dir.path().string());
  const auto file = device_ceilings_cache_file("cuda-GPU-floor-driver13000");
  const std::string key = "GPU-floor | Test GPU | CUDA driver 13000 | v1";
  int measured = 0, floors = 0;
  auto measure = [&] {
    ++measured;
    return measurement();
  };
  auto floor = [&] {
    ++floors;
    return Ceiling{2.5e-6, "measured: test floor"};
  };

  // A cache written before the floor existed: eval (measure = false) reads it without a floor.
  ASSERT_TRUE(write_ceilings_cache(file, key, measurement(700e12)));
  auto m = cached_measurement(file, key, false, /*measure=*/false, measure, floor);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->launch_floor);
  EXPECT_EQ(floors, 0);
  // `kbench ceilings`: the floor is added, the cached figures kept, and the file rewritten with it.
  m = cached_measurement(file, key, false, true, measure, floor);
  ASSERT_TRUE(m && m->launch_floor);
  EXPECT_EQ(m->launch_floor->value, 2.5e-6);
  EXPECT_EQ(m->compute.at("bf16_tc").value, 700e12);
  EXPECT_EQ(measured, 0);
  EXPECT_EQ(floors, 1);
  auto read = read_ceilings_cache(file, key);
  ASSERT_TRUE(read && read->launch_floor);
  EXPECT_EQ(read->launch_floor->value, 2.5e-6);
  // Now a hit: neither measured again, and eval gets the floor too.
  for (bool may_measure : {true, false}) {
    m = cached_measurement(file, key, false, may_measure, measure, floor);
    ASSERT_TRUE(m && m->launch_floor);
  }
  EXPECT_EQ(measured, 0);
  EXPECT_EQ(floors, 1);
  // Refresh: both measured, one write.
  m = cached_measurement(file, key, /*refresh=*/true, true, measure, floor);
  EXPECT_EQ(measured, 1);
  EXPECT_EQ(floors, 2);
  EXPECT_EQ(read_ceilings_cache(file, key)->compute.at("bf16_tc").value, 812.3e12);

  // A floor that fails: returned with its reason, not cached (the old file stays).
  ASSERT_TRUE(write_ceilings_cache(file, key, measurement(700e12)));
  m = cached_measurement(file, key, false, true, measure, [] () -> Ceiling { throw std::runtime_error("no device"); });
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->launch_floor);
  EXPECT_EQ(m->unmeasured.at("launch_floor"), "failed: no device");
  EXPECT_FALSE(read_ceilings_cache(file, key)->launch_floor);
}

TEST(CeilingsCache, AMeasurementWithAFailureIsReturnedButNotCached) {
  TempDir dir;
  ScopedEnv env("KBENCH_CACHE_DIR", dir.path().string());
  const auto file = device_ceilings_cache_file("cuda-GPU-test-driver13000");
  int calls = 0;
  auto failing = [&] {
    ++calls;
    Ceilings m = measurement();
    m.unmeasured["fp64_tc"] = "failed: out of memory";
    return m;
  };
  auto m = cached_measurement(file, "k", false, true, failing);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->unmeasured.at("fp64_tc"), "failed: out of memory");
  EXPECT_FALSE(std::filesystem::exists(file));
  cached_measurement(file, "k", false, true, failing);
  EXPECT_EQ(calls, 2);  // tried again, since the failure may not recur
}

TEST(CeilingsCache, UnwritableCacheDirectoryStillReturnsTheMeasurement) {
  TempDir dir;
  std::filesystem::create_directories(dir.path());
  std::ofstream(dir.path() / "not-a-dir") << "x";
  ScopedEnv env("KBENCH_CACHE_DIR", (dir.path() / "not-a-dir").string());
  auto m = cached_measurement(device_ceilings_cache_file("cuda-x"), "k", false, true, [] { return measurement(); });
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->memory.at("dram").value, 2.95e12);
}

#ifdef KBENCH_WITH_CUDA
TEST(CudaCeilings, CublasLtLoadsOnDemandWithEveryFunctionTheGemmsUse) {
  // kbench does not link cuBLASLt; the GEMM measurements dlopen the build's major version.
  std::string lib;
  ASSERT_NO_THROW(lib = cublaslt_library());
  EXPECT_NE(lib.find("libcublasLt.so."), std::string::npos) << lib;
  EXPECT_NE(lib.find("version "), std::string::npos) << lib;
}

TEST(CudaCeilingsCache, KeyedOnUuidAndDriverVersion) {
  TempDir dir;
  ScopedEnv env("KBENCH_CACHE_DIR", dir.path().string());
  const unsigned char bytes[16] = {0x8e, 0x2f, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
                                   0xcd, 0xef, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55};
  const std::string uuid = format_cuda_uuid(bytes);
  EXPECT_EQ(uuid, "GPU-8e2f0123-4567-89ab-cdef-001122334455");  // as nvidia-smi -L prints it
  const CudaDeviceIdentity a{uuid, "NVIDIA H100 80GB HBM3", 13000};
  CudaDeviceIdentity newer_driver = a;
  newer_driver.driver_version = 13010;
  CudaDeviceIdentity other_gpu = a;
  other_gpu.uuid = "GPU-00000000-0000-0000-0000-000000000000";
  EXPECT_EQ(cuda_ceilings_cache_file(a), dir.path() / "ceilings" / ("cuda-" + uuid + "-driver13000.json"));
  EXPECT_NE(cuda_ceilings_cache_file(a), cuda_ceilings_cache_file(newer_driver));
  EXPECT_NE(cuda_ceilings_cache_file(a), cuda_ceilings_cache_file(other_gpu));
  EXPECT_NE(cuda_ceilings_cache_key(a), cuda_ceilings_cache_key(newer_driver));
  EXPECT_NE(cuda_ceilings_cache_key(a), cuda_ceilings_cache_key(other_gpu));
  EXPECT_NE(cuda_ceilings_cache_key(a).find(uuid), std::string::npos);

  // A measurement cached for one driver is not served for the next.
  ASSERT_TRUE(write_ceilings_cache(cuda_ceilings_cache_file(a), cuda_ceilings_cache_key(a), measurement()));
  EXPECT_TRUE(read_ceilings_cache(cuda_ceilings_cache_file(a), cuda_ceilings_cache_key(a)).has_value());
  EXPECT_FALSE(read_ceilings_cache(cuda_ceilings_cache_file(newer_driver), cuda_ceilings_cache_key(newer_driver)));
  EXPECT_FALSE(read_ceilings_cache(cuda_ceilings_cache_file(a), cuda_ceilings_cache_key(newer_driver)));
}
#endif

}  // namespace
}  // namespace kb
