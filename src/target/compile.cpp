#include "target/compile.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/bwrap.h"
#include "core/data_dir.h"
#include "core/hash.h"
#include "core/read_file.h"
#include "core/subprocess.h"
#include "core/version.h"
#include "target/build_sandbox.h"
#include "target/solution_config.h"
#include "target/solution_kit.h"

namespace kb {
namespace fs = std::filesystem;

std::vector<fs::path> solution_sources(const fs::path& dir, const std::string& main_file,
                                       const std::vector<std::string>& extensions) {
  if (!fs::is_directory(dir)) throw std::invalid_argument("solution folder " + dir.string() + " does not exist");
  if (!fs::is_regular_file(dir / main_file))
    throw std::invalid_argument("solution folder " + dir.string() + " has no " + main_file);
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    auto ext = e.path().extension().string();
    if (std::find(extensions.begin(), extensions.end(), ext) != extensions.end()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string folder_material(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::string material;
  for (const auto& f : files) material += fs::relative(f, dir).string() + '\0' + read_file(f) + '\0';
  return material;
}

namespace {

// Everything that can change the binary: the command, every file of the solution folder and every
// file of the solution's kits (target/solution_kit.h), each folder by relative path and content.
std::string build_key(const std::vector<std::string>& argv, const fs::path& dir) {
  std::string material = join_command(argv) + '\n' + kbench_version() + '\n' + folder_material(dir);
  for (const auto& kit : solution_kits(dir)) material += "\nkit " + kit.string() + '\n' + folder_material(kit);
  return fmt::format("{:016x}", buffer_hash(material.data(), material.size(), 0x6b62656e6368ull));
}

}  // namespace

namespace {

// The build's inputs outside the solution folder (system and toolchain headers, kbench's header,
// allowed libraries), each with the hash of its content: a cache entry is served only while every
// one of them is unchanged. The folder's own files are in the key itself.
constexpr const char* kInputsFile = "inputs.txt";

std::string content_hash(const fs::path& f) {
  const std::string text = read_file(f);
  return fmt::format("{:016x}", buffer_hash(text.data(), text.size(), 0x6b62656e6368ull));
}

bool inputs_unchanged(const fs::path& list) {
  std::ifstream in(list);
  if (!in) return false;
  for (std::string line; std::getline(in, line);) {
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) return false;
    const fs::path f = line.substr(tab + 1);
    std::error_code ec;
    if (!fs::is_regular_file(f, ec) || content_hash(f) != line.substr(0, tab)) return false;
  }
  return true;
}

// "fatal error: /home/u/secret.h: No such file or directory" for an absolute path outside what the
// build may read: the sandbox hid it. Returns the explanation to append to the log, or "".
std::string explain_hidden_includes(const std::string& log, const BuildRoots& roots) {
  std::string notes;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);) {
    const size_t at = l.find("fatal error: /");
    if (at == std::string::npos) continue;
    const size_t begin = at + std::string("fatal error: ").size();
    const size_t end = l.find(": No such file or directory", begin);
    if (end == std::string::npos) continue;
    const fs::path p = fs::path(l.substr(begin, end - begin)).lexically_normal();
    if (roots.allows(p)) continue;
    notes += "[kbench] " + p.string() + " is outside the solution folder and the system's and toolchain's headers: a "
             "solution is built from its own files only (the build runs in a sandbox that shows nothing else; "
             "docs/evaluation.md; a problem's kit/ is on the include path of the deck's own solutions only)\n";
  }
  return notes;
}

}  // namespace

BuildResult compile_cached(const std::vector<std::string>& argv, const fs::path& solution_dir, const fs::path& build_root,
                           bool sandbox, const fs::path& toolchain) {
  BuildResult r;
  const fs::path out_dir = build_root / build_key(argv, solution_dir);
  const fs::path lib = out_dir / "libsolution.so";
  std::vector<std::string> full = argv;
  full.push_back("-o");
  full.push_back(lib.string());
  r.command = join_command(full);
  if (fs::is_regular_file(lib) && inputs_unchanged(out_dir / kInputsFile)) {
    r.ok = true;
    r.cached = true;
    r.library = lib;
    r.log = read_file(out_dir / "build.log");
    return r;
  }
  fs::create_directories(out_dir);
  // The compiler writes into a private folder (the only one its sandbox may write), and the
  // library is renamed into the cache once the build is known good: an interrupted or refused
  // build never leaves a library that a later run would take as a cache hit.
  const fs::path work = out_dir / ("work-" + std::to_string(getpid()));
  fs::remove_all(work);
  fs::create_directories(work);
  const fs::path tmp = work / "libsolution.so";
  const fs::path deps = work / "inputs.d";
  full.back() = tmp.string();
  BuildRoots roots = build_roots(argv, solution_dir, toolchain);
  if (!sandbox) {
    // No private /tmp without the sandbox: nvcc gets a temporary folder of this build's own.
    roots.temp_dir = work / "tmp";
    fs::create_directories(roots.temp_dir);
    roots.temp_dir = fs::canonical(roots.temp_dir);
  }
  CommandResult c;
  if (sandbox) {
    std::vector<std::string> cmd = bwrap_command(build_sandbox_layout(roots, work, deps), full);
    const fs::path bwrap = find_program("bwrap");
    if (!bwrap.empty()) cmd[0] = bwrap.string();
    // bwrap itself gets PATH alone; the compiler gets the layout's environment.
    const char* path = std::getenv("PATH");
    const std::vector<std::string> env = {std::string("PATH=") + (path ? path : "/usr/bin:/bin")};
    c = run_command(cmd, std::chrono::minutes(10), {}, &env);
  } else {
    const auto [name, value] = dependency_output_variable(deps);
    std::vector<std::string> cmd = {"env", name + "=" + value, "TMPDIR=" + roots.temp_dir.string()};
    cmd.insert(cmd.end(), full.begin(), full.end());
    c = run_command(cmd, std::chrono::minutes(10), work);
  }
  r.seconds = c.seconds;
  r.log = c.output;
  if (c.timed_out) r.log += "\n[kbench] the compiler ran past 10 minutes and was stopped\n";
  bool ok = c.exit_code == 0 && !c.timed_out && fs::is_regular_file(tmp);
  if (!ok) r.log += explain_hidden_includes(c.output, roots);
  std::vector<fs::path> inputs;
  if (ok) {
    inputs = read_dependency_file(deps, work);
    if (inputs.empty()) {
      ok = false;
      r.log += "[kbench] the compiler wrote no list of the files it read (SUNPRO_DEPENDENCIES): kbench cannot confirm "
               "that the build read only the solution folder and the system headers, so the build is refused\n";
    }
    for (const auto& f : inputs)
      if (!roots.allows(f)) {
        ok = false;
        r.log += "[kbench] the build read " + f.string() + ", which is outside the solution folder and the system's and "
                 "toolchain's headers: a solution is built from its own files only (docs/evaluation.md)\n";
      }
  }
  std::ofstream(out_dir / "build.log") << r.command << "\n" << r.log;
  if (!ok) {
    fs::remove_all(work);
    return r;
  }
  {
    std::ofstream list(out_dir / kInputsFile);
    for (const auto& f : inputs) {
      const fs::path rel = roots.solution.empty() ? fs::path() : f.lexically_relative(roots.solution);
      if (!rel.empty() && *rel.begin() != "..") continue;  // the folder's own files are in the key
      if (fs::is_regular_file(f)) list << content_hash(f) << '\t' << f.string() << '\n';
    }
  }
  fs::rename(tmp, lib);
  fs::remove_all(work);
  r.ok = true;
  r.library = lib;
  return r;
}

BuildResult compile_solution(std::vector<std::string> argv, const fs::path& dir, const std::string& target,
                             const BuildOptions& options, const fs::path& build_root, const fs::path& toolchain) {
  SolutionConfig config;
  try {
    config = load_solution_config(dir, target, options.allowed_libraries);
  } catch (const SolutionConfigError& e) {
    BuildResult rejected;
    rejected.command = "(not run: solution.toml was rejected)";
    rejected.log = e.what();
    return rejected;
  }
  for (const auto& inc : config.include_dirs) argv.push_back("-I" + inc);
  argv.insert(argv.end(), config.flags.begin(), config.flags.end());
  for (const auto& lib : options.libraries) argv.push_back("-l" + lib);
  for (const auto& lib : config.libraries) argv.push_back("-l" + lib);
  // A deck solution's kits (target/solution_kit.h): on the include path after the solution's own
  // folders, so bound read-only into the sandbox and allowed by the input check like any -I folder.
  for (const auto& kit : solution_kits(dir)) argv.push_back("-I" + kit.string());
  return compile_cached(argv, dir, build_root / target, options.sandbox, toolchain);
}

std::string trim_compiler_log(const std::string& log, size_t max_lines) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  auto is_error = [](const std::string& l) {
    return l.find("error") != std::string::npos || l.find("undefined reference") != std::string::npos;
  };
  auto first = std::find_if(lines.begin(), lines.end(), is_error);
  if (first == lines.end()) first = lines.begin();
  // One line of context before the first error (often "In function ...").
  if (first != lines.begin()) --first;
  std::string out;
  size_t n = 0;
  for (auto it = first; it != lines.end() && n < max_lines; ++it, ++n) out += *it + '\n';
  if (static_cast<size_t>(lines.end() - first) > max_lines)
    out += fmt::format("[... {} more lines in the build log]\n", static_cast<size_t>(lines.end() - first) - max_lines);
  return out;
}

fs::path kbench_include_dir() {
  if (const char* env = std::getenv("KBENCH_INCLUDE_DIR")) return env;
  const fs::path data = data_dir();
  const fs::path dir = solution_include_dir(data);
  // Neither layout has the header: name the usual place, so that the build's error names it.
  return dir.empty() ? data / "include" : dir;
}

}  // namespace kb
