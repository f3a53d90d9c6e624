#include "target/build_sandbox.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kb {
namespace fs = std::filesystem;

namespace {

bool under(const fs::path& file, const fs::path& root) {
  if (root.empty()) return false;
  auto [r, f] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
  return r == root.end() || (std::next(r) == root.end() && r->empty());  // "root/" spelled with a slash
}

}  // namespace

fs::path canonical_dir(const fs::path& p) {
  std::error_code ec;
  const fs::path c = fs::canonical(p, ec);
  return !ec && fs::is_directory(c, ec) ? c : fs::path();
}

fs::path folder_above_bin(const std::string& program) {
  std::error_code ec;
  const fs::path exe = fs::canonical(find_program(program), ec);
  if (ec || !exe.has_parent_path() || !exe.parent_path().has_parent_path()) return {};
  return exe.parent_path().parent_path();
}

bool BuildRoots::allows(const fs::path& f) const {
  if (under(f, solution) || under(f, toolchain)) return true;
  for (const auto& i : include)
    if (under(f, i)) return true;
  for (const char* sys : {"/usr/include", "/usr/lib", "/usr/local/include"})
    if (under(f, sys)) return true;
  // nvcc's intermediate files, in the compiler's private temporary folder.
  return !temp_dir.empty() && f.parent_path() == temp_dir && f.filename().string().rfind("tmpxft_", 0) == 0;
}

BuildRoots build_roots(const std::vector<std::string>& argv, const fs::path& solution_dir, const fs::path& toolchain) {
  BuildRoots r;
  r.solution = canonical_dir(solution_dir);
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string dir;
    if (argv[i].rfind("-I", 0) == 0) dir = argv[i].size() > 2 ? argv[i].substr(2) : (i + 1 < argv.size() ? argv[i + 1] : "");
    else if (argv[i] == "-isystem" && i + 1 < argv.size()) dir = argv[i + 1];
    if (dir.empty()) continue;
    if (fs::path c = canonical_dir(dir); !c.empty() && std::find(r.include.begin(), r.include.end(), c) == r.include.end())
      r.include.push_back(c);
  }
  // The toolchain: where the target says it is (nvcc: target/nvcc_toolkit.h), else the folder
  // above the compiler's bin/; /usr itself is not taken whole (the system headers are named above).
  const fs::path root = !toolchain.empty() ? canonical_dir(toolchain) : argv.empty() ? fs::path() : folder_above_bin(argv[0]);
  if (!root.empty() && root != "/usr" && root != "/" && root != "/usr/local") r.toolchain = root;
  return r;
}

BwrapLayout build_sandbox_layout(const BuildRoots& roots, const fs::path& work_dir, const fs::path& deps_file) {
  BwrapLayout l;
  l.network = false;
  l.full_etc = false;
  l.gpu_devices = false;
  l.sys = false;
  if (!roots.toolchain.empty() && !in_sandbox_system_folders(roots.toolchain)) l.read_only.push_back(roots.toolchain);
  for (const auto& i : roots.include) l.read_only.push_back(i);
  if (!roots.solution.empty()) l.read_only.push_back(roots.solution);
  l.writable.push_back(work_dir);
  l.clear_env = true;
  // PATH as kbench has it: the compiler driver finds its passes and nvcc its host compiler there.
  const char* path = std::getenv("PATH");
  l.env = {{"PATH", path && *path ? path : "/usr/local/bin:/usr/bin:/bin"}, {"TMPDIR", "/tmp"},
           dependency_output_variable(deps_file)};
  l.chdir = work_dir;
  return l;
}

std::pair<std::string, std::string> dependency_output_variable(const fs::path& deps_file) {
  // SUNPRO_DEPENDENCIES (unlike DEPENDENCIES_OUTPUT) lists system headers too, and every
  // translation unit of one command appends to the same file.
  return {"SUNPRO_DEPENDENCIES", deps_file.string() + " kbench-build"};
}

std::vector<fs::path> read_dependency_file(const fs::path& deps_file, const fs::path& cwd) {
  std::ifstream in(deps_file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<fs::path> out;
  std::string word;
  auto flush = [&] {
    if (word.empty()) return;
    if (word.back() != ':') {
      fs::path p = word;
      if (p.is_relative()) p = cwd / p;
      std::error_code ec;
      fs::path c = fs::weakly_canonical(p, ec);
      out.push_back(ec ? p.lexically_normal() : c);
    }
    word.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '#')) {
      word += text[++i];  // an escaped space or '#' inside a name
    } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {
      ++i;
      flush();
    } else if (c == '$' && i + 1 < text.size() && text[i + 1] == '$') {
      word += text[++i];
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      flush();
    } else {
      word += c;
    }
  }
  flush();
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  // The target names the variable gives ("kbench-build") are not inputs.
  out.erase(std::remove_if(out.begin(), out.end(), [](const fs::path& p) { return p.filename() == "kbench-build"; }), out.end());
  return out;
}

}  // namespace kb
