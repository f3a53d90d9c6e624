// The verdict table's exact text for fixed results (src/report/verdict_table.h), as Google
// Benchmark pins its reporters: every column as wide as its widest value, every rate with its unit
// (a host's 515.01 MFLOP/s and a GPU's 73.01 TFLOP/s alike), nothing cut.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "report/verdict_table.h"

namespace kb {
namespace {

ShapeResult shape(std::string label, bool pass, size_t checks, size_t passed) {
  ShapeResult s;
  s.label = std::move(label);
  s.pass = pass;
  for (size_t i = 0; i < checks; ++i) {
    SeedCheck c;
    c.pass = i < passed;
    s.checks.push_back(c);
  }
  return s;
}

void timed(ShapeResult& s, double median, double iqr, double hot, double flops_per_s, double bytes_per_s, double peak, double sol) {
  TimingRecord t;
  t.seconds.median = median;
  t.seconds.iqr = iqr;
  t.hot_seconds = hot;
  s.timing = t;
  RooflinePoint p;
  p.flops_per_s = flops_per_s;
  p.bytes_per_s = bytes_per_s;
  p.peak_fraction = peak;
  p.sol_fraction = sol;
  s.roofline = p;
}

TEST(VerdictTable, RatesKeepTheirUnitAtAnyMagnitude) {
  EXPECT_EQ(report::rate_text(515.01e6, "FLOP/s"), "515.01 MFLOP/s");
  EXPECT_EQ(report::rate_text(73.01e12, "FLOP/s"), "73.01 TFLOP/s");
  EXPECT_EQ(report::rate_text(3.35e12, "B/s"), "3.35 TB/s");
  EXPECT_EQ(report::rate_text(12.5e3, "B/s"), "12.50 kB/s");
  EXPECT_EQ(report::rate_text(0, "FLOP/s"), "0.00 FLOP/s");
  EXPECT_EQ(report::duration_text(4.2e-6), "4.20 us");
  EXPECT_EQ(report::duration_text(1.2345e-3), "1.234 ms");
  EXPECT_EQ(report::duration_text(2), "2.000 s");
}

// A host run: the FLOP/s column was cut to "515.01 MFLOP" (12 characters) before.
TEST(VerdictTable, HostResult) {
  EvalResult r;
  r.shapes.push_back(shape("batch=32 vocab=4096", true, 3, 3));
  timed(r.shapes.back(), 61.5e-6, 1.23e-6, 40.25e-6, 515.01e6, 17.05e9, 0.1234, 0.1234);
  r.shapes.back().roofline->achievable_fraction = 0.1299;
  r.shapes.push_back(shape("huge range, spikes every 4096", false, 3, 1));
  r.shapes.push_back(shape("a", true, 0, 0));
  EXPECT_EQ(report::verdict_table(r, false),
            "  shape                               check    median  ±iqr       hot          FLOP/s     bytes/s   peak    SoL  achievable\n"
            "  ok   batch=32 vocab=4096            3/3    61.50 us  2.0%  40.25 us  515.01 MFLOP/s  17.05 GB/s  12.3%  12.3%       13.0%\n"
            "  FAIL huge range, spikes every 4096  1/3           -     -         -               -           -      -      -           -\n"
            "  ok   a                              -             -     -         -               -           -      -      -           -\n");
}

// A GPU run with a baseline: "73.01 TFLOP/s" was cut to "73.01 TFLOP/" before; the baseline's
// rows share the columns.
TEST(VerdictTable, GpuResultWithBaseline) {
  EvalResult r;
  r.shapes.push_back(shape("K not a multiple of 16", true, 4, 4));
  timed(r.shapes.back(), 1.883e-3, 0.0113e-3, 1.801e-3, 73.01e12, 42.9e9, 0.0369, 0.0369);
  r.shapes.push_back(shape("skinny M (decode)", true, 4, 4));
  timed(r.shapes.back(), 48.2e-6, 0.9e-6, std::nan(""), 89.1e12, 1.3951e12, 0.045, 0.4164);
  auto b = std::make_shared<EvalResult>();
  b->finding = {};  // passed
  b->shapes.push_back(shape("K not a multiple of 16", true, 4, 4));
  timed(b->shapes.back(), 0.2512e-3, 0, 0.25e-3, 547.3e12, 321.6e9, 0.2766, 0.2766);
  r.baseline = b;
  r.baseline_description = "cuBLASLt FP8 GEMM";
  EXPECT_EQ(report::verdict_table(r, false),
            "  shape                        check     median  ±iqr        hot          FLOP/s      bytes/s   peak    SoL  achievable\n"
            "  ok   K not a multiple of 16  4/4     1.883 ms  0.6%   1.801 ms   73.01 TFLOP/s   42.90 GB/s   3.7%   3.7%           -\n"
            "  ok   skinny M (decode)       4/4     48.20 us  1.9%          -   89.10 TFLOP/s    1.40 TB/s   4.5%  41.6%           -\n"
            "\n"
            "  baseline: cuBLASLt FP8 GEMM (reference line, not scored)\n"
            "  base K not a multiple of 16         251.20 us        250.00 us  547.30 TFLOP/s  321.60 GB/s  27.7%  27.7%           -\n");
}

// A cuda result timed with its launches (a Python solution) says what the host's part of each
// shape's cold median was; a result behind the blocking kernel, or on the host, says nothing.
TEST(VerdictTable, ALaunchTimedResultNamesTheHostsTimePerCall) {
  EvalResult r;
  r.target = "cuda";
  r.timing_policy.blocking_kernel = false;
  r.shapes.push_back(shape("batch=64 vocab=1024", true, 4, 4));
  timed(r.shapes.back(), 237.8e-6, 10e-6, 6.2e-6, 1e9, 2e9, 0.001, 0.001);
  r.shapes.back().timing->host_call_samples = {60e-6, 62e-6, NAN, 58e-6};
  r.shapes.push_back(shape("batch=4 vocab=131072", false, 4, 1));  // failed before timing
  EXPECT_EQ(report::launch_cost_line(r),
            "  launches the host's time inside each timed call, median per shape: 60.00 us, - (in the median: timed "
            "with its launches)\n");
  r.timing_policy.blocking_kernel = true;
  EXPECT_EQ(report::launch_cost_line(r), "");
  r.timing_policy.blocking_kernel = false;
  r.target = "host";
  EXPECT_EQ(report::launch_cost_line(r), "");
  r.target = "cuda";
  r.shapes[0].timing->host_call_samples.clear();  // a record from before kbench measured it
  EXPECT_EQ(report::launch_cost_line(r), "");
}

// A Python solution on cuda: each shape's steady cost per call beside its GPU time, the floor no
// call scores below.
TEST(VerdictTable, ASteadyFlooredResultNamesTheSteadyCostBesideTheGpuTime) {
  EvalResult r;
  r.target = "cuda";
  r.timing_policy.steady_floor = true;
  r.shapes.push_back(shape("batch=64 vocab=1024", true, 4, 4));
  timed(r.shapes.back(), 88e-6, 1e-6, 4.7e-6, 1e9, 2e9, 0.001, 0.001);
  r.shapes.back().timing->steady = SteadyRecord{88e-6, 114, {87e-6, 88e-6, 90e-6}, {87e-6, 88e-6, 90e-6}};
  r.shapes.back().timing->cold_samples = {4.6e-6, 4.7e-6, 4.9e-6};
  r.shapes.push_back(shape("batch=4 vocab=131072", false, 4, 1));  // failed before timing
  EXPECT_EQ(report::launch_cost_line(r),
            "  steady   calls back to back with their launches, per call and shape: 88.00 us (cold 4.70 us), - (no "
            "call scores below it: the steady floor)\n");
  r.timing_policy.steady_floor = false;  // then behind the blocking kernel: no line
  EXPECT_EQ(report::launch_cost_line(r), "");
}

// Painted marks do not shift the columns: the escape sequences wrap the padded mark.
TEST(VerdictTable, ColorPaintsOnlyTheMark) {
  EvalResult r;
  r.shapes.push_back(shape("s", false, 1, 0));
  const std::string plain = report::verdict_table(r, false);
  const std::string painted = report::verdict_table(r, true);
  EXPECT_NE(painted.find("\033[31;1mFAIL\033[0m"), std::string::npos) << painted;
  std::string stripped = painted;
  for (const std::string esc : {"\033[31;1m", "\033[0m"}) stripped.erase(stripped.find(esc), esc.size());
  EXPECT_EQ(stripped, plain);
}

}  // namespace
}  // namespace kb
