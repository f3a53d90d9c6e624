// How many shapes `kbench check` judges at once. A check has no timing, so its shapes need not have
// the GPU to themselves: each already runs in a worker of its own, with its own seeds, and its cost
// is mostly start-up, round trips and the parent's oracle, which overlap well. Timing (`bench`,
// `eval`) judges one shape at a time, as before: nothing else may run on the GPU while a solution
// is timed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kb {

// Automatic: a quarter of the machine's hardware threads, at most kAutoShapeJobsMax, at least 1
// (a 2-core machine judges one shape at a time, as before; a 16-core GPU machine four).
inline constexpr size_t kAutoShapeJobsMax = 4;
// Shapes judged at once hold at most this many bytes of tensors together (inputs, outputs and
// weights of one call, each in the worker and again in the parent's copies and expected outputs);
// a shape larger than this alone runs alone.
inline constexpr uint64_t kShapeJobsBytes = 4ull << 30;

// The shapes judged at once: `asked` where given (>= 1), else automatic from `hardware_threads`;
// always 1 with timing (`bench`) and for a Python solution (its shapes share one Triton cache,
// eval/jit_kernels.h, filled by each shape's setup in turn).
size_t shape_jobs(size_t asked, bool bench, bool python, unsigned hardware_threads);

// Whether a shape of `shape_bytes` (eval/call_timeout.h's shape_tensor_bytes) may start now beside
// `running` others holding `running_bytes`.
bool shape_may_start(size_t running, uint64_t running_bytes, uint64_t shape_bytes, size_t jobs);

}  // namespace kb
