#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <random>
#include <thread>

#include "core/stats.h"
#include "eval/timing.h"
#include "protocol/channel.h"
#include "worker/sampling.h"

namespace kb {
namespace {

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    r = fds[0];
    w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
};

TEST(Protocol, HeaderAndPayloadRoundTrip) {
  Pipe p;
  std::vector<std::byte> payload(100000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::byte>(i * 7);
  std::thread writer([&] { send_message(p.w, {{"op", "check"}, {"seed", 42}}, payload.data(), payload.size()); });
  Message m = receive_message(p.r, std::chrono::seconds(5));
  writer.join();
  EXPECT_EQ(m.header["op"], "check");
  EXPECT_EQ(m.header["seed"], 42);
  EXPECT_EQ(m.payload, payload);
}

TEST(Protocol, TimeoutAndClosedAreDistinguished) {
  Pipe p;
  EXPECT_THROW(receive_message(p.r, std::chrono::milliseconds(50)), ChannelTimeout);
  close(p.w);
  p.w = -1;
  EXPECT_THROW(receive_message(p.r, std::chrono::milliseconds(50)), ChannelClosed);
}

TEST(Protocol, AnAbsurdHeaderLengthIsRejected) {
  Pipe p;
  uint32_t huge = 0xFFFFFFFFu;
  ASSERT_EQ(write(p.w, &huge, sizeof huge), static_cast<ssize_t>(sizeof huge));
  EXPECT_THROW(receive_message(p.r, std::chrono::seconds(1)), std::runtime_error);
}

// A Python solution's launch overhead is its own cost: on cuda it is scored with the steady floor
// (calls back to back with their launches); its cold samples stay behind the blocking kernel, and
// everything else is timed as asked.
TEST(SolutionTimingPolicy, APythonSolutionOnCudaIsScoredWithTheSteadyFloorAndNothingElseChanges) {
  TimingPolicy asked;
  asked.min_samples = 7;
  asked.hot_capture = false;
  const TimingPolicy python_cuda = solution_timing_policy(asked, "cuda", /*python=*/true);
  EXPECT_TRUE(python_cuda.steady_floor);
  EXPECT_TRUE(python_cuda.blocking_kernel);
  EXPECT_EQ(python_cuda.min_samples, 7u);
  EXPECT_FALSE(python_cuda.hot_capture);
  EXPECT_FALSE(solution_timing_policy(asked, "cuda", /*python=*/false).steady_floor);
  // On the host a call's time is the host's already.
  EXPECT_FALSE(solution_timing_policy(asked, "host", /*python=*/true).steady_floor);
  asked.blocking_kernel = false;  // asked off (a profiler): stays off, for Python too
  EXPECT_FALSE(solution_timing_policy(asked, "cuda", /*python=*/true).blocking_kernel);
  asked.steady_floor = true;  // asked on (--steady-floor): on for C++ too
  EXPECT_TRUE(solution_timing_policy(asked, "cuda", /*python=*/false).steady_floor);
  EXPECT_TRUE(timing_policy_from_json(to_json(python_cuda)).steady_floor);
  nlohmann::json old = to_json(asked);
  old.erase("steady_floor");  // a result written before the floor existed
  EXPECT_FALSE(timing_policy_from_json(old).steady_floor);
}

// Each sample is raised to the steady cost where it is below it, and only there.
TEST(SteadyFloor, RaisesTheSamplesBelowTheSteadyCostAndNoOther) {
  EXPECT_EQ(steady_floored({4e-6, 2e-5, 9e-6}, 1e-5), (std::vector<double>{1e-5, 2e-5, 1e-5}));
  EXPECT_EQ(steady_floored({4e-6, 2e-5}, 0), (std::vector<double>{4e-6, 2e-5}));
  EXPECT_TRUE(steady_floored({}, 1e-5).empty());
}

// A batch fills its time at the larger of the GPU's median and the host's time inside a call, within
// its bounds; the host's time where unmeasured (NaN) is left out.
TEST(SteadyFloor, ABatchHasEnoughCallsToFillItsTimeAtTheSlowerOfGpuAndHost) {
  EXPECT_EQ(steady_batch_calls({5e-6, 5e-6, 5e-6}, {1e-4, 1e-4, NAN}), 100u);  // host-bound: 10 ms / 100 us
  EXPECT_EQ(steady_batch_calls({5e-4}, {1e-5}), 20u);                          // GPU-bound: 10 ms / 500 us
  EXPECT_EQ(steady_batch_calls({1e-8}, {}), kSteadyMaxCalls);
  EXPECT_EQ(steady_batch_calls({1.0}, {NAN}), kSteadyMinCalls);
  EXPECT_EQ(steady_batch_calls({}, {}), kSteadyMaxCalls);
}

TimingRecord timed_record(double median, std::vector<double> host_call) {
  TimingRecord t;
  t.samples = {median, median, median};
  t.seconds = summarize(t.samples);
  t.host_call_samples = std::move(host_call);
  return t;
}

// The warm-up-sleep exploit: warm-up calls of 2 ms against timed calls of 5 us, 6 us of them the
// host's: caught. An honest Triton softmax on an H200: warm-up calls of 335 us against a GPU median
// of 2.8 us, but 190 us of host time inside each timed call: the same calls, not caught.
TEST(WarmupCheck, UntimedCallsFarSlowerThanTimedOnesAreCaughtButAPythonCallsHostTimeCounts) {
  const std::vector<double> sleepy(8, 2e-3), python(8, 335e-6);
  const auto caught = warmup_unlike_timed_calls(sleepy, timed_record(5e-6, {6e-6, 6e-6}));
  ASSERT_TRUE(caught);
  EXPECT_NE(caught->find("2000.0 us each (median of 4"), std::string::npos) << *caught;
  EXPECT_FALSE(warmup_unlike_timed_calls(python, timed_record(2.8e-6, {190e-6, 180e-6, NAN})));
  // Without the host's time (a record older than it) the same warm-up reads as different.
  EXPECT_TRUE(warmup_unlike_timed_calls(python, timed_record(2.8e-6, {})));
  // The first half of the warm-up is left out (module loading, lazy initialisation).
  std::vector<double> first_slow(8, 10e-6);
  std::fill(first_slow.begin(), first_slow.begin() + 4, 1.0);
  EXPECT_FALSE(warmup_unlike_timed_calls(first_slow, timed_record(5e-6, {})));
  EXPECT_FALSE(warmup_unlike_timed_calls({1.0, 1.0, 1.0}, timed_record(5e-6, {})));  // too few to judge
}

// The check that fired fails the solution only where kbench had the GPU to itself: beside another
// process's kernels (an H200 run shared by two evaluations) it could not judge.
TEST(WarmupCheck, ASharedGpuIsNoEvidence) {
  EXPECT_EQ(warmup_finding("slow warm-up", GpuSharing::exclusive).reason, Reason::timing_dependent);
  EXPECT_EQ(warmup_finding("slow warm-up", std::nullopt).reason, Reason::timing_dependent);
  const Finding shared = warmup_finding("slow warm-up", GpuSharing::shared);
  EXPECT_EQ(shared.reason, Reason::timing_unconfirmed);
  EXPECT_EQ(shared.verdict(), Verdict::error);
  EXPECT_NE(shared.message.find("slow warm-up; but other processes had a context on the GPU"), std::string::npos)
      << shared.message;
  EXPECT_EQ(warmup_finding("slow warm-up", GpuSharing::unknown).reason, Reason::timing_unconfirmed);
}

TEST(StoppingCriterion, NeedsMinSamplesThenStopsOnLowNoise) {
  TimingPolicy pol;
  pol.min_samples = 30;
  pol.target_rel_stdev = 0.005;
  pol.max_seconds = 100;
  StoppingCriterion stop(pol);
  std::vector<double> s(29, 1.0);
  EXPECT_EQ(stop.should_stop(s, 0.1), "");
  s.push_back(1.0);
  EXPECT_EQ(stop.should_stop(s, 0.1), "noise");
  // 10% noise: keeps going until the time limit
  std::vector<double> noisy;
  for (int i = 0; i < 100; ++i) noisy.push_back(i % 2 ? 1.1 : 0.9);
  EXPECT_EQ(stop.should_stop(noisy, 1.0), "");
  EXPECT_EQ(stop.should_stop(noisy, 100.0), "max_time");
  pol.max_samples = 100;
  EXPECT_EQ(StoppingCriterion(pol).should_stop(noisy, 1.0), "max_samples");
}

// A 5 us kernel with a 3% spread never reaches the 0.5% noise target; its median is known to
// +-0.5% after a few hundred samples: (1.25 x 1.96 x 0.03 / 0.005)^2 ~ 220.
TEST(StoppingCriterion, StopsWhenTheMedianIsKnownThoughTheSpreadStaysWide) {
  TimingPolicy pol;
  pol.max_seconds = 100;
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> timing(std::log(5e-6), 0.03);
  std::vector<double> x;
  for (int i = 0; i < 60; ++i) x.push_back(timing(rng));
  const StoppingCriterion stop(pol);
  EXPECT_EQ(stop.should_stop(x, 1.0), "");  // 60 samples: the interval is still about +-1%
  for (int i = 0; i < 540; ++i) x.push_back(timing(rng));
  ASSERT_GT(summarize(x).rel_stdev, 0.02);  // the spread rule alone would sample to the time limit
  EXPECT_EQ(stop.should_stop(x, 1.0), "median_ci");
  // Not before the minimum time, and never when the rule is off.
  EXPECT_EQ(stop.should_stop(x, 0.01), "");
  pol.target_median_ci = 0;
  EXPECT_EQ(StoppingCriterion(pol).should_stop(x, 1.0), "");
}

TEST(StoppingCriterion, TheTimeLimitStillYieldsOneSample) {
  TimingPolicy pol;
  pol.max_seconds = 0;
  StoppingCriterion stop(pol);
  EXPECT_EQ(stop.should_stop({}, 5.0), "");
  EXPECT_EQ(stop.should_stop({0.5}, 5.0), "max_time");
}

// A call that starts at full clock and pulls the clock down with its own power draw (here, an
// invented 1,420 MHz over the call, 72% of a 1,980 MHz maximum) is the solution's own speed: kept.
// A GPU already slow when the call began is throttled, whatever the call did.
TEST(ThrottledSample, TheClockWhenTheCallBeganDecides) {
  const double max = 1980, threshold = 0.75;
  EXPECT_FALSE(throttled_sample(1975, 1420, max, threshold));  // its own power draw: kept
  EXPECT_TRUE(throttled_sample(1100, 1900, max, threshold));   // slow before the call: discarded
  EXPECT_TRUE(throttled_sample(345, 345, max, threshold));     // idle clocks
  EXPECT_FALSE(throttled_sample(1980, 1980, max, threshold));
}

TEST(ThrottledSample, WithoutAStartClockTheCallsClockDecidesAndWithoutEitherNothingIsDiscarded) {
  EXPECT_TRUE(throttled_sample(NAN, 1420, 1980, 0.75));
  EXPECT_FALSE(throttled_sample(NAN, 1600, 1980, 0.75));
  EXPECT_FALSE(throttled_sample(NAN, NAN, 1980, 0.75));
  EXPECT_FALSE(throttled_sample(1000, 1000, 0, 0.75));  // no maximum known (host)
}

}  // namespace
}  // namespace kb
