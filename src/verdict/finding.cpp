#include "verdict/finding.h"

namespace kb {

nlohmann::json to_json(const Evidence& e) {
  nlohmann::json j = {{"kind", e.kind}, {"text", e.text}};
  if (!e.file.empty()) j["file"] = e.file;
  if (e.line > 0) j["line"] = e.line;
  if (!e.kernel.empty()) j["kernel"] = e.kernel;
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

}  // namespace kb
