// `kbench doctor`'s judgement (doctor/diagnosis.h) on invented machines: one with everything, one
// with a GPU but no nvcc, one without a GPU, one whose kernel refuses bwrap's user namespaces; and
// what its printers say. The probes themselves run in tests/integration/doctor_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>

#include "doctor/diagnosis.h"
#include "doctor/report.h"

using namespace kb::doctor;

namespace {

Tool found(const std::string& path, const std::string& version = {}) { return Tool{true, path, version, ""}; }

// A machine with an H100 and every piece kbench can use.
MachineFacts complete_gpu_machine() {
  MachineFacts f;
  f.cxx = found("/usr/bin/g++", "g++ 12.2.0");
  f.cuda_built = true;
  f.nvcc = found("/usr/local/cuda/bin/nvcc", "CUDA release 13.0, V13.0.48");
  f.driver = found("/proc/driver/nvidia/version", "NVIDIA driver 580.65.06");
  Gpu g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.uuid = "GPU-01234567-89ab-cdef-0123-456789abcdef";
  g.compute_capability = "9.0";
  g.sm_clock_mhz = 345;
  g.max_sm_clock_mhz = 1980;
  g.memory_clock_mhz = 2619;
  g.max_memory_clock_mhz = 2619;
  g.clocks_event_reasons = "0x0000000000000001";  // idle only
  g.ceilings_cached = true;
  f.gpus = {g};
  f.cuda_sees_gpu = true;
  f.cupti = found("/usr/local/cuda/lib64/libcupti.so.13", "libcupti.so.2025.3.0");
  f.cuobjdump = found("/usr/local/cuda/bin/cuobjdump", "CUDA release 13.0, V13.0.48");
  f.bwrap = found("/usr/bin/bwrap", "bubblewrap 0.8.0");
  f.eval_sandbox = Sandbox{true, "bubblewrap 0.8.0", ""};
  f.agent_sandbox = Sandbox{true, "bubblewrap 0.8.0", ""};
  f.max_user_namespaces = 63000;
  f.seccomp_filter = true;
  f.seccomp_actions = "kill_process kill_thread trap errno user_notif trace log allow";
  f.landlock_abi = 3;
  f.agents = {Agent{"claude-code", true, "/opt/agents/claude", "the agents folder /opt/agents", "2.0.1 (Claude Code)", ""}};
  f.node = found("/usr/bin/node", "v22.1.0");
  f.python = found("/usr/bin/python3", "Python 3.11.2");
  f.torch = found("/usr/lib/python3/dist-packages/torch", "2.5.0");
  f.triton = found("/usr/lib/python3/dist-packages/triton", "3.1.0");
  f.sbatch = found("/usr/bin/sbatch", "slurm 22.05.8");
  f.squeue = found("/usr/bin/squeue", "slurm 22.05.8");
  f.runs_dir = "/home/u/runs";
  f.runs_writable = true;
  f.cache_dir = "/home/u/.cache/kbench";
  f.host_ceilings_cached = true;
  return f;
}

// A laptop: a compiler and bwrap, no GPU, no CUDA toolkit, no agent CLI.
MachineFacts host_only_machine() {
  MachineFacts f;
  f.cxx = found("/usr/bin/g++", "g++ 12.2.0");
  f.nvcc = Tool{false, "", "", "looked for nvcc, /usr/local/cuda/bin/nvcc"};
  f.driver = Tool{false, "", "", "no /proc/driver/nvidia/version: the NVIDIA kernel module is not loaded"};
  f.cupti = Tool{false, "", "", "no libcupti.so in /usr/lib/x86_64-linux-gnu"};
  f.cuobjdump = Tool{false, "", "", "looked at cuobjdump on $PATH"};
  f.bwrap = found("/usr/bin/bwrap", "bubblewrap 0.8.0");
  f.eval_sandbox = Sandbox{true, "bubblewrap 0.8.0", ""};
  f.agent_sandbox = Sandbox{true, "bubblewrap 0.8.0", ""};
  f.seccomp_filter = true;
  f.agents = {Agent{"codex", false, "", "", "", "codex is not installed (npm package @openai/codex)"}};
  f.agents_dir = "/home/u/.cache/kbench/agents";
  f.runs_dir = "/home/u/runs";
  f.runs_writable = true;
  return f;
}

const Check& check(const Diagnosis& d, const std::string& name) {
  const auto it = std::find_if(d.checks.begin(), d.checks.end(), [&](const Check& c) { return c.name == name; });
  if (it == d.checks.end()) throw std::runtime_error("no check named " + name);
  return *it;
}

}  // namespace

TEST(Doctor, AMachineWithEverythingIsReadyForCuda) {
  const Diagnosis d = diagnose(complete_gpu_machine());
  EXPECT_EQ(d.target, "cuda");
  EXPECT_TRUE(d.ready());
  EXPECT_EQ(d.exit_code(), 0);
  EXPECT_TRUE(d.blocking.empty());
  for (const Check& c : d.checks) {
    EXPECT_NE(c.status, Status::missing) << c.name << ": " << c.detail;
    EXPECT_TRUE(c.fix.empty()) << c.name << " is fine but has a fix: " << c.fix;
  }
  // The GPU's clocks are reported as they are (read only).
  EXPECT_NE(check(d, "GPU 0").detail.find("SM clock 345 MHz of 1980 MHz max"), std::string::npos) << check(d, "GPU 0").detail;
  EXPECT_EQ(check(d, "GPU 0").status, Status::ok);
  const std::string text = to_text(d);
  EXPECT_NE(text.find("Ready: everything the cuda target needs is here."), std::string::npos) << text;
  EXPECT_EQ(text.find("fix:"), std::string::npos) << text;
}

TEST(Doctor, AGpuMachineWithoutNvccIsNotReadyAndSaysHowToGetIt) {
  MachineFacts f = complete_gpu_machine();
  f.nvcc = Tool{false, "", "", "looked for nvcc, /usr/local/cuda/bin/nvcc"};
  f.cuobjdump = Tool{false, "", "", "looked at cuobjdump on $PATH"};
  const Diagnosis d = diagnose(f);
  EXPECT_EQ(d.target, "cuda");
  EXPECT_EQ(d.target_reason, "this machine has an NVIDIA GPU");
  EXPECT_FALSE(d.ready());
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(d.blocking, (std::vector<std::string>{"nvcc", "cuobjdump"}));
  const Check& nvcc = check(d, "nvcc");
  EXPECT_EQ(nvcc.status, Status::missing);
  EXPECT_TRUE(nvcc.required);
  EXPECT_NE(nvcc.fix.find("cuda-toolkit-13-0"), std::string::npos) << nvcc.fix;
  EXPECT_NE(nvcc.detail.find("/usr/local/cuda/bin/nvcc"), std::string::npos) << nvcc.detail;  // where it looked
  const std::string text = to_text(d);
  EXPECT_NE(text.find("missing* nvcc"), std::string::npos) << text;
  EXPECT_NE(text.find("fix: install the CUDA toolkit 13"), std::string::npos) << text;
  EXPECT_NE(text.find("Not ready for the cuda target: missing nvcc, cuobjdump"), std::string::npos) << text;
  // The host target needs neither.
  EXPECT_EQ(diagnose(f, "host").exit_code(), 0);
  const nlohmann::json j = to_json(d);
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["ready"], false);
  EXPECT_EQ(j["blocking"], nlohmann::json({"nvcc", "cuobjdump"}));
}

TEST(Doctor, WithoutAGpuTheHostTargetIsTheDefaultAndTheCudaNeedsAreListed) {
  const Diagnosis d = diagnose(host_only_machine());
  EXPECT_EQ(d.target, "host");
  EXPECT_EQ(d.target_reason, "no NVIDIA GPU on this machine");
  EXPECT_TRUE(d.ready()) << to_text(d);
  EXPECT_EQ(d.exit_code(), 0);
  // What the cuda target needs is listed, missing but not blocking.
  for (const char* name : {"kbench build", "nvcc", "NVIDIA driver", "GPU", "CUDA runtime", "CUPTI", "cuobjdump"}) {
    EXPECT_EQ(check(d, name).status, Status::missing) << name;
    EXPECT_FALSE(check(d, name).required) << name;
    EXPECT_FALSE(check(d, name).fix.empty()) << name;
  }
  EXPECT_EQ(check(d, "GPU").detail, "no NVIDIA GPU on this machine");
  EXPECT_EQ(check(d, "codex").fix.rfind("scripts/setup --agents", 0), 0u) << check(d, "codex").fix;
  EXPECT_EQ(check(d, "sbatch").status, Status::info);
  // Asked about the cuda target, the same machine is not ready.
  const Diagnosis cuda = diagnose(host_only_machine(), "cuda");
  EXPECT_EQ(cuda.exit_code(), 1);
  EXPECT_EQ(cuda.target_reason, "--target cuda");
  EXPECT_EQ(cuda.blocking,
            (std::vector<std::string>{"kbench build", "nvcc", "NVIDIA driver", "GPU", "CUDA runtime", "CUPTI", "cuobjdump"}));
  EXPECT_THROW(diagnose(host_only_machine(), "rocm"), std::invalid_argument);
}

TEST(Doctor, NoSandboxBlocksEveryTargetAndNamesTheFix) {
  MachineFacts f = host_only_machine();
  f.bwrap = Tool{false, "", "", "bwrap is not on PATH"};
  f.eval_sandbox = Sandbox{false, "", "bwrap not found"};
  f.agent_sandbox = f.eval_sandbox;
  Diagnosis d = diagnose(f);
  EXPECT_EQ(d.exit_code(), 1);
  EXPECT_EQ(check(d, "bubblewrap").fix, "sudo apt-get install bubblewrap");
  EXPECT_EQ(check(d, "evaluation sandbox").fix, "sudo apt-get install bubblewrap");
  EXPECT_NE(std::find(d.blocking.begin(), d.blocking.end(), "evaluation sandbox"), d.blocking.end());

  // bwrap installed, but Debian's switch forbids unprivileged user namespaces.
  f.bwrap = found("/usr/bin/bwrap", "bubblewrap 0.8.0");
  f.eval_sandbox = Sandbox{false, "bubblewrap 0.8.0", "bwrap: No permissions to create new namespace"};
  f.unprivileged_userns_clone = 0;
  d = diagnose(f);
  EXPECT_EQ(d.blocking, std::vector<std::string>{"evaluation sandbox"});
  EXPECT_EQ(check(d, "evaluation sandbox").fix, "sudo sysctl -w kernel.unprivileged_userns_clone=1");
  EXPECT_NE(check(d, "evaluation sandbox").detail.find("No permissions to create new namespace"), std::string::npos);
  EXPECT_EQ(check(d, "user namespaces").status, Status::warning);

  f.eval_sandbox = Sandbox{true, "bubblewrap 0.8.0", ""};
  f.seccomp_filter = false;
  d = diagnose(f);
  EXPECT_EQ(d.blocking, std::vector<std::string>{"seccomp"});
}

TEST(Doctor, AThrottledGpuIsAWarningAndAnOldGpuIsMissing) {
  MachineFacts f = complete_gpu_machine();
  f.gpus[0].clocks_event_reasons = "0x0000000000000004";  // software power cap
  Diagnosis d = diagnose(f);
  EXPECT_EQ(check(d, "GPU 0").status, Status::warning);
  EXPECT_TRUE(d.ready());  // slow timings, but it runs
  EXPECT_NE(check(d, "GPU 0").fix.find("never changes clocks"), std::string::npos);

  f.gpus[0].clocks_event_reasons.clear();
  f.gpus[0].compute_capability = "7.0";
  f.gpus[0].name = "Tesla V100-SXM2-16GB";
  d = diagnose(f);
  EXPECT_EQ(d.blocking, std::vector<std::string>{"GPU 0"});
  EXPECT_NE(check(d, "GPU 0").detail.find("sm_80 or newer"), std::string::npos);
}
