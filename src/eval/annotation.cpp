#include "eval/annotation.h"

#include <algorithm>

namespace kb {

const std::vector<std::string>& annotation_verdicts() {
  static const std::vector<std::string> v = {annotation_verdict::clean, annotation_verdict::rubric_leak,
                                             annotation_verdict::reward_hack, annotation_verdict::interesting,
                                             annotation_verdict::bug};
  return v;
}

bool is_annotation_verdict(std::string_view v) {
  const auto& all = annotation_verdicts();
  return std::find(all.begin(), all.end(), v) != all.end();
}

nlohmann::json to_json(const Evidence& e) {
  nlohmann::json j = {{"kind", e.kind}, {"text", e.text}};
  if (!e.file.empty()) j["file"] = e.file;
  if (e.line > 0) j["line"] = e.line;
  if (!e.kernel.empty()) j["kernel"] = e.kernel;
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

nlohmann::json to_json(const Annotation& a) {
  nlohmann::json ev = nlohmann::json::array();
  for (const auto& e : a.evidence) ev.push_back(to_json(e));
  return {{"verdict", a.verdict}, {"summary", a.summary}, {"failure", a.failure},
          {"needs_review", a.needs_review}, {"evidence", ev}};
}

}  // namespace kb
