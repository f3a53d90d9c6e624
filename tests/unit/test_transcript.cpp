// The transcript event model and the generic adapter's normalizer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/generic_adapter.h"
#include "agent/transcript.h"

#include "test_support.h"

namespace fs = std::filesystem;
using namespace kb;

namespace {
fs::path temp_dir(const std::string& name) { return testing_support::fresh_temp_dir(name); }
}  // namespace

TEST(Transcript, EventsSurviveJsonRoundTrip) {
  TranscriptEvent call;
  call.kind = EventKind::tool_call;
  call.t = 1.5;
  call.tool = "bash";
  call.call_id = "c1";
  call.input = {{"command", "./kbench check"}};
  TranscriptEvent usage;
  usage.kind = EventKind::usage;
  usage.usage = Usage{1200, 300, std::nullopt, std::nullopt, 50, 0.012};
  for (const auto& e : {call, usage}) {
    const TranscriptEvent back = event_from_json(to_json(e));
    EXPECT_EQ(to_json(back), to_json(e));
  }
  // Unknown numbers stay absent, not zero.
  EXPECT_FALSE(to_json(usage)["usage"].contains("cache_read_tokens"));
}

TEST(Transcript, BadEventsAreNamed) {
  EXPECT_THROW(parse_event_kind("assistant"), std::invalid_argument);
  try {
    event_from_json({{"kind", "usage"}, {"usage", {{"input_tokens", "many"}}}});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("usage.input_tokens"), std::string::npos) << e.what();
  }
}

TEST(Transcript, GenericAdapterMakesOneAssistantTextEventPerLine) {
  const fs::path d = temp_dir("transcript");
  std::ofstream(d / "stdout.log") << "first\r\nsecond\n\nlast without newline";
  std::ofstream(d / "stderr.log") << "warning: x\n";
  GenericAdapter a("true", {});
  const auto events = a.normalize({d / "stdout.log", d / "stderr.log"});
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].text, "first");
  EXPECT_EQ(events[2].text, "");
  EXPECT_EQ(events[3].text, "last without newline");
  EXPECT_EQ(events[4].stream, "stderr");
  for (const auto& e : events) EXPECT_EQ(e.kind, EventKind::assistant_text);
  write_events_jsonl(d / "events.jsonl", events);
  const auto back = read_events_jsonl(d / "events.jsonl");
  ASSERT_EQ(back.size(), events.size());
  EXPECT_EQ(back[3].text, "last without newline");
  fs::remove_all(d);
}

TEST(Transcript, InvalidUtf8InAgentOutputStillGivesValidJsonLines) {
  const fs::path d = temp_dir("utf8");
  std::ofstream(d / "stdout.log") << "bad \xff\xfe bytes\n";
  GenericAdapter a("true", {});
  write_events_jsonl(d / "events.jsonl", a.normalize({d / "stdout.log", d / "none.log"}));
  EXPECT_EQ(read_events_jsonl(d / "events.jsonl").size(), 1u);
  fs::remove_all(d);
}

TEST(GenericAdapter, FillsPlaceholdersShellQuotedAndLeavesOtherBraces) {
  GenericAdapter a("agent --prompt-file {prompt_file} --model {model} --cwd {workspace} ${HOME} {other}", {});
  AgentRunContext c;
  c.prompt_file = "/runs/a b/workspace/prompt.md";
  c.workspace = "/runs/a b/workspace";
  c.model = "org/model:v1";
  const AgentCommand cmd = a.command(c);
  ASSERT_EQ(cmd.argv.size(), 3u);
  EXPECT_EQ(cmd.argv[0], "/bin/sh");
  EXPECT_EQ(cmd.argv[2],
            "agent --prompt-file '/runs/a b/workspace/prompt.md' --model org/model:v1 --cwd '/runs/a b/workspace' ${HOME} {other}");
}

TEST(GenericAdapter, NeedsACommand) {
  try {
    GenericAdapter a("  ", {});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--command"), std::string::npos);
  }
}
