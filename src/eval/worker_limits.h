// The worker's resource caps, each with its own verdict (docs/evaluation.md, "Resource caps"):
//
//   log      RLIMIT_FSIZE on the worker, whose only file is its stdout/stderr log: a solution that
//            floods its log is stopped at the limit by SIGXFSZ (`log_limit`), and one that ignores
//            the signal still cannot grow the file past it (the parent then sees a full log).
//   memory   RLIMIT_DATA (heap and private writable mappings; soft and hard, so the solution cannot
//            raise it): a 20 GB kb_setup fails at once (`out_of_memory`) instead of running to the
//            timeout or waking the OOM killer, which may pick kbench itself. Not RLIMIT_AS: it
//            counts address space that is only reserved (PROT_NONE), and the CUDA driver reserves
//            ranges of the device's memory size and more.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "deck/problem.h"

namespace kb {

inline constexpr uint64_t kDefaultLogLimitBytes = 64ull << 20;
// The default memory limit: kMemoryShapeFactor times the bytes of the shape's tensors (kbench's
// own buffers in the worker come to about 6x for a shape of outputs alone: the outputs, copies of
// them for the re-checks and the race check's repeats, and two timed input sets; 8x leaves a
// solution room for repacked weights and scratch) plus
// kMemoryHeadroomBytes (the runtime, a thread pool, small shapes' scratch), at most
// kMemoryMachineFraction of the machine's memory (the parent, which holds the expected outputs,
// keeps the rest).
inline constexpr double kMemoryShapeFactor = 8.0;
inline constexpr uint64_t kMemoryHeadroomBytes = 4ull << 30;
inline constexpr double kMemoryMachineFraction = 0.75;

struct WorkerLimits {
  uint64_t log_bytes = kDefaultLogLimitBytes;  // 0: no limit
  uint64_t memory_bytes = 0;                   // 0: no limit
};

// The machine's physical memory in bytes (0 when it cannot be read).
uint64_t machine_memory_bytes();

// The memory limit of a worker for `shape` on `target` when none is asked for: the formula above
// on the host target; 0 (none) on cuda, whose driver's own host allocations (pinned staging
// buffers count as private writable memory) have not been measured against RLIMIT_DATA on a GPU.
uint64_t default_memory_limit(const Problem& p, const ShapeCase& shape, const std::string& target);

// Applies `limits` to the calling process (soft and hard). Called in the forked child before exec:
// only async-signal-safe calls. Returns false when a limit could not be set.
bool apply_worker_limits(const WorkerLimits& limits);

// "64 MiB", "1.5 GiB": a byte count for messages.
std::string byte_size_text(uint64_t bytes);

}  // namespace kb
