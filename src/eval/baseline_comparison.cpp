#include "eval/baseline_comparison.h"

#include <vector>

#include "core/stats.h"

namespace kb {

BaselineComparison compare_with_baseline(const EvalResult& solution) {
  BaselineComparison c;
  if (solution.verdict() != Verdict::pass || !solution.baseline || solution.baseline->verdict() != Verdict::pass) return c;
  std::vector<double> ratios;
  for (const auto& s : solution.shapes) {
    if (!s.timing) continue;
    // The baseline's record of the same shape case: matched by index, since both were judged on
    // the problem's one list of shapes.
    const ShapeResult* b = nullptr;
    for (const auto& bs : solution.baseline->shapes)
      if (bs.index == s.index) b = &bs;
    if (!b || !b->timing || !(b->timing->seconds.median > 0) || !(s.timing->seconds.median > 0)) return c;
    ratios.push_back(b->timing->seconds.median / s.timing->seconds.median);
  }
  if (ratios.empty()) return c;
  c.speedup = geomean(ratios);
  c.beats = *c.speedup >= 1.0;
  return c;
}

}  // namespace kb
