// JSON as kbench writes it, to files and to stdout. Strings reach kbench's records from outside
// (a solution's stderr, the compiler quoting a garbage source, a folder name that is not UTF-8):
// nlohmann-json's plain dump() throws on invalid UTF-8, which turned a solution's FAIL, or a whole
// finished evaluation, into "internal error" with no result.json. Every writer goes through here:
// invalid bytes become U+FFFD and the record is still written.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kb {

// indent < 0: one line; else pretty-printed with that many spaces. No trailing newline.
inline std::string json_text(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kb
