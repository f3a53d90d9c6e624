// The tools kbench's own agent loop gives the model, run in the agent's workspace (inside the
// sandbox, like the loop itself):
//   bash        run a shell command (bash -c) in the workspace; output and exit status back
//   read_file   a file's text
//   write_file  create or replace a file
//   edit_file   replace one exact occurrence of a text in a file
//   submit      run ./kbench check; when it passes, the run is over; when not, its output comes back
// Outputs are cut to a head and a tail (kOutputLimit) so one noisy command cannot fill the
// model's context: compiler errors come first and kbench check's verdict last, and both survive.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace kb::loop {

// 16 KiB of tool output reach the model (8 KiB head + 8 KiB tail): a compile error or a verdict
// table is well under it; about 4k tokens, so forty tool calls stay within a 200k-token context.
inline constexpr size_t kOutputLimit = 16 * 1024;

struct ToolResult {
  std::string output;     // what the model reads
  bool is_error = false;  // the tool failed (bad arguments, command exit status != 0, check failed)
  bool finished = false;  // submit passed: the loop ends
};

class Tools {
 public:
  // `command_timeout`: the longest one bash command or check may run.
  Tools(std::filesystem::path workspace, std::chrono::seconds command_timeout);

  // The tool declarations, in the Chat Completions "tools" format.
  nlohmann::json declarations() const;
  // Runs one call. Bad arguments come back as an error result, not an exception: the model can
  // read them and try again.
  ToolResult run(const std::string& name, const nlohmann::json& arguments) const;

 private:
  std::filesystem::path resolve(const std::string& path) const;  // relative paths: from the workspace
  ToolResult bash(const nlohmann::json& a) const;
  ToolResult read_file(const nlohmann::json& a) const;
  ToolResult write_file(const nlohmann::json& a) const;
  ToolResult edit_file(const nlohmann::json& a) const;
  ToolResult submit() const;

  std::filesystem::path workspace_;
  std::chrono::seconds command_timeout_;
};

// `text` cut to kOutputLimit bytes: its head and tail with a line saying how much was left out.
std::string truncate_output(const std::string& text, size_t limit = kOutputLimit);

}  // namespace kb::loop
