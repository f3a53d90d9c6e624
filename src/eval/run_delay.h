// How long a process tree's threads waited for a CPU: the kernel's scheduler statistics
// (/proc/<pid>/task/<tid>/schedstat, second field: time spent runnable on a run queue, in ns;
// Documentation/scheduler/sched-stats.rst). Kept by the kernel, read from the parent: nothing in
// the worker can lower it. The timing's confirmation (eval/timing_confirmation.h) uses it to tell a
// loaded machine from tampered timing.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>

namespace kb {

// Every thread of `root` and of its descendants (found through each process's parent in
// /proc/<pid>/stat: the worker runs under bwrap, in a session of its own), with its run delay
// so far in ns. Empty where /proc or schedstat cannot be read.
using RunDelays = std::map<pid_t, uint64_t>;
RunDelays thread_run_delays(pid_t root);

// The thread that calls kb_run: the main thread of the deepest process of `root`'s tree (the worker,
// under bwrap's processes; `root` itself when it has none), whose thread id is its process id.
pid_t worker_main_thread(pid_t root);

// How much one thread's run delay grew between two snapshots, in seconds (0 when either lacks it).
double run_delay_growth(const RunDelays& before, const RunDelays& after, pid_t tid);

// The largest growth of any one thread present in both snapshots but `except`, in seconds (0 when
// none is): a solution's own threads (OpenMP's team) wait for a CPU on a loaded machine while the
// thread that calls kb_run (`except`) spins at their barrier, running, so its own wait alone does
// not show the load.
double largest_run_delay_growth(const RunDelays& before, const RunDelays& after, pid_t except);

}  // namespace kb
