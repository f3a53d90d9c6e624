// The tools of kbench's own agent loop (agent/loop/tools.h), used in a scratch workspace; and how
// a transcript's usage adds up (agent/transcript.h). The loop against a model is
// tests/integration/agents_test.cpp (--agent kbench with the replay gateway).
#include <gtest/gtest.h>

#include <fstream>

#include "agent/loop/agent_loop.h"
#include "agent/loop/tools.h"
#include "agent/transcript.h"
#include "test_support.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace kb;
using namespace kb::loop;
using kb::testing_support::TempDir;

TEST(LoopTools, WriteReadEditAndBashWorkInTheWorkspace) {
  TempDir d("loop-tools");
  fs::create_directories(d.path());
  const Tools t(d.path(), std::chrono::seconds(30));
  EXPECT_EQ(t.declarations().size(), 5u);
  ToolResult w = t.run("write_file", {{"path", "sub/a.txt"}, {"content", "alpha beta\n"}});
  EXPECT_FALSE(w.is_error) << w.output;
  EXPECT_EQ(t.run("read_file", {{"path", "sub/a.txt"}}).output, "alpha beta\n");
  EXPECT_FALSE(t.run("edit_file", {{"path", "sub/a.txt"}, {"old_string", "beta"}, {"new_string", "gamma"}}).is_error);
  EXPECT_EQ(t.run("read_file", {{"path", (d.path() / "sub/a.txt").string()}}).output, "alpha gamma\n") << "absolute paths too";
  const ToolResult twice = t.run("write_file", {{"path", "b.txt"}, {"content", "x x"}});
  EXPECT_FALSE(twice.is_error);
  const ToolResult ambiguous = t.run("edit_file", {{"path", "b.txt"}, {"old_string", "x"}, {"new_string", "y"}});
  EXPECT_TRUE(ambiguous.is_error);
  EXPECT_NE(ambiguous.output.find("more than once"), std::string::npos) << ambiguous.output;
  const ToolResult ok = t.run("bash", {{"command", "cat sub/a.txt; pwd"}});
  EXPECT_FALSE(ok.is_error);
  EXPECT_NE(ok.output.find("alpha gamma"), std::string::npos) << ok.output;
  EXPECT_NE(ok.output.find(d.path().string()), std::string::npos) << "runs in the workspace: " << ok.output;
  EXPECT_NE(ok.output.find("[exit code 0]"), std::string::npos) << ok.output;
  const ToolResult bad = t.run("bash", {{"command", "echo oops >&2; exit 3"}});
  EXPECT_TRUE(bad.is_error);
  EXPECT_NE(bad.output.find("oops"), std::string::npos);
  EXPECT_NE(bad.output.find("[exit code 3]"), std::string::npos);
  const ToolResult slow = t.run("bash", {{"command", "sleep 30"}, {"timeout_seconds", 1}});
  EXPECT_TRUE(slow.is_error);
  EXPECT_NE(slow.output.find("[timed out]"), std::string::npos) << slow.output;
}

TEST(LoopTools, BadCallsComeBackAsErrorsTheModelCanRead) {
  TempDir d("loop-bad");
  fs::create_directories(d.path());
  const Tools t(d.path(), std::chrono::seconds(30));
  EXPECT_NE(t.run("bash", json::object()).output.find("missing string argument \"command\""), std::string::npos);
  EXPECT_NE(t.run("rm_rf", json::object()).output.find("unknown tool \"rm_rf\""), std::string::npos);
  EXPECT_TRUE(t.run("read_file", {{"path", "nope.txt"}}).is_error);
  const ToolResult s = t.run("submit", json::object());
  EXPECT_TRUE(s.is_error);
  EXPECT_FALSE(s.finished) << "no ./kbench to check with: nothing submitted";
}

TEST(LoopTools, SubmitEndsTheRunOnlyWhenTheCheckPasses) {
  TempDir d("loop-submit");
  fs::create_directories(d.path());
  const Tools t(d.path(), std::chrono::seconds(30));
  auto wrapper = [&](int code) {
    std::ofstream(d.path() / "kbench") << "#!/bin/sh\necho \"  verdict " << (code ? "FAIL" : "PASS") << "\"\nexit " << code << "\n";
    fs::permissions(d.path() / "kbench", fs::perms::owner_all);
  };
  wrapper(1);
  ToolResult fail = t.run("submit", json::object());
  EXPECT_FALSE(fail.finished);
  EXPECT_NE(fail.output.find("verdict FAIL"), std::string::npos) << "the check's output is fed back";
  wrapper(0);
  ToolResult pass = t.run("submit", json::object());
  EXPECT_TRUE(pass.finished);
  EXPECT_FALSE(pass.is_error);
}

TEST(LoopTools, LongOutputKeepsItsHeadAndTail) {
  std::string s(100000, 'x');
  s.replace(0, 5, "HEAD!");
  s.replace(s.size() - 5, 5, "TAIL!");
  const std::string cut = truncate_output(s, 1000);
  EXPECT_LT(cut.size(), 1100u);
  EXPECT_EQ(cut.rfind("HEAD!", 0), 0u);
  EXPECT_EQ(cut.substr(cut.size() - 5), "TAIL!");
  EXPECT_NE(cut.find("99000 bytes left out"), std::string::npos) << cut.substr(480, 60);
  EXPECT_EQ(truncate_output("short"), "short");
}

TEST(TranscriptUsage, ATotalWinsOverPartsAndPartsAddUp) {
  auto usage = [](std::optional<int64_t> in, std::optional<int64_t> out, const char* scope) {
    TranscriptEvent e;
    e.kind = EventKind::usage;
    e.usage = Usage{in, out, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    e.scope = scope;
    return e;
  };
  EXPECT_FALSE(transcript_usage({}));
  const auto parts = transcript_usage({usage(10, 1, "part"), usage(20, std::nullopt, "part")});
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->input_tokens, 30);
  EXPECT_EQ(parts->output_tokens, 1);
  EXPECT_FALSE(parts->cache_read_tokens) << "a count nobody reported stays unset";
  const auto total = transcript_usage({usage(10, 1, "part"), usage(100, 50, "total"), usage(5, 5, "part")});
  EXPECT_EQ(total->input_tokens, 100);
  EXPECT_EQ(total->output_tokens, 50);
  // The scope survives the JSON round trip, and a bad one is refused.
  EXPECT_EQ(event_from_json(to_json(usage(1, 2, "total"))).scope, "total");
  EXPECT_THROW(event_from_json(json{{"kind", "usage"}, {"scope", "sometimes"}}), std::invalid_argument);
}

TEST(AgentLoop, StopsWithTheEndpointsErrorWhenItCannotBeReached) {
  TempDir d("loop-unreachable");
  fs::create_directories(d.path());
  LoopOptions o;
  o.model = "m";
  o.workspace = d.path();
  o.prompt = "do it";
  o.max_turns = 3;
  o.chat.base_url = "http://127.0.0.1:1/v1";  // port 1: nothing listens there
  o.chat.max_retries = 1;
  o.chat.first_backoff = std::chrono::milliseconds(10);
  std::vector<TranscriptEvent> events;
  o.emit = [&](const TranscriptEvent& e) { events.push_back(e); };
  const LoopOutcome r = run_agent_loop(o);
  EXPECT_FALSE(r.submitted);
  EXPECT_EQ(r.turns, 1);
  EXPECT_NE(r.stop_reason.find("no answer"), std::string::npos) << r.stop_reason;
  EXPECT_NE(r.stop_reason.find("after 1 retries"), std::string::npos) << r.stop_reason;
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, EventKind::user);
  EXPECT_EQ(events[1].kind, EventKind::error);
}
