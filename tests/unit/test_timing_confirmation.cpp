// The timing's confirmation arithmetic (eval/timing_confirmation.h) and the run-delay reader it
// relies on to tell load from tampering (eval/run_delay.h). The confirmation end to end, with the
// exploit it catches and the honest solutions it must pass, is the host corpus's
// (softmax/exploit-host-rewrite-samples).
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "eval/run_delay.h"
#include "eval/timing_confirmation.h"
#include "target/gpu_sharing.h"

namespace kb {
namespace {

TEST(TimingConfirmation, CallsFillTheIntervalWithinTheirBounds) {
  // 20 ms at 1 ms a call: 20 calls.
  EXPECT_EQ(confirmation_calls(1e-3, 1024), 20u);
  // A 5 us kernel: 4000 wanted, 1024 at most.
  EXPECT_EQ(confirmation_calls(5e-6, 1024), kConfirmationMaxCalls);
  // A 30 ms call: still 4.
  EXPECT_EQ(confirmation_calls(30e-3, 1024), kConfirmationMinCalls);
  // 1 GiB of copies at most: 64 MiB a call leaves 16 of the 1024 wanted.
  EXPECT_EQ(confirmation_calls(5e-6, 64ull << 20), 16u);
  // moe_swiglu's largest shape, about 1 GB a call: never fewer than 2.
  EXPECT_EQ(confirmation_calls(30e-3, 1000ull << 20), kConfirmationMinCallsLarge);
  // A claimed time of zero does not divide by zero.
  EXPECT_EQ(confirmation_calls(0, 1024), kConfirmationMaxCalls);
}

TEST(TimingConfirmation, TheAllowanceComesFromTheFloorTheMemoryPeakAndThePerturbation) {
  // An H100-like device: floor 2.5 us, 3.35 TB/s; 512 KiB of outputs a call, 1024 calls.
  ConfirmationCosts host{"host", 2.5e-6, 3.35e12, 512 << 10, 0};
  const ConfirmationAllowance a = confirmation_allowance(host, 1024);
  EXPECT_DOUBLE_EQ(a.per_call, kPerCallSeconds + 3 * 2.5e-6);
  EXPECT_DOUBLE_EQ(a.fixed, kFixedSeconds + 1024.0 * (512 << 10) / (3.35e12 / 4));
  // Without a measured floor or peak, the constants alone.
  const ConfirmationAllowance b = confirmation_allowance({"host", std::nullopt, 0, 512 << 10, 1 << 20}, 1024);
  EXPECT_DOUBLE_EQ(b.per_call, kPerCallSeconds);
  EXPECT_DOUBLE_EQ(b.fixed, kFixedSeconds);
  // The cuda target's own constants (the host side of its launches, CUPTI's callbacks).
  ConfirmationCosts cuda = host;
  cuda.target = "cuda";
  const ConfirmationAllowance c = confirmation_allowance(cuda, 1024);
  EXPECT_DOUBLE_EQ(c.per_call, kCudaPerCallSeconds + 3 * 2.5e-6);
  EXPECT_DOUBLE_EQ(c.fixed, kCudaFixedSeconds + 1024.0 * (512 << 10) / (3.35e12 / 4));
  EXPECT_GT(c.per_call, a.per_call);
  // The perturbation's traffic at an eighth of the peak: l1_sum_dim's (256, 4000, 17) fp32 input
  // has 1,024,000 rows of 68 bytes, each touched whole (68 < 4 sectors), read and written.
  cuda.perturb_bytes = perturbation_bytes(256 * 4000, 17, 4);
  EXPECT_EQ(cuda.perturb_bytes, 2ull * 1024000 * 68);
  EXPECT_DOUBLE_EQ(confirmation_allowance(cuda, 16).per_call,
                   kCudaPerCallSeconds + 3 * 2.5e-6 + 2.0 * 1024000 * 68 / (3.35e12 / 8));
}

TEST(TimingConfirmation, APerturbationTouchesAtMostFourSectorsOfARow) {
  // Long rows: four 32-byte sectors a row, read and written.
  EXPECT_EQ(perturbation_bytes(64, 16384, 4), 2u * 64 * 4 * 32);
  // Rows shorter than four sectors: the whole row.
  EXPECT_EQ(perturbation_bytes(10, 10, 4), 2u * 10 * 40);
  EXPECT_EQ(perturbation_bytes(0, 1024, 4), 0u);
  EXPECT_EQ(perturbation_bytes(-1, 1024, 4), 0u);
  // Rows of one element are not perturbed (core/perturb.h): nothing is touched.
  EXPECT_EQ(perturbation_bytes(4096, 1, 4), 0u);
}

TEST(TimingConfirmation, IsEnforcedOnBothTargets) {
  EXPECT_TRUE(confirmation_enforced("host"));
  EXPECT_TRUE(confirmation_enforced("cuda"));
  EXPECT_FALSE(confirmation_enforced("triton")) << "a target kbench does not know is never said to be confirmed";
}

TEST(TimingConfirmation, AnHonestMedianIsUpheldAndATenfoldClaimIsNot) {
  const ConfirmationAllowance a{10e-6, 2e-3};
  // A 1 ms kernel, 20 calls: honest back-to-back calls take about the median each.
  const double honest = confirmed_seconds_per_call(2e-3 + 20 * (1e-3 + 10e-6), 20, a);
  EXPECT_NEAR(honest, 1e-3, 1e-12);
  EXPECT_TRUE(upholds(1e-3, honest));
  // Twice slower than claimed is still within the slack (caches, clocks, a loaded host)...
  EXPECT_TRUE(upholds(1e-3, 2e-3));
  // ...a claim ten times faster than the calls ran is not.
  EXPECT_FALSE(upholds(1e-4, honest));
  EXPECT_FALSE(upholds(1e-3, 2.001e-3));
  // kbench's own work never counts against the solution: a run within the allowance shows 0.
  EXPECT_EQ(confirmed_seconds_per_call(1e-3, 20, a), 0.0);
  EXPECT_EQ(confirmed_seconds_per_call(1.0, 0, a), 0.0);
}

TEST(TimingConfirmation, LoadIsForgivenButNotWithoutLimit) {
  // 3 ms a call against a 1 ms claim: evidence on a quiet machine, not on a loaded one...
  EXPECT_TRUE(is_tampering_evidence(1e-3, 3e-3, 0.0, true));
  EXPECT_TRUE(is_tampering_evidence(1e-3, 3e-3, kQuietWaitFraction, true));
  EXPECT_FALSE(is_tampering_evidence(1e-3, 3e-3, 0.5, true));
  // ...where only more than kLoadedEvidenceSlack times the claim is.
  EXPECT_FALSE(is_tampering_evidence(1e-3, kLoadedEvidenceSlack * 1e-3, 0.5, true));
  EXPECT_TRUE(is_tampering_evidence(1e-3, 1.01 * kLoadedEvidenceSlack * 1e-3, 0.5, true));
  // Within the slack is never evidence.
  EXPECT_FALSE(is_tampering_evidence(1e-3, 2e-3, 0.0, true));
}

TEST(TimingConfirmation, ContentionTheSchedulerCannotShowMustBeRuledOutForTheQuietSlack) {
  // No CPU wait at all, yet another process's kernels may have shared the GPU: 3x is not evidence...
  EXPECT_FALSE(is_tampering_evidence(1e-3, 3e-3, 0.0, false));
  EXPECT_FALSE(is_tampering_evidence(1e-3, kLoadedEvidenceSlack * 1e-3, 0.0, false));
  // ...more than kLoadedEvidenceSlack times the claim is, quiet CPU or not.
  EXPECT_TRUE(is_tampering_evidence(1e-3, 1.01 * kLoadedEvidenceSlack * 1e-3, 0.0, false));
  EXPECT_TRUE(is_tampering_evidence(1e-3, 1.01 * kLoadedEvidenceSlack * 1e-3, 0.5, false));
}

// nvidia-smi --query-compute-apps=pid,gpu_uuid --format=csv,noheader, as the driver lists them.
TEST(GpuSharing, TheDriversListingRulesOthersOutOnlyWhenItShowsKbenchItself) {
  const std::string gpu = "GPU-8e2f0c1a-1111-2222-3333-444455556666", other_gpu = "GPU-00000000-aaaa-bbbb-cccc-dddddddddddd";
  const std::set<long> ours = {4242, 4250};
  EXPECT_EQ(parse_compute_apps("4250, " + gpu + "\n", gpu, ours), GpuSharing::exclusive);
  EXPECT_EQ(parse_compute_apps("4250, " + gpu + "\n4242, " + gpu + "\n999, " + other_gpu + "\n", gpu, ours),
            GpuSharing::exclusive)
      << "a process on another GPU of the machine shares nothing";
  EXPECT_EQ(parse_compute_apps("4250, " + gpu + "\n777, " + gpu + "\n", gpu, ours), GpuSharing::shared);
  // A listing that does not show kbench's own worker (a PID namespace other than the driver's,
  // or no processes at all) rules nothing out.
  EXPECT_EQ(parse_compute_apps("777, " + gpu + "\n", gpu, ours), GpuSharing::unknown);
  EXPECT_EQ(parse_compute_apps("", gpu, ours), GpuSharing::unknown);
  EXPECT_EQ(parse_compute_apps("No running processes found\n", gpu, ours), GpuSharing::unknown);
  EXPECT_EQ(parse_compute_apps("[Insufficient Permissions], " + gpu + "\n4250, " + gpu + "\n", gpu, ours),
            GpuSharing::unknown);
  EXPECT_EQ(parse_compute_apps("4250, " + other_gpu + "\n", gpu, ours), GpuSharing::unknown);
  EXPECT_STREQ(gpu_sharing_name(GpuSharing::shared), "shared");
}

TEST(GpuSharing, WithoutNvidiaSmiNothingIsRuledOut) {
  // This machine may have no driver (CI): then the answer must be unknown, never exclusive.
  const GpuSharing s = gpu_sharing("GPU-00000000-0000-0000-0000-000000000000", {static_cast<long>(getpid())});
  EXPECT_NE(s, GpuSharing::exclusive) << "no GPU of that UUID can list this process";
}

TEST(RunDelay, ReadsThisProcesssThreadsAndTheirGrowth) {
  const RunDelays now = thread_run_delays(getpid());
  if (now.empty()) GTEST_SKIP() << "/proc/<pid>/task/*/schedstat is not readable here";
  EXPECT_TRUE(now.count(getpid())) << "the main thread's own entry";
  // A second thread shows up in a later snapshot, and a snapshot never shrinks a delay.
  std::atomic<bool> stop{false};
  std::thread spinner([&] {
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  const RunDelays later = thread_run_delays(getpid());
  stop = true;
  spinner.join();
  EXPECT_GT(later.size(), now.size());
  EXPECT_GE(run_delay_growth(now, later, getpid()), 0.0);
  for (const auto& [tid, ns] : now) {
    if (later.count(tid)) {
      EXPECT_GE(later.at(tid), ns);
    }
  }
  // This test process has no children: its main thread is the tree's deepest.
  EXPECT_EQ(worker_main_thread(getpid()), getpid());
}

TEST(RunDelay, GrowthIsThatOfTheNamedThreadOnly) {
  const RunDelays before{{1, 100}, {2, 5'000'000}, {3, 7}};
  const RunDelays after{{1, 2'000'100}, {2, 5'500'000}, {4, 9'000'000'000}};
  EXPECT_DOUBLE_EQ(run_delay_growth(before, after, 1), 2e-3);
  EXPECT_DOUBLE_EQ(run_delay_growth(before, after, 2), 0.5e-3);
  // A thread another solution thread's wait cannot stand for: gone (3) or new (4) counts nothing.
  EXPECT_EQ(run_delay_growth(before, after, 3), 0.0);
  EXPECT_EQ(run_delay_growth(before, after, 4), 0.0);
  EXPECT_EQ(run_delay_growth(after, before, 1), 0.0);
}

TEST(RunDelay, TheLargestGrowthIsThatOfTheOtherThreadThatWaitedLongest) {
  const RunDelays before{{1, 100}, {2, 5'000'000}, {3, 7}, {5, 0}};
  const RunDelays after{{1, 2'000'100}, {2, 8'000'000}, {4, 9'000'000'000}, {5, 9'000'000}};
  EXPECT_DOUBLE_EQ(largest_run_delay_growth(before, after, 1), 9e-3);  // thread 5; 4 is new, 3 gone
  EXPECT_DOUBLE_EQ(largest_run_delay_growth(before, after, 5), 3e-3);  // the caller left out: thread 2
  EXPECT_EQ(largest_run_delay_growth(before, before, 1), 0.0);
  EXPECT_EQ(largest_run_delay_growth({}, after, 1), 0.0);
}

// The load flake this fixes: an honest OpenMP top-k on a loaded 2-core host. The calling thread
// spins at the team's barrier (running: it waits 1% of W) while its team-mate waits 45% of W for a
// CPU; the calls took 26x the claim in CI (5 ms against 187 us). By the caller's wait the run looked
// quiet and was evidence; with a team-mate that waited, no slowdown is evidence.
TEST(TimingConfirmation, AnotherThreadOfTheSolutionsThatWaitedForACpuMakesARunNoEvidence) {
  const ConfirmationAllowance none{};
  const double claim = 1e-3, wall = 0.03;  // 10 calls, 3 ms each
  EXPECT_TRUE(run_is_tampering_evidence(claim, wall, 10, none, 0.01 * wall, 0, true));
  EXPECT_FALSE(run_is_tampering_evidence(claim, wall, 10, none, 0.01 * wall, 0.45 * wall, true));
  EXPECT_FALSE(run_is_tampering_evidence(claim, 0.26, 10, none, 0.01 * 0.26, 0.45 * 0.26, true));  // 26x
  // Other threads that had their CPU (a wait within the quiet fraction) change nothing.
  EXPECT_TRUE(run_is_tampering_evidence(claim, wall, 10, none, 0.01 * wall, kQuietWaitFraction * wall, true));
  // A single-threaded run on a loaded machine: the caller's wait forgiven, evidence beyond 8x only.
  EXPECT_FALSE(run_is_tampering_evidence(claim, wall, 10, none, 0.5 * wall, 0, true));
  EXPECT_TRUE(run_is_tampering_evidence(claim, 0.2, 10, none, 0.5 * 0.2, 0, true));
  // A wait longer than the run (snapshots a scheduler tick apart) forgives the run, no more.
  EXPECT_FALSE(run_is_tampering_evidence(claim, wall, 10, none, 2 * wall, 0, true));
  EXPECT_FALSE(run_is_tampering_evidence(claim, 0, 10, none, 0, 0, true));
}

TEST(RunDelay, AProcessThatDoesNotExistHasNoThreads) {
  EXPECT_TRUE(thread_run_delays(-1).empty());
  EXPECT_TRUE(thread_run_delays(0).empty());
  EXPECT_EQ(worker_main_thread(-1), -1);
}

}  // namespace
}  // namespace kb
