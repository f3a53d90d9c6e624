// The launch floor (target/launch_floor.h) and the achievable fraction it gives (eval/roofline.h):
// the arithmetic on hand-computed points, the measurement's method on a scripted device, a real
// measurement on the host, and its caching with the host ceilings.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/roofline.h"
#include "target/ceilings.h"
#include "target/launch_floor.h"
#include "target/target.h"
#include "test_support.h"

namespace kb {
namespace {

// --- The achievable fraction ---------------------------------------------------------------

// A softmax of 64 x 1024 floats: 512 KiB in and out (1,048,576 bytes), 5 FLOP per element
// (327,680), timed at 5 us on a device of 1000 TFLOP/s and 3 TB/s with a 2.5 us floor.
// Memory time 1048576 / 3e12 = 0.35 us, compute time 0.33 ns: the floor (2.5 us) is the achievable
// time, so achievable = 2.5 / 5 = 0.5 while SoL = 0.35 / 5 = 0.07.
TEST(AchievableFraction, TheFloorBoundsATinyShape) {
  const RooflinePoint p = with_launch_floor(roofline(327680, 1048576, 5e-6, Regime::memory, 1000e12, 3e12), 2.5e-6);
  EXPECT_NEAR(p.sol_fraction, 1048576 / 3e12 / 5e-6, 1e-12);
  ASSERT_TRUE(p.achievable_fraction);
  EXPECT_DOUBLE_EQ(*p.achievable_fraction, 0.5);
  EXPECT_EQ(p.launch_floor_seconds, 2.5e-6);
  // The headline fractions are untouched by the floor.
  EXPECT_DOUBLE_EQ(p.peak_fraction, p.memory_fraction);
}

// A large copy: 6e9 bytes in 2.5 ms at 3 TB/s is memory time 2 ms, far above the floor, so the
// achievable fraction is the speed-of-light one (0.8).
TEST(AchievableFraction, ALargeShapeIsItsSpeedOfLight) {
  const RooflinePoint p = with_launch_floor(roofline(1e9, 6e9, 2.5e-3, Regime::memory, 1000e12, 3e12), 2.5e-6);
  ASSERT_TRUE(p.achievable_fraction);
  EXPECT_DOUBLE_EQ(*p.achievable_fraction, p.sol_fraction);
  EXPECT_DOUBLE_EQ(*p.achievable_fraction, 0.8);
}

// The compute time counts as well: 2e12 FLOP at 1000 TFLOP/s is 2 ms, over 4 ms timed: 0.5.
TEST(AchievableFraction, ComputeTimeCountsToo) {
  const RooflinePoint p = with_launch_floor(roofline(2e12, 1e6, 4e-3, Regime::compute, 1000e12, 3e12), 2.5e-6);
  EXPECT_DOUBLE_EQ(*p.achievable_fraction, 0.5);
}

// A kernel timed exactly at the floor scores 1.0; one timed below it (the floor's own noise) a
// little more, reported as it is.
TEST(AchievableFraction, AtTheFloorItIsOne) {
  EXPECT_DOUBLE_EQ(*with_launch_floor(roofline(1, 64, 2.5e-6, Regime::memory, 1e12, 1e12), 2.5e-6).achievable_fraction, 1.0);
  EXPECT_DOUBLE_EQ(*with_launch_floor(roofline(1, 64, 2.0e-6, Regime::memory, 1e12, 1e12), 2.5e-6).achievable_fraction, 1.25);
}

TEST(AchievableFraction, WithoutAFloorThereIsNone) {
  const RooflinePoint p = roofline(1e9, 6e9, 2.5e-3, Regime::memory, 1000e12, 3e12);
  EXPECT_FALSE(p.achievable_fraction);
  EXPECT_FALSE(p.launch_floor_seconds);
}

TEST(AchievableFraction, ABadFloorIsRejectedNamingIt) {
  const RooflinePoint p = roofline(1e9, 6e9, 2.5e-3, Regime::memory, 1000e12, 3e12);
  for (double bad : {0.0, -1e-6, double(NAN), double(INFINITY)}) {
    try {
      with_launch_floor(p, bad);
      ADD_FAILURE() << "accepted a floor of " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("launch floor"), std::string::npos) << e.what();
    }
  }
}

// --- The floor of a list of samples ----------------------------------------------------------

TEST(LaunchFloor, IsTheMedianOfItsSamples) {
  EXPECT_DOUBLE_EQ(launch_floor_of({3e-6, 1e-6, 2e-6}), 2e-6);
  EXPECT_DOUBLE_EQ(launch_floor_of({1e-6, 2e-6, 3e-6, 40e-6}), 2.5e-6);  // a slow outlier moves it little
  EXPECT_THROW(launch_floor_of({}), std::invalid_argument);
  EXPECT_THROW(launch_floor_of({1e-6, -1e-6}), std::invalid_argument);
  EXPECT_THROW(launch_floor_of({1e-6, NAN}), std::invalid_argument);
}

// --- The measurement's method, on a scripted device -------------------------------------------

// A device whose timer and work attribution are scripted: each timed call reads the next event
// time, and its collected work is one kernel of the next span (or none). It records the order of
// what the measurement did, to check that every timed call comes after a cache flush and inside a
// marked call, as the worker times a solution.
class ScriptedDevice final : public Device {
 public:
  std::deque<double> events, spans;  // seconds; a span <= 0 means "no work recorded"
  std::string log;                   // f = flush, T = timed call, E = launch_empty, [ ] = call marks
  bool monitor_started = false;
  bool attributes = true;            // false: a target without work attribution (collect -> nullopt)
  size_t empty_launches = 0;

  std::string description() const override { return "scripted"; }
  DLDevice dl_device() const override { return DLDevice{kDLCPU, 0}; }
  void* alloc(size_t) override { return nullptr; }
  void release(void*) override {}
  void upload(void*, const void*, size_t) override {}
  void download(void*, const void*, size_t) override {}
  void copy(void*, const void*, size_t) override {}
  void fill_pattern(void*, size_t, uint64_t, int) override {}
  uint64_t hash(const void*, size_t, uint64_t) override { return 0; }
  void* stream() override { return nullptr; }
  void synchronize() override {}
  void flush_cache() override { log += 'f'; }
  int launch_empty() override {
    ++empty_launches;
    log += 'E';
    return 0;
  }
  void start_work_monitor() override { monitor_started = true; }
  void mark_call(bool inside) override { log += inside ? '[' : ']'; }
  std::optional<std::vector<GpuWork>> collect_work() override {
    if (!attributes) return std::nullopt;
    if (!timed_since_collect_) return std::vector<GpuWork>{};
    timed_since_collect_ = false;
    const double span = spans.front();
    spans.pop_front();
    if (span <= 0) return std::vector<GpuWork>{};
    GpuWork w;
    w.name = "kb_launch_floor_kernel";
    w.start_ns = 1000;
    w.end_ns = 1000 + static_cast<uint64_t>(std::llround(span * 1e9));
    return std::vector<GpuWork>{w};
  }
  TimedCall time_call(const std::function<int()>& call, int* rc) override {
    log += 'T';
    *rc = call();
    timed_since_collect_ = true;
    const double s = events.front();
    events.pop_front();
    return {s, NAN, NAN};
  }
  double time_hot(const std::vector<std::function<int()>>&, int* rc, std::string* mode) override {
    *rc = 0;
    *mode = "loop";
    return 0;
  }

 private:
  bool timed_since_collect_ = false;
};

TEST(LaunchFloor, TimesEmptyCallsAsTheWorkerTimesASolution) {
  ScriptedDevice d;
  // Events of 4 us around kernels whose spans are 2, 3 and 1 us (each within the span agreement
  // of target/call_timing.h), so the samples are the spans: median 2 us.
  d.events = {4e-6, 4e-6, 4e-6};
  d.spans = {2e-6, 3e-6, 1e-6};
  const Ceiling floor = measure_launch_floor(d, 3);
  EXPECT_DOUBLE_EQ(floor.value, 2e-6);
  EXPECT_TRUE(d.monitor_started);
  // Ten untimed calls, then each timed call after a flush, the empty launch inside the call's marks.
  EXPECT_EQ(d.log, "[E][E][E][E][E][E][E][E][E][E]" "fT[E]fT[E]fT[E]");
  EXPECT_EQ(d.empty_launches, 13u);
  EXPECT_NE(floor.source.find("median of 3"), std::string::npos) << floor.source;
  EXPECT_NE(floor.source.find("timed by the activity span of their work;"), std::string::npos) << floor.source;
  EXPECT_TRUE(d.events.empty());
}

// Without work attribution (or with an event interval the span does not explain), the target's
// timer gives the sample, as in the worker.
TEST(LaunchFloor, FallsBackToTheTargetsTimer) {
  ScriptedDevice d;
  d.attributes = false;
  d.events = {5e-6, 7e-6, 6e-6};
  EXPECT_DOUBLE_EQ(measure_launch_floor(d, 3).value, 6e-6);

  ScriptedDevice e;
  e.events = {100e-6, 100e-6, 100e-6};  // 98 us more than the span: not launch overhead
  e.spans = {2e-6, 2e-6, 2e-6};
  const Ceiling floor = measure_launch_floor(e, 3);
  EXPECT_DOUBLE_EQ(floor.value, 100e-6);
  EXPECT_NE(floor.source.find("timed by the target's timer;"), std::string::npos) << floor.source;
}

TEST(LaunchFloor, RejectsNoSamples) {
  ScriptedDevice d;
  EXPECT_THROW(measure_launch_floor(d, 0), std::invalid_argument);
}

// The host target's own device: an empty call is timed in well under a millisecond (a loaded
// machine can stall one call, not the median of many).
TEST(LaunchFloor, OnTheHostItIsTinyAndPositive) {
  auto device = make_target("host")->open_device();
  const Ceiling floor = measure_launch_floor(*device, 21);
  EXPECT_GT(floor.value, 0);
  EXPECT_LT(floor.value, 1e-3);
  EXPECT_NE(floor.source.find("an empty call"), std::string::npos) << floor.source;
}

// --- Caching with the ceilings ----------------------------------------------------------------

TEST(LaunchFloor, CachedWithTheHostCeilingsAndAddedToACacheWithoutOne) {
  testing_support::TempDir dir("floor-cache-test");
  testing_support::ScopedEnv env("KBENCH_CACHE_DIR", dir.path().c_str());
  int measured = 0;
  auto floor_fn = [&] {
    ++measured;
    return Ceiling{1.5e-6 * measured, "scripted"};
  };
  // A cache written without a floor (as kbench wrote it before the floor existed).
  const Ceilings before = host_ceilings(/*refresh=*/false);
  EXPECT_FALSE(before.launch_floor);
  std::filesystem::path file;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) file = e.path();
  ASSERT_FALSE(file.empty());
  // A sentinel in the cached ceilings: adding the floor must keep them, not measure them again.
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(file));
  doc["ceilings"]["compute"]["fp32"]["value"] = 12345.0;
  std::ofstream(file, std::ios::trunc) << doc.dump();

  const Ceilings with_floor = host_ceilings(false, floor_fn);
  EXPECT_EQ(measured, 1);
  ASSERT_TRUE(with_floor.launch_floor);
  EXPECT_DOUBLE_EQ(with_floor.launch_floor->value, 1.5e-6);
  EXPECT_EQ(with_floor.compute_peak("fp32").value, 12345.0);

  // Now cached: read back without measuring.
  const Ceilings hit = host_ceilings(false, floor_fn);
  EXPECT_EQ(measured, 1);
  ASSERT_TRUE(hit.launch_floor);
  EXPECT_DOUBLE_EQ(hit.launch_floor->value, 1.5e-6);
  EXPECT_EQ(hit.launch_floor->source, "scripted");

  // --refresh measures everything again, the floor included.
  const Ceilings refreshed = host_ceilings(/*refresh=*/true, floor_fn);
  EXPECT_EQ(measured, 2);
  EXPECT_DOUBLE_EQ(refreshed.launch_floor->value, 3e-6);
  EXPECT_NE(refreshed.compute_peak("fp32").value, 12345.0);
}

// The host target's ceilings carry a real floor.
TEST(LaunchFloor, TheHostTargetsCeilingsHaveOne) {
  testing_support::TempDir dir("floor-target-test");
  testing_support::ScopedEnv env("KBENCH_CACHE_DIR", dir.path().c_str());
  const Ceilings c = make_target("host")->ceilings({}, false, false);
  ASSERT_TRUE(c.launch_floor);
  EXPECT_GT(c.launch_floor->value, 0);
  EXPECT_LT(c.launch_floor->value, 1e-3);
}

TEST(LaunchFloor, JsonRoundTripsAndBadFloorsAreRejected) {
  Ceilings c;
  c.id = "x";
  c.name = "X";
  c.measured = true;
  c.compute["fp32"] = {1e12, "s"};
  c.memory["dram"] = {1e11, "s"};
  c.launch_floor = Ceiling{2.25e-6, "measured: test"};
  const Ceilings back = ceilings_from_json(to_json(c));
  ASSERT_TRUE(back.launch_floor);
  EXPECT_EQ(back.launch_floor->value, 2.25e-6);
  EXPECT_EQ(back.launch_floor->source, "measured: test");
  EXPECT_EQ(to_json(back), to_json(c));
  // Without a floor: null, and documents that predate the key still parse.
  c.launch_floor.reset();
  nlohmann::json j = to_json(c);
  EXPECT_TRUE(j.at("launch_floor").is_null());
  j.erase("launch_floor");
  EXPECT_FALSE(ceilings_from_json(j).launch_floor);
  for (const nlohmann::json& bad : {nlohmann::json{{"value", -1.0}, {"source", "s"}}, nlohmann::json{{"value", 1e-6}},
                                    nlohmann::json("2 us")}) {
    j["launch_floor"] = bad;
    try {
      ceilings_from_json(j);
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("launch_floor"), std::string::npos) << e.what();
    }
  }
  // with_measurement carries the measurement's floor onto a datasheet.
  Ceilings sheet = c;
  Ceilings m = c;
  m.launch_floor = Ceiling{3e-6, "measured"};
  EXPECT_DOUBLE_EQ(with_measurement(sheet, m).launch_floor->value, 3e-6);
}

}  // namespace
}  // namespace kb
