#include "protocol/messages.h"

#include "protocol/fields.h"

namespace kb {

using json = nlohmann::json;
using wire::field;
using wire::field_or;

std::string request_op(const json& request) { return field<std::string>(request, "request", "op"); }

std::optional<std::string> reply_error(const json& reply) {
  if (!reply.is_object() || !reply.contains("error")) return std::nullopt;
  return reply.get<ErrorReply>().error;
}

void to_json(json& j, const ReadyReply& m) {
  j = {{"ready", m.ready}};
  if (!m.ready) {
    j["error"] = m.error;
    j["out_of_memory"] = m.out_of_memory;
  }
}
void from_json(const json& j, ReadyReply& m) {
  m.ready = field<bool>(j, "ready message", "ready");
  m.error = m.ready ? "" : field_or<std::string>(j, "ready message", "error", "unknown error");
  m.out_of_memory = !m.ready && field_or<bool>(j, "ready message", "out_of_memory", false);
}

void to_json(json& j, const ErrorReply& m) { j = {{"error", m.error}, {"out_of_memory", m.out_of_memory}}; }
void from_json(const json& j, ErrorReply& m) {
  m.error = field<std::string>(j, "error reply", "error");
  m.out_of_memory = field_or<bool>(j, "error reply", "out_of_memory", false);
}

void to_json(json& j, const SetupRequest& m) {
  j = {{"op", SetupRequest::kOp}, {"weights_seed", m.weights_seed}, {"hash_key", m.hash_key},
       {"channel_key", m.channel_key}, {"sandbox", m.sandbox},
       {"write_xor_execute", m.write_xor_execute}};
}
void from_json(const json& j, SetupRequest& m) {
  constexpr const char* msg = "setup request";
  m.weights_seed = field<uint64_t>(j, msg, "weights_seed");
  m.hash_key = field<uint64_t>(j, msg, "hash_key");
  m.channel_key = field<std::string>(j, msg, "channel_key");
  m.sandbox = field<bool>(j, msg, "sandbox");
  m.write_xor_execute = field<bool>(j, msg, "write_xor_execute");
}
void to_json(json& j, const SetupReply& m) { j = {{"rc", m.rc}, {"enomem", m.enomem}}; }
void from_json(const json& j, SetupReply& m) {
  m.rc = field<int>(j, "setup reply", "rc");
  m.enomem = field_or<bool>(j, "setup reply", "enomem", false);
}

void to_json(json& j, const CheckRequest& m) {
  j = {{"op", CheckRequest::kOp}, {"seed", m.seed}};
  if (m.perturb_call) {
    j["perturb_secret"] = m.perturb_secret.value_or(0);
    j["perturb_call"] = *m.perturb_call;
  }
}
void from_json(const json& j, CheckRequest& m) {
  constexpr const char* msg = "check request";
  m.seed = field<uint64_t>(j, msg, "seed");
  m.perturb_secret.reset();
  m.perturb_call.reset();
  if (j.contains("perturb_call")) {
    m.perturb_secret = field<uint64_t>(j, msg, "perturb_secret");
    m.perturb_call = field<uint64_t>(j, msg, "perturb_call");
  }
}
void to_json(json& j, const CheckReply& m) {
  j = {{"rc", m.rc},           {"seconds", m.seconds}, {"input_hashes", m.input_hashes},
       {"weight_hashes", m.weight_hashes}, {"settled", m.settled}, {"gpu_work", m.gpu_work}};
}
void from_json(const json& j, CheckReply& m) {
  constexpr const char* msg = "check reply";
  m.rc = field<int>(j, msg, "rc");
  m.seconds = field_or<double>(j, msg, "seconds", 0.0);
  m.input_hashes = field<std::vector<uint64_t>>(j, msg, "input_hashes");
  m.weight_hashes = field<std::vector<uint64_t>>(j, msg, "weight_hashes");
  m.settled = field<bool>(j, msg, "settled");
  m.gpu_work = j.value("gpu_work", json(nullptr));
}

void to_json(json& j, const RepeatRequest& m) { j = {{"op", RepeatRequest::kOp}, {"seed", m.seed}, {"calls", m.calls}}; }
void from_json(const json& j, RepeatRequest& m) {
  m.seed = field<uint64_t>(j, "repeat request", "seed");
  m.calls = field<int>(j, "repeat request", "calls");
}
void to_json(json& j, const RepeatReply& m) {
  if (m.rc != 0) {
    j = {{"rc", m.rc}, {"call", m.call}};
    return;
  }
  j = {{"rc", 0}, {"settled", m.settled}, {"input_hashes", m.input_hashes}, {"weight_hashes", m.weight_hashes},
       {"gpu_work", m.gpu_work}};
}
void from_json(const json& j, RepeatReply& m) {
  constexpr const char* msg = "repeat reply";
  m = RepeatReply{};
  m.rc = field<int>(j, msg, "rc");
  if (m.rc != 0) {
    m.call = field_or<int>(j, msg, "call", 0);
    return;
  }
  m.settled = field<std::vector<bool>>(j, msg, "settled");
  m.input_hashes = field<std::vector<uint64_t>>(j, msg, "input_hashes");
  m.weight_hashes = field<std::vector<uint64_t>>(j, msg, "weight_hashes");
  m.gpu_work = j.value("gpu_work", json(nullptr));
}

void to_json(json& j, const BenchRequest& m) {
  j = {{"op", BenchRequest::kOp},          {"seeds", m.seeds},
       {"policy", m.policy},                {"perturb_secret", m.perturb_secret},
       {"reservoir_seed", m.reservoir_seed}, {"rechecks", m.rechecks}};
}
void from_json(const json& j, BenchRequest& m) {
  constexpr const char* msg = "bench request";
  m.seeds = field<std::vector<uint64_t>>(j, msg, "seeds");
  m.policy = field<TimingPolicy>(j, msg, "policy");
  m.perturb_secret = field<uint64_t>(j, msg, "perturb_secret");
  m.reservoir_seed = field<uint64_t>(j, msg, "reservoir_seed");
  m.rechecks = field<size_t>(j, msg, "rechecks");
}

void to_json(json& j, const RecheckedCall& m) {
  j = {{"iteration", m.iteration}, {"set", m.set}, {"input_hashes", m.input_hashes}, {"settled", m.settled}};
}
void from_json(const json& j, RecheckedCall& m) {
  constexpr const char* msg = "re-checked call";
  m.iteration = field<uint64_t>(j, msg, "iteration");
  m.set = field<size_t>(j, msg, "set");
  m.input_hashes = field<std::vector<uint64_t>>(j, msg, "input_hashes");
  m.settled = field<bool>(j, msg, "settled");
}
void to_json(json& j, const SteadyTiming& m) {
  j = {{"batch_seconds", m.batch_seconds}, {"calls", m.calls}, {"host_batch_seconds", m.host_batch_seconds}};
}
void from_json(const json& j, SteadyTiming& m) {
  m.batch_seconds = field<std::vector<double>>(j, "steady timing", "batch_seconds");
  m.calls = field<size_t>(j, "steady timing", "calls");
  m.host_batch_seconds = field<std::vector<double>>(j, "steady timing", "host_batch_seconds");
}
void to_json(json& j, const HotTiming& m) { j = {{"seconds", m.seconds}, {"calls", m.calls}, {"mode", m.mode}}; }
void from_json(const json& j, HotTiming& m) {
  m.seconds = field<double>(j, "hot timing", "seconds");
  m.calls = field<size_t>(j, "hot timing", "calls");
  m.mode = field<std::string>(j, "hot timing", "mode");
}
void to_json(json& j, const TailCheck& m) { j = {{"stream", m.stream}, {"tail", m.tail}, {"latency", m.latency}}; }
void from_json(const json& j, TailCheck& m) {
  m.stream = field<double>(j, "tail check", "stream");
  m.tail = field<double>(j, "tail check", "tail");
  m.latency = field<double>(j, "tail check", "latency");
}

void to_json(json& j, const BenchReply& m) {
  if (m.rc != 0) {
    j = {{"rc", m.rc}, {"phase", m.phase}};
    if (m.iteration) j["iteration"] = *m.iteration;
    return;
  }
  j = {{"rc", 0},
       {"samples", m.samples},
       {"sm_clocks_mhz", m.sm_clocks_mhz},
       {"max_sm_clock_mhz", m.max_sm_clock_mhz},
       {"throttled", m.throttled},
       {"warmup_calls", m.warmup_calls},
       {"warmup_call_seconds", m.warmup_call_seconds},
       {"stop_reason", m.stop_reason},
       {"wall_seconds", m.wall_seconds},
       {"rechecked", m.rechecked},
       {"timed_calls", m.timed_calls},
       {"event_samples", m.event_samples},
       {"host_call_seconds", m.host_call_seconds},
       {"span_samples", m.span_samples},
       {"tail_checks", m.tail_checks},
       {"gpu_work", m.gpu_work},
       {"input_hashes", m.input_hashes},
       {"weight_hashes", m.weight_hashes}};
  if (m.hot) j["hot"] = *m.hot;
  if (m.steady) j["steady"] = *m.steady;
}
void from_json(const json& j, BenchReply& m) {
  constexpr const char* msg = "bench reply";
  m = BenchReply{};
  m.rc = field<int>(j, msg, "rc");
  if (m.rc != 0) {
    m.phase = field_or<std::string>(j, msg, "phase", "timing");
    if (j.contains("iteration")) m.iteration = field<uint64_t>(j, msg, "iteration");
    return;
  }
  m.samples = field<std::vector<double>>(j, msg, "samples");
  m.sm_clocks_mhz = field<std::vector<double>>(j, msg, "sm_clocks_mhz");
  m.max_sm_clock_mhz = field<double>(j, msg, "max_sm_clock_mhz");
  m.throttled = field<size_t>(j, msg, "throttled");
  m.warmup_calls = field<size_t>(j, msg, "warmup_calls");
  m.warmup_call_seconds = field_or<std::vector<double>>(j, msg, "warmup_call_seconds", {});
  m.stop_reason = field<std::string>(j, msg, "stop_reason");
  m.wall_seconds = field<double>(j, msg, "wall_seconds");
  m.rechecked = field<std::vector<RecheckedCall>>(j, msg, "rechecked");
  m.timed_calls = field<uint64_t>(j, msg, "timed_calls");
  m.event_samples = field_or<std::vector<double>>(j, msg, "event_samples", {});
  m.host_call_seconds = field_or<std::vector<double>>(j, msg, "host_call_seconds", {});
  m.span_samples = field_or<size_t>(j, msg, "span_samples", 0);
  if (j.contains("hot")) m.hot = field<HotTiming>(j, msg, "hot");
  if (j.contains("steady")) m.steady = field<SteadyTiming>(j, msg, "steady");
  m.tail_checks = field<std::vector<TailCheck>>(j, msg, "tail_checks");
  m.gpu_work = j.value("gpu_work", json(nullptr));
  m.input_hashes = field<std::vector<std::vector<uint64_t>>>(j, msg, "input_hashes");
  m.weight_hashes = field<std::vector<uint64_t>>(j, msg, "weight_hashes");
}

void to_json(json& j, const ConfirmPrepareRequest& m) { j = {{"op", ConfirmPrepareRequest::kOp}, {"calls", m.calls}}; }
void from_json(const json& j, ConfirmPrepareRequest& m) { m.calls = field<size_t>(j, "confirm-prepare request", "calls"); }
void to_json(json& j, const ConfirmPrepareReply& m) { j = {{"calls", m.calls}}; }
void from_json(const json& j, ConfirmPrepareReply& m) { m.calls = field<size_t>(j, "confirm-prepare reply", "calls"); }
void to_json(json& j, const ConfirmRequest& m) { j = {{"op", ConfirmRequest::kOp}, {"secret", m.secret}}; }
void from_json(const json& j, ConfirmRequest& m) { m.secret = field<uint64_t>(j, "confirm request", "secret"); }
void to_json(json& j, const ConfirmReply& m) {
  if (m.rc != 0) {
    j = {{"rc", m.rc}, {"call", m.call}};
    return;
  }
  j = {{"rc", 0}, {"output_hashes", m.output_hashes}, {"gpu_work", m.gpu_work}};
}
void from_json(const json& j, ConfirmReply& m) {
  constexpr const char* msg = "confirm reply";
  m = ConfirmReply{};
  m.rc = field<int>(j, msg, "rc");
  if (m.rc != 0) {
    m.call = field_or<size_t>(j, msg, "call", 0);
    return;
  }
  m.output_hashes = field<std::vector<std::vector<uint64_t>>>(j, msg, "output_hashes");
  m.gpu_work = j.value("gpu_work", json(nullptr));
}
void to_json(json& j, const ConfirmFetchRequest& m) { j = {{"op", ConfirmFetchRequest::kOp}, {"call", m.call}}; }
void from_json(const json& j, ConfirmFetchRequest& m) { m.call = field<size_t>(j, "confirm-fetch request", "call"); }
void to_json(json& j, const ConfirmFetchReply& m) {
  j = {{"input_hashes", m.input_hashes}, {"weight_hashes", m.weight_hashes}};
}
void from_json(const json& j, ConfirmFetchReply& m) {
  constexpr const char* msg = "confirm-fetch reply";
  m.input_hashes = field<std::vector<uint64_t>>(j, msg, "input_hashes");
  m.weight_hashes = field<std::vector<uint64_t>>(j, msg, "weight_hashes");
}

void to_json(json& j, const TeardownRequest&) { j = {{"op", TeardownRequest::kOp}}; }
void from_json(const json&, TeardownRequest&) {}
void to_json(json& j, const TeardownReply& m) { j = {{"ok", m.ok}}; }
void from_json(const json& j, TeardownReply& m) { m.ok = field<bool>(j, "teardown reply", "ok"); }

}  // namespace kb
