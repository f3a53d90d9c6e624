// The timing's confirmation: a bound on the scored time that nothing inside the worker can fake.
//
// The cold samples are measured inside the worker, in the solution's address space: a solution
// that reaches kbench's memory can rewrite them (docs/threat-model.md). Two things stay out of its
// reach: the outputs the parent judges, and the parent's own clock. So after the samples, the
// parent asks for K more calls and times them itself:
//
//   1. prepare (untimed): the worker makes K copies of the timed input sets and K poisoned output
//      sets;
//   2. run (timed by the parent, send to reply = W): the request carries a fresh secret; the worker
//      perturbs copy i as call i of that secret (protocol/perturbation.h), calls kb_run into output
//      set i, back to back, then replies with every output set's fingerprint. No call can have
//      started before the secret arrived, so the reply commits the worker to K results computed
//      inside W;
//   3. fetch: the parent draws one call j after the reply and asks for its outputs. They must match
//      the committed fingerprint and be right for copy j's perturbed inputs (the parent rebuilds
//      them), so a worker that skipped or faked m of the K calls is caught with probability m/K.
//
// W then bounds the true time per call, up to kbench's own work in the interval (perturbing,
// fingerprinting, one wait, the channel), which the allowances below cover from trusted figures
// (the ceilings cache, never the worker's word). The claimed median fails as `timing_tampered` when
//
//   (W - fixed) / K - per_call  >  kConfirmationSlack x median.
//
// kConfirmationSlack = 2 covers what honestly separates back-to-back calls from cold ones (caches,
// clocks, a loaded host); a solution can therefore still understate its time by up to 2x, not 10x.
// The check takes the best of up to kConfirmationAttempts runs, since a loaded machine only ever
// makes W longer. The time the thread that calls kb_run spent waiting for a CPU during W
// (eval/run_delay.h: the kernel's statistics, read by the parent) is load, not the solution's, and
// is forgiven: a run upholds the claim when W does, or W less that wait does. A failing run is
// evidence of tampering only when no other thread of the solution's waited more than
// kQuietWaitFraction of W (an OpenMP team's threads wait for a CPU while the calling thread spins
// at their barrier, and an honest OpenMP top-k on a loaded 2-core machine read as tampered by the
// caller's wait alone, at up to 26x) and, with the caller's wait forgiven, its calls still took
// more than kConfirmationSlack x the claim on a quiet machine (that wait at most
// kQuietWaitFraction of W), or more than kLoadedEvidenceSlack x on a loaded one: a loaded host also slows the calls that do run
// (shared caches and memory bandwidth, which no scheduler statistic shows; an honest
// single-threaded softmax on a 2-core machine at load 6 showed 2.9x). When no failing run is
// evidence, kbench says it could not judge (`timing_unconfirmed`, an error), never `fail`.
// Only the calling thread's wait upholds a claim: a solution's other threads, busy or not, forgive
// nothing there; their waits can only turn a fail into `timing_unconfirmed` (no score). What it
// can still do is make its own calling thread wait while other threads compute; the forgiven share
// of W is then the part of its time it hid, which threat-model.md states.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace kb {

inline constexpr double kConfirmationSlack = 2.0;
inline constexpr int kConfirmationAttempts = 5;
inline constexpr double kQuietWaitFraction = 0.1;
inline constexpr double kLoadedEvidenceSlack = 8.0;
// K: enough calls to fill kConfirmationSeconds at the claimed median, within [kMinCalls,
// kMaxCalls], and at most kConfirmationBytes of copies (inputs and outputs) but never fewer than
// kMinCallsLarge (moe_swiglu's largest shape has 1 GB of inputs and outputs per call).
inline constexpr double kConfirmationSeconds = 0.02;
inline constexpr size_t kConfirmationMinCalls = 4;
inline constexpr size_t kConfirmationMinCallsLarge = 2;
inline constexpr size_t kConfirmationMaxCalls = 1024;
inline constexpr uint64_t kConfirmationBytes = 1ull << 30;

// Whether a failed confirmation fails the solution on `target`: on both targets.
bool confirmation_enforced(const std::string& target);

// K for a claimed median and the bytes of one call's inputs and outputs.
size_t confirmation_calls(double claimed_median_seconds, uint64_t call_bytes);

// kbench's own work inside W, from trusted figures.
struct ConfirmationAllowance {
  double per_call = 0;  // seconds per call: the perturbation and the call's launch
  double fixed = 0;     // seconds per run: the channel, one wait, the fingerprints
};

// What the allowance is computed from: the ceilings cache's figures (never the worker's word) and
// the problem's sizes.
struct ConfirmationCosts {
  std::string target;                 // "host" or "cuda"
  std::optional<double> launch_floor; // seconds (ceilings cache; nullopt when not measured)
  double memory_peak = 0;             // bytes/s (the ceilings')
  uint64_t output_bytes = 0;          // one call's outputs
  uint64_t perturb_bytes = 0;         // bytes one call's perturbation reads and writes (perturbation_bytes)
};

//   per_call = host_work + 3 x floor + perturb_bytes / (memory_peak / 8)
//     (the perturbation's launch, the call's and the fingerprint's, each no shorter than the floor;
//     the perturbation swaps four elements of every row, so it touches a few sectors of each row
//     at a scattered-access rate, an eighth of the peak)
//   fixed = fixed_work + K x output_bytes / (memory_peak / 4)
//     (the fingerprints read every output set once; a quarter of the peak is a generous rate for
//     a hash that reads memory once, which the host's single thread does at about that)
// host_work and fixed_work per target:
//   host: kPerCallSeconds, 10 us of host work around each call, and kFixedSeconds, 2 ms for a
//     request's round trip through two pipes and one wait;
//   cuda: kCudaPerCallSeconds, 50 us: calls back to back pay the host's side of every launch
//     (kbench's perturbation, the solution's launches, CUPTI's callback on each API call), which
//     the cold samples leave out by design (they run behind a blocking kernel). Measured with the
//     deck's cuda corpus (2026-11-27): on an H100, calls of a few microseconds took 11-30 us more
//     back to back than their median (topk's radix select 18-30 us, softmax 8-19 us, kahan_softmax
//     9-19 us); on an H200, 12-20 us beyond 2x their median (kahan_softmax 4.1 us, l1_softmax
//     4.3 us, l1_layernorm 11.1 us). 50 us is 1.7x the largest. kCudaFixedSeconds, 6 ms:
//     paged_attention's runs on the H200 showed about 3 ms of fixed cost (CUPTI's activity flush,
//     the fingerprints' buffers), taken twice.
// On cuda a solution can therefore understate its time by up to kConfirmationSlack + per_call /
// median: 2.5x for a 100 us kernel, 12x for a 5 us one (docs/threat-model.md).
inline constexpr double kPerCallSeconds = 10e-6;
inline constexpr double kFixedSeconds = 2e-3;
inline constexpr double kCudaPerCallSeconds = 50e-6;
inline constexpr double kCudaFixedSeconds = 6e-3;
ConfirmationAllowance confirmation_allowance(const ConfirmationCosts& costs, size_t calls);

// The bytes a perturbation of `rows` rows of `len` elements of `element_bytes` reads and writes:
// per row its four swapped elements' sectors (32 bytes each), never more than the row; read and
// written. None for rows of fewer than 2 elements, which the perturbation leaves alone (core/perturb.h).
uint64_t perturbation_bytes(int64_t rows, int64_t len, uint64_t element_bytes);

// The per-call time a run of `calls` calls in `wall` seconds shows once the allowance is taken off
// (never below zero).
double confirmed_seconds_per_call(double wall, size_t calls, const ConfirmationAllowance& a);

// Whether a confirmed per-call time upholds the claimed median.
bool upholds(double claimed_median, double confirmed_per_call);

// Whether a failing run is evidence of tampering: `unloaded_per_call` is its per-call time with the
// calling thread's wait for a CPU taken off W, `waited_fraction` that wait over W, and
// `hidden_contention_ruled_out` whether contention the scheduler statistics cannot show is ruled
// out: always on the host (its one shared resource is the CPU); on cuda only when the driver's
// listing shows kbench's processes and no other on the GPU (target/gpu_sharing.h), since another
// process's kernels (an agent's own test binary, outside kbench's GPU lock) slow the calls
// invisibly. Without that, only more than kLoadedEvidenceSlack x the claim is evidence; between
// kConfirmationSlack and that the verdict is `timing_unconfirmed` (an error, no score), never a
// pass and never a fail.
bool is_tampering_evidence(double claimed_median, double unloaded_per_call, double waited_fraction,
                           bool hidden_contention_ruled_out);

// One confirmation run's verdict on a claim it did not uphold, from its wall time W and the run-delay
// growth during it of the calling thread (`caller_wait`, forgiven: is_tampering_evidence with W less
// it) and of the solution's other threads (`others_wait`, the longest). Where another thread waited
// more than kQuietWaitFraction of W, the run is no evidence at any slack: threads that meet at a
// barrier (an OpenMP team) each wait for the others' time slices on a loaded host, and the calls
// slow down by far more than any one thread's wait (an honest OpenMP top-k: 26x on a loaded
// 2-core machine, 5 ms a call against a claimed 187 us).
bool run_is_tampering_evidence(double claimed_median, double wall, size_t calls, const ConfirmationAllowance& a,
                               double caller_wait, double others_wait, bool hidden_contention_ruled_out);

}  // namespace kb
