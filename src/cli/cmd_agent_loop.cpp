// `kbench agent-loop`: kbench's own coding agent (agent/loop/agent_loop.h), as `kbench run --agent
// kbench` starts it inside the sandbox. Its transcript goes to stdout in kbench's event format, one
// JSON object a line, as it happens. Exit code 0 when a submit passed ./kbench check, 1 when the
// turn limit or the endpoint ended it, 2 for bad options.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "agent/loop/agent_loop.h"
#include "cli/app.h"
#include "cli/option_checks.h"
#include "core/json_text.h"

namespace kb::cli {
namespace fs = std::filesystem;

namespace {

struct AgentLoopCommand {
  std::string model;
  fs::path prompt_file;
  fs::path workspace = ".";
  int max_turns = 100;
  std::string effort;
  std::string base_url;
  std::string api_key_env = "OPENAI_API_KEY";
  int command_timeout_s = 600;
};

int run_agent_loop_command(const AgentLoopCommand& c) {
  loop::LoopOptions o;
  o.model = c.model;
  o.effort = c.effort;
  o.workspace = fs::absolute(c.workspace);
  o.max_turns = c.max_turns;
  if (c.max_turns < 1) throw UsageError(fmt::format("--max-turns {}: must be 1 or more", c.max_turns));
  if (c.command_timeout_s < 1) throw UsageError(fmt::format("--command-timeout {}: must be 1 or more seconds", c.command_timeout_s));
  o.command_timeout = std::chrono::seconds(c.command_timeout_s);
  std::ifstream in(c.prompt_file, std::ios::binary);
  if (!in) throw UsageError("--prompt-file " + c.prompt_file.string() + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  o.prompt = ss.str();
  o.chat.base_url = c.base_url;
  if (o.chat.base_url.empty())
    if (const char* u = std::getenv("OPENAI_BASE_URL"); u && *u) o.chat.base_url = u;
  if (o.chat.base_url.empty())
    throw UsageError("no endpoint: give --base-url URL or set OPENAI_BASE_URL (an OpenAI-compatible base URL ending in /v1)");
  if (const char* k = std::getenv(c.api_key_env.c_str()); k) o.chat.api_key = k;
  try {
    loop::ChatClient probe(o.chat);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  o.emit = [](const TranscriptEvent& e) {
    std::cout << kb::json_text(to_json(e), -1) << "\n" << std::flush;
  };
  const loop::LoopOutcome r = loop::run_agent_loop(o);
  std::cerr << fmt::format("kbench agent-loop: {} after {} model call{}\n", r.stop_reason, r.turns, r.turns == 1 ? "" : "s");
  return r.submitted ? kExitPass : kExitFail;
}

}  // namespace

void register_agent_loop_command(CLI::App& app, int& exit_code) {
  auto c = std::make_shared<AgentLoopCommand>();
  auto* cmd = app.add_subcommand("agent-loop", "kbench's own coding agent over an OpenAI-compatible endpoint (what --agent kbench runs)");
  cmd->add_option("--model", c->model, "The model name the endpoint serves")->required();
  cmd->add_option("--prompt-file", c->prompt_file, "The task")->required();
  cmd->add_option("--workspace", c->workspace, "Where the tools work")->capture_default_str();
  cmd->add_option("--max-turns", c->max_turns, "Model calls it may make")->check(whole_in(1, 100000, "model calls"))->capture_default_str();
  cmd->add_option("--effort", c->effort, "reasoning_effort to ask for (low, medium, high...)");
  cmd->add_option("--base-url", c->base_url, "The endpoint's base URL (default: $OPENAI_BASE_URL)");
  cmd->add_option("--api-key-env", c->api_key_env, "Environment variable holding the API key")->capture_default_str();
  cmd->add_option("--command-timeout", c->command_timeout_s, "Seconds one bash command or check may run")
      ->check(number_in(1, 86400, "seconds"))
      ->capture_default_str();
  cmd->callback([c, &exit_code] { exit_code = run_agent_loop_command(*c); });
}

}  // namespace kb::cli
