// The automatic annotation of a result: the annotation verdict its reason stands for (the reason
// table, verdict/reason.h), and the evidence that goes with it: the evidence its finding kept
// (source lines, SASS lines, exported symbols, wrong output elements; verdict/finding.h), else
// kbench's message, then the kernel facts (eval/sass.h). docs/annotations.md gives the mapping and
// the reason for each entry.
#pragma once

#include "eval/annotation.h"
#include "eval/result.h"

namespace kb {

// The annotation of `r`: verdict, summary, evidence, all read from `r` (nothing is re-derived).
Annotation annotate(const EvalResult& r);

}  // namespace kb
