#include "doctor/probe.h"

#include <fmt/format.h>

#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "agent/adapter.h"
#include "agent/adapters/cli_adapter.h"
#include "agent/cli_install.h"
#include "agent/sandbox.h"
#include "core/bwrap.h"
#include "core/subprocess.h"
#include "eval/sass.h"
#include "eval/worker_sandbox.h"
#include "target/ceilings.h"
#include "target/nvcc_toolkit.h"
#include "target/target.h"

#ifndef KBENCH_NVCC
#define KBENCH_NVCC "nvcc"
#endif

namespace kb::doctor {
namespace fs = std::filesystem;

namespace {

// A version question is answered in well under a second; a wedged program must not hang the doctor.
constexpr auto kVersionTimeout = std::chrono::seconds(20);

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::string first_line(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (std::string t = trim(line); !t.empty()) return t;
  return "";
}

// The last non-empty line holding `needle` (nvcc and cuobjdump end with "Cuda compilation tools, release ...").
std::string line_with(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string found;
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) found = trim(line);
  return found;
}

std::string read_file_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::getline(in, line);
  return trim(line);
}

template <typename T>
std::optional<T> read_number(const fs::path& p) {
  std::ifstream in(p);
  T v{};
  if (in >> v) return v;
  return std::nullopt;
}

// A program by name or path, with the first line of `args`' output (or the line holding `needle`).
Tool program(const std::string& name_or_path, const std::vector<std::string>& args, const std::string& needle = {}) {
  Tool t;
  const fs::path p = find_program(name_or_path);
  if (p.empty()) {
    t.note = name_or_path.find('/') == std::string::npos ? name_or_path + " is not on PATH" : name_or_path + " does not exist";
    return t;
  }
  std::error_code ec;
  if (!fs::is_regular_file(p, ec) || ::access(p.c_str(), X_OK) != 0) {
    t.note = p.string() + " is not an executable file";
    return t;
  }
  t.found = true;
  t.path = p.string();
  if (!args.empty()) {
    std::vector<std::string> argv = {p.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    const CommandResult r = run_command(argv, kVersionTimeout);
    t.version = needle.empty() ? first_line(r.output) : line_with(r.output, needle);
    if (r.exit_code != 0) {
      // There, but it did not say its version (Slurm's tools without a reachable controller).
      t.version.clear();
      t.note = fmt::format("{} failed: {}", args.front(), r.timed_out ? std::string("timed out") : first_line(r.output));
    }
  }
  return t;
}

Tool probe_cxx() {
  const char* env = std::getenv("KBENCH_HOST_CXX");
  const std::string cxx = env && *env ? env : "g++";
  Tool t = program(cxx, {"-dumpfullversion"});
  if (t.found && !t.version.empty()) t.version = fs::path(cxx).filename().string() + " " + t.version;
  return t;
}

// What the cuda target builds with: $KBENCH_NVCC, the nvcc kbench was built with, or nvcc on PATH.
Tool probe_nvcc() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("KBENCH_NVCC"); env && *env) candidates.push_back(env);
  candidates.push_back(KBENCH_NVCC);
  candidates.push_back("nvcc");
  candidates.push_back("/usr/local/cuda/bin/nvcc");
  std::string tried;
  for (const auto& c : candidates) {
    Tool t = program(c, {"--version"}, "release");
    if (t.found) {
      if (const auto at = t.version.find("release"); at != std::string::npos) t.version = "CUDA " + t.version.substr(at);
      return t;
    }
    if (tried.find(c) == std::string::npos) tried += (tried.empty() ? "" : ", ") + c;
  }
  return Tool{false, "", "", "looked for " + tried};
}

Tool probe_driver() {
  Tool t;
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..." (open module: "Open Kernel Module")
  const std::string line = read_file_line("/proc/driver/nvidia/version");
  std::smatch m;
  if (std::regex_search(line, m, std::regex(R"(Kernel Module\s+([0-9][0-9.]*))"))) {
    t.found = true;
    t.path = "/proc/driver/nvidia/version";
    t.version = "NVIDIA driver " + m[1].str();
    return t;
  }
  t.note = "no /proc/driver/nvidia/version: the NVIDIA kernel module is not loaded";
  return t;
}

int mhz(const std::string& field) {
  try {
    return std::stoi(field);
  } catch (...) {
    return 0;  // "[N/A]", "[Not Supported]"
  }
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) out.push_back(trim(field));
  return out;
}

// nvidia-smi's listing, read only. Older drivers call the last field clocks_throttle_reasons.
std::vector<Gpu> probe_gpus() {
  const fs::path smi = find_program("nvidia-smi");
  if (smi.empty()) return {};
  for (const char* reasons : {"clocks_event_reasons.active", "clocks_throttle_reasons.active", ""}) {
    std::string query = "name,uuid,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem";
    if (*reasons) query += std::string(",") + reasons;
    const CommandResult r = run_command({smi.string(), "--query-gpu=" + query, "--format=csv,noheader,nounits"}, kVersionTimeout);
    if (r.exit_code != 0) continue;
    std::vector<Gpu> gpus;
    std::istringstream in(r.output);
    for (std::string line; std::getline(in, line);) {
      const auto f = split_csv_line(line);
      if (f.size() < 7) continue;
      Gpu g;
      g.name = f[0];
      g.uuid = f[1];
      g.compute_capability = f[2].find('.') != std::string::npos ? f[2] : "";
      g.sm_clock_mhz = mhz(f[3]);
      g.max_sm_clock_mhz = mhz(f[4]);
      g.memory_clock_mhz = mhz(f[5]);
      g.max_memory_clock_mhz = mhz(f[6]);
      if (f.size() > 7 && f[7].rfind("0x", 0) == 0) g.clocks_event_reasons = f[7];
      gpus.push_back(g);
    }
    return gpus;
  }
  return {};
}

// libcupti: loaded with this process in a cuda build; otherwise looked for beside the toolkit.
Tool probe_cupti(const Tool& nvcc) {
  Tool t;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("libcupti") == std::string::npos) return 0;
        static_cast<Tool*>(data)->path = name;
        return 1;
      },
      &t);
  std::vector<fs::path> dirs;
  if (t.path.empty()) {
    // nvcc on PATH may be a wrapper outside the toolkit: the toolkit is where nvcc says it is.
    if (const fs::path root = nvcc.found ? nvcc_toolkit_root(nvcc.path) : fs::path(); !root.empty()) {
      dirs = {root / "lib64", root / "extras" / "CUPTI" / "lib64", root / "targets" / "x86_64-linux" / "lib",
              root / "targets" / "sbsa-linux" / "lib"};
    }
    for (const char* d : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/cuda/lib64"}) dirs.push_back(d);
    std::error_code ec;
    for (const auto& d : dirs) {
      for (fs::directory_iterator it(d, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().filename().string().rfind("libcupti.so", 0) == 0) {
          t.path = it->path().string();
          break;
        }
      if (!t.path.empty()) break;
    }
  }
  if (t.path.empty()) {
    std::string looked;
    for (const auto& d : dirs) looked += (looked.empty() ? "" : ", ") + d.string();
    t.note = "no libcupti.so in " + looked;
    return t;
  }
  t.found = true;
  std::error_code ec;
  const fs::path real = fs::canonical(t.path, ec);
  t.version = (ec ? fs::path(t.path) : real).filename().string();
  return t;
}

Tool probe_cuobjdump() {
  std::string looked;
  const auto p = find_cuobjdump(&looked);
  if (!p) return Tool{false, "", "", "looked at " + (looked.empty() ? std::string("$PATH") : looked)};
  Tool t = program(p->string(), {"--version"}, "release");
  if (const auto at = t.version.find("release"); at != std::string::npos) t.version = "CUDA " + t.version.substr(at);
  return t;
}

Sandbox sandbox(const BwrapProbe& p) { return Sandbox{p.ok, p.version, p.error}; }

void probe_seccomp(MachineFacts& f) {
  f.seccomp_actions = read_file_line("/proc/sys/kernel/seccomp/actions_avail");
  f.seccomp_filter = !f.seccomp_actions.empty();
}

// Landlock's ABI version (landlock_create_ruleset with LANDLOCK_CREATE_RULESET_VERSION).
void probe_landlock(MachineFacts& f) {
#ifdef __NR_landlock_create_ruleset
  const long nr = __NR_landlock_create_ruleset;
#else
  const long nr = 444;  // the same number on every architecture (asm-generic)
#endif
  constexpr unsigned kCreateRulesetVersion = 1u << 0;
  const long abi = ::syscall(nr, nullptr, 0, kCreateRulesetVersion);
  if (abi > 0) {
    f.landlock_abi = static_cast<int>(abi);
  } else if (errno == EOPNOTSUPP) {
    f.landlock_note = "built into the kernel but not enabled at boot (the lsm= list)";
  } else if (errno == ENOSYS) {
    f.landlock_note = "the kernel has no Landlock";
  } else {
    f.landlock_note = std::string("landlock_create_ruleset: ") + std::strerror(errno);
  }
}

void probe_agents(MachineFacts& f, bool versions) {
  f.agents_dir = agents_dir().string();
  for (const std::string& name : adapter_names()) {
    if (name == "kbench" || name == "generic") continue;  // kbench's own loop is built in; generic runs any command
    Agent a;
    a.name = name;
    try {
      const auto adapter = make_adapter(name, AdapterOptions{});
      const auto* cli = dynamic_cast<const CliAdapter*>(adapter.get());
      a.found = true;
      if (cli) {
        a.program = cli->install().program.string();
        a.found_by = cli->install().found_by;
      }
      if (versions)
        if (const auto argv = adapter->version_command(); !argv.empty()) {
          const CommandResult r = run_command(argv, kVersionTimeout);
          a.version = r.exit_code == 0 ? first_line(r.output) : "";
        }
    } catch (const std::exception& e) {
      a.note = e.what();
    }
    f.agents.push_back(a);
  }
}

// Python, and torch/Triton's installed versions from their package metadata (nothing is imported).
void probe_python(MachineFacts& f) {
  f.python = program("python3", {"--version"});
  const std::string missing = f.python.found ? "not installed for " + f.python.path : "no python3";
  f.torch = Tool{false, "", "", missing};
  f.triton = Tool{false, "", "", missing};
  if (!f.python.found) return;
  const char* script =
      "import importlib.metadata as m, importlib.util as u\n"
      "for name in ('torch', 'triton'):\n"
      "    try:\n"
      "        s = u.find_spec(name)\n"
      "        print(name, m.version(name), s.submodule_search_locations[0] if s and s.submodule_search_locations else '-')\n"
      "    except Exception:\n"
      "        print(name, '-', '-')\n";
  const CommandResult r = run_command({f.python.path, "-c", script}, kVersionTimeout);
  std::istringstream in(r.output);
  std::string name, version, where;
  while (in >> name >> version >> where) {
    Tool* t = name == "torch" ? &f.torch : name == "triton" ? &f.triton : nullptr;
    if (!t || version == "-") continue;
    *t = Tool{true, where == "-" ? f.python.path : where, version, ""};
  }
}

void probe_runs_dir(MachineFacts& f, const fs::path& runs) {
  std::error_code ec;
  const fs::path abs = fs::absolute(runs, ec);
  f.runs_dir = (ec ? runs : abs).string();
  fs::path p = ec ? runs : abs;
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(p, ec)) {
      f.runs_note = "it is a file, not a folder";
      return;
    }
    f.runs_writable = ::access(p.c_str(), W_OK | X_OK) == 0;
    return;
  }
  // Not made yet: the first run makes it inside the nearest existing folder.
  while (p.has_parent_path() && p != p.parent_path() && !fs::exists(p, ec)) p = p.parent_path();
  f.runs_writable = ::access(p.c_str(), W_OK | X_OK) == 0;
  f.runs_note = "made by the first run, in " + p.string();
}

void probe_cuda_ceilings(MachineFacts& f) {
  for (Gpu& g : f.gpus) {
    // cuda_ceilings.h: cuda-<uuid>-driver<CUDA driver version>.json; any driver's counts here.
    const fs::path like = device_ceilings_cache_file("cuda-" + g.uuid + "-driver");
    const std::string prefix = like.stem().string();
    std::error_code ec;
    for (fs::directory_iterator it(like.parent_path(), ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().rfind(prefix, 0) == 0) g.ceilings_cached = true;
  }
}

}  // namespace

MachineFacts probe_machine(const ProbeOptions& o) {
  MachineFacts f;
  f.cxx = probe_cxx();
#if KBENCH_WITH_CUDA
  f.cuda_built = true;
#endif
  f.nvcc = probe_nvcc();
  f.driver = probe_driver();
  f.gpus = probe_gpus();
  if (!f.driver.found && !f.gpus.empty()) f.driver = program("nvidia-smi", {"--query-gpu=driver_version", "--format=csv,noheader"});
  f.cuda_sees_gpu = cuda_available();
  f.cupti = probe_cupti(f.nvcc);
  f.cuobjdump = probe_cuobjdump();

  f.bwrap = program("bwrap", {"--version"});
  f.eval_sandbox = sandbox(probe_worker_sandbox());
  f.agent_sandbox = sandbox(probe_sandbox(true));
  f.max_user_namespaces = read_number<long>("/proc/sys/user/max_user_namespaces");
  f.unprivileged_userns_clone = read_number<int>("/proc/sys/kernel/unprivileged_userns_clone");
  f.apparmor_restrict_unprivileged_userns = read_number<int>("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  probe_seccomp(f);
  probe_landlock(f);

  probe_agents(f, o.agent_versions);
  f.node = program("node", {"--version"});
  probe_python(f);
  f.sbatch = program("sbatch", {"--version"});
  f.squeue = program("squeue", {"--version"});

  probe_runs_dir(f, o.runs_dir);
  f.cache_dir = kbench_cache_dir().string();
  f.host_ceilings_cached = cached_host_ceilings().has_value();
  probe_cuda_ceilings(f);
  return f;
}

}  // namespace kb::doctor
