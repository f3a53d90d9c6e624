#include "core/bwrap.h"

#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

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

// The machine's /etc, its secrets covered: the sandboxed user may be the same user as kbench's
// (root, even), who could read them. A deny-list cannot be complete; docs/agent-runs.md says to
// run kbench as an unprivileged user.
void add_full_etc(std::vector<std::string>& a, bool network) {
  add_system_path(a, "/etc");
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
}

// Only what the dynamic loader (ld.so.cache, ld.so.conf) and the compiler drivers
// (/etc/alternatives: /usr/bin/c++, /usr/local/cuda on some installs) read.
void add_minimal_etc(std::vector<std::string>& a) {
  std::error_code ec;
  for (const char* f : {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives"})
    if (fs::exists(fs::symlink_status(f, ec))) add_system_path(a, f);
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

bool in_sandbox_system_folders(const fs::path& p) {
  const fs::path n = p.lexically_normal();
  auto first = n.begin();
  if (first == n.end() || *first != "/") return false;
  ++first;
  if (first == n.end()) return false;
  const std::string top = first->string();
  return top == "usr" || top == "lib" || top == "lib32" || top == "lib64" || top == "libx32" || top == "bin" ||
         top == "sbin";
}

std::vector<std::string> bwrap_command(const BwrapLayout& l, const std::vector<std::string>& argv) {
  std::vector<std::string> a = {
      "bwrap",
      // The sandbox dies with its parent; the command gets a new session, so it cannot push input
      // into kbench's terminal (TIOCSTI).
      "--die-with-parent", "--new-session",
      // Own user, PID, IPC, UTS and cgroup namespaces. The PID namespace is what makes a sandbox
      // airtight over time: when its init goes, the kernel kills every process in it, daemonized
      // (setsid, double fork) or not.
      "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
      "--hostname", "kbench-sandbox",
      // No capabilities, even when kbench runs as root: with CAP_SYS_ADMIN or CAP_DAC_READ_SEARCH
      // a process could remount or open files by handle around the bind mounts.
      "--cap-drop", "ALL"};
  if (!l.network) a.push_back("--unshare-net");
  for (const char* d : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) add_system_path(a, d);
  if (l.full_etc) {
    add_system_path(a, "/opt");
    add_full_etc(a, l.network);
  } else {
    add_minimal_etc(a);
  }
  for (const auto& p : l.hidden) a.insert(a.end(), {"--tmpfs", p.string(), "--remount-ro", p.string()});
  if (l.sys) a.insert(a.end(), {"--ro-bind", "/sys", "/sys"});
  a.insert(a.end(), {"--proc", "/proc", "--dev", "/dev"});
  if (l.gpu_devices)
    for (const auto& n : gpu_device_nodes()) a.insert(a.end(), {"--dev-bind", n.string(), n.string()});
  a.insert(a.end(), {"--tmpfs", "/tmp", "--tmpfs", "/dev/shm"});
  // Order matters: later mounts go on top of earlier ones, and parent folders of a bound path are
  // created empty in the sandbox's own root (so binding runs/X/workspace shows nothing else
  // of runs/).
  for (const auto& p : l.read_only) a.insert(a.end(), {"--ro-bind", p.string(), p.string()});
  for (const auto& [out, in] : l.read_only_at) a.insert(a.end(), {"--ro-bind", out.string(), in.string()});
  for (const auto& p : l.writable) a.insert(a.end(), {"--bind", p.string(), p.string()});
  for (const auto& p : l.read_only_on_top) a.insert(a.end(), {"--ro-bind", p.string(), p.string()});
  // The sandbox's own root (a tmpfs holding the mount points) read-only, last: a write anywhere
  // but the writable paths, /tmp and /dev/shm fails instead of landing in a scratch tmpfs.
  a.insert(a.end(), {"--remount-ro", "/"});
  if (l.clear_env) a.push_back("--clearenv");
  for (const auto& [k, v] : l.env) a.insert(a.end(), {"--setenv", k, v});
  if (!l.chdir.empty()) a.insert(a.end(), {"--chdir", l.chdir.string()});
  a.push_back("--");
  a.insert(a.end(), argv.begin(), argv.end());
  return a;
}

std::vector<RuntimeLibrary> runtime_libraries() {
  std::vector<RuntimeLibrary> libs;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto& out = *static_cast<std::vector<RuntimeLibrary>*>(data);
        const char* name = info->dlpi_name;
        if (!name || name[0] != '/') return 0;  // the program itself, the vDSO
        const fs::path as = fs::path(name).lexically_normal();
        std::error_code ec;
        const fs::path file = fs::canonical(as, ec);
        if (ec || (in_sandbox_system_folders(as) && in_sandbox_system_folders(file))) return 0;
        out.push_back({file, as});
        return 0;
      },
      &libs);
  return libs;
}

std::string runtime_library_path() {
  std::vector<std::string> dirs;
  for (const auto& l : runtime_libraries()) {
    const std::string d = l.loaded_as.parent_path().string();
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  }
  std::string s;
  for (const auto& d : dirs) s += (s.empty() ? "" : ":") + d;
  return s;
}

fs::path find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return fs::absolute(program);
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    const fs::path dir = p.substr(start, end - start).empty() ? fs::path(".") : fs::path(p.substr(start, end - start));
    const fs::path cand = fs::absolute(dir / program);
    if (access(cand.c_str(), X_OK) == 0 && fs::is_regular_file(cand)) return cand;
    start = end + 1;
  }
  return {};
}

}  // namespace kb

#include "core/subprocess.h"

namespace kb {

BwrapProbe probe_bwrap(const BwrapLayout& layout) {
  BwrapProbe p;
  const CommandResult v = run_command({"bwrap", "--version"}, std::chrono::seconds(30));
  if (v.exit_code != 0) {
    p.error = "bubblewrap (bwrap) is not installed or does not run: " + v.output +
              " -- install the Debian package bubblewrap (scripts/setup does)";
    return p;
  }
  p.version = v.output;
  while (!p.version.empty() && (p.version.back() == '\n' || p.version.back() == ' ')) p.version.pop_back();
  const CommandResult r = run_command(bwrap_command(layout, {"/bin/true"}), std::chrono::seconds(30));
  if (r.exit_code == 0) {
    p.ok = true;
    return p;
  }
  std::string out = r.output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  p.error = "bwrap cannot create the sandbox here (" +
            (r.timed_out ? std::string("timed out")
             : r.signal  ? "signal " + std::to_string(r.signal)
                         : "exit code " + std::to_string(r.exit_code)) +
            "): " + out;
  // The usual causes, named so the fix is one step away.
  if (out.find("No permissions to create new namespace") != std::string::npos ||
      out.find("Operation not permitted") != std::string::npos)
    p.error += " -- user namespaces are disabled or restricted for this user (check sysctl user.max_user_namespaces, "
               "kernel.unprivileged_userns_clone, or an AppArmor/seccomp policy of the container)";
  return p;
}

CommandResult run_tool_sandboxed(const std::vector<std::string>& argv, const std::vector<fs::path>& read_only,
                                 std::chrono::milliseconds timeout) {
  BwrapLayout l;
  l.network = false;
  l.full_etc = false;
  l.gpu_devices = false;
  l.sys = false;
  l.read_only = read_only;
  l.clear_env = true;
  l.env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}};
  std::vector<std::string> cmd = bwrap_command(l, argv);
  if (const fs::path bwrap = find_program("bwrap"); !bwrap.empty()) cmd[0] = bwrap.string();
  const char* path = std::getenv("PATH");
  const std::vector<std::string> env = {std::string("PATH=") + (path ? path : "/usr/bin:/bin")};
  return run_command(cmd, timeout, {}, &env);
}

}  // namespace kb
