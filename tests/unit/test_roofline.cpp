// roofline() and physics_violation() on hand-computed points.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "eval/roofline.h"

namespace kb {
namespace {

Ceilings test_gpu() {
  Ceilings c;
  c.id = "test_gpu";
  c.name = "Test GPU";
  c.compute["bf16_tc"] = {1000e12, "test"};
  c.compute["fp32"] = {60e12, "test"};
  c.memory["dram"] = {2.75e12, "test"};
  return c;
}

TEST(Roofline, MemoryBoundPoint) {
  // A bf16 vector add of 1e9 elements: 1e9 FLOP, 6e9 bytes (two reads, one write), in 2.5 ms.
  const RooflinePoint p = roofline(1e9, 6e9, 2.5e-3, Regime::memory, 1000e12, 3e12);
  EXPECT_DOUBLE_EQ(p.flops_per_s, 4e11);
  EXPECT_DOUBLE_EQ(p.bytes_per_s, 2.4e12);
  EXPECT_DOUBLE_EQ(p.memory_fraction, 0.8);         // 2.4 / 3
  EXPECT_DOUBLE_EQ(p.compute_fraction, 4e-4);       // 0.4 / 1000
  EXPECT_DOUBLE_EQ(p.peak_fraction, 0.8);           // the declared regime: memory
  EXPECT_DOUBLE_EQ(p.sol_fraction, 0.8);            // max of the two
  EXPECT_DOUBLE_EQ(p.compute_peak, 1000e12);
  EXPECT_DOUBLE_EQ(p.memory_peak, 3e12);
  EXPECT_EQ(p.flops, 1e9);
  EXPECT_EQ(p.bytes, 6e9);
  EXPECT_EQ(p.seconds, 2.5e-3);
}

TEST(Roofline, ComputeBoundPoint) {
  // A 4096^3 GEMM: 2*4096^3 = 137438953472 FLOP; bf16 A, B, C: 3*4096^2*2 = 100663296 bytes; 0.2 ms.
  const double flops = 2.0 * 4096.0 * 4096.0 * 4096.0, bytes = 3.0 * 4096 * 4096 * 2;
  const RooflinePoint p = roofline(flops, bytes, 2e-4, Regime::compute, 1000e12, 4e12);
  EXPECT_DOUBLE_EQ(p.flops_per_s, 687194767360000.0);  // 6.87e14
  EXPECT_NEAR(p.compute_fraction, 0.68719476736, 1e-12);
  EXPECT_NEAR(p.memory_fraction, 503316480000.0 / 4e12, 1e-12);  // 0.1258
  EXPECT_DOUBLE_EQ(p.peak_fraction, p.compute_fraction);
  EXPECT_DOUBLE_EQ(p.sol_fraction, p.compute_fraction);
}

TEST(Roofline, SpeedOfLightIsTheLargerFractionWhateverTheRegime) {
  // 5e14 FLOP/s of 1e15 = 0.5; 1e12 B/s of 4e12 = 0.25. Declared memory-bound, it scores 0.25 on its
  // regime but 0.5 speed-of-light: it is limited by compute, not memory.
  const RooflinePoint p = roofline(5e11, 1e9, 1e-3, Regime::memory, 1e15, 4e12);
  EXPECT_DOUBLE_EQ(p.compute_fraction, 0.5);
  EXPECT_DOUBLE_EQ(p.memory_fraction, 0.25);
  EXPECT_DOUBLE_EQ(p.peak_fraction, 0.25);
  EXPECT_DOUBLE_EQ(p.sol_fraction, 0.5);
}

TEST(Roofline, PeaksByKeyFromCeilings) {
  const RooflinePoint p = roofline(0, 2.75e9, 1e-3, Regime::memory, test_gpu(), "bf16_tc", "dram");
  EXPECT_DOUBLE_EQ(p.memory_fraction, 1.0);
  EXPECT_DOUBLE_EQ(p.compute_fraction, 0.0);
  EXPECT_EQ(p.compute_key, "bf16_tc");
  EXPECT_EQ(p.memory_key, "dram");
  EXPECT_THROW(roofline(1, 1, 1, Regime::compute, test_gpu(), "fp8_tc", "dram"), std::out_of_range);
  EXPECT_THROW(roofline(1, 1, 1, Regime::compute, test_gpu(), "fp32", "hbm"), std::out_of_range);
}

TEST(Roofline, InvalidArgumentsThrow) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double s : {0.0, -1e-3, nan, inf}) EXPECT_THROW(roofline(1, 1, s, Regime::memory, 1, 1), std::invalid_argument) << s;
  for (double pk : {0.0, -1.0, nan, inf}) {
    EXPECT_THROW(roofline(1, 1, 1, Regime::memory, pk, 1), std::invalid_argument) << pk;
    EXPECT_THROW(roofline(1, 1, 1, Regime::memory, 1, pk), std::invalid_argument) << pk;
  }
  EXPECT_THROW(roofline(-1, 1, 1, Regime::compute, 1, 1), std::invalid_argument);
  EXPECT_THROW(roofline(1, -1, 1, Regime::compute, 1, 1), std::invalid_argument);
  EXPECT_THROW(roofline(nan, 1, 1, Regime::compute, 1, 1), std::invalid_argument);
  EXPECT_NO_THROW(roofline(0, 0, 1, Regime::compute, 1, 1));  // zero work is a valid (useless) point
}

TEST(PhysicsViolation, FiresAboveTheCeilingWithANamedMessage) {
  // 3.1 TB/s on a 2.75 TB/s part: 1.127x.
  const RooflinePoint p = roofline(0, 3.1e9, 1e-3, Regime::memory, test_gpu(), "bf16_tc", "dram");
  const auto msg = physics_violation(p, 1.0);
  ASSERT_TRUE(msg.has_value());
  EXPECT_EQ(*msg,
            "achieved 3.1 TB/s is 1.13x the dram ceiling of 2.75 TB/s: faster than physics allows; "
            "the timing or the solution is suspect");
  EXPECT_TRUE(physics_violation(p, 1.10).has_value());
  EXPECT_NE(physics_violation(p, 1.10)->find("allowed up to 1.10x"), std::string::npos);
  EXPECT_FALSE(physics_violation(p, 1.15).has_value());  // within the slack given to measured ceilings
}

// Written bytes a write-back cache holds past the end of the call need not have crossed DRAM in its
// time (a 24 MiB copy on a GPU with a 50 MiB L2 "ran" at 1.06x DRAM on an H100): only the rest is
// evidence, and a point too fast even for that rest is still impossible.
TEST(PhysicsViolation, WritesAWriteBackCacheCanHoldAreNotEvidence) {
  const Ceilings gpu = test_gpu();
  // 3.1 GB in 1 ms on a 2.75 TB/s part, of which 1 GB are writes that fit the cache: 2.1 TB/s crossed.
  const RooflinePoint p = roofline(0, 3.1e9, 1e-3, Regime::memory, gpu, "bf16_tc", "dram");
  EXPECT_TRUE(physics_violation(p, 1.0, 0).has_value());
  EXPECT_FALSE(physics_violation(p, 1.0, 1e9).has_value());
  // 4 GB in 1 ms with the same 1 GB held: 3 TB/s must still have crossed, 1.09x.
  const auto msg = physics_violation(roofline(0, 4e9, 1e-3, Regime::memory, gpu, "bf16_tc", "dram"), 1.0, 1e9);
  ASSERT_TRUE(msg.has_value());
  EXPECT_NE(msg->find("achieved 3 TB/s is 1.09x the dram ceiling"), std::string::npos) << *msg;
  EXPECT_NE(msg->find("beyond the 1 GB of writes a write-back cache can hold"), std::string::npos) << *msg;
  // More held than moved: nothing had to cross, nothing is impossible on the memory side.
  EXPECT_FALSE(physics_violation(roofline(0, 1e9, 1e-6, Regime::memory, gpu, "bf16_tc", "dram"), 1.0, 2e9));
  EXPECT_THROW(physics_violation(p, 1.0, -1), std::invalid_argument);
}

TEST(PhysicsViolation, SilentAtOrBelowTheCeiling) {
  const Ceilings gpu = test_gpu();
  EXPECT_FALSE(physics_violation(roofline(0, 2.75e9, 1e-3, Regime::memory, gpu, "bf16_tc", "dram"), 1.0));  // exactly 1.0
  EXPECT_FALSE(physics_violation(roofline(0, 2.7e9, 1e-3, Regime::memory, gpu, "bf16_tc", "dram"), 1.0));
  EXPECT_FALSE(physics_violation(roofline(9.9e11, 1e6, 1e-3, Regime::compute, gpu, "bf16_tc", "dram"), 1.0));
}

TEST(PhysicsViolation, ComputeAndBothCeilings) {
  const Ceilings gpu = test_gpu();
  // 1.2e15 FLOP/s on a 1000 TFLOP/s bf16 ceiling.
  auto msg = physics_violation(roofline(1.2e12, 1e6, 1e-3, Regime::compute, gpu, "bf16_tc", "dram"), 1.0);
  ASSERT_TRUE(msg);
  EXPECT_NE(msg->find("achieved 1.2 PFLOP/s is 1.20x the bf16_tc ceiling of 1 PFLOP/s"), std::string::npos)
      << *msg;
  // Both exceeded: both named.
  msg = physics_violation(roofline(1.2e12, 3e9, 1e-3, Regime::compute, gpu, "bf16_tc", "dram"), 1.0);
  ASSERT_TRUE(msg);
  EXPECT_NE(msg->find("dram"), std::string::npos) << *msg;
  EXPECT_NE(msg->find("bf16_tc"), std::string::npos) << *msg;
  // Barely over: the ratio is printed with enough digits not to read "1.00x".
  msg = physics_violation(roofline(0, 2.7503e9, 1e-3, Regime::memory, gpu, "bf16_tc", "dram"), 1.0);
  ASSERT_TRUE(msg);
  EXPECT_NE(msg->find("1.0001x"), std::string::npos) << *msg;
}

TEST(PhysicsViolation, SlackBelowOneIsRejected) {
  const RooflinePoint p = roofline(1, 1, 1, Regime::memory, 1, 1);
  EXPECT_THROW(physics_violation(p, 0.9), std::invalid_argument);
  EXPECT_THROW(physics_violation(p, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

}  // namespace
}  // namespace kb
