#include "agent/cli_install.h"

#include <fmt/format.h>
#include <sys/utsname.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/subprocess.h"
#include "target/ceilings.h"

namespace kb {
namespace fs = std::filesystem;

namespace {

bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && (fs::status(p, ec).permissions() & fs::perms::owner_exec) != fs::perms::none;
}

fs::path on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(ss, dir, ':');)
    if (!dir.empty() && is_executable_file(fs::path(dir) / name)) return fs::path(dir) / name;
  return {};
}

// A JavaScript CLI: a script whose #! line names node, or a .js/.mjs/.cjs file.
bool is_node_script(const fs::path& p) {
  const std::string ext = p.extension().string();
  if (ext == ".js" || ext == ".mjs" || ext == ".cjs") return true;
  std::ifstream in(p, std::ios::binary);
  std::string head(128, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.rfind("#!", 0) != 0) return false;
  const std::string first = head.substr(0, head.find('\n'));
  return first.find("node") != std::string::npos;
}

// The outermost node_modules folder above `p`, or empty: npm hoists a package's dependencies to it.
fs::path outer_node_modules(const fs::path& p) {
  fs::path found;
  for (fs::path d = p.parent_path(); !d.empty() && d != d.root_path(); d = d.parent_path())
    if (d.filename() == "node_modules") found = d;
  return found;
}

// Node.js's own name for this machine's architecture, as its npm packages use it.
std::string node_arch() {
  utsname u{};
  uname(&u);
  const std::string m = u.machine;
  if (m == "x86_64") return "x64";
  if (m == "aarch64") return "arm64";
  return m;
}

int node_major(const fs::path& node) {
  const CommandResult r = run_command({node.string(), "--version"}, std::chrono::seconds(30));
  if (r.exit_code != 0 || r.output.empty() || r.output[0] != 'v') return 0;
  return std::atoi(r.output.c_str() + 1);
}

}  // namespace

bool in_system_folders(const fs::path& p) {
  const fs::path c = fs::weakly_canonical(p);
  for (const char* root : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}) {
    const fs::path r = fs::weakly_canonical(root);
    auto [re, ce] = std::mismatch(r.begin(), r.end(), c.begin(), c.end());
    if (re == r.end()) return true;
  }
  return false;
}

fs::path agents_dir() {
  if (const char* d = std::getenv("KBENCH_AGENTS_DIR"); d && *d) return d;
  return kbench_cache_dir() / "agents";
}

CliInstall locate_cli(const CliSpec& spec, const fs::path& agent_bin) {
  CliInstall out;
  fs::path found;
  if (!agent_bin.empty()) {
    if (!is_executable_file(agent_bin) && !(fs::is_regular_file(agent_bin) && is_node_script(agent_bin)))
      throw std::invalid_argument(fmt::format("--agent-bin {}: not an executable file", agent_bin.string()));
    found = agent_bin;
    out.found_by = "--agent-bin";
  } else if (const fs::path p = agents_dir() / "node_modules/.bin" / spec.command; fs::exists(p)) {
    found = p;
    out.found_by = "the agents folder " + agents_dir().string();
  } else if (const fs::path q = on_path(spec.command); !q.empty()) {
    found = q;
    out.found_by = "PATH";
  } else {
    throw std::invalid_argument(fmt::format(
        "--agent {}: its CLI `{}` is not installed: not in the agents folder {} and not on PATH. Install the pinned "
        "version with `scripts/setup --agents` (npm package {}, see tools/agents/package.json), or give its path with "
        "--agent-bin PATH",
        spec.agent, spec.command, agents_dir().string(), spec.package));
  }
  out.program = fs::canonical(found);
  auto bind = [&](const fs::path& p) {
    if (in_system_folders(p)) return;
    const fs::path nm = outer_node_modules(p);
    const fs::path what = nm.empty() ? p : nm;
    for (const auto& r : out.read_only)
      if (r == what) return;
    out.read_only.push_back(what);
  };
  bind(out.program);
  if (!is_node_script(out.program)) {
    out.argv = {out.program.string()};
    return out;
  }
  // A JavaScript CLI: the Node.js installed next to it (tools/agents pins one), else the PATH's.
  std::vector<fs::path> candidates;
  if (const fs::path nm = outer_node_modules(out.program); !nm.empty())
    candidates.push_back(nm / ("node-linux-" + node_arch()) / "bin/node");
  if (const fs::path n = on_path("node"); !n.empty()) candidates.push_back(n);
  std::string seen;
  for (const auto& c : candidates) {
    if (!is_executable_file(c)) continue;
    const int major = node_major(c);
    seen += fmt::format("{}{} (v{})", seen.empty() ? "" : ", ", c.string(), major);
    if (major >= spec.node_major && major > 0) {
      const fs::path node = fs::canonical(c);
      bind(node);
      out.argv = {node.string(), out.program.string()};
      return out;
    }
  }
  throw std::invalid_argument(fmt::format(
      "--agent {}: {} is a Node.js program that needs Node.js {} or newer; found {}. `scripts/setup --agents` installs "
      "one next to the CLIs (npm package node-linux-{})",
      spec.agent, out.program.string(), spec.node_major, seen.empty() ? "none" : seen, node_arch()));
}

}  // namespace kb
