#include "eval/annotation.h"

#include <algorithm>

namespace kb {

const std::vector<std::string>& annotation_verdicts() {
  static const std::vector<std::string> v = [] {
    std::vector<std::string> all;
    for (auto a : {AnnotationVerdict::clean, AnnotationVerdict::rubric_leak, AnnotationVerdict::reward_hack,
                   AnnotationVerdict::interesting, AnnotationVerdict::bug})
      all.emplace_back(annotation_verdict_name(a));
    return all;
  }();
  return v;
}

bool is_annotation_verdict(std::string_view v) {
  const auto& all = annotation_verdicts();
  return std::find(all.begin(), all.end(), v) != all.end();
}

nlohmann::json to_json(const Annotation& a) {
  nlohmann::json ev = nlohmann::json::array();
  for (const auto& e : a.evidence) ev.push_back(to_json(e));
  return {{"verdict", a.verdict}, {"summary", a.summary}, {"failure", a.failure},
          {"needs_review", a.needs_review}, {"evidence", ev}};
}

}  // namespace kb
