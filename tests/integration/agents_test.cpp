// The real agent CLIs (Claude Code, Codex, opencode, Gemini CLI, Kimi Code) and kbench's own agent
// loop, each run for real by `kbench run` in its sandbox against the gateway in replay mode: the
// scripted model (tests/fixtures/agents/<agent>.json) writes a correct softmax through the CLI's
// own tools, runs ./kbench check, and stops. Each run directory must hold the transcript parsed
// into events, the gateway's usage equal to what the script served, the CLI's own usage figures
// consistent with it, and a passing result.json judged from the solution the CLI wrote.
//
// The CLIs come from npm (tools/agents/package.json, installed by `scripts/setup --agents`, which
// scripts/test runs). A CLI that is not installed makes its test skip with the reason, unless
// KBENCH_REQUIRE_AGENTS is set (scripts/test sets it after installing them): then it fails.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/adapter.h"
#include "agent/sandbox.h"
#include "agent/transcript.h"
#include "agent_test_util.h"
#include "core/subprocess.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace kb;

namespace {

const fs::path kSource = KBENCH_SOURCE_DIR;

struct AgentCase {
  const char* agent;
  const char* model;
};

std::ostream& operator<<(std::ostream& os, const AgentCase& c) { return os << c.agent; }

int64_t count(const json& usage, const char* key) { return usage.is_object() ? usage.value(key, int64_t{0}) : 0; }

// What the script serves, added up: every turn (the gateway's count), and the conversation's turns
// only (the ones without "match", which the CLI itself accounts for).
struct ScriptTotals {
  int turns = 0;
  json all = json::object(), conversation = json::object();
};

ScriptTotals script_totals(const fs::path& script) {
  ScriptTotals t;
  for (const auto& turn : json::parse(kbtest::slurp(script))) {
    ++t.turns;
    for (const char* k : {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"}) {
      const int64_t v = count(turn.value("usage", json::object()), k);
      t.all[k] = t.all.value(k, int64_t{0}) + v;
      if (!turn.contains("match")) t.conversation[k] = t.conversation.value(k, int64_t{0}) + v;
    }
  }
  return t;
}

int64_t prompt_tokens(const json& u) {
  return count(u, "input_tokens") + count(u, "cache_read_tokens") + count(u, "cache_write_tokens");
}

class RealAgent : public ::testing::TestWithParam<AgentCase> {};

TEST_P(RealAgent, WritesAPassingSolutionThroughItsOwnToolsAgainstTheReplayGateway) {
  const AgentCase c = GetParam();
  if (!probe_sandbox().ok) GTEST_SKIP() << probe_sandbox().error;
  try {
    AdapterOptions o;
    o.kbench_binary = KBENCH_BINARY;
    (void)make_adapter(c.agent, o);
  } catch (const std::invalid_argument& e) {
    if (std::getenv("KBENCH_REQUIRE_AGENTS")) FAIL() << e.what();
    GTEST_SKIP() << e.what();
  }
  const fs::path root = kbtest::scratch(std::string("agent-") + c.agent);
  const fs::path script = kSource / "tests/fixtures/agents" / (std::string(c.agent) + ".json");
  const auto t0 = std::chrono::steady_clock::now();
  const CommandResult r =
      run_command({KBENCH_BINARY, "run", "--agent", c.agent, "--model", c.model, "--problem", "softmax", "--target", "host",
                   "--budget", "4m", "--check-only", "--runs-dir", (root / "runs").string(), "--gateway", "replay:" + script.string()},
                  std::chrono::minutes(6));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::vector<fs::path> runs = kbtest::run_dirs(root / "runs");
  ASSERT_EQ(runs.size(), 1u);
  const fs::path run = runs[0];

  // The record: the CLI ran to its end by itself, its version is known, the verdict is a pass.
  const json rec = json::parse(kbtest::slurp(run / "run.json"));
  EXPECT_EQ(rec["status"], "complete") << rec.dump(2);
  EXPECT_EQ(rec["agent_process"]["exit_code"], 0) << kbtest::slurp(run / "transcript/stderr.log");
  EXPECT_EQ(rec["verdict"]["verdict"], "pass");
  ASSERT_TRUE(rec.contains("agent_version"));
  EXPECT_EQ(rec["agent_version"].get<std::string>().rfind("unknown", 0), std::string::npos) << rec["agent_version"];
  EXPECT_EQ(json::parse(kbtest::slurp(run / "result.json"))["verdict"], "pass");
  EXPECT_EQ(kbtest::slurp(run / "solution/solution.cpp"),
            kbtest::slurp(kSource / "problems/softmax/solutions/host-naive/solution.cpp"))
      << "the solution is the one the scripted model wrote through the CLI";

  // The gateway served the whole script, and counted exactly what it served.
  const ScriptTotals want = script_totals(script);
  const json usage = json::parse(kbtest::slurp(run / "usage.json"));
  EXPECT_EQ(usage["exchanges"], want.turns) << kbtest::slurp(run / "gateway.jsonl").substr(0, 4000);
  EXPECT_EQ(usage["errors"], 0);
  for (const char* k : {"input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"})
    EXPECT_EQ(count(usage, k), want.all[k].get<int64_t>()) << k;

  // The transcript, normalized: the write, the check the CLI ran and its PASS, the final answer.
  const auto events = read_events_jsonl(run / "transcript/events.jsonl");
  bool wrote = false, checked = false;
  for (const auto& e : events) {
    if (e.kind == EventKind::tool_call && e.input.dump().find("solution.cpp") != std::string::npos) wrote = true;
    if (e.kind == EventKind::tool_result && e.text.find("verdict PASS") != std::string::npos) checked = true;
  }
  EXPECT_TRUE(wrote) << "no tool call writing solution.cpp in events.jsonl";
  EXPECT_TRUE(checked) << "no tool result with kbench check's PASS in events.jsonl";
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [](const TranscriptEvent& e) {
    return e.kind == EventKind::assistant_text && e.text.find("three-pass softmax") != std::string::npos;
  })) << "the model's first words are missing from events.jsonl";

  // The CLI's own usage figures (from its output, or Kimi's wire log) agree with the
  // conversation's: the same prompt tokens (CLIs split them between input and cache differently)
  // and the same output tokens.
  ASSERT_TRUE(rec.contains("transcript") && rec["transcript"].contains("usage")) << rec.dump(2);
  const json tu = rec["transcript"]["usage"];
  EXPECT_EQ(count(tu, "output_tokens"), want.conversation["output_tokens"].get<int64_t>()) << tu.dump();
  EXPECT_EQ(prompt_tokens(tu), prompt_tokens(want.conversation)) << tu.dump();
  std::cerr << c.agent << ": run took " << took << " s\n";
  fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(Agents, RealAgent,
                         ::testing::Values(AgentCase{"claude-code", "claude-test"}, AgentCase{"codex", "gpt-test"},
                                           AgentCase{"opencode", "oc-test"}, AgentCase{"gemini", "gemini-test"},
                                           AgentCase{"kimi", "kimi-test"}, AgentCase{"kbench", "loop-test"}),
                         [](const ::testing::TestParamInfo<AgentCase>& i) {
                           std::string n = i.param.agent;
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
