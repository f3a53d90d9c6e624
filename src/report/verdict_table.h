// The per-shape table of `kbench check/bench/eval`: one row per shape (and per shape of the
// baseline), each column as wide as its widest value, every rate with its unit (FLOP/s, B/s), so
// that nothing is cut and a rate is never read as a count. cli/report.cpp prints it inside the
// verdict; tests/unit/test_verdict_table.cpp pins its exact text.
#pragma once

#include <string>

#include "eval/result.h"

namespace kb::report {

// "1.23 TFLOP/s", "515.01 MFLOP/s", "3.35 TB/s": two decimals and an SI prefix (T, G, M, k, none).
std::string rate_text(double per_second, const char* unit);
// "4.20 us", "1.234 ms", "2.000 s".
std::string duration_text(double seconds);

// The table's lines, each starting with two spaces and ending in '\n'; the header first. When
// `r.baseline` passed, a blank line, its caption and its rows (marked "base", in the same columns)
// follow the shapes. `color` paints the ok/FAIL mark
// (the widths are those of the unpainted text).
std::string verdict_table(const EvalResult& r, bool color);

// For a cuda result timed with its launches (no blocking kernel: a Python solution, or
// --no-blocking-kernel), one line, "  launches " and the median of the host's time inside each
// shape's timed calls (TimingRecord::host_call_samples), so that a reader sees how much of a cold
// median the launches are. For a result scored under the steady floor (a Python solution on cuda,
// or --steady-floor: TimingPolicy::steady_floor), "  steady   " and each shape's steady cost per
// call beside its cold samples' median before the floor (the GPU's time on cuda). "" for any other result, or where no shape
// recorded either.
std::string launch_cost_line(const EvalResult& r);

}  // namespace kb::report
