// Library kernels compiled into the solution's own module. The static scan (eval/static_scan.h)
// reads the source for the problem's `policy.forbidden` patterns, and token pasting or a computed
// #include gets a library past it: a topk that includes CUB's device-wide radix sort under a
// pasted name never writes "cub::", yet its module holds CUB's kernels, and runtime provenance
// (eval/gpu_work.h) accepts them, since the solution's own library defines them. Their names
// cannot be hidden: the machine code (eval/sass.h) lists every kernel with its C++ name, and a
// library's kernels carry its namespace ("cub::CUB_300000_SM_900::DeviceRadixSortOnesweepKernel").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "eval/sass.h"
#include "verdict/finding.h"

namespace kb {

// forbidden_kernel when a kernel of `report` has a demangled name (or, for a name that is not a
// mangled C++ name, its name) that matches one of the problem's `forbidden` patterns (the static
// scan's regexes: eval/static_scan.h forbidden_pattern); one "kernel" evidence item per kernel
// (the first ten; note: the pattern). nullopt when none matches or the SASS was not read (runtime
// provenance still applies then).
std::optional<Finding> check_forbidden_kernels(const std::vector<std::string>& forbidden, const SassReport& report);

}  // namespace kb
