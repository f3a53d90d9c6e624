// Follows the files an agent writes through its tools, across a whole run, so that each write or
// edit can be shown as a diff against the file's previous content. Every adapter's file tools are
// recognised by the shape of their arguments, not by a list of tool names, since each CLI names
// them differently (Write / write / write_file / WriteFile, Edit / edit / replace / edit_file ...):
//   - a path (file_path, filePath, path) and a `content`: the whole new file;
//   - a path and an old/new pair (old_string/new_string, oldString/newString, old_str/new_str,
//     old/new): one replacement (`replace_all` honoured); `edits[]` of such pairs: several;
//   - a Codex-style patch (`*** Begin Patch` ... `*** Add|Update|Delete File: P`) in any argument;
//   - a shell here-document writing a file (`cat > F <<'EOF'` ... `EOF`) in a command argument.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kb::report {

struct FileChange {
  std::string path;       // as the run's workspace names it ("solution.cpp")
  std::string kind;       // "write", "edit", "patch" or "delete"
  bool new_file = false;  // nothing was known of the file before
  // The earlier content was not seen (an edit of a file the transcript never showed written):
  // the diff shows the replaced text against its replacement, not the whole file.
  bool partial = false;
  nlohmann::json diff;    // LineDiff as JSON (line_diff.h)
};

class FileTracker {
 public:
  // The workspace's path in the run, when known: absolute paths under it are shown relative.
  explicit FileTracker(std::string workspace = {}) : workspace_(std::move(workspace)) {}

  // The file changes one tool call makes (none for a call that writes no file).
  std::vector<FileChange> apply(const std::string& tool, const nlohmann::json& input);

  // The last content known for each path.
  const std::map<std::string, std::string>& files() const { return files_; }

 private:
  std::string shown_path(std::string p) const;
  FileChange whole_write(const std::string& path, const std::string& content, const char* kind);
  std::vector<FileChange> patch(const std::string& text);

  std::string workspace_;
  std::map<std::string, std::string> files_;
};

}  // namespace kb::report
