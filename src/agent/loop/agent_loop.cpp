#include "agent/loop/agent_loop.h"

#include <fmt/format.h>

#include "agent/gateway/api.h"
#include "agent/loop/tools.h"

namespace kb::loop {
using json = nlohmann::json;

namespace {

constexpr const char* kKeepGoing =
    "Keep working on the task with the tools. When ./kbench check passes, call the submit tool; the run ends only then.";

}  // namespace

std::string system_prompt() {
  return "You are a coding agent working alone in a workspace folder on a Linux machine. The user's message is your task. "
         "Work with the tools: bash runs shell commands in the workspace (compile, test, time, inspect), read_file, "
         "write_file and edit_file work on files, and submit runs ./kbench check on your solution and ends the run when it "
         "passes. Nobody answers questions: decide for yourself, test as you go, and submit a solution that passes.";
}

LoopOutcome run_agent_loop(const LoopOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  auto emit = [&](TranscriptEvent e) {
    e.t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o.emit) o.emit(e);
  };
  auto event = [](EventKind kind, std::string text) {
    TranscriptEvent e;
    e.kind = kind;
    e.text = std::move(text);
    return e;
  };
  const ChatClient client(o.chat);
  const Tools tools(o.workspace, o.command_timeout);
  json messages = json::array({{{"role", "system"}, {"content", system_prompt()}}, {{"role", "user"}, {"content", o.prompt}}});
  emit(event(EventKind::user, o.prompt));
  LoopOutcome out;
  for (out.turns = 0; out.turns < o.max_turns;) {
    json request = {{"model", o.model}, {"messages", messages}, {"tools", tools.declarations()}, {"tool_choice", "auto"}};
    if (!o.effort.empty()) request["reasoning_effort"] = o.effort;
    json response;
    try {
      ++out.turns;
      response = client.complete(request);
    } catch (const ChatError& e) {
      emit(event(EventKind::error, e.what()));
      out.stop_reason = e.what();
      return out;
    }
    if (response.contains("usage") && response["usage"].is_object()) {
      TranscriptEvent u;
      u.kind = EventKind::usage;
      u.usage = gateway::normalize_usage(gateway::ApiKind::openai_chat, response["usage"]);
      u.scope = "part";
      emit(u);
    }
    const json choices = response.value("choices", json::array());
    if (!choices.is_array() || choices.empty() || !choices[0].contains("message") || !choices[0]["message"].is_object()) {
      const std::string why = "the endpoint answered without a message: " + response.dump().substr(0, 500);
      emit(event(EventKind::error, why));
      out.stop_reason = why;
      return out;
    }
    const json& msg = choices[0]["message"];
    // Reasoning, under the name the provider uses (DeepSeek, Kimi, vLLM: reasoning_content;
    // OpenRouter: reasoning). It is not sent back: some providers refuse it in a request.
    for (const char* key : {"reasoning_content", "reasoning"})
      if (msg.contains(key) && msg[key].is_string() && !msg[key].get<std::string>().empty())
        emit(event(EventKind::reasoning, msg[key].get<std::string>()));
    const std::string text = msg.contains("content") && msg["content"].is_string() ? msg["content"].get<std::string>() : "";
    if (!text.empty()) emit(event(EventKind::assistant_text, text));
    const json calls = msg.contains("tool_calls") && msg["tool_calls"].is_array() ? msg["tool_calls"] : json::array();
    json assistant = {{"role", "assistant"}, {"content", text.empty() && !calls.empty() ? json(nullptr) : json(text)}};
    if (!calls.empty()) assistant["tool_calls"] = calls;
    messages.push_back(assistant);
    if (calls.empty()) {
      messages.push_back({{"role", "user"}, {"content", kKeepGoing}});
      emit(event(EventKind::user, kKeepGoing));
      continue;
    }
    bool finished = false;
    for (const auto& call : calls) {
      const json f = call.value("function", json::object());
      const std::string name = f.value("name", ""), id = call.value("id", "");
      json args = f.value("arguments", json("{}"));
      if (args.is_string()) args = json::parse(args.get<std::string>().empty() ? "{}" : args.get<std::string>(), nullptr, false);
      TranscriptEvent c;
      c.kind = EventKind::tool_call;
      c.tool = name;
      c.call_id = id;
      c.input = args.is_discarded() ? f.value("arguments", json()) : args;
      emit(c);
      const ToolResult r = args.is_discarded() || !args.is_object()
                               ? ToolResult{name + ": the arguments are not a JSON object: " + f.value("arguments", json()).dump(), true, false}
                               : tools.run(name, args);
      TranscriptEvent res;
      res.kind = EventKind::tool_result;
      res.tool = name;
      res.call_id = id;
      res.text = r.output;
      res.is_error = r.is_error;
      emit(res);
      messages.push_back({{"role", "tool"}, {"tool_call_id", id}, {"content", r.output}});
      finished = finished || r.finished;
    }
    if (finished) {
      out.submitted = true;
      out.stop_reason = "submitted";
      return out;
    }
  }
  out.stop_reason = fmt::format("turn limit: {} model calls made without a passing submit", out.turns);
  emit(event(EventKind::error, out.stop_reason));
  return out;
}

}  // namespace kb::loop
