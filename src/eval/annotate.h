// The automatic annotation of a result: which annotation verdict a failure reason (or a pass)
// stands for, and the evidence that goes with it: kernel facts and SASS lines (eval/sass.h),
// source lines (the static scan), exported symbols, wrong output elements. docs/annotations.md
// gives the mapping and the reason for each entry.
#pragma once

#include <string_view>
#include <vector>

#include "deck/problem.h"
#include "eval/annotation.h"
#include "eval/result.h"

namespace kb {

// One row of the mapping: a result's failure reason and what it says about the run.
struct AnnotationRule {
  const char* failure;   // a reason:: string; "" for a pass
  const char* verdict;   // an annotation_verdict
  bool needs_review;     // the check cannot tell a cheat from an honest mistake
  const char* meaning;   // the summary's first sentence
};

// Every reason kbench reports, with its verdict (the table of docs/annotations.md).
const std::vector<AnnotationRule>& annotation_rules();

// The rule for a result's verdict ("pass" | "fail" | "error") and failure reason. A reason not in
// the table gives "interesting" with needs_review (a new check should add its row); any "error"
// verdict not in the table is kbench's own failure, "bug".
const AnnotationRule& annotation_rule(std::string_view verdict, std::string_view failure);

// The annotation of `r` (a result of `p`): verdict, summary, evidence. Re-reads the solution's
// sources (the static scan) for forbidden_source; everything else comes from `r` itself.
Annotation annotate(const Problem& p, const EvalResult& r);

}  // namespace kb
