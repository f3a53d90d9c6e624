// Each agent CLI's adapter reading its CLI's output (tests/fixtures/agents/transcripts/: lines
// taken from real runs of the pinned CLIs, shortened) into kbench's event model; and what each
// puts on the command line, in the environment and in its config files. The CLIs themselves run
// in tests/integration/agents_test.cpp; here --agent-bin points at /bin/sh, so no CLI is needed.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "agent/adapter.h"
#include "agent/cli_install.h"
#include "core/bwrap.h"
#include "core/subprocess.h"
#include "test_support.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace kb;
using kb::testing_support::ScopedEnv;
using kb::testing_support::TempDir;

namespace {

const fs::path kTranscripts = fs::path(KBENCH_SOURCE_DIR) / "tests/fixtures/agents/transcripts";

std::unique_ptr<AgentAdapter> adapter(const std::string& name) {
  AdapterOptions o;
  o.agent_bin = "/bin/sh";  // any executable: the adapters' parsing does not run it
  o.kbench_binary = "/bin/sh";
  return make_adapter(name, o);
}

std::vector<TranscriptEvent> normalize(const std::string& name, const fs::path& home = {}) {
  return adapter(name)->normalize({kTranscripts / (name + ".jsonl"), kTranscripts / "no-stderr.log", home});
}

std::vector<EventKind> kinds(const std::vector<TranscriptEvent>& events) {
  std::vector<EventKind> k;
  for (const auto& e : events) k.push_back(e.kind);
  return k;
}

const TranscriptEvent& nth(const std::vector<TranscriptEvent>& events, EventKind kind, size_t n = 0) {
  for (const auto& e : events)
    if (e.kind == kind && n-- == 0) return e;
  throw std::runtime_error("no such event");
}

AgentRunContext context(const fs::path& dir) {
  fs::create_directories(dir / "ws");
  std::ofstream(dir / "ws/prompt.md") << "Write a softmax.\n";
  AgentRunContext c;
  c.model = "m-1";
  c.workspace = dir / "ws";
  c.prompt_file = dir / "ws/prompt.md";
  c.home = dir / "home";
  c.gateway_url = "http://127.0.0.1:4242";
  c.gateway_key = "kbench-gateway-run";
  return c;
}

using K = EventKind;

}  // namespace

TEST(ClaudeCodeAdapter, ReadsStreamJsonIntoEventsWithTheResultTotal) {
  const auto ev = normalize("claude-code");
  EXPECT_EQ(kinds(ev), (std::vector<K>{K::error, K::reasoning, K::assistant_text, K::tool_call, K::tool_result, K::tool_call,
                                       K::tool_result, K::assistant_text, K::usage}));
  EXPECT_NE(ev[0].text.find("API retry 1"), std::string::npos) << ev[0].text;
  EXPECT_EQ(nth(ev, K::tool_call).tool, "Write");
  EXPECT_EQ(nth(ev, K::tool_call).input["file_path"], "/w/solution.cpp");
  EXPECT_EQ(nth(ev, K::tool_result, 1).tool, "Bash") << "the result is paired with its call's tool";
  EXPECT_EQ(nth(ev, K::tool_result, 1).text, "  verdict FAIL");
  EXPECT_EQ(nth(ev, K::tool_result, 1).is_error, true);
  const auto u = transcript_usage(ev);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 3500);
  EXPECT_EQ(u->output_tokens, 480);
  EXPECT_EQ(u->cache_read_tokens, 8200);
  EXPECT_EQ(u->cache_write_tokens, 1000);
  EXPECT_DOUBLE_EQ(*u->cost_usd, 0.03024);
}

TEST(CodexAdapter, ReadsExecJsonIntoEventsWithTheTurnUsage) {
  const auto ev = normalize("codex");
  EXPECT_EQ(kinds(ev), (std::vector<K>{K::error, K::reasoning, K::assistant_text, K::tool_call, K::tool_result, K::tool_call,
                                       K::tool_result, K::tool_call, K::tool_result, K::assistant_text, K::usage}));
  EXPECT_EQ(nth(ev, K::tool_call, 1).input["command"], "/bin/bash -lc './kbench check'");
  EXPECT_EQ(nth(ev, K::tool_result, 1).is_error, true) << "exit code 1";
  EXPECT_EQ(nth(ev, K::tool_result, 0).is_error, false);
  EXPECT_EQ(nth(ev, K::tool_call, 2).tool, "file_change");
  const auto u = transcript_usage(ev);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 3500) << "input_tokens counts the cached ones";
  EXPECT_EQ(u->cache_read_tokens, 8200);
  EXPECT_EQ(u->output_tokens, 480);
  EXPECT_EQ(u->reasoning_tokens, 100);
}

TEST(OpencodeAdapter, ReadsItsJsonEventsAndAddsUpTheSteps) {
  const auto ev = normalize("opencode");
  EXPECT_EQ(kinds(ev), (std::vector<K>{K::reasoning, K::assistant_text, K::tool_call, K::tool_result, K::usage, K::tool_call,
                                       K::tool_result, K::usage, K::error}));
  EXPECT_EQ(nth(ev, K::tool_call).input["filePath"], "/w/solution.cpp");
  EXPECT_EQ(nth(ev, K::tool_result, 1).is_error, true);
  EXPECT_EQ(nth(ev, K::tool_result, 1).text, "verdict FAIL");
  EXPECT_NE(nth(ev, K::error).text.find("rate limited"), std::string::npos);
  const auto u = transcript_usage(ev);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 4200);
  EXPECT_EQ(u->output_tokens, 450) << "opencode counts reasoning apart; kbench's output includes it";
  EXPECT_EQ(u->reasoning_tokens, 20);
  EXPECT_EQ(u->cache_read_tokens, 4000);
  EXPECT_NEAR(*u->cost_usd, 0.012, 1e-12);
}

TEST(GeminiCliAdapter, JoinsStreamedTextAndReadsTheResultStats) {
  const auto ev = normalize("gemini");
  EXPECT_EQ(kinds(ev), (std::vector<K>{K::user, K::assistant_text, K::tool_call, K::tool_result, K::tool_call, K::tool_result,
                                       K::error, K::usage}));
  EXPECT_EQ(nth(ev, K::assistant_text).text, "I'll write a three-pass softmax.");
  EXPECT_EQ(nth(ev, K::tool_result, 1).tool, "run_shell_command");
  EXPECT_EQ(nth(ev, K::tool_result, 1).is_error, true);
  EXPECT_NE(nth(ev, K::tool_result, 1).text.find("exit code 1"), std::string::npos);
  const auto u = transcript_usage(ev);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 3500) << "input_tokens counts the cached ones";
  EXPECT_EQ(u->cache_read_tokens, 8200);
  EXPECT_EQ(u->output_tokens, 380);
}

TEST(KimiCodeAdapter, ReadsItsStreamAndTakesUsageFromEveryAgentsWireLog) {
  const auto ev = normalize("kimi", kTranscripts / "kimi-home");
  EXPECT_EQ(kinds(ev), (std::vector<K>{K::error, K::reasoning, K::assistant_text, K::tool_call, K::tool_result, K::assistant_text,
                                       K::usage, K::usage, K::usage}));
  EXPECT_EQ(nth(ev, K::tool_call).input["path"], "solution.cpp") << "arguments are parsed from their JSON string";
  EXPECT_EQ(nth(ev, K::tool_result).tool, "Write");
  const auto u = transcript_usage(ev);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->input_tokens, 3210) << "main and subagent wire logs added up";
  EXPECT_EQ(u->output_tokens, 455);
  EXPECT_EQ(u->cache_read_tokens, 4000);
  EXPECT_EQ(u->cache_write_tokens, 7);
}

TEST(CliAdapters, SayWhatFailedWhenTheCliPrintedNoEvent) {
  TempDir t("adapter-stderr");
  fs::create_directories(t.path());
  struct { fs::path path; } d{t.path()};
  std::ofstream(d.path / "stdout.log") << "";
  std::ofstream(d.path / "stderr.log") << "Error: invalid API key\n";
  const auto ev = adapter("codex")->normalize({d.path / "stdout.log", d.path / "stderr.log", {}});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, EventKind::error);
  EXPECT_EQ(ev[0].stream, "stderr");
  EXPECT_EQ(ev[0].text, "Error: invalid API key");
}

TEST(CliAdapters, PointTheirCliAtTheGatewayWithThePlaceholderKeyAndNoTelemetry) {
  TempDir t("adapter-env");
  const AgentRunContext c = context(t.path());
  {
    auto a = adapter("claude-code");
    const auto env = a->environment(c);
    EXPECT_EQ(env.at("ANTHROPIC_BASE_URL"), "http://127.0.0.1:4242");
    EXPECT_EQ(env.at("ANTHROPIC_API_KEY"), "kbench-gateway-run");
    EXPECT_EQ(env.at("DISABLE_AUTOUPDATER"), "1");
    EXPECT_EQ(env.at("CLAUDE_CONFIG_DIR"), (c.home / ".claude").string());
    const auto cmd = a->command(c);
    EXPECT_EQ(cmd.stdin_text, "Write a softmax.\n") << "the prompt goes on stdin";
    EXPECT_NE(join_command(cmd.argv).find("-p --verbose --output-format stream-json --model m-1 --permission-mode bypassPermissions"),
              std::string::npos)
        << join_command(cmd.argv);
  }
  {
    auto a = adapter("codex");
    const auto files = a->config_files(c);
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(files[0].path, ".codex/config.toml");
    EXPECT_NE(files[0].content.find("base_url = \"http://127.0.0.1:4242/v1\""), std::string::npos) << files[0].content;
    EXPECT_NE(files[0].content.find("wire_api = \"responses\""), std::string::npos);
    EXPECT_NE(files[0].content.find("supports_websockets = false"), std::string::npos);
    EXPECT_EQ(a->environment(c).at("CODEX_HOME"), (c.home / ".codex").string());
  }
  {
    auto a = adapter("opencode");
    const json cfg = json::parse(a->config_files(c).at(0).content);
    EXPECT_EQ(cfg["provider"]["kbench"]["options"]["baseURL"], "http://127.0.0.1:4242/v1");
    EXPECT_EQ(cfg["model"], "kbench/m-1");
    EXPECT_EQ(cfg["permission"]["bash"], "allow");
    EXPECT_EQ(cfg["autoupdate"], false);
    EXPECT_EQ(a->environment(c).at("OPENAI_API_KEY"), "kbench-gateway-run");
  }
  {
    auto a = adapter("gemini");
    EXPECT_EQ(a->environment(c).at("GOOGLE_GEMINI_BASE_URL"), "http://127.0.0.1:4242");
    const json s = json::parse(a->config_files(c).at(0).content);
    EXPECT_EQ(s["privacy"]["usageStatisticsEnabled"], false);
    EXPECT_EQ(s["general"]["enableAutoUpdate"], false);
  }
  {
    auto a = adapter("kimi");
    const auto toml = a->config_files(c).at(0).content;
    EXPECT_NE(toml.find("base_url = \"http://127.0.0.1:4242/v1\""), std::string::npos) << toml;
    EXPECT_NE(toml.find("model = \"m-1\""), std::string::npos);
    EXPECT_NE(toml.find("telemetry = false"), std::string::npos);
    EXPECT_EQ(a->environment(c).at("KIMI_CODE_NO_AUTO_UPDATE"), "1");
  }
  {
    auto a = adapter("kbench");
    EXPECT_EQ(a->environment(c).at("OPENAI_BASE_URL"), "http://127.0.0.1:4242/v1");
    EXPECT_NE(join_command(a->command(c).argv).find("agent-loop --model m-1"), std::string::npos);
  }
}

namespace {

// Every variable some CLI reads for its model API's base URL or key: what the generic agent gets
// with the gateway, and what a real adapter sets only of its own CLI.
const char* const kGatewayVariables[] = {"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL",   "OPENAI_API_BASE",
                                         "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_BASE_URL", "ANTHROPIC_API_KEY",
                                         "OPENAI_API_KEY",     "GEMINI_API_KEY"};

// With the gateway, `agent` points its CLI at the gateway's `url` -- through `url_variable` in
// its environment, or through its config file when `url_variable` is empty -- gives it the run's
// placeholder key in `key_variable`, and sets no other CLI's base URL or key.
void expect_only_its_cli_at_the_gateway(const std::string& agent, const std::string& url_variable, const std::string& url,
                                        const std::string& key_variable) {
  TempDir t("adapter-gateway-" + agent);
  const AgentRunContext c = context(t.path());
  const auto a = adapter(agent);
  const auto env = a->environment(c);
  if (!url_variable.empty()) {
    ASSERT_TRUE(env.count(url_variable)) << agent << " sets no " << url_variable;
    EXPECT_EQ(env.at(url_variable), url) << agent;
  } else {
    std::string configs;
    for (const auto& f : a->config_files(c)) configs += f.content;
    EXPECT_NE(configs.find(url), std::string::npos) << agent << "'s config files do not name " << url << ":\n" << configs;
  }
  ASSERT_TRUE(env.count(key_variable)) << agent << " sets no " << key_variable;
  EXPECT_EQ(env.at(key_variable), c.gateway_key) << agent << " must send the run's placeholder key";
  for (const char* v : kGatewayVariables) {
    if (v != url_variable && v != key_variable) {
      EXPECT_FALSE(env.count(v)) << agent << " sets another CLI's " << v;
    }
  }
}

}  // namespace

// kbench's loop is the kbench binary itself, started in the sandbox: a shared library it loaded
// from outside the system folders (an install under a prefix of its own) is bound where it was
// loaded from, and the loop's environment must name its folder, or the loader fails (exit code 127,
// "command not found": what a GPU machine with kbench's libraries in a folder of their own showed).
TEST(KbenchLoopAdapter, NamesTheFoldersOfLibrariesLoadedFromOutsideTheSystemFolders) {
  TempDir t("adapter-kbench-libraries");
  const AgentRunContext c = context(t.path());
  EXPECT_EQ(adapter("kbench")->environment(c).count("LD_LIBRARY_PATH"), runtime_library_path().empty() ? 0u : 1u);
  // A copy of a system library, loaded from a folder of the test's own.
  fs::path lib;
  for (const char* cand : {"/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib64/libz.so.1"})
    if (fs::exists(cand)) {
      lib = cand;
      break;
    }
  if (lib.empty()) GTEST_SKIP() << "no libz.so.1 to copy on this machine";
  const fs::path folder = t.path() / "prefix/lib";
  fs::create_directories(folder);
  fs::copy_file(lib, folder / "libz.so.1");
  ASSERT_NE(dlopen((folder / "libz.so.1").c_str(), RTLD_NOW | RTLD_LOCAL), nullptr) << dlerror();
  const auto env = adapter("kbench")->environment(c);
  ASSERT_TRUE(env.count("LD_LIBRARY_PATH")) << "the loop's environment names no library folder";
  EXPECT_NE(env.at("LD_LIBRARY_PATH").find(fs::canonical(folder).string()), std::string::npos) << env.at("LD_LIBRARY_PATH");
}

TEST(ClaudeCodeAdapter, PointsOnlyClaudeAtTheGateway) {
  expect_only_its_cli_at_the_gateway("claude-code", "ANTHROPIC_BASE_URL", "http://127.0.0.1:4242", "ANTHROPIC_API_KEY");
}

TEST(CodexAdapter, PointsOnlyCodexAtTheGateway) {
  // Its config.toml's provider holds the URL; OPENAI_API_KEY is the provider's env_key.
  expect_only_its_cli_at_the_gateway("codex", "", "base_url = \"http://127.0.0.1:4242/v1\"", "OPENAI_API_KEY");
}

TEST(OpencodeAdapter, PointsOnlyOpencodeAtTheGateway) {
  expect_only_its_cli_at_the_gateway("opencode", "", "\"baseURL\": \"http://127.0.0.1:4242/v1\"", "OPENAI_API_KEY");
}

TEST(GeminiCliAdapter, PointsOnlyGeminiAtTheGateway) {
  expect_only_its_cli_at_the_gateway("gemini", "GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:4242", "GEMINI_API_KEY");
}

TEST(KimiCodeAdapter, PointsOnlyKimiAtTheGateway) {
  expect_only_its_cli_at_the_gateway("kimi", "", "base_url = \"http://127.0.0.1:4242/v1\"", "OPENAI_API_KEY");
}

TEST(KbenchLoopAdapter, PointsOnlyTheLoopAtTheGateway) {
  expect_only_its_cli_at_the_gateway("kbench", "OPENAI_BASE_URL", "http://127.0.0.1:4242/v1", "OPENAI_API_KEY");
}

TEST(GenericAdapter, GetsEveryClisGatewayVariablesOnlyWithAGateway) {
  TempDir t("adapter-gateway-generic");
  AgentRunContext c = context(t.path());
  AdapterOptions o;
  o.command = "my-agent < {prompt_file}";
  const auto a = make_adapter("generic", o);
  const auto env = a->environment(c);
  EXPECT_EQ(env.size(), std::size(kGatewayVariables)) << "nothing but the gateway's variables";
  for (const char* v : {"ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_BASE_URL"}) EXPECT_EQ(env.at(v), c.gateway_url) << v;
  for (const char* v : {"OPENAI_BASE_URL", "OPENAI_API_BASE"}) EXPECT_EQ(env.at(v), c.gateway_url + "/v1") << v;
  for (const char* v : {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"}) EXPECT_EQ(env.at(v), c.gateway_key) << v;
  c.gateway_url.clear();
  c.gateway_key.clear();
  EXPECT_TRUE(a->environment(c).empty()) << "without the gateway the command gets no model variables from kbench";
}

TEST(CliAdapters, NoAdapterLeavesTheGatewaysPlaceholderKeyOut) {
  // Whatever key variable a CLI reads, the one it finds is the run's placeholder: a user's real
  // key in kbench's environment never reaches an agent run behind the gateway.
  ScopedEnv anthropic("ANTHROPIC_API_KEY", "sk-users-own");
  ScopedEnv openai("OPENAI_API_KEY", "sk-users-own");
  ScopedEnv gemini("GEMINI_API_KEY", "sk-users-own");
  TempDir t("adapter-gateway-keys");
  const AgentRunContext c = context(t.path());
  for (const auto& name : adapter_names()) {
    AdapterOptions o;
    o.agent_bin = "/bin/sh";
    o.kbench_binary = "/bin/sh";
    if (name == "generic") o.command = "my-agent";
    const auto env = make_adapter(name, o)->environment(c);
    int keys = 0;
    for (const char* v : {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"}) {
      if (env.count(v)) {
        ++keys;
        EXPECT_EQ(env.at(v), c.gateway_key) << name << "'s " << v;
      }
    }
    EXPECT_GE(keys, 1) << name << " gives its CLI no key variable";
  }
}

TEST(CliInstall, FindsANodeScriptsNodeAndSaysHowToInstallAMissingCli) {
  TempDir t("cli-install");
  const fs::path root = t.path();
  // A JavaScript CLI in an npm tree outside the system folders: run by a Node.js, its tree bound.
  const fs::path nm = root / "node_modules";
  fs::create_directories(nm / "pkg/bin");
  std::ofstream(nm / "pkg/bin/cli.js") << "#!/usr/bin/env node\nconsole.log('hi')\n";
  if (!fs::exists("/usr/bin/node") && !fs::exists("/usr/local/bin/node")) GTEST_SKIP() << "no node on this machine";
  CliSpec spec{"x", "x-cli", "x-package", 1};
  const CliInstall i = locate_cli(spec, nm / "pkg/bin/cli.js");
  ASSERT_EQ(i.argv.size(), 2u);
  EXPECT_NE(i.argv[0].find("node"), std::string::npos);
  EXPECT_EQ(i.argv[1], fs::canonical(nm / "pkg/bin/cli.js").string());
  ASSERT_EQ(i.read_only.size(), 1u);
  EXPECT_EQ(i.read_only[0], fs::canonical(nm));
  // One that needs a Node.js from the future is refused, naming what it found.
  spec.node_major = 999;
  try {
    (void)locate_cli(spec, nm / "pkg/bin/cli.js");
    FAIL() << "no Node.js 999 here";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs Node.js 999 or newer"), std::string::npos) << e.what();
  }
  // Not installed anywhere: the message says how to install it.
  ScopedEnv agents("KBENCH_AGENTS_DIR", (root / "empty").string());
  ScopedEnv path("PATH", "/nonexistent");
  CliSpec missing{"x", "kbench-no-such-cli", "x-package", 0};
  try {
    (void)locate_cli(missing, {});
    FAIL() << "found a CLI that does not exist";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("scripts/setup --agents"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x-package"), std::string::npos) << e.what();
  }
}
