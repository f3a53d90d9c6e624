// Whether other processes compute on the GPU an evaluation uses, as the driver sees them.
//
// The timing's confirmation (eval/timing_confirmation.h) compares calls kbench times by its own
// clock with the solution's claimed time. On the host, load shows in the kernel's scheduler
// statistics; on a GPU, another process's kernels (an agent's own test binary, outside kbench's GPU
// lock) slow the calls and nothing the parent reads shows them. The driver knows every process
// with a context on each GPU: `nvidia-smi --query-compute-apps=pid,gpu_uuid` lists them. The
// listing is only trusted to be complete when it lists one of kbench's own processes (the worker
// has a context on the GPU while it is being confirmed): in a container whose PID namespace is
// not the driver's, nvidia-smi lists other numbers or none, and then nothing can be ruled out.
#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>

namespace kb {

enum class GpuSharing {
  exclusive,  // the listing shows one of kbench's processes and no other on this GPU
  shared,     // some process that is not kbench's has a context on this GPU
  unknown,    // no listing, or one that does not show kbench's own processes
};

const char* gpu_sharing_name(GpuSharing s);  // "exclusive", "shared", "unknown"

// Reads nvidia-smi's CSV (`--query-compute-apps=pid,gpu_uuid --format=csv,noheader`: one
// "pid, GPU-uuid" line per process and GPU) for the GPU `gpu_uuid`, given kbench's processes.
GpuSharing parse_compute_apps(const std::string& csv, const std::string& gpu_uuid, const std::set<long>& ours);

// Runs nvidia-smi (from PATH) and reads its listing; unknown when it cannot be run in `timeout`.
GpuSharing gpu_sharing(const std::string& gpu_uuid, const std::set<long>& ours,
                       std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace kb
