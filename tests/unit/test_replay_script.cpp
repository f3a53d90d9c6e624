// Replay scripts beyond plain text (docs/gateway.md): tool calls rendered in each provider's
// format (whole and streamed), "match" turns for a CLI's side requests, and {{kbench.NAME}}
// placeholders. The gateway serving them over HTTP is tests/integration/gateway_test.cpp.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "agent/gateway/api.h"
#include "agent/gateway/replay.h"
#include "test_support.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace kb;
using namespace kb::gateway;
using kb::testing_support::TempDir;

namespace {

ReplayTurn tool_turn(ApiKind k) {
  ReplayTurn t;
  t.api = k;
  t.text = "Writing it.";
  t.tool_calls = {{"call_1", "write_file", {{"path", "solution.cpp"}, {"content", "int x;"}}},
                  {"call_2", "bash", {{"command", "./kbench check"}}}};
  t.usage = Usage{100, 20, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  return t;
}

// The data of every SSE event of a rendered stream, parsed.
std::vector<json> stream_data(const ReplayResponse& r) {
  std::vector<json> out;
  for (const auto& e : parse_sse(r.body))
    if (e.data != "[DONE]") out.push_back(json::parse(e.data));
  return out;
}

fs::path write_script(const fs::path& dir, const std::string& text) {
  fs::create_directories(dir);
  std::ofstream(dir / "script.jsonl") << text;
  return dir / "script.jsonl";
}

}  // namespace

TEST(ReplayToolCalls, AnthropicMessagesHaveToolUseBlocksWholeAndStreamed) {
  const ReplayTurn t = tool_turn(ApiKind::anthropic_messages);
  const json body = json::parse(render_turn(t, false, "m", "", 0).body);
  ASSERT_EQ(body["content"].size(), 3u);
  EXPECT_EQ(body["content"][0]["text"], "Writing it.");
  EXPECT_EQ(body["content"][1]["type"], "tool_use");
  EXPECT_EQ(body["content"][1]["name"], "write_file");
  EXPECT_EQ(body["content"][1]["input"]["content"], "int x;");
  EXPECT_EQ(body["stop_reason"], "tool_use");
  const auto ev = stream_data(render_turn(t, true, "m", "", 0));
  std::string partial;
  int tool_starts = 0;
  for (const auto& d : ev) {
    if (d["type"] == "content_block_start" && d["content_block"]["type"] == "tool_use") ++tool_starts;
    if (d["type"] == "content_block_delta" && d["delta"]["type"] == "input_json_delta" && d["index"] == 1)
      partial += d["delta"]["partial_json"].get<std::string>();
    if (d["type"] == "message_delta") {
      EXPECT_EQ(d["delta"]["stop_reason"], "tool_use");
    }
  }
  EXPECT_EQ(tool_starts, 2);
  EXPECT_EQ(json::parse(partial)["path"], "solution.cpp");
  EXPECT_EQ(usage_from_stream(ApiKind::anthropic_messages, render_turn(t, true, "m", "", 0).body)->input_tokens, 100);
}

TEST(ReplayToolCalls, ChatCompletionsHaveToolCallsWithJsonArguments) {
  const ReplayTurn t = tool_turn(ApiKind::openai_chat);
  const json body = json::parse(render_turn(t, false, "m", "", 0).body);
  const json& msg = body["choices"][0]["message"];
  ASSERT_EQ(msg["tool_calls"].size(), 2u);
  EXPECT_EQ(msg["tool_calls"][1]["id"], "call_2");
  EXPECT_EQ(msg["tool_calls"][1]["function"]["name"], "bash");
  EXPECT_EQ(json::parse(msg["tool_calls"][1]["function"]["arguments"].get<std::string>())["command"], "./kbench check");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "tool_calls");
  const auto ev = stream_data(render_turn(t, true, "m", "", 0));
  std::vector<std::string> names;
  for (const auto& d : ev)
    for (const auto& c : d["choices"])
      if (c["delta"].contains("tool_calls")) names.push_back(c["delta"]["tool_calls"][0]["function"]["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"write_file", "bash"}));
  EXPECT_EQ(ev.back()["usage"]["prompt_tokens"], 100) << "the usage chunk comes last";
}

TEST(ReplayToolCalls, ResponsesHaveFunctionCallItemsAndACompletedEvent) {
  const ReplayTurn t = tool_turn(ApiKind::openai_responses);
  const json body = json::parse(render_turn(t, false, "m", "", 0).body);
  ASSERT_EQ(body["output"].size(), 3u);
  EXPECT_EQ(body["output"][1]["type"], "function_call");
  EXPECT_EQ(body["output"][1]["call_id"], "call_1");
  const auto ev = stream_data(render_turn(t, true, "m", "", 0));
  int done_calls = 0, seq = 0;
  for (const auto& d : ev) {
    EXPECT_EQ(d["sequence_number"], seq++) << "sequence numbers count up from 0";
    if (d["type"] == "response.output_item.done" && d["item"]["type"] == "function_call") ++done_calls;
  }
  EXPECT_EQ(done_calls, 2);
  EXPECT_EQ(ev.back()["type"], "response.completed");
  EXPECT_EQ(ev.back()["response"]["usage"]["input_tokens"], 100);
}

TEST(ReplayToolCalls, GeminiHasFunctionCallParts) {
  const ReplayTurn t = tool_turn(ApiKind::gemini);
  const json body = json::parse(render_turn(t, false, "m", "", 0).body);
  const json& parts = body["candidates"][0]["content"]["parts"];
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2]["functionCall"]["name"], "bash");
  EXPECT_EQ(parts[2]["functionCall"]["args"]["command"], "./kbench check");
  EXPECT_EQ(body["usageMetadata"]["promptTokenCount"], 100);
}

TEST(ReplayScript, MatchTurnsAnswerSideRequestsWheneverTheyComeAndTheRestStaysInOrder) {
  TempDir d("replay-match");
  const fs::path f = write_script(d.path(), R"({"api":"openai_chat","match":"title generator","text":"A title"}
{"api":"openai_chat","text":"first"}
{"api":"openai_chat","match":"ping","repeat":true,"text":"pong"}
{"api":"openai_chat","text":"second"}
)");
  ReplayScript s = ReplayScript::load(f);
  auto text = [](const ReplayResponse& r) { return json::parse(r.body)["choices"][0]["message"]["content"].get<std::string>(); };
  EXPECT_EQ(text(s.next(ApiKind::openai_chat, false, "m", "", R"({"messages":"do it"})")), "first");
  EXPECT_EQ(text(s.next(ApiKind::openai_chat, false, "m", "", R"({"messages":"ping"})")), "pong");
  EXPECT_EQ(text(s.next(ApiKind::openai_chat, false, "m", "", R"({"messages":"You are a title generator"})")), "A title");
  EXPECT_EQ(text(s.next(ApiKind::openai_chat, false, "m", "", R"({"messages":"ping"})")), "pong") << "repeat: never used up";
  EXPECT_EQ(text(s.next(ApiKind::openai_chat, false, "m", "", R"({"messages":"go on"})")), "second");
  EXPECT_EQ(s.served(), 4u);
  try {
    (void)s.next(ApiKind::openai_chat, false, "m", "", R"({"messages":"more"})");
    FAIL() << "the conversation is over";
  } catch (const ReplayError& e) {
    EXPECT_NE(std::string(e.what()).find("has run out"), std::string::npos) << e.what();
  }
}

TEST(ReplayScript, FillsKbenchPlaceholdersAndRefusesUnknownOnes) {
  TempDir d("replay-vars");
  const fs::path f = write_script(d.path(),
                                  R"({"api":"anthropic_messages","tool_calls":[{"name":"Write","input":{"file_path":"{{kbench.workspace}}/solution.cpp","content":"x"}}]})");
  ReplayScript s = ReplayScript::load(f, {{"workspace", "/runs/r1/workspace"}});
  const json body = json::parse(s.next(ApiKind::anthropic_messages, false, "m", "").body);
  EXPECT_EQ(body["content"][0]["input"]["file_path"], "/runs/r1/workspace/solution.cpp");
  try {
    (void)ReplayScript::load(f);
    FAIL() << "{{kbench.workspace}} without a value was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown placeholder {{kbench.workspace}}"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(":1"), std::string::npos) << "names the line: " << e.what();
  }
}

TEST(ReplayScript, RejectsBadToolCallsAndRepeatWithoutMatch) {
  TempDir d("replay-bad");
  auto error_of = [&](const std::string& line) {
    try {
      (void)ReplayScript::load(write_script(d.path(), line));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error_of(R"({"api":"openai_chat","tool_calls":[{"input":{}}]})").find("tool_calls[0].name: missing"), std::string::npos);
  EXPECT_NE(error_of(R"({"api":"openai_chat","tool_calls":[{"name":"x","input":"ls"}]})").find("tool_calls[0].input: expected an object"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"api":"openai_chat","text":"x","repeat":true})").find("only a turn with \"match\" can repeat"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"api":"openai_chat","tool_calls":[{"name":"x"}],"body":{}})").find("give exactly one of"), std::string::npos);
}
