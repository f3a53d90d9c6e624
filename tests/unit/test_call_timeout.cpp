// The default call timeout (eval/call_timeout.h): derived from the shape, never below its floor,
// following the baseline's time where it is known, and a fixed --timeout taken as given.
#include <gtest/gtest.h>

#include "deck/problem.h"
#include "eval/call_timeout.h"

namespace kb {
namespace {

Problem problem(const char* id) { return load_problem(std::filesystem::path(KBENCH_SOURCE_DIR) / "problems" / id); }

double seconds(std::chrono::milliseconds ms) { return static_cast<double>(ms.count()) / 1000; }

TEST(CallTimeout, SmallShapesGetTheFloorAndLargeOnesMore) {
  const Problem p = problem("softmax");
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    const CallTimeout t = default_call_timeout(p, i, "cuda", std::nullopt);
    EXPECT_GE(seconds(t.call()), kCallTimeoutFloorSeconds);
    // The deck's softmax shapes are at most 4 MiB of tensors: a hang is judged within a second of the floor.
    EXPECT_LT(seconds(t.call()), kCallTimeoutFloorSeconds + 1) << p.shape_label(i);
  }
  // The largest shape moves 32x the bytes of the smallest: its slack is larger.
  EXPECT_GT(default_call_timeout(p, 3, "cuda", std::nullopt).slack_seconds,
            default_call_timeout(p, 0, "cuda", std::nullopt).slack_seconds);
  // The host's naive rates are slower than the GPU's: more time for the same shape.
  EXPECT_GT(default_call_timeout(p, 3, "host", std::nullopt).slack_seconds,
            default_call_timeout(p, 3, "cuda", std::nullopt).slack_seconds);
}

TEST(CallTimeout, FollowsTheBaselinesTimeWhenKnown) {
  const Problem p = problem("softmax");
  const CallTimeout fast = default_call_timeout(p, 0, "cuda", 5e-6);
  const CallTimeout slow = default_call_timeout(p, 0, "cuda", 0.2);
  // 1000x the baseline's 0.2 s, on top of the floor and kbench's own work.
  EXPECT_GT(seconds(slow.call()), kCallTimeoutFloorSeconds + kBaselineSlowdown * 0.2);
  EXPECT_LT(seconds(fast.call()), seconds(slow.call()));
  // An unusable figure is ignored, not trusted.
  EXPECT_EQ(default_call_timeout(p, 0, "cuda", -1.0).slack_seconds, default_call_timeout(p, 0, "cuda", std::nullopt).slack_seconds);
  EXPECT_EQ(default_call_timeout(p, 0, "cuda", NAN).slack_seconds, default_call_timeout(p, 0, "cuda", std::nullopt).slack_seconds);
}

TEST(CallTimeout, TimingRequestCoversTheSamplingLimitsAndItsCalls) {
  const Problem p = problem("softmax");
  TimingPolicy pol;
  const CallTimeout t = default_call_timeout(p, 3, "cuda", std::nullopt);
  const double bench = seconds(t.bench(pol));
  EXPECT_GE(bench, pol.warmup_seconds + pol.max_seconds + 2 * kCallTimeoutFloorSeconds);
  // A hanging solution's timing request on the deck's softmax ends well within 20 s (issue 18).
  EXPECT_LT(bench, 16.0);
  // A longer sampling limit lengthens it by as much.
  pol.max_seconds += 10;
  EXPECT_NEAR(seconds(t.bench(pol)), bench + 10, 0.01);
  // Repeated calls pay the floor once and the slack per call.
  EXPECT_NEAR(seconds(t.calls(4)), t.floor_seconds + 4 * t.slack_seconds, 0.002);
}

TEST(CallTimeout, FixedTimeoutIsTakenAsGiven) {
  const CallTimeout t = fixed_call_timeout(std::chrono::milliseconds(2500));
  EXPECT_EQ(t.call(), std::chrono::milliseconds(2500));
  EXPECT_EQ(t.calls(4), std::chrono::milliseconds(10000));
  TimingPolicy pol;
  EXPECT_NEAR(seconds(t.bench(pol)), pol.warmup_seconds + pol.max_seconds + 4 * 2.5, 0.002);
}

TEST(CallTimeout, LargeShapesGetTimeForKbenchsOwnWork) {
  // moe_swiglu's largest shape moves gigabytes: kbench's own copying and hashing of them must fit.
  const Problem p = problem("moe_swiglu");
  size_t largest = 0;
  for (size_t i = 0; i < p.shapes.size(); ++i)
    if (shape_tensor_bytes(p, p.shapes[i]) > shape_tensor_bytes(p, p.shapes[largest])) largest = i;
  const double bytes = shape_tensor_bytes(p, p.shapes[largest]);
  EXPECT_GT(bytes, 1e9);
  EXPECT_GE(default_call_timeout(p, largest, "cuda", std::nullopt).slack_seconds, bytes / kOwnWorkBytesPerSecond);
}

}  // namespace
}  // namespace kb
