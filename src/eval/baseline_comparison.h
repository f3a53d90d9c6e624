// KernelBench v3's view of a result beside kbench's: did the solution beat the baseline? In v3 the
// baseline is PyTorch (eager or torch.compile) and "beats baseline" is correct AND speedup >= 1.
// In kbench the baseline is the problem's vendor-library reference line (baseline.cu), timed by the
// same cold method as the solution, so the comparison is like for like; kbench's own score stays
// the fraction of the hardware's ceiling (peak_fraction), which this does not change.
#pragma once

#include <optional>

#include "eval/result.h"

namespace kb {

struct BaselineComparison {
  // Geometric mean over the shapes of baseline median / solution median (> 1: the solution is faster).
  std::optional<double> speedup;
  // speedup >= 1, as v3 counts it (a tie beats).
  std::optional<bool> beats;
};

// Both null unless the solution passed, its baseline passed, and every shape the solution was
// timed on has the baseline's time too (a comparison over some shapes would not be the problem's);
// at least one shape must have been timed (`kbench check` times none).
BaselineComparison compare_with_baseline(const EvalResult& solution);

}  // namespace kb
