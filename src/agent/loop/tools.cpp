#include "agent/loop/tools.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "core/subprocess.h"

namespace kb::loop {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json function(const char* name, const char* description, json properties, std::vector<std::string> required) {
  return {{"type", "function"},
          {"function",
           {{"name", name},
            {"description", description},
            {"parameters", {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}}}}}};
}

// A string argument, or an error message naming it.
std::optional<std::string> string_arg(const json& a, const char* name, std::string& error) {
  if (!a.is_object() || !a.contains(name) || !a[name].is_string()) {
    error = fmt::format("missing string argument \"{}\"", name);
    return std::nullopt;
  }
  return a[name].get<std::string>();
}

std::string exit_text(const CommandResult& r) {
  if (r.timed_out) return "timed out";
  if (r.signal) return "killed by signal " + std::to_string(r.signal);
  return "exit code " + std::to_string(r.exit_code);
}

}  // namespace

std::string truncate_output(const std::string& text, size_t limit) {
  if (text.size() <= limit) return text;
  const size_t half = limit / 2;
  return text.substr(0, half) + fmt::format("\n[... {} bytes left out ...]\n", text.size() - 2 * half) +
         text.substr(text.size() - half);
}

Tools::Tools(fs::path workspace, std::chrono::seconds command_timeout)
    : workspace_(std::move(workspace)), command_timeout_(command_timeout) {}

json Tools::declarations() const {
  const json path = {{"type", "string"}, {"description", "File path, relative to the workspace (the current directory) or absolute"}};
  return json::array({
      function("bash",
               "Run a shell command with bash in the workspace and return its output (stdout and stderr) and exit status. "
               "Use it to compile, test and time your solution (./kbench check, ./kbench bench).",
               {{"command", {{"type", "string"}, {"description", "The command"}}},
                {"timeout_seconds", {{"type", "integer"}, {"description", "Stop it after this many seconds (default and most: the loop's limit)"}}}},
               {"command"}),
      function("read_file", "Read a text file.", {{"path", path}}, {"path"}),
      function("write_file", "Create a file, or replace its whole content.",
               {{"path", path}, {"content", {{"type", "string"}, {"description", "The whole new content"}}}}, {"path", "content"}),
      function("edit_file", "Replace one exact occurrence of old_string in a file by new_string (old_string must occur exactly once).",
               {{"path", path},
                {"old_string", {{"type", "string"}, {"description", "Text to replace, exactly as in the file"}}},
                {"new_string", {{"type", "string"}, {"description", "Its replacement"}}}},
               {"path", "old_string", "new_string"}),
      function("submit",
               "Submit the solution in the workspace: runs ./kbench check. If it passes, you are done; if not, you get its "
               "output and can keep working.",
               json::object(), {}),
  });
}

fs::path Tools::resolve(const std::string& path) const {
  const fs::path p(path);
  return (p.is_absolute() ? p : workspace_ / p).lexically_normal();
}

ToolResult Tools::run(const std::string& name, const json& arguments) const {
  try {
    if (name == "bash") return bash(arguments);
    if (name == "read_file") return read_file(arguments);
    if (name == "write_file") return write_file(arguments);
    if (name == "edit_file") return edit_file(arguments);
    if (name == "submit") return submit();
  } catch (const std::exception& e) {
    return {fmt::format("{} failed: {}", name, e.what()), true, false};
  }
  return {fmt::format("unknown tool \"{}\" (the tools are bash, read_file, write_file, edit_file, submit)", name), true, false};
}

ToolResult Tools::bash(const json& a) const {
  std::string err;
  const auto command = string_arg(a, "command", err);
  if (!command) return {"bash: " + err, true, false};
  auto timeout = command_timeout_;
  if (a.contains("timeout_seconds") && a["timeout_seconds"].is_number_integer() && a["timeout_seconds"].get<int64_t>() > 0)
    timeout = std::min(timeout, std::chrono::seconds(a["timeout_seconds"].get<int64_t>()));
  const CommandResult r = run_command({"/bin/bash", "-c", *command}, timeout, workspace_);
  return {truncate_output(r.output) + (r.output.empty() || r.output.back() == '\n' ? "" : "\n") + "[" + exit_text(r) + "]",
          r.exit_code != 0, false};
}

ToolResult Tools::read_file(const json& a) const {
  std::string err;
  const auto path = string_arg(a, "path", err);
  if (!path) return {"read_file: " + err, true, false};
  std::ifstream in(resolve(*path), std::ios::binary);
  if (!in) return {fmt::format("read_file: cannot read {}", resolve(*path).string()), true, false};
  std::stringstream ss;
  ss << in.rdbuf();
  return {truncate_output(ss.str()), false, false};
}

ToolResult Tools::write_file(const json& a) const {
  std::string err;
  const auto path = string_arg(a, "path", err);
  const auto content = path ? string_arg(a, "content", err) : std::nullopt;
  if (!path || !content) return {"write_file: " + err, true, false};
  const fs::path p = resolve(*path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << *content;
  out.close();
  if (!out) return {fmt::format("write_file: cannot write {}", p.string()), true, false};
  return {fmt::format("wrote {} bytes to {}", content->size(), p.string()), false, false};
}

ToolResult Tools::edit_file(const json& a) const {
  std::string err;
  const auto path = string_arg(a, "path", err);
  const auto old_s = path ? string_arg(a, "old_string", err) : std::nullopt;
  const auto new_s = old_s ? string_arg(a, "new_string", err) : std::nullopt;
  if (!path || !old_s || !new_s) return {"edit_file: " + err, true, false};
  if (old_s->empty()) return {"edit_file: old_string is empty", true, false};
  const fs::path p = resolve(*path);
  std::ifstream in(p, std::ios::binary);
  if (!in) return {fmt::format("edit_file: cannot read {}", p.string()), true, false};
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const size_t at = text.find(*old_s);
  if (at == std::string::npos) return {fmt::format("edit_file: old_string does not occur in {}", p.string()), true, false};
  if (text.find(*old_s, at + 1) != std::string::npos)
    return {fmt::format("edit_file: old_string occurs more than once in {}; give more context", p.string()), true, false};
  text.replace(at, old_s->size(), *new_s);
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return {fmt::format("edit_file: cannot write {}", p.string()), true, false};
  return {fmt::format("edited {}", p.string()), false, false};
}

ToolResult Tools::submit() const {
  const fs::path wrapper = workspace_ / "kbench";
  if (!fs::exists(wrapper)) return {"submit: there is no ./kbench in the workspace to check the solution with", true, false};
  const CommandResult r = run_command({wrapper.string(), "check"}, command_timeout_, workspace_);
  const bool pass = r.exit_code == 0 && !r.timed_out;
  return {truncate_output(r.output) + (pass ? "\nsubmitted: ./kbench check passed." : "\nnot submitted: ./kbench check failed (" + exit_text(r) + "); fix the solution and submit again."),
          !pass, pass};
}

}  // namespace kb::loop
