#include "report/file_tracker.h"

#include <regex>

#include "report/line_diff.h"

namespace kb::report {
using json = nlohmann::json;

namespace {

const json* field(const json& j, std::initializer_list<const char*> keys) {
  if (!j.is_object()) return nullptr;
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it != j.end() && it->is_string()) return &*it;
  }
  return nullptr;
}

const json* path_field(const json& j) { return field(j, {"file_path", "filePath", "path", "file", "filename"}); }

struct Replacement {
  std::string old_text, new_text;
  bool all = false;
};

std::optional<Replacement> replacement(const json& j) {
  const json* o = field(j, {"old_string", "oldString", "old_str", "old", "old_text"});
  const json* n = field(j, {"new_string", "newString", "new_str", "new", "new_text"});
  if (!o || !n) return std::nullopt;
  Replacement r{o->get<std::string>(), n->get<std::string>(), false};
  for (const char* k : {"replace_all", "replaceAll"})
    if (j.contains(k) && j[k].is_boolean()) r.all = j[k].get<bool>();
  return r;
}

// Replaces the first (or every) occurrence; false when `old_text` is not there.
bool replace_in(std::string& text, const Replacement& r) {
  if (r.old_text.empty()) return false;
  size_t pos = text.find(r.old_text);
  if (pos == std::string::npos) return false;
  do {
    text.replace(pos, r.old_text.size(), r.new_text);
    pos = r.all ? text.find(r.old_text, pos + r.new_text.size()) : std::string::npos;
  } while (pos != std::string::npos);
  return true;
}

// Codex runs every command as `/bin/bash -lc "..."`: the script inside the double quotes, with
// \" \\ \$ and \` escaped. Other strings are returned as they are.
std::string unwrap_shell_c(const std::string& s) {
  static const std::regex wrapper(R"(^\S*\b(?:ba|z|da)?sh\s+-l?c\s+")");
  std::smatch m;
  if (!std::regex_search(s, m, wrapper) || s.size() < static_cast<size_t>(m.length(0)) + 1 || s.back() != '"') return s;
  std::string out;
  const size_t end = s.size() - 1;
  for (size_t i = static_cast<size_t>(m.length(0)); i < end; ++i) {
    if (s[i] == '\\' && i + 1 < end && (s[i + 1] == '"' || s[i + 1] == '\\' || s[i + 1] == '$' || s[i + 1] == '`')) ++i;
    out += s[i];
  }
  return out;
}

}  // namespace

std::string FileTracker::shown_path(std::string p) const {
  if (!workspace_.empty() && p.rfind(workspace_ + "/", 0) == 0) p = p.substr(workspace_.size() + 1);
  // Replay scripts and real runs alike put the workspace at <run>/workspace.
  const size_t w = p.rfind("/workspace/");
  if (w != std::string::npos) p = p.substr(w + 11);
  while (p.rfind("./", 0) == 0) p = p.substr(2);
  return p;
}

FileChange FileTracker::whole_write(const std::string& path, const std::string& content, const char* kind) {
  FileChange c;
  c.path = path;
  c.kind = kind;
  auto it = files_.find(path);
  c.new_file = it == files_.end();
  c.diff = to_json(diff_lines(c.new_file ? std::vector<std::string>{} : split_lines(it->second), split_lines(content)));
  files_[path] = content;
  return c;
}

std::vector<FileChange> FileTracker::patch(const std::string& text) {
  // Codex's apply_patch envelope: "*** Add File: P" (every line "+"), "*** Update File: P" with
  // "@@" sections of " ", "-" and "+" lines, "*** Delete File: P".
  std::vector<FileChange> out;
  const auto lines = split_lines(text);
  size_t i = 0;
  auto starts = [&](const std::string& l, const char* p) { return l.rfind(p, 0) == 0; };
  while (i < lines.size()) {
    const std::string& l = lines[i];
    if (starts(l, "*** Add File: ")) {
      const std::string path = shown_path(l.substr(14));
      std::string content;
      for (++i; i < lines.size() && !starts(lines[i], "*** "); ++i)
        content += (lines[i].empty() ? lines[i] : lines[i].substr(1)) + "\n";
      out.push_back(whole_write(path, content, "patch"));
    } else if (starts(l, "*** Update File: ")) {
      FileChange c;
      c.path = shown_path(l.substr(17));
      c.kind = "patch";
      c.partial = true;
      json hunks = json::array();
      json cur;
      int added = 0, removed = 0;
      std::vector<std::string> old_part, new_part;
      for (++i; i < lines.size() && !starts(lines[i], "*** ") ; ++i) {
        const std::string& p = lines[i];
        if (starts(p, "@@")) {
          if (!cur.is_null()) hunks.push_back(cur);
          cur = {{"header", p}, {"lines", json::array()}};
          continue;
        }
        if (cur.is_null()) cur = {{"header", ""}, {"lines", json::array()}};
        if (!p.empty() && (p[0] == '+' || p[0] == '-' || p[0] == ' ')) {
          cur["lines"].push_back(p);
          if (p[0] == '+') ++added;
          if (p[0] == '-') ++removed;
        }
      }
      if (!cur.is_null()) hunks.push_back(cur);
      c.diff = {{"added", added}, {"removed", removed}, {"approximate", false}, {"hunks", hunks}};
      // The file's new content is not known from a patch alone unless the old one was.
      files_.erase(c.path);
      out.push_back(std::move(c));
    } else if (starts(l, "*** Delete File: ")) {
      FileChange c;
      c.path = shown_path(l.substr(17));
      c.kind = "delete";
      auto it = files_.find(c.path);
      c.partial = it == files_.end();
      c.diff = to_json(diff_lines(c.partial ? std::vector<std::string>{} : split_lines(it->second), {}));
      files_.erase(c.path);
      out.push_back(std::move(c));
      ++i;
    } else {
      ++i;
    }
  }
  return out;
}

std::vector<FileChange> FileTracker::apply(const std::string& /*tool*/, const json& input) {
  std::vector<FileChange> out;
  if (!input.is_object()) {
    if (input.is_string() && input.get<std::string>().find("*** Begin Patch") != std::string::npos)
      return patch(input.get<std::string>());
    return out;
  }
  const json* path = path_field(input);
  if (path) {
    const std::string p = shown_path(path->get<std::string>());
    if (const json* content = field(input, {"content", "contents", "file_text", "text"}))
      return {whole_write(p, content->get<std::string>(), "write")};
    std::vector<Replacement> reps;
    if (auto r = replacement(input)) reps.push_back(*r);
    if (input.contains("edits") && input["edits"].is_array())
      for (const auto& e : input["edits"])
        if (auto r = replacement(e)) reps.push_back(*r);
    if (!reps.empty()) {
      auto it = files_.find(p);
      if (it != files_.end()) {
        std::string next = it->second;
        bool all_found = true;
        for (const auto& r : reps) all_found = replace_in(next, r) && all_found;
        if (all_found) {
          FileChange c = whole_write(p, next, "edit");
          return {c};
        }
      }
      // Earlier content unknown (or the edit does not apply to it): show the replaced text itself.
      FileChange c;
      c.path = p;
      c.kind = "edit";
      c.partial = true;
      std::vector<std::string> before, after;
      for (const auto& r : reps) {
        for (auto& l : split_lines(r.old_text)) before.push_back(std::move(l));
        for (auto& l : split_lines(r.new_text)) after.push_back(std::move(l));
      }
      c.diff = to_json(diff_lines(before, after));
      files_.erase(p);
      return {c};
    }
  }
  // A patch or a here-document inside any string argument (a shell command, a patch input).
  for (const auto& [key, value] : input.items()) {
    if (!value.is_string()) continue;
    const std::string s = unwrap_shell_c(value.get_ref<const std::string&>());
    if (s.find("*** Begin Patch") != std::string::npos) {
      auto p = patch(s);
      out.insert(out.end(), p.begin(), p.end());
      continue;
    }
    // cat > FILE <<'EOF' / <<"EOF" / <<EOF, then the body, then EOF alone on a line.
    static const std::regex heredoc(R"((?:cat|tee)\s+>?\s*([^\s<>;&|]+)\s*<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2[^\n]*\n)");
    auto begin = std::sregex_iterator(s.begin(), s.end(), heredoc);
    for (auto m = begin; m != std::sregex_iterator(); ++m) {
      const std::string file = (*m)[1].str(), tag = (*m)[3].str();
      const size_t body = static_cast<size_t>(m->position(0) + m->length(0));
      size_t end = s.find("\n" + tag, body - 1);
      while (end != std::string::npos) {
        const size_t after = end + 1 + tag.size();
        if (after == s.size() || s[after] == '\n' || s[after] == '\r') break;
        end = s.find("\n" + tag, end + 1);
      }
      if (end == std::string::npos) continue;
      const std::string content = end + 1 > body ? s.substr(body, end + 1 - body) : std::string();
      out.push_back(whole_write(shown_path(file), content, "write"));
    }
  }
  return out;
}

}  // namespace kb::report
