// The judgement of attributed GPU work (eval/gpu_work.h) and the choice of a cold sample's time
// between the event interval and the activity span (worker/sampling.h), on synthetic records.
#include <gtest/gtest.h>

#include <cmath>

#include "eval/gpu_work.h"
#include "eval/result.h"
#include "worker/sampling.h"
#include "worker/work_ledger.h"

namespace {

kb::GpuWork kernel(const std::string& name, uint64_t start, uint64_t end) {
  kb::GpuWork w;
  w.name = name;
  w.start_ns = start;
  w.end_ns = end;
  return w;
}

TEST(GpuWork, CleanWorkOfTheSolutionsOwnKernelsPasses) {
  kb::WorkLedger l;
  l.add({kernel("_Z3fooPf", 0, 10), kernel("_Z3barPf", 10, 20)});
  const std::set<std::string> lib{"_Z3fooPf", "_Z3barPf"};
  EXPECT_FALSE(kb::judge_gpu_work(l.to_json("cupti"), &lib, {}).has_value());
}

TEST(GpuWork, OffStreamWorkFailsUnlessLaunchedFromTheDevice) {
  kb::WorkLedger l;
  auto w = kernel("_Z3fooPf", 0, 10);
  w.on_stream = false;
  w.device_launched = true;
  l.add({w});
  EXPECT_FALSE(kb::judge_gpu_work(l.to_json("cupti"), nullptr, {}).has_value()) << "a child grid of the solution's kernel";
  w.device_launched = false;
  l.add({w});
  auto v = kb::judge_gpu_work(l.to_json("cupti"), nullptr, {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->reason, kb::Reason::work_outside_stream);
  EXPECT_NE(v->message.find("_Z3fooPf"), std::string::npos);
}

TEST(GpuWork, WorkFromAnotherThreadFails) {
  kb::WorkLedger l;
  auto w = kernel("late", 0, 10);
  w.in_call = false;
  l.add({w});
  auto v = kb::judge_gpu_work(l.to_json("cupti"), nullptr, {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->reason, kb::Reason::work_outside_stream);
  EXPECT_NE(v->message.find("thread"), std::string::npos);
}

TEST(GpuWork, PersistingL2AccessPolicyFails) {
  kb::WorkLedger l;
  auto w = kernel("_Z3fooPf", 0, 10);
  w.persisting_l2 = true;
  l.add({w});
  auto v = kb::judge_gpu_work(l.to_json("cupti"), nullptr, {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->reason, kb::Reason::l2_persistence);
}

TEST(GpuWork, ForeignKernelFailsUnlessTheProblemAllowsALibrary) {
  kb::WorkLedger l;
  l.add({kernel("_Z3fooPf", 0, 10), kernel("void scal_kernel<float>", 10, 20)});
  const std::set<std::string> lib{"_Z3fooPf"};
  auto v = kb::judge_gpu_work(l.to_json("cupti"), &lib, {});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->reason, kb::Reason::foreign_kernel);
  EXPECT_NE(v->message.find("scal_kernel"), std::string::npos);
  EXPECT_FALSE(kb::judge_gpu_work(l.to_json("cupti"), &lib, {"cublas"}).has_value());
  EXPECT_FALSE(kb::judge_gpu_work(l.to_json("cupti"), nullptr, {}).has_value()) << "names unknown: no provenance check";
}

TEST(GpuWork, CopiesAreNotKernelsForProvenance) {
  kb::WorkLedger l;
  auto c = kernel("memcpy", 0, 10);
  c.kernel = false;
  l.add({c});
  const std::set<std::string> lib{};
  EXPECT_FALSE(kb::judge_gpu_work(l.to_json("cupti"), &lib, {}).has_value());
}

TEST(GpuWork, WithoutTheMonitorNothingIsJudged) {
  kb::WorkLedger l;
  auto w = kernel("x", 0, 10);
  w.on_stream = false;
  l.add({w});
  EXPECT_FALSE(kb::gpu_work_monitored(l.to_json("unavailable: test")));
  EXPECT_FALSE(kb::judge_gpu_work(l.to_json("unavailable: test"), nullptr, {}).has_value());
}

TEST(GpuWork, SpanRunsFromTheFirstStartToTheLastEnd) {
  EXPECT_TRUE(std::isnan(kb::work_span_seconds({})));
  EXPECT_DOUBLE_EQ(kb::work_span_seconds({kernel("a", 1000, 5000), kernel("b", 6000, 9000)}), 8000e-9);
}

TEST(ColdSample, SpanIsUsedWhenItAgreesWithTheEventsUpToTheLaunchOverhead) {
  bool used = false;
  EXPECT_DOUBLE_EQ(kb::cold_sample_seconds(7.8e-6, 5.4e-6, &used), 5.4e-6);
  EXPECT_TRUE(used);
  // Events much longer than the span: something in the stream that is not a kernel.
  EXPECT_DOUBLE_EQ(kb::cold_sample_seconds(50e-6, 6.4e-6, &used), 50e-6);
  EXPECT_FALSE(used);
  // A span longer than the events cannot be right: events stand.
  EXPECT_DOUBLE_EQ(kb::cold_sample_seconds(5e-6, 6e-6, &used), 5e-6);
  EXPECT_FALSE(used);
  EXPECT_DOUBLE_EQ(kb::cold_sample_seconds(5e-6, NAN, &used), 5e-6);
  EXPECT_FALSE(used);
  // Long calls: a quarter of the event time is the allowance.
  EXPECT_DOUBLE_EQ(kb::cold_sample_seconds(1e-3, 0.8e-3, &used), 0.8e-3);
  EXPECT_TRUE(used);
  EXPECT_DOUBLE_EQ(kb::cold_sample_seconds(1e-3, 0.7e-3, &used), 1e-3);
  EXPECT_FALSE(used);
}

TEST(GpuWork, UnrecordedStreamWorkDisablesTheSpan) {
  kb::GpuWork marker;
  marker.unrecorded = true;
  marker.kernel = false;
  EXPECT_TRUE(std::isnan(kb::work_span_seconds({kernel("a", 1000, 5000), marker})));
  kb::WorkLedger l;
  l.add({kernel("a", 1000, 5000), marker});
  EXPECT_EQ(l.to_json("cupti").at("calls_with_unrecorded_stream_work"), 1);
  EXPECT_EQ(l.to_json("cupti").at("records"), 1);
}

}  // namespace
