// The parent <-> worker messages (protocol/messages.h): every message survives a round trip through
// its serializer pair with every field intact, and a message that lacks a field or holds one of the
// wrong type is refused with an error naming the field.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "protocol/messages.h"

namespace kb {
namespace {

using json = nlohmann::json;

// Every field away from its default, so that a field the reader forgets shows in the round trip.
TimingPolicy odd_policy() {
  TimingPolicy p;
  p.warmup_seconds = 0.25;
  p.min_samples = 7;
  p.max_samples = 99;
  p.target_rel_stdev = 0.125;
  p.max_seconds = 1.5;
  p.input_sets = 3;
  p.rechecks = 5;
  p.perturb = false;
  p.throttle_threshold = 0.5;
  p.hot_seconds = 0.004;
  p.tail_checks = 4;
  p.blocking_kernel = false;
  p.hot_capture = false;
  return p;
}

const json kGpuWork = {{"monitor", "cupti"}, {"kernels", json::array({"k"})}, {"violations", json::array()}};

struct Case {
  std::string name;
  json message;                                  // a message with every field set
  std::function<json(const json&)> round_trip;   // parse as the message's type, serialize again
  std::set<std::string> optional;                // fields that may be absent
  std::set<std::string> opaque;                  // fields of any type (gpu_work: the ledger's own record)
};

template <class T>
Case make(std::string name, const T& m, std::set<std::string> optional = {}, std::set<std::string> opaque = {}) {
  return Case{std::move(name), json(m), [](const json& j) { return json(j.get<T>()); }, std::move(optional),
              std::move(opaque)};
}

std::vector<Case> cases() {
  CheckRequest check;
  check.seed = 11;
  check.perturb_secret = 12;
  check.perturb_call = 13;
  RepeatReply repeat{0, 0, {true, false, true}, {1, 2}, {3}, kGpuWork};
  BenchReply bench;
  bench.samples = {1e-3, 2e-3};
  bench.sm_clocks_mhz = {1500, 1600};
  bench.warmup_call_seconds = {3e-3};
  bench.event_samples = {0.9e-3, 1.9e-3};
  bench.host_call_seconds = {4e-6, 5e-6};
  bench.max_sm_clock_mhz = 1980;
  bench.throttled = 2;
  bench.warmup_calls = 17;
  bench.span_samples = 1;
  bench.timed_calls = 40;
  bench.stop_reason = "noise";
  bench.wall_seconds = 0.2;
  bench.rechecked = {{3, 1, {7, 8}, true}, {39, 1, {9, 10}, false}};
  bench.hot = HotTiming{1e-4, 100, "graph"};
  bench.steady = SteadyTiming{{8.8e-5, 9e-5}, 114, {8.8e-5, 7e-5}};
  bench.tail_checks = {{1e-5, 2e-5, 3e-6}, {1.5e-5, 2.5e-5, 3.5e-6}};
  bench.gpu_work = kGpuWork;
  bench.input_hashes = {{1, 2}, {3, 4}};
  bench.weight_hashes = {5};
  ConfirmReply confirm;
  confirm.output_hashes = {{41, 42}, {43, 44}, {45, 46}};
  confirm.gpu_work = kGpuWork;
  return {
      make("ready message", ReadyReply{false, "no kb_run", true}, {"error", "out_of_memory"}),
      make("error reply", ErrorReply{"boom", true}, {"out_of_memory"}),
      make("setup request", SetupRequest{1, 2, "00ff", true, false}),
      make("setup reply", SetupReply{-3, true}, {"enomem"}),
      make("check request", check, {"perturb_secret", "perturb_call"}),
      make("check reply", CheckReply{2, 0.5, {1, 2, 3}, {4}, true, kGpuWork}, {"seconds", "gpu_work"}, {"gpu_work"}),
      make("repeat request", RepeatRequest{21, 4}),
      make("repeat reply", repeat, {"gpu_work"}, {"gpu_work"}),
      make("bench request", BenchRequest{{31, 32}, odd_policy(), 33, 34, 5}),
      make("bench reply", bench, {"warmup_call_seconds", "event_samples", "host_call_seconds", "span_samples", "hot", "steady", "gpu_work"},
           {"gpu_work"}),
      make("confirm-prepare request", ConfirmPrepareRequest{64}),
      make("confirm-prepare reply", ConfirmPrepareReply{64}),
      make("confirm request", ConfirmRequest{51}),
      make("confirm reply", confirm, {"gpu_work"}, {"gpu_work"}),
      make("confirm-fetch request", ConfirmFetchRequest{7}),
      make("confirm-fetch reply", ConfirmFetchReply{{1, 2}, {3}}),
      make("teardown reply", TeardownReply{false}),
  };
}

TEST(ProtocolMessages, EveryMessageSurvivesItsRoundTrip) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.round_trip(c.message), c.message) << c.message.dump();
  }
}

TEST(ProtocolMessages, RequestsCarryTheirOp) {
  EXPECT_EQ(request_op(json(SetupRequest{})), "setup");
  EXPECT_EQ(request_op(json(CheckRequest{})), "check");
  EXPECT_EQ(request_op(json(RepeatRequest{})), "repeat");
  EXPECT_EQ(request_op(json(BenchRequest{})), "bench");
  EXPECT_EQ(request_op(json(ConfirmPrepareRequest{})), "confirm_prepare");
  EXPECT_EQ(request_op(json(ConfirmRequest{})), "confirm");
  EXPECT_EQ(request_op(json(ConfirmFetchRequest{})), "confirm_fetch");
  EXPECT_EQ(request_op(json(TeardownRequest{})), "teardown");
  EXPECT_THROW(request_op(json{{"seed", 1}}), ProtocolError);
}

// The error's text names the field (and the message).
void expect_refused(const Case& c, const json& bad, const std::string& field) {
  try {
    c.round_trip(bad);
    ADD_FAILURE() << c.name << " accepted " << bad.dump();
  } catch (const ProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + field + "'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.name), std::string::npos) << e.what();
  }
}

TEST(ProtocolMessages, AMissingFieldIsRefusedByName) {
  for (const Case& c : cases())
    for (const auto& [key, value] : c.message.items()) {
      if (key == "op" || c.optional.count(key)) continue;
      SCOPED_TRACE(c.name + " without " + key);
      json bad = c.message;
      bad.erase(key);
      expect_refused(c, bad, key);
    }
}

TEST(ProtocolMessages, AFieldOfTheWrongTypeIsRefusedByName) {
  for (const Case& c : cases())
    for (const auto& [key, value] : c.message.items()) {
      if (key == "op" || c.opaque.count(key)) continue;
      SCOPED_TRACE(c.name + " with a mistyped " + key);
      json bad = c.message;
      bad[key] = value.is_string() ? json(42) : json("42");
      expect_refused(c, bad, key);
    }
}

TEST(ProtocolMessages, NumbersOfTheWrongKindAreRefused) {
  // nlohmann::json would turn 1.5 into 1 and -1 into 2^64-1 without a word.
  json setup = SetupRequest{1, 2, "00", true};
  setup["weights_seed"] = 1.5;
  EXPECT_THROW(setup.get<SetupRequest>(), ProtocolError);
  setup["weights_seed"] = -1;
  EXPECT_THROW(setup.get<SetupRequest>(), ProtocolError);
  json reply = SetupReply{0, false};
  reply["rc"] = true;
  EXPECT_THROW(reply.get<SetupReply>(), ProtocolError);
}

TEST(ProtocolMessages, ANestedFieldIsNamedWithItsParent) {
  json bench = BenchRequest{{1}, odd_policy(), 2, 3, 4};
  bench["policy"].erase("min_samples");
  try {
    (void)bench.get<BenchRequest>();
    FAIL() << "accepted a policy without min_samples";
  } catch (const ProtocolError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'policy'"), std::string::npos) << what;
    EXPECT_NE(what.find("'min_samples'"), std::string::npos) << what;
  }
  json reply = cases()[9].message;
  reply["rechecked"][1]["settled"] = "yes";
  try {
    (void)reply.get<BenchReply>();
    FAIL() << "accepted a re-checked call with a string for settled";
  } catch (const ProtocolError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'rechecked'"), std::string::npos) << what;
    EXPECT_NE(what.find("'settled'"), std::string::npos) << what;
  }
}

TEST(ProtocolMessages, AFailedCallsReplyCarriesOnlyWhereItFailed) {
  const json bench = BenchReply::failed(5, "timing", 12);
  EXPECT_EQ(bench, (json{{"rc", 5}, {"phase", "timing"}, {"iteration", 12}}));
  const auto b = bench.get<BenchReply>();
  EXPECT_EQ(b.rc, 5);
  EXPECT_EQ(b.phase, "timing");
  EXPECT_EQ(b.iteration, 12u);
  const auto r = json(RepeatReply::failed(-1, 3)).get<RepeatReply>();
  EXPECT_EQ(r.rc, -1);
  EXPECT_EQ(r.call, 3);
  const json confirm = ConfirmReply::failed(2, 9);
  EXPECT_EQ(confirm, (json{{"rc", 2}, {"call", 9}}));
  const auto c = confirm.get<ConfirmReply>();
  EXPECT_EQ(c.rc, 2);
  EXPECT_EQ(c.call, 9u);
  EXPECT_TRUE(c.output_hashes.empty());
}

TEST(ProtocolMessages, AnErrorReplyIsToldFromAnOrdinaryOne) {
  EXPECT_EQ(reply_error(json(ErrorReply{"the solution does not export: kb_run", false})),
            "the solution does not export: kb_run");
  EXPECT_EQ(reply_error(json(SetupReply{0, false})), std::nullopt);
  EXPECT_THROW(reply_error(json{{"error", 3}}), ProtocolError);
}

TEST(ProtocolMessages, ThePolicyHasOneSerializer) {
  const TimingPolicy p = odd_policy();
  EXPECT_EQ(json(p), to_json(p));
  EXPECT_EQ(to_json(timing_policy_from_json(to_json(p))), to_json(p));
  json old = to_json(p);
  old.erase("perturb");  // results written before the field existed
  EXPECT_TRUE(timing_policy_from_json(old).perturb);
}

}  // namespace
}  // namespace kb
