#include "report/timeline.h"

#include <algorithm>
#include <deque>
#include <fstream>
#include <sstream>

#include "core/json_text.h"
#include "report/file_tracker.h"
#include "report/text_safety.h"

namespace kb::report {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const char* const kKinds[] = {"user", "assistant_text", "reasoning", "tool_call", "tool_result", "usage", "error"};

bool known_kind(const std::string& k) {
  for (const char* x : kKinds)
    if (k == x) return true;
  return false;
}

// Makes every string in `j` safe to show (shown_text), noting what was changed.
void sanitize(json& j, Timeline& t, json& marks) {
  if (j.is_string()) {
    ShownText s = shown_text(j.get_ref<const std::string&>());
    if (s.had_invalid_utf8 || s.had_control) {
      if (s.had_invalid_utf8 && std::find(marks.begin(), marks.end(), "invalid_utf8") == marks.end()) marks.push_back("invalid_utf8");
      if (s.had_control && std::find(marks.begin(), marks.end(), "control") == marks.end()) marks.push_back("control");
      t.had_invalid_utf8 |= s.had_invalid_utf8;
      t.had_control |= s.had_control;
      j = std::move(s.text);
    }
  } else if (j.is_structured()) {
    for (auto& v : j) sanitize(v, t, marks);
  }
}

// Strings as the agent wrote them, for recognising file writes (before control pictures).
std::string input_text(const json& input) { return input.is_null() ? std::string() : json_text(input, -1); }

std::string kbench_command(const std::string& tool, const json& input) {
  if (tool == "submit") return "submit";
  const std::string s = input_text(input);
  if (s.find("kbench check") != std::string::npos) return "check";
  if (s.find("kbench bench") != std::string::npos) return "bench";
  if (s.find("kbench eval") != std::string::npos) return "eval";
  return {};
}

std::string kbench_outcome(const std::string& text) {
  if (text.find("verdict PASS") != std::string::npos) return "pass";
  if (text.find("verdict FAIL") != std::string::npos || text.find("verdict ERROR") != std::string::npos) return "fail";
  return {};
}

bool is_subagent(const std::string& tool) { return tool == "Task" || tool == "Agent" || tool == "task" || tool == "subagent"; }

}  // namespace

Timeline build_timeline(const fs::path& events_file, const std::string& workspace) {
  Timeline t;
  std::ifstream in(events_file, std::ios::binary);
  if (!in) {
    t.error = "transcript/events.jsonl is missing: the run has no normalized transcript";
    return t;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string all = ss.str();
  FileTracker files(workspace);
  std::map<std::string, size_t> call_by_id;  // call id -> item index, until its result comes
  std::deque<size_t> calls_without_id;

  auto push = [&](json item) -> size_t {
    item["i"] = t.items.size();
    t.items.push_back(std::move(item));
    return t.items.size() - 1;
  };

  int line_no = 0;
  for (size_t pos = 0; pos < all.size();) {
    size_t end = all.find('\n', pos);
    const bool cut = end == std::string::npos;
    if (cut) end = all.size();
    std::string line = all.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    json marks = json::array();
    json e;
    try {
      e = json::parse(line);
    } catch (const json::exception&) {
      // nlohmann refuses strings that are not UTF-8: replace the bad bytes and try again.
      try {
        e = json::parse(replace_invalid_utf8(line));
        marks.push_back("invalid_utf8");
        t.had_invalid_utf8 = true;
      } catch (const json::exception& ex) {
        json item = {{"kind", "unreadable"}, {"line", line_no}, {"text", shown_text(line.substr(0, 4096)).text},
                     {"bytes", line.size()}};
        if (cut) {
          t.truncated = true;
          item["note"] = "the events file ends in the middle of this line: the transcript was cut off here";
        } else {
          ++t.unreadable_lines;
          item["note"] = std::string("not a JSON object: ") + ex.what();
        }
        t.item_of_line[line_no] = static_cast<int>(push(item));
        continue;
      }
    }
    if (cut) t.truncated = false;  // a last line without '\n' that still parses is whole
    ++t.events;
    if (!e.is_object()) e = json{{"kind", "?"}, {"text", e.dump()}};
    const std::string kind = e.value("kind", std::string("?"));
    sanitize(e, t, marks);
    auto text_of = [&](const json& j) { return j.contains("text") && j["text"].is_string() ? j["text"].get<std::string>() : std::string(); };
    json item = {{"line", line_no}};
    if (e.contains("t") && e["t"].is_number()) item["t"] = e["t"];
    if (!marks.empty()) item["marks"] = marks;

    if (!known_kind(kind)) {
      ++t.unknown_kinds;
      item["kind"] = "unknown";
      item["note"] = "unknown event kind '" + shown_text(kind).text + "': shown as recorded";
      item["text"] = json_text(e, 2);
      t.item_of_line[line_no] = static_cast<int>(push(item));
      continue;
    }
    if (kind == "tool_call") {
      const std::string tool = e.value("tool", std::string());
      ++t.tool_calls;
      json input = e.contains("input") ? e["input"] : json(nullptr);
      item["kind"] = is_subagent(tool) ? "subagent" : "tool";
      item["tool"] = tool;
      if (e.contains("call_id")) item["call_id"] = e["call_id"];
      item["input"] = input;
      // File changes are read from the raw arguments (before control characters were made visible).
      json changes = json::array();
      for (auto& c : files.apply(tool, input)) {
        json cj = {{"path", c.path}, {"kind", c.kind}, {"new_file", c.new_file}, {"partial", c.partial}, {"diff", c.diff}};
        json m2 = json::array();
        sanitize(cj, t, m2);
        changes.push_back(std::move(cj));
        ++t.file_changes;
      }
      if (!changes.empty()) item["changes"] = changes;
      const std::string cmd = kbench_command(tool, input);
      if (!cmd.empty()) {
        item["kbench"] = cmd;
        t.kbench_calls.push_back({cmd, ""});
        item["kbench_call"] = t.kbench_calls.size() - 1;
      }
      const size_t idx = push(item);
      const std::string id = e.value("call_id", std::string());
      if (!id.empty()) call_by_id[id] = idx;
      else calls_without_id.push_back(idx);
      t.item_of_line[line_no] = static_cast<int>(idx);
      continue;
    }
    if (kind == "tool_result") {
      const std::string id = e.value("call_id", std::string());
      size_t target = std::string::npos;
      if (auto it = call_by_id.find(id); !id.empty() && it != call_by_id.end()) {
        target = it->second;
        call_by_id.erase(it);
      } else if (id.empty() && !calls_without_id.empty()) {
        target = calls_without_id.front();
        calls_without_id.pop_front();
      }
      const bool is_error = e.value("is_error", false);
      if (is_error) ++t.tool_errors;
      json result = {{"text", text_of(e)}, {"is_error", is_error}, {"line", line_no}};
      if (!marks.empty()) result["marks"] = marks;
      if (target != std::string::npos) {
        json& call = t.items[target];
        call["result"] = result;
        if (call.contains("kbench_call")) {
          KbenchCall& k = t.kbench_calls[call["kbench_call"].get<size_t>()];
          k.outcome = kbench_outcome(text_of(e));
          call["kbench_outcome"] = k.outcome;
        }
        if (marks.size()) {
          json& cm = call["marks"];
          if (cm.is_null()) cm = json::array();
          for (const auto& m : marks)
            if (std::find(cm.begin(), cm.end(), m) == cm.end()) cm.push_back(m);
        }
        t.item_of_line[line_no] = static_cast<int>(target);
        continue;
      }
      item["kind"] = "tool_result";  // a result whose call the transcript does not show
      item["tool"] = e.value("tool", std::string());
      item["result"] = result;
      t.item_of_line[line_no] = static_cast<int>(push(item));
      continue;
    }
    if (kind == "usage") {
      item["kind"] = "usage";
      item["scope"] = e.value("scope", std::string("part"));
      item["usage"] = e.contains("usage") ? e["usage"] : json::object();
      if (item["scope"] == "part") ++t.turns;
      t.item_of_line[line_no] = static_cast<int>(push(item));
      continue;
    }
    item["kind"] = kind == "assistant_text" ? "assistant" : kind;
    item["text"] = text_of(e);
    if (e.contains("stream")) item["stream"] = e["stream"];
    const size_t idx = push(item);
    t.item_of_line[line_no] = static_cast<int>(idx);
  }
  // CLIs that report no per-turn usage: count the model's messages as its turns.
  if (t.turns == 0)
    for (const auto& it : t.items)
      if (it["kind"] == "assistant") ++t.turns;
  return t;
}

}  // namespace kb::report
