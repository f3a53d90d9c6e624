#include "target/compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/hash.h"
#include "core/subprocess.h"
#include "core/version.h"
#include "target/solution_config.h"

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

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Everything that can change the binary: the command and every file of the folder, recursively
// (headers included), by relative path and content.
std::string build_key(const std::vector<std::string>& argv, const fs::path& dir) {
  std::string material = join_command(argv) + '\n' + kbench_version() + '\n';
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) material += fs::relative(f, dir).string() + '\0' + read_file(f) + '\0';
  return fmt::format("{:016x}", buffer_hash(material.data(), material.size(), 0x6b62656e6368ull));
}

}  // namespace

BuildResult compile_cached(const std::vector<std::string>& argv, const fs::path& solution_dir, const fs::path& build_root) {
  BuildResult r;
  const fs::path out_dir = build_root / build_key(argv, solution_dir);
  const fs::path lib = out_dir / "libsolution.so";
  std::vector<std::string> full = argv;
  full.push_back("-o");
  full.push_back(lib.string());
  r.command = join_command(full);
  if (fs::is_regular_file(lib)) {
    r.ok = true;
    r.cached = true;
    r.library = lib;
    r.log = read_file(out_dir / "build.log");
    return r;
  }
  fs::create_directories(out_dir);
  // Compile to a temporary name and rename, so an interrupted build never leaves a library that
  // a later run would take as a cache hit.
  const fs::path tmp = out_dir / ("libsolution.so.tmp" + std::to_string(getpid()));
  full.back() = tmp.string();
  CommandResult c = run_command(full, std::chrono::minutes(10));
  r.seconds = c.seconds;
  r.log = c.output;
  if (c.timed_out) r.log += "\n[kbench] the compiler ran past 10 minutes and was stopped\n";
  std::ofstream(out_dir / "build.log") << r.command << "\n" << r.log;
  if (c.exit_code != 0 || c.timed_out || !fs::is_regular_file(tmp)) {
    fs::remove(tmp);
    return r;
  }
  fs::rename(tmp, lib);
  r.ok = true;
  r.library = lib;
  return r;
}

BuildResult compile_solution(std::vector<std::string> argv, const fs::path& dir, const std::string& target,
                             const BuildOptions& options, const fs::path& build_root) {
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
  return compile_cached(argv, dir, build_root / target);
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
  return fs::path(source_dir()) / "include";
}

}  // namespace kb
