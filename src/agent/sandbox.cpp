#include "agent/sandbox.h"

#include <algorithm>
#include <chrono>

#include "core/subprocess.h"

namespace kb {
namespace fs = std::filesystem;

namespace {

// Merged-/usr systems (Debian 12) have /bin, /lib... as symlinks into /usr: they are recreated as
// the same symlinks, so paths resolve inside the sandbox exactly as outside.
void add_system_path(std::vector<std::string>& a, const fs::path& p) {
  std::error_code ec;
  const auto st = fs::symlink_status(p, ec);
  if (ec || !fs::exists(st)) return;
  if (fs::is_symlink(st)) {
    a.insert(a.end(), {"--symlink", fs::read_symlink(p, ec).string(), p.string()});
  } else {
    a.insert(a.end(), {"--ro-bind", p.string(), p.string()});
  }
}

std::vector<std::string> base_command(bool network) {
  std::vector<std::string> a = {
      "bwrap",
      // The sandbox dies with kbench; the agent gets a new session, so it cannot push input into
      // kbench's terminal (TIOCSTI).
      "--die-with-parent", "--new-session",
      // Own user, PID, IPC, UTS and cgroup namespaces. The PID namespace is what makes the budget
      // airtight: when its init goes, the kernel kills every process in it, daemonized or not.
      "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
      "--hostname", "kbench-sandbox",
      // No capabilities, even when kbench runs as root: with CAP_SYS_ADMIN or CAP_DAC_READ_SEARCH
      // a process could remount or open files by handle around the bind mounts.
      "--cap-drop", "ALL"};
  if (!network) a.push_back("--unshare-net");
  for (const char* d : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"})
    add_system_path(a, d);
  // /etc is shared for the system's configuration, but its secrets are covered: the sandboxed
  // user may be the same user as kbench's (root, even), who could read them. A deny-list cannot
  // be complete; docs/agent-runs.md says to run kbench as an unprivileged user.
  std::error_code ec;
  for (const char* f : {"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers"})
    if (fs::is_regular_file(f, ec)) a.insert(a.end(), {"--ro-bind", "/dev/null", f});
  for (const char* d : {"/etc/sudoers.d", "/etc/ssl/private"})
    if (fs::is_directory(d, ec)) a.insert(a.end(), {"--tmpfs", d});
  for (const auto& e : fs::directory_iterator("/etc/ssh", ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("ssh_host_", 0) == 0 && n.size() > 4 && n.compare(n.size() - 4, 4, ".pub") != 0)
      a.insert(a.end(), {"--ro-bind", "/dev/null", e.path().string()});
  }
  // A resolv.conf that points outside /etc (systemd-resolved: /run/systemd/resolve/...) would be
  // dangling, /run not being bound: bind its target alone, so name resolution keeps working.
  if (network && fs::is_symlink("/etc/resolv.conf", ec)) {
    const fs::path target = fs::weakly_canonical("/etc/resolv.conf", ec);
    if (!ec && fs::is_regular_file(target)) a.insert(a.end(), {"--ro-bind", target.string(), target.string()});
  }
  // /sys read-only: the CUDA driver, OpenMP and kbench's cache-size probe read CPU and device
  // topology there.
  a.insert(a.end(), {"--ro-bind", "/sys", "/sys", "--proc", "/proc", "--dev", "/dev"});
  for (const auto& n : gpu_device_nodes()) a.insert(a.end(), {"--dev-bind", n.string(), n.string()});
  a.insert(a.end(), {"--tmpfs", "/tmp", "--tmpfs", "/dev/shm"});
  return a;
}

}  // namespace

std::vector<fs::path> gpu_device_nodes() {
  std::vector<fs::path> nodes;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("nvidia", 0) == 0) nodes.push_back(e.path());
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

std::vector<std::string> sandbox_command(const SandboxSpec& spec, const std::vector<std::string>& argv) {
  std::vector<std::string> a = base_command(spec.network);
  // Order matters: later mounts go on top of earlier ones, and parent folders of a bound path are
  // created empty in the sandbox's own root (so binding /work/runs/X/workspace shows nothing else
  // of /work/runs).
  for (const auto& p : spec.read_only) a.insert(a.end(), {"--ro-bind", p.string(), p.string()});
  if (!spec.home.empty()) a.insert(a.end(), {"--bind", spec.home.string(), spec.home.string()});
  if (!spec.workspace.empty()) a.insert(a.end(), {"--bind", spec.workspace.string(), spec.workspace.string()});
  for (const auto& p : spec.read_only_in_workspace) a.insert(a.end(), {"--ro-bind", p.string(), p.string()});
  // The sandbox's own root (a tmpfs holding the mount points) read-only, last: a write anywhere
  // but the workspace, HOME, /tmp and /dev/shm fails instead of landing in a scratch tmpfs.
  a.insert(a.end(), {"--remount-ro", "/"});
  if (!spec.workspace.empty()) a.insert(a.end(), {"--chdir", spec.workspace.string()});
  a.push_back("--");
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

SandboxProbe probe_sandbox(bool network) {
  SandboxProbe p;
  CommandResult v = run_command({"bwrap", "--version"}, std::chrono::seconds(30));
  if (v.exit_code != 0) {
    p.error = "bubblewrap (bwrap) is not installed or does not run: " + v.output +
              " -- install the Debian package bubblewrap (scripts/setup does)";
    return p;
  }
  p.version = v.output;
  while (!p.version.empty() && (p.version.back() == '\n' || p.version.back() == ' ')) p.version.pop_back();
  SandboxSpec spec;
  spec.network = network;
  CommandResult r = run_command(sandbox_command(spec, {"/bin/true"}), std::chrono::seconds(30));
  if (r.exit_code == 0) {
    p.ok = true;
    return p;
  }
  std::string out = r.output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  p.error = "bwrap cannot create the sandbox here (" + (r.timed_out    ? std::string("timed out")
                                                    : r.signal ? "signal " + std::to_string(r.signal)
                                                               : "exit code " + std::to_string(r.exit_code)) +
            "): " + out;
  // The usual causes, named so the fix is one step away.
  if (out.find("No permissions to create new namespace") != std::string::npos ||
      out.find("Operation not permitted") != std::string::npos)
    p.error += " -- user namespaces are disabled or restricted for this user (check sysctl "
               "user.max_user_namespaces, kernel.unprivileged_userns_clone, or an AppArmor/seccomp policy "
               "of the container); kbench refuses to run an agent unsandboxed unless given --no-sandbox";
  return p;
}

}  // namespace kb
