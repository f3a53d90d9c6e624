// What `kbench doctor` found on this machine: a plain record of probe results, filled by
// probe_machine() (doctor/probe.h, the only part that touches the system) and judged by diagnose()
// (doctor/diagnosis.h, a pure function), so that a test can describe any machine in a few lines.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kb::doctor {

// A program, library or file kbench uses.
struct Tool {
  bool found = false;
  std::string path;     // where it was found
  std::string version;  // its own words, one line ("release 13.0, V13.0.48"); may be empty
  std::string note;     // when not found: where it was looked for, or why it does not work
};

// One GPU as the NVIDIA driver lists it (nvidia-smi --query-gpu; read only, nothing is changed).
struct Gpu {
  std::string name;                // "NVIDIA H100 80GB HBM3"
  std::string uuid;                // "GPU-8e2f..."
  std::string compute_capability;  // "9.0"; empty when the driver does not say
  int sm_clock_mhz = 0;            // current SM clock (0: not reported)
  int max_sm_clock_mhz = 0;        // the most the SM clock can reach
  int memory_clock_mhz = 0;
  int max_memory_clock_mhz = 0;
  std::string clocks_event_reasons;  // active throttle reasons as the driver reports them (hex mask), may be empty
  bool ceilings_cached = false;      // a `kbench ceilings --target cuda` measurement of this GPU is cached
};

// A sandbox probe: bwrap started around /bin/true with the layout kbench uses (core/bwrap.h).
struct Sandbox {
  bool ok = false;
  std::string version;  // "bubblewrap 0.8.0"
  std::string error;    // bwrap's own words when it failed
};

struct Agent {
  std::string name;     // the adapter's name: "claude-code"
  bool found = false;
  std::string program;  // the resolved CLI
  std::string found_by; // "the agents folder ...", "PATH", ...
  std::string version;  // `CLI --version`, first line
  std::string note;     // how to install it, when it was not found
};

struct MachineFacts {
  // --- the host target ---
  Tool cxx;  // $KBENCH_HOST_CXX or g++: builds host solutions

  // --- the cuda target ---
  bool cuda_built = false;  // this kbench was built with the cuda target (KBENCH_CUDA)
  Tool nvcc;                // $KBENCH_NVCC, the nvcc of kbench's build, or nvcc on PATH
  Tool driver;              // the NVIDIA driver: version from /proc/driver/nvidia/version or nvidia-smi
  std::vector<Gpu> gpus;    // what the driver lists; empty on a machine without a GPU
  bool cuda_sees_gpu = false;  // this kbench's CUDA runtime sees a device (cudaGetDeviceCount)
  Tool cupti;               // libcupti: attributes GPU work to the solution (linked into a cuda build)
  Tool cuobjdump;           // lists the solution's SASS (instruction checks)

  // --- isolation: the evaluation's and the agents' sandboxes ---
  Tool bwrap;
  Sandbox eval_sandbox;   // the worker's and the build's layout (no network)
  Sandbox agent_sandbox;  // an agent run's layout (with network)
  // User-namespace switches (/proc/sys); nullopt where this kernel has no such file.
  std::optional<long> max_user_namespaces;
  std::optional<int> unprivileged_userns_clone;          // Debian's kernel.unprivileged_userns_clone
  std::optional<int> apparmor_restrict_unprivileged_userns;  // Ubuntu's AppArmor switch
  bool seccomp_filter = false;  // the kernel takes seccomp filters (the worker's system-call filter)
  std::string seccomp_actions;  // /proc/sys/kernel/seccomp/actions_avail
  int landlock_abi = 0;         // 0: no Landlock (kernel or LSM list); else its ABI version
  std::string landlock_note;

  // --- agent runs and sweeps ---
  std::vector<Agent> agents;  // the real CLIs kbench drives (agent/adapters)
  std::string agents_dir;     // where `scripts/setup --agents` installs them
  Tool node;
  Tool python, torch, triton;  // solutions' and agents' Python side (optional)
  Tool sbatch, squeue;         // the Slurm executor of `kbench sweep`

  // --- where results and measurements go ---
  std::string runs_dir;  // `kbench run`'s default runs/ folder (here: relative to the working folder)
  bool runs_writable = false;
  std::string runs_note;
  std::string cache_dir;  // kbench's cache (ceilings)
  bool host_ceilings_cached = false;
};

}  // namespace kb::doctor
