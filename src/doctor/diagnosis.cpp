#include "doctor/diagnosis.h"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

namespace kb::doctor {

const char* status_name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::missing: return "missing";
    case Status::warning: return "warning";
    case Status::info: return "info";
  }
  return "?";
}

namespace {

// nvidia-smi's clocks_event_reasons mask: bit 0 is "GPU idle", the only reason that costs nothing.
constexpr unsigned long long kClocksEventIdle = 0x1;

std::string found_at(const Tool& t) {
  std::string s = t.version.empty() ? t.path : t.version + " (" + t.path + ")";
  if (t.version.empty() && !t.note.empty()) s += " (" + t.note + ")";
  return s.empty() ? "found" : s;
}

class Builder {
 public:
  explicit Builder(std::vector<Check>& out) : out_(out) {}
  void area(std::string a) { area_ = std::move(a); }
  Check& add(std::string name, Status s, std::string detail, std::string fix = {}) {
    out_.push_back(Check{area_, std::move(name), s, false, std::move(detail), s == Status::ok ? std::string() : std::move(fix)});
    return out_.back();
  }
  // A program: ok with its version, else `absent` with its note and `fix`.
  Check& tool(std::string name, const Tool& t, Status absent, const std::string& fix, const std::string& purpose = {}) {
    if (t.found) return add(std::move(name), Status::ok, found_at(t) + (purpose.empty() ? "" : ": " + purpose));
    std::string detail = "not found";
    if (!t.note.empty()) detail += " (" + t.note + ")";
    if (!purpose.empty()) detail += "; " + purpose;
    return add(std::move(name), absent, detail, fix);
  }

 private:
  std::vector<Check>& out_;
  std::string area_;
};

// What to do when bwrap is installed but cannot make its namespaces here.
std::string userns_fix(const MachineFacts& f) {
  if (f.unprivileged_userns_clone && *f.unprivileged_userns_clone == 0) return "sudo sysctl -w kernel.unprivileged_userns_clone=1";
  if (f.max_user_namespaces && *f.max_user_namespaces == 0) return "sudo sysctl -w user.max_user_namespaces=15000";
  if (f.apparmor_restrict_unprivileged_userns && *f.apparmor_restrict_unprivileged_userns == 1)
    return "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile that lets bwrap create user namespaces)";
  return "allow unprivileged user namespaces for bwrap (in a container: start it with user namespaces allowed, "
         "e.g. docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined)";
}

std::string userns_detail(const MachineFacts& f) {
  std::vector<std::string> parts;
  if (f.max_user_namespaces) parts.push_back(fmt::format("user.max_user_namespaces={}", *f.max_user_namespaces));
  if (f.unprivileged_userns_clone) parts.push_back(fmt::format("kernel.unprivileged_userns_clone={}", *f.unprivileged_userns_clone));
  if (f.apparmor_restrict_unprivileged_userns)
    parts.push_back(fmt::format("kernel.apparmor_restrict_unprivileged_userns={}", *f.apparmor_restrict_unprivileged_userns));
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s.empty() ? "no user-namespace switches in /proc/sys" : s;
}

void sandbox_check(Builder& b, const std::string& name, const Sandbox& s, const MachineFacts& f, const std::string& purpose) {
  if (s.ok) {
    b.add(name, Status::ok, (s.version.empty() ? std::string("bwrap") : s.version) + " starts " + purpose);
  } else if (!f.bwrap.found) {
    b.add(name, Status::missing, "bubblewrap (bwrap) is not installed; " + purpose + " cannot start",
          "sudo apt-get install bubblewrap");
  } else {
    b.add(name, Status::missing, purpose + " does not start: " + (s.error.empty() ? "bwrap failed" : s.error) + " [" + userns_detail(f) + "]",
          userns_fix(f));
  }
}

std::string mhz(int v) { return v > 0 ? fmt::format("{} MHz", v) : "?"; }

}  // namespace

Diagnosis diagnose(const MachineFacts& f, const std::string& target) {
  Diagnosis d;
  const bool has_gpu = !f.gpus.empty() || f.cuda_sees_gpu;
  if (target == "auto") {
    d.target = has_gpu ? "cuda" : "host";
    d.target_reason = has_gpu ? "this machine has an NVIDIA GPU" : "no NVIDIA GPU on this machine";
  } else if (target == "host" || target == "cuda") {
    d.target = target;
    d.target_reason = "--target " + target;
  } else {
    throw std::invalid_argument("--target: unknown target '" + target + "' (expected auto, host or cuda)");
  }
  const bool cuda = d.target == "cuda";
  Builder b(d.checks);
  auto need = [](Check& c) { c.required = true; };
  auto need_if = [](Check& c, bool when) { c.required = when; };

  // Both targets build and run the solution in the evaluation's sandbox, under a seccomp filter.
  b.area("evaluation");
  b.tool("bubblewrap", f.bwrap, Status::missing, "sudo apt-get install bubblewrap", "the sandbox of every build, worker and agent");
  need(d.checks.back());
  b.add("user namespaces", Status::info, userns_detail(f));
  if (!f.eval_sandbox.ok) d.checks.back().status = Status::warning;
  sandbox_check(b, "evaluation sandbox", f.eval_sandbox, f, "the sandbox of a solution's build and worker");
  need(d.checks.back());
  need(b.add("seccomp", f.seccomp_filter ? Status::ok : Status::missing,
             f.seccomp_filter ? "the kernel takes system-call filters (the worker's filter)" + (f.seccomp_actions.empty() ? std::string() : "; actions: " + f.seccomp_actions)
                              : "this kernel takes no seccomp filters: the worker's system-call filter cannot be installed",
             "a kernel built with CONFIG_SECCOMP_FILTER (every distribution kernel has it); in a container, allow seccomp"));
  b.add("Landlock", Status::info,
        f.landlock_abi > 0 ? fmt::format("ABI version {} available; kbench's sandboxes do not need it", f.landlock_abi)
                           : "not available" + (f.landlock_note.empty() ? std::string() : " (" + f.landlock_note + ")") +
                                 "; kbench's sandboxes do not need it");

  b.area("host target");
  need_if(b.tool("C++ compiler", f.cxx, Status::missing, "sudo apt-get install g++ (or set KBENCH_HOST_CXX)",
                 "builds solution.cpp (and is nvcc's host compiler)"),
          true);
  b.add("host ceilings", f.host_ceilings_cached ? Status::ok : Status::info,
        f.host_ceilings_cached ? "measured and cached in " + f.cache_dir
                               : "not measured on this machine yet (the first host eval measures them, a few seconds)",
        "kbench ceilings --target host");

  b.area("cuda target");
  need_if(b.add("kbench build", f.cuda_built ? Status::ok : Status::missing,
                f.cuda_built ? "built with the cuda target" : "this kbench was built without the cuda target (no CUDA toolkit at build time)",
                "install the CUDA toolkit, then rebuild: cmake -S . -B build -DKBENCH_CUDA=ON && cmake --build build --target kbench"),
          cuda);
  need_if(b.tool("nvcc", f.nvcc, Status::missing,
                 "install the CUDA toolkit 13 (NVIDIA's Debian repository: sudo apt-get install cuda-toolkit-13-0), or set KBENCH_NVCC",
                 "builds solution.cu"),
          cuda);
  need_if(b.tool("NVIDIA driver", f.driver, Status::missing,
                 "install the NVIDIA driver (Debian: sudo apt-get install nvidia-driver; or NVIDIA's cuda-drivers package)"),
          cuda);
  if (f.gpus.empty()) {
    need_if(b.add("GPU", Status::missing,
                  f.cuda_sees_gpu ? "CUDA sees a GPU but the driver lists none (nvidia-smi)" : "no NVIDIA GPU on this machine",
                  "run on a machine with an NVIDIA GPU (sm_80 or newer); here, use --target host"),
            cuda);
  }
  for (size_t i = 0; i < f.gpus.size(); ++i) {
    const Gpu& g = f.gpus[i];
    std::string detail = g.name + (g.compute_capability.empty() ? "" : ", compute capability " + g.compute_capability) +
                         fmt::format("; SM clock {} of {} max, memory clock {} of {} max", mhz(g.sm_clock_mhz), mhz(g.max_sm_clock_mhz),
                                     mhz(g.memory_clock_mhz), mhz(g.max_memory_clock_mhz));
    Status s = Status::ok;
    std::string fix;
    const unsigned long long reasons = g.clocks_event_reasons.empty() ? 0 : std::strtoull(g.clocks_event_reasons.c_str(), nullptr, 16);
    if (reasons & ~kClocksEventIdle) {
      s = Status::warning;
      detail += "; clocks held back now (reasons " + g.clocks_event_reasons + "): timings made now may be slow";
      fix = "nvidia-smi -q -d PERFORMANCE says why (power, heat, a clock lock, another process); kbench never changes clocks";
    }
    if (!g.compute_capability.empty() && std::atof(g.compute_capability.c_str()) < 8.0) {
      s = Status::missing;
      detail += "; the cuda target needs sm_80 or newer";
      fix = "run on an NVIDIA GPU of compute capability 8.0 or newer (A100, H100, RTX 30xx or later)";
    }
    Check& c = b.add(fmt::format("GPU {}", i), s, detail, fix);
    if (s == Status::missing) need_if(c, cuda);
  }
  need_if(b.add("CUDA runtime", f.cuda_sees_gpu ? Status::ok : Status::missing,
                f.cuda_sees_gpu    ? "this kbench's CUDA runtime sees the GPU"
                : !f.cuda_built    ? "not built into this kbench"
                : f.gpus.empty()   ? "sees no GPU"
                                   : "sees no GPU although the driver lists one",
                !f.cuda_built   ? "rebuild kbench with the CUDA toolkit (see kbench build)"
                : f.gpus.empty() ? "install a GPU and its driver"
                                 : "check CUDA_VISIBLE_DEVICES and that the driver supports CUDA 13 (nvidia-smi's CUDA Version)"),
          cuda);
  need_if(b.tool("CUPTI", f.cupti, Status::missing, "install the CUDA toolkit's CUPTI (sudo apt-get install cuda-cupti-13-0)",
                 "tells which kernels a solution ran"),
          cuda);
  need_if(b.tool("cuobjdump", f.cuobjdump, Status::missing,
                 "install the CUDA toolkit's cuobjdump (sudo apt-get install cuda-cuobjdump-13-0), or set KBENCH_CUOBJDUMP",
                 "lists a solution's instructions (the instruction checks)"),
          cuda);
  for (const Gpu& g : f.gpus)
    b.add("cuda ceilings", g.ceilings_cached ? Status::ok : Status::info,
          g.ceilings_cached ? "measured figures of " + g.uuid + " cached" : "not measured for " + g.uuid + " (eval scores against the datasheet anyway)",
          "kbench ceilings --target cuda (about 15 s)");

  b.area("agent runs");
  sandbox_check(b, "agent sandbox", f.agent_sandbox, f, "the sandbox of an agent run (with network)");
  b.tool("Node.js", f.node, Status::info, "scripts/setup --agents (installs a pinned Node.js with the CLIs)", "runs the JavaScript agent CLIs");
  for (const Agent& a : f.agents) {
    if (a.found)
      b.add(a.name, Status::ok, (a.version.empty() ? std::string("version unknown") : a.version) + " (" + a.program + ", from " + a.found_by + ")");
    else
      b.add(a.name, Status::missing, "not installed" + (a.note.empty() ? std::string() : ": " + a.note),
            "scripts/setup --agents (installs every CLI, pinned, into " + (f.agents_dir.empty() ? std::string("the agents folder") : f.agents_dir) + ")");
  }
  b.tool("Python", f.python, Status::info, "sudo apt-get install python3", "optional: for agents that prototype in Python");
  b.tool("PyTorch", f.torch, Status::info, "python3 -m pip install torch", "optional: for agents that prototype in PyTorch");
  b.tool("Triton", f.triton, Status::info, "python3 -m pip install triton", "optional: for agents that prototype in Triton");

  b.area("sweeps");
  b.tool("sbatch", f.sbatch, Status::info, "sudo apt-get install slurm-client", "submits cells with `kbench sweep` on Slurm");
  b.tool("squeue", f.squeue, Status::info, "sudo apt-get install slurm-client", "follows submitted cells");

  b.area("results");
  b.add("runs folder", f.runs_writable ? Status::ok : Status::warning,
        (f.runs_writable ? "writable: " : "not writable: ") + f.runs_dir + (f.runs_note.empty() ? "" : " (" + f.runs_note + ")"),
        "run kbench from a folder you can write, or pass --runs-dir DIR to kbench run and kbench sweep");

  for (const Check& c : d.checks)
    if (c.required && c.status == Status::missing) d.blocking.push_back(c.name);
  return d;
}

}  // namespace kb::doctor
