// The messages between the parent and the worker (the headers of protocol/channel.h's frames), one
// struct each with one serializer pair (to_json/from_json, found by nlohmann::json through ADL:
// `json j = req;` and `j.get<BenchRequest>()`). Both ends use these and nothing else, so a field
// is spelled once; a message with a missing or mistyped field is refused with a ProtocolError
// naming the message and the field.
//
// The conversation (docs/evaluation.md): the worker announces itself (ReadyReply), then the parent
// sends SetupRequest, any number of CheckRequest / RepeatRequest / BenchRequest (each BenchRequest
// followed by its timing's confirmation: ConfirmPrepareRequest, ConfirmRequest, ConfirmFetchRequest),
// and TeardownRequest,
// each answered by its reply, or by an ErrorReply when the worker failed. Requests carry "op"
// (their kOp); replies are known by the request they answer. Output bytes travel in the frame's
// payload, never in these headers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/protocol_error.h"
#include "protocol/timing_policy.h"

namespace kb {

// The request's "op" (ProtocolError when it has none, or not a string).
std::string request_op(const nlohmann::json& request);

// --- worker -> parent, once at start-up ---
struct ReadyReply {
  bool ready = false;
  std::string error;  // why not, when !ready
  // The failure was an allocation at the worker's memory limit (std::bad_alloc; eval/worker_limits.h).
  bool out_of_memory = false;
};

// --- any reply: the worker failed (an exception in kbench's worker code) ---
struct ErrorReply {
  std::string error;
  bool out_of_memory = false;  // a std::bad_alloc at the worker's memory limit
};
// The error a reply reports, when it is an ErrorReply.
std::optional<std::string> reply_error(const nlohmann::json& reply);

// --- setup: key the channel, generate the weights, run kb_setup, install the system-call filter ---
struct SetupRequest {
  static constexpr const char* kOp = "setup";
  uint64_t weights_seed = 0;
  uint64_t hash_key = 0;
  std::string channel_key;  // hex (channel.h): every reply from here on carries its HMAC
  bool sandbox = true;      // install the system-call filter after kb_setup
  // With sandbox: the filter's W^X rule too (no mapping becomes executable after kb_setup).
  bool write_xor_execute = true;
};
struct SetupReply {
  int rc = 0;  // kb_setup's
  // An allocation of the solution's failed with ENOMEM during kb_setup (the worker's memory limit).
  bool enomem = false;
};

// --- check: one untimed call on fresh inputs of `seed`; its outputs come back as the payload ---
struct CheckRequest {
  static constexpr const char* kOp = "check";
  uint64_t seed = 0;
  // A timed call's inputs: `seed`'s set perturbed as timed call `perturb_call` was (perturbation.h).
  std::optional<uint64_t> perturb_secret, perturb_call;
};
struct CheckReply {
  int rc = 0;
  double seconds = 0;  // wall time of the call, launch to synchronised
  std::vector<uint64_t> input_hashes, weight_hashes;
  bool settled = false;  // the outputs did not change after kb_run returned
  nlohmann::json gpu_work;  // worker/work_ledger.h's record; null when absent
};

// --- repeat: `calls` checked calls on one set of inputs; every call's outputs, concatenated ---
struct RepeatRequest {
  static constexpr const char* kOp = "repeat";
  uint64_t seed = 0;
  int calls = 0;
};
struct RepeatReply {
  int rc = 0;
  int call = 0;  // the failing call when rc != 0 (the other fields are then absent)
  std::vector<bool> settled;
  std::vector<uint64_t> input_hashes, weight_hashes;
  nlohmann::json gpu_work;
  static RepeatReply failed(int rc, int call) {
    RepeatReply r;
    r.rc = rc;
    r.call = call;
    return r;
  }
};

// --- bench: warm-up, cold samples with re-checked calls, hot timing, the tail checks ---
struct BenchRequest {
  static constexpr const char* kOp = "bench";
  std::vector<uint64_t> seeds;  // the input sets' seeds
  TimingPolicy policy;
  uint64_t perturb_secret = 0;
  uint64_t reservoir_seed = 0;  // the re-checked calls' reservoir (recheck_reservoir.h)
  size_t rechecks = 0;          // its size
};
// A timed call whose outputs were kept for the parent to judge.
struct RecheckedCall {
  uint64_t iteration = 0;  // the timed call
  size_t set = 0;          // its input set
  std::vector<uint64_t> input_hashes;
  bool settled = false;
};
struct HotTiming {
  double seconds = 0;  // per call
  size_t calls = 0;
  std::string mode;
};
// The steady cost per call (TimingPolicy::steady_floor): batches of calls back to back on the stream
// with their launches, each batch's time per call (the larger of the target's interval and the
// host's), and the host's alone.
struct SteadyTiming {
  std::vector<double> batch_seconds;
  size_t calls = 0;  // per batch
  std::vector<double> host_batch_seconds;
};
struct TailCheck {
  double stream = 0, tail = 0, latency = 0;
};
struct BenchReply {
  int rc = 0;
  // When rc != 0, where kb_run failed ("warmup", "timing", "hot timing", "steady timing", "tail check"), and the
  // timed call for "timing"; the other fields are then absent.
  std::string phase;
  std::optional<uint64_t> iteration;
  std::vector<double> samples, sm_clocks_mhz, warmup_call_seconds, event_samples;
  std::vector<double> host_call_seconds;  // each kept sample's TimedCall::host_seconds
  double max_sm_clock_mhz = 0;
  size_t throttled = 0, warmup_calls = 0, span_samples = 0;
  uint64_t timed_calls = 0;
  std::string stop_reason;
  double wall_seconds = 0;
  std::vector<RecheckedCall> rechecked;  // the reservoir's calls, by slot
  std::optional<HotTiming> hot;          // absent when no sample was kept
  std::optional<SteadyTiming> steady;    // with TimingPolicy::steady_floor, when a sample was kept
  std::vector<TailCheck> tail_checks;
  nlohmann::json gpu_work;
  std::vector<std::vector<uint64_t>> input_hashes;  // per set
  std::vector<uint64_t> weight_hashes;
  static BenchReply failed(int rc, std::string phase, std::optional<uint64_t> iteration = std::nullopt) {
    BenchReply r;
    r.rc = rc;
    r.phase = std::move(phase);
    r.iteration = iteration;
    return r;
  }
};

// --- the timing's confirmation (eval/timing_confirmation.h): K calls the parent times by its own
// clock, on inputs perturbed by a secret the worker gets only when the clock starts ---
// Prepare: K copies of the last bench's input sets (copy i of set i mod S, as generated) and K
// output sets, poisoned. Untimed; the worker does not know the perturbation secret yet.
struct ConfirmPrepareRequest {
  static constexpr const char* kOp = "confirm_prepare";
  size_t calls = 0;  // K
};
struct ConfirmPrepareReply {
  size_t calls = 0;  // the copies made (K)
};
// Run: copy i perturbed as call i of `secret` (perturbation.h), then kb_run into output set i,
// back to back; then every output set's fingerprint (the commitment the fetch is checked against).
struct ConfirmRequest {
  static constexpr const char* kOp = "confirm";
  uint64_t secret = 0;
};
struct ConfirmReply {
  int rc = 0;
  size_t call = 0;  // the failing call when rc != 0 (the other fields are then absent)
  std::vector<std::vector<uint64_t>> output_hashes;  // per call, per output
  nlohmann::json gpu_work;
  static ConfirmReply failed(int rc, size_t call) {
    ConfirmReply r;
    r.rc = rc;
    r.call = call;
    return r;
  }
};
// Fetch: one call's outputs (the payload), chosen by the parent after the commitment, with its
// input copy's fingerprints and the weights'.
struct ConfirmFetchRequest {
  static constexpr const char* kOp = "confirm_fetch";
  size_t call = 0;
};
struct ConfirmFetchReply {
  std::vector<uint64_t> input_hashes, weight_hashes;
};

// --- teardown: kb_teardown, then the worker exits ---
struct TeardownRequest {
  static constexpr const char* kOp = "teardown";
};
struct TeardownReply {
  bool ok = true;
};

// One serializer pair per message. Requests write their "op"; from_json does not check it (the
// worker dispatches on request_op first).
#define KB_PROTOCOL_MESSAGE(T)                       \
  void to_json(nlohmann::json& j, const T& m);       \
  void from_json(const nlohmann::json& j, T& m);
// The timing policy as a field of BenchRequest: its one serializer (protocol/timing_policy.h).
KB_PROTOCOL_MESSAGE(TimingPolicy)
KB_PROTOCOL_MESSAGE(ReadyReply)
KB_PROTOCOL_MESSAGE(ErrorReply)
KB_PROTOCOL_MESSAGE(SetupRequest)
KB_PROTOCOL_MESSAGE(SetupReply)
KB_PROTOCOL_MESSAGE(CheckRequest)
KB_PROTOCOL_MESSAGE(CheckReply)
KB_PROTOCOL_MESSAGE(RepeatRequest)
KB_PROTOCOL_MESSAGE(RepeatReply)
KB_PROTOCOL_MESSAGE(BenchRequest)
KB_PROTOCOL_MESSAGE(RecheckedCall)
KB_PROTOCOL_MESSAGE(HotTiming)
KB_PROTOCOL_MESSAGE(SteadyTiming)
KB_PROTOCOL_MESSAGE(TailCheck)
KB_PROTOCOL_MESSAGE(BenchReply)
KB_PROTOCOL_MESSAGE(ConfirmPrepareRequest)
KB_PROTOCOL_MESSAGE(ConfirmPrepareReply)
KB_PROTOCOL_MESSAGE(ConfirmRequest)
KB_PROTOCOL_MESSAGE(ConfirmReply)
KB_PROTOCOL_MESSAGE(ConfirmFetchRequest)
KB_PROTOCOL_MESSAGE(ConfirmFetchReply)
KB_PROTOCOL_MESSAGE(TeardownRequest)
KB_PROTOCOL_MESSAGE(TeardownReply)
#undef KB_PROTOCOL_MESSAGE

}  // namespace kb
