#include "target/python_solution.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>

#include "core/bwrap.h"
#include "core/hash.h"
#include "core/read_file.h"
#include "core/self_executable.h"
#include "core/subprocess.h"
#include "core/version.h"
#include "target/compile.h"
#include "target/solution_kit.h"

namespace kb {
namespace fs = std::filesystem;

bool is_python_solution(const fs::path& dir, const std::string& target_source) {
  return fs::is_regular_file(dir / kPythonSolutionFile) && !fs::is_regular_file(dir / target_source);
}

fs::path configured_python() {
  if (const char* env = std::getenv("KBENCH_PYTHON"); env && *env) return env;
#ifdef KBENCH_PYTHON_EXECUTABLE
  return KBENCH_PYTHON_EXECUTABLE;
#else
  return {};
#endif
}

namespace {

// Asked with -E -s, the view the bridge's embedded interpreter has (no PYTHON* variables, no user
// site-packages: src/python/bridge.cpp). The answer is one marked line, so that whatever an import
// prints around it is left aside.
constexpr const char* kProbeScript = R"PY(
import json, site, sys
r = {"version": sys.version.split()[0], "prefix": sys.prefix, "base_prefix": sys.base_prefix,
     "site_packages": site.getsitepackages()}
for name in ("torch", "triton"):
    try:
        m = __import__(name)
        r[name] = {"version": str(m.__version__)}
        if name == "torch":
            r[name]["cuda"] = m.version.cuda or ""
    except BaseException as e:
        r[name] = {"error": f"{type(e).__name__}: {e}"}
print("KBENCH_PYTHON_PROBE " + json.dumps(r))
)PY";

PythonInterpreter run_probe(const fs::path& executable) {
  PythonInterpreter p;
  p.executable = executable;
  if (executable.empty()) {
    p.error = "no Python interpreter is configured (set KBENCH_PYTHON to a python3 executable)";
    return p;
  }
  // torch's import alone takes seconds on a loaded machine; a minute is far beyond any healthy one.
  const CommandResult r = run_command({executable.string(), "-E", "-s", "-c", kProbeScript}, std::chrono::minutes(1));
  const std::string marker = "KBENCH_PYTHON_PROBE ";
  const size_t at = r.output.find(marker);
  if (r.exit_code != 0 || at == std::string::npos) {
    p.error = fmt::format("the interpreter {} could not be asked about itself (exit {}{}): {}", executable.string(),
                          r.exit_code, r.timed_out ? ", timed out" : "", trim_compiler_log(r.output, 5));
    return p;
  }
  const size_t end = r.output.find('\n', at);
  const auto j = nlohmann::json::parse(r.output.substr(at + marker.size(), end == std::string::npos ? end : end - at - marker.size()),
                                       nullptr, false);
  if (!j.is_object()) {
    p.error = "the interpreter " + executable.string() + " answered the probe with something other than JSON";
    return p;
  }
  p.version = j.value("version", "");
  p.prefix = j.value("prefix", "");
  p.base_prefix = j.value("base_prefix", "");
  for (const auto& s : j.value("site_packages", nlohmann::json::array())) p.site_packages.push_back(s.get<std::string>());
  const auto torch = j.value("torch", nlohmann::json::object());
  p.torch_version = torch.value("version", "");
  p.torch_error = torch.value("error", "");
  p.torch_cuda = torch.value("cuda", "");
  const auto triton = j.value("triton", nlohmann::json::object());
  p.triton_version = triton.value("version", "");
  p.triton_error = triton.value("error", "");
  return p;
}

// "major.minor" of a version string ("3.11.2" -> "3.11").
std::string major_minor(const std::string& version) {
  const size_t first = version.find('.');
  if (first == std::string::npos) return version;
  return version.substr(0, version.find('.', first + 1));
}

}  // namespace

std::string interpreter_identity(const PythonInterpreter& p) {
  std::string s = "executable " + p.executable.string() + "\nversion " + p.version + "\nprefix " + p.prefix.string() +
                  "\nbase_prefix " + p.base_prefix.string() + "\ntorch " + p.torch_version + " cuda " + p.torch_cuda +
                  "\ntriton " + p.triton_version + "\n";
  for (const auto& sp : p.site_packages) s += "site " + sp.string() + "\n";
  return s;
}

const PythonInterpreter& probe_python(const fs::path& executable) {
  static std::mutex mutex;
  static std::map<fs::path, PythonInterpreter> probes;
  std::lock_guard lock(mutex);
  auto it = probes.find(executable);
  if (it == probes.end()) it = probes.emplace(executable, run_probe(executable)).first;
  return it->second;
}

fs::path python_bridge_library() {
  if (const char* env = std::getenv("KBENCH_PYTHON_BRIDGE"); env && *env) return env;
#ifdef KBENCH_PYTHON_BRIDGE
  std::error_code ec;
  // Installed: <prefix>/bin/kbench and <prefix>/lib/kbench/ (cmake/KbenchInstall.cmake).
  const fs::path exe = self_executable(ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "lib" / "kbench" / "libkbench_python_bridge.so";
    if (fs::is_regular_file(installed, ec)) return installed;
  }
  return KBENCH_PYTHON_BRIDGE;
#else
  return {};
#endif
}

std::optional<std::string> python_unavailable_reason(const std::string& target) {
  const fs::path bridge = python_bridge_library();
  if (bridge.empty())
    return std::string("this kbench was built without Python's embedding files (CMake found no Python3 "
                       "Development.Embed; install python3-dev and configure again), so it has no Python bridge");
  if (!fs::is_regular_file(bridge)) return "kbench's Python bridge " + bridge.string() + " is missing (build it: ninja kbench_python_bridge)";
  const PythonInterpreter& p = probe_python(configured_python());
  if (!p.error.empty()) return p.error;
#ifdef KBENCH_PYTHON_BRIDGE_VERSION
  if (std::getenv("KBENCH_PYTHON_BRIDGE") == nullptr && major_minor(p.version) != KBENCH_PYTHON_BRIDGE_VERSION)
    return fmt::format("the interpreter {} is Python {}, but kbench's Python bridge embeds Python {} (set KBENCH_PYTHON to "
                       "a Python {} interpreter, or build kbench against this one)",
                       p.executable.string(), p.version, KBENCH_PYTHON_BRIDGE_VERSION, KBENCH_PYTHON_BRIDGE_VERSION);
#endif
  if (!p.torch_error.empty())
    return "torch is not importable by " + p.executable.string() + " (" + p.torch_error + ")";
  if (target == "cuda") {
    if (p.torch_cuda.empty())
      return "the torch of " + p.executable.string() + " (" + p.torch_version + ") is built without CUDA";
    if (!p.triton_error.empty())
      return "triton is not importable by " + p.executable.string() + " (" + p.triton_error + ")";
  }
  return std::nullopt;
}

std::vector<fs::path> python_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    if (it->is_directory() && it->path().filename() == "__pycache__") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".py") out.push_back(fs::relative(it->path(), dir));
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// What a deck solution imports from its kits, after its own files (python_kit_files): {the kit,
// the file relative to it}.
struct KitFile {
  fs::path kit, relative;
};

std::vector<KitFile> kit_files(const fs::path& solution_dir) {
  std::vector<KitFile> out;
  const std::vector<fs::path> kits = solution_kits(solution_dir);
  if (kits.empty()) return out;  // not a deck solution (an agent's): no kit, nothing to read
  std::set<fs::path> taken;
  for (const auto& f : python_files(solution_dir)) taken.insert(f);
  for (const auto& kit : kits)
    for (const auto& f : python_files(kit))
      if (taken.insert(f).second) out.push_back({kit, f});
  return out;
}

BuildResult refused(const std::string& why) {
  BuildResult r;
  r.command = "(not run: " + why + ")";
  r.log = "[kbench] " + why + "\n";
  return r;
}

}  // namespace

std::vector<std::string> python_kit_modules(const fs::path& solution_dir) {
  std::set<std::string> names;
  for (const auto& f : kit_files(solution_dir)) {
    const fs::path first = *f.relative.begin();
    names.insert(f.relative.has_parent_path() ? first.string() : first.stem().string());
  }
  return {names.begin(), names.end()};
}

BuildResult build_python_solution(const fs::path& solution_dir, const std::string& target, const fs::path& build_root) {
  const fs::path dir = fs::absolute(solution_dir);
  if (!fs::is_regular_file(dir / kPythonSolutionFile))
    return refused("solution folder " + dir.string() + " has no " + kPythonSolutionFile);
  if (fs::exists(dir / "solution.toml"))
    return refused(
        "solution.toml sets options of a C++ or CUDA build (flags, libraries); a Python solution takes none: remove it "
        "from " + dir.string());
  if (const auto why = python_unavailable_reason(target))
    return refused("Python solutions are unavailable on the " + target + " target: " + *why);
  const fs::path bridge = python_bridge_library();
  const PythonInterpreter& py = probe_python(configured_python());
  const std::string device = target == "cuda" ? "cuda" : "cpu";
  const std::string conf = "interpreter=" + py.executable.string() + "\ndevice=" + device + "\n";

  const auto t0 = std::chrono::steady_clock::now();
  const std::string bridge_bytes = read_file(bridge);
  std::string material = "python solution\n" + kbench_version() + "\ntarget " + target + "\n" + conf +
                         interpreter_identity(py) + "bridge\n" + bridge_bytes + '\0' + folder_material(dir);
  // A deck solution's kit modules are part of what it runs (target/solution_kit.h).
  const std::vector<KitFile> kits = kit_files(dir);
  for (const auto& k : kits) material += "\0kit " + k.relative.string() + "\n" + read_file(k.kit / k.relative);
  const std::string key = fmt::format("py-{:016x}", buffer_hash(material.data(), material.size(), 0x6b62656e6368ull));
  const fs::path entry = build_root / target / key;
  BuildResult r;
  r.library = entry / "libsolution.so";
  const std::vector<fs::path> sources = python_files(dir);
  r.command = fmt::format("(Python solution: kbench's bridge {} as libsolution.so, {} .py file{} of {}, interpreter {})",
                          bridge.string(), sources.size(), sources.size() == 1 ? "" : "s", dir.string(),
                          py.executable.string());
  if (fs::is_regular_file(r.library) && fs::is_regular_file(entry / "python" / "bridge.conf")) {
    r.ok = r.cached = true;
    r.log = read_file(entry / "build.log");
    return r;
  }
  // Made in a folder of this process's own and renamed into place whole: an interrupted build
  // never leaves an entry that a later run would take as a hit.
  const fs::path work = build_root / target / (key + ".work-" + std::to_string(getpid()));
  fs::remove_all(work);
  fs::create_directories(work / "python" / "src");
  fs::copy_file(bridge, work / "libsolution.so");
  for (const auto& f : sources) {
    fs::create_directories((work / "python" / "src" / f).parent_path());
    fs::copy_file(dir / f, work / "python" / "src" / f);
  }
  for (const auto& k : kits) {
    fs::create_directories((work / "python" / "src" / k.relative).parent_path());
    fs::copy_file(k.kit / k.relative, work / "python" / "src" / k.relative);
  }
  std::ofstream(work / "python" / "bridge.conf") << conf;
  r.log = fmt::format("[kbench] Python solution for the {} target: {} file(s) copied; interpreter {} (Python {}, torch {}{})\n",
                      target, sources.size(), py.executable.string(), py.version, py.torch_version,
                      py.triton_version.empty() ? "" : ", triton " + py.triton_version);
  std::ofstream(work / "build.log") << r.command << "\n" << r.log;
  std::error_code ec;
  fs::rename(work, entry, ec);
  if (ec) {
    // Another process made the same entry meanwhile (the key is the content): use theirs.
    fs::remove_all(work);
    if (!fs::is_regular_file(r.library)) return refused("the build cache entry " + entry.string() + " could not be made: " + ec.message());
  }
  r.ok = true;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

bool is_python_build(const fs::path& library) {
  std::error_code ec;
  return fs::is_regular_file(library.parent_path() / "python" / "bridge.conf", ec);
}

std::vector<fs::path> python_sandbox_folders(const fs::path& library) {
  const fs::path conf = library.parent_path() / "python" / "bridge.conf";
  if (!fs::is_regular_file(conf)) return {};
  std::ifstream in(conf);
  fs::path executable;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("interpreter=", 0) == 0) executable = line.substr(std::string("interpreter=").size());
  return python_interpreter_folders(executable);
}

std::vector<fs::path> python_interpreter_folders(const fs::path& executable) {
  if (executable.empty()) return {};
  const PythonInterpreter& p = probe_python(executable);
  std::vector<fs::path> candidates = {p.prefix, p.base_prefix, executable.parent_path()};
  candidates.insert(candidates.end(), p.site_packages.begin(), p.site_packages.end());
  // Shortest first, so that a folder is seen after the one holding it.
  std::sort(candidates.begin(), candidates.end(),
            [](const fs::path& a, const fs::path& b) { return a.native().size() < b.native().size(); });
  std::vector<fs::path> out;
  for (const auto& c : candidates) {
    if (c.empty() || !c.is_absolute()) continue;
    const fs::path n = c.lexically_normal();
    std::error_code ec;
    if (in_sandbox_system_folders(n) || !fs::is_directory(n, ec)) continue;
    // A folder inside one already listed is bound with it.
    bool covered = false;
    for (const auto& o : out)
      if (auto rel = n.lexically_relative(o); !rel.empty() && *rel.begin() != "..") covered = true;
    if (!covered && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  return out;
}

}  // namespace kb
