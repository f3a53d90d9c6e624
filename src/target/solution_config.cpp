#include "target/solution_config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <regex>

namespace kb {
namespace fs = std::filesystem;

namespace {

// Flags that change code generation but cannot change what is built, linked or loaded: no -I/-L/-l
// (include_dirs and libraries are checked separately), no output, plugin, linker, preprocessor-
// include or compiler-driver options.
const std::vector<std::regex>& allowed_flags(const std::string& target) {
  static const std::vector<std::regex> host = {
      std::regex(R"(-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?)"), std::regex(R"(-U[A-Za-z_][A-Za-z0-9_]*)"),
      std::regex(R"(-O[0-3s]|-Ofast)"), std::regex(R"(-ffast-math|-fno-math-errno|-funroll-loops|-fno-trapping-math)"),
      std::regex(R"(-march=native|-mtune=native|-mavx2|-mavx512f|-mfma)"), std::regex(R"(-std=c\+\+(17|20|23))")};
  static const std::vector<std::regex> cuda = [] {
    std::vector<std::regex> v = {
        std::regex(R"(-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?)"), std::regex(R"(-U[A-Za-z_][A-Za-z0-9_]*)"),
        std::regex(R"(-O[0-3])"), std::regex(R"(--use_fast_math|-use_fast_math)"),
        std::regex(R"(-maxrregcount=[0-9]+)"), std::regex(R"(--extra-device-vectorization)"),
        std::regex(R"(--expt-extended-lambda|--extended-lambda|--expt-relaxed-constexpr)"),
        std::regex(R"(-Xptxas=-v|-Xptxas=-O[0-3]|--ptxas-options=-v)"), std::regex(R"(-std=c\+\+(17|20))"),
        std::regex(R"(--ftz=(true|false)|--prec-div=(true|false)|--prec-sqrt=(true|false)|--fmad=(true|false))")};
    return v;
  }();
  return target == "cuda" ? cuda : host;
}

std::vector<std::string> strings(const toml::table& t, const std::string& key, const fs::path& file) {
  std::vector<std::string> out;
  const toml::node* n = t.get(key);
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (!a) throw SolutionConfigError(fmt::format("{}: {}: expected an array of strings", file.string(), key));
  for (size_t i = 0; i < a->size(); ++i) {
    const auto* s = a->get(i)->as_string();
    if (!s) throw SolutionConfigError(fmt::format("{}: {}[{}]: expected a string", file.string(), key, i));
    out.push_back(**s);
  }
  return out;
}

bool allowed(const std::vector<std::string>& list, const std::string& x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}

// "${VAR}/rest" -> the library root + rest, when VAR belongs to a library the problem allows.
std::string expand_root(const std::string& entry, const std::vector<std::string>& allowed_libraries,
                        const fs::path& file, size_t index) {
  static const std::regex var(R"(^\$\{([A-Z_]+)\}(.*)$)");
  std::smatch m;
  if (!std::regex_match(entry, m, var)) return "";
  for (const auto& r : kLibraryRoots) {
    if (m[1] != r.variable) continue;
    if (!allowed(allowed_libraries, r.library))
      throw SolutionConfigError(fmt::format("{}: include_dirs[{}]: \"{}\" uses {}, but this problem does not allow the "
                                            "{} library (policy.allowed_libraries)",
                                            file.string(), index, entry, r.variable, r.library));
    const char* root = std::getenv(r.variable);
    if (!root || !*root)
      throw SolutionConfigError(fmt::format("{}: include_dirs[{}]: \"{}\" needs the environment variable {} (the {} "
                                            "checkout to build against); it is not set",
                                            file.string(), index, entry, r.variable, r.library));
    return (fs::path(root) / fs::path(m[2].str()).relative_path()).lexically_normal().string();
  }
  throw SolutionConfigError(fmt::format("{}: include_dirs[{}]: unknown variable in \"{}\"", file.string(), index, entry));
}

}  // namespace

bool flag_allowed(const std::string& target, const std::string& flag) {
  for (const auto& re : allowed_flags(target))
    if (std::regex_match(flag, re)) return true;
  return false;
}

SolutionConfig load_solution_config(const fs::path& dir, const std::string& target,
                                    const std::vector<std::string>& allowed_libraries) {
  SolutionConfig c;
  const fs::path file = dir / "solution.toml";
  if (!fs::exists(file)) return c;
  toml::table t;
  try {
    t = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw SolutionConfigError(fmt::format("{}:{}:{}: TOML syntax error: {}", file.string(), e.source().begin.line,
                                          e.source().begin.column, e.description()));
  }
  for (const auto& [key, value] : t)
    if (key != "include_dirs" && key != "flags" && key != "libraries")
      throw SolutionConfigError(fmt::format("{}: {}: unknown key; expected one of: include_dirs, flags, libraries",
                                            file.string(), key.str()));
  const fs::path root = fs::weakly_canonical(dir);
  const auto dirs = strings(t, "include_dirs", file);
  for (size_t i = 0; i < dirs.size(); ++i) {
    std::string expanded = expand_root(dirs[i], allowed_libraries, file, i);
    if (expanded.empty()) {
      // A plain entry must stay inside the solution folder: the build cache hashes only that folder.
      const fs::path p = fs::weakly_canonical(root / dirs[i]);
      const auto rel = p.lexically_relative(root);
      if (fs::path(dirs[i]).is_absolute() || rel.empty() || *rel.begin() == "..")
        throw SolutionConfigError(fmt::format("{}: include_dirs[{}]: \"{}\" is outside the solution folder; use a "
                                              "folder inside it, or ${{KBENCH_CUTLASS_DIR}}/... for an allowed library",
                                              file.string(), i, dirs[i]));
      expanded = p.string();
    }
    c.include_dirs.push_back(expanded);
  }
  c.flags = strings(t, "flags", file);
  for (size_t i = 0; i < c.flags.size(); ++i)
    if (!flag_allowed(target, c.flags[i]))
      throw SolutionConfigError(fmt::format("{}: flags[{}]: \"{}\" is not allowed on the {} target (allowed: -D/-U "
                                            "macros, optimisation levels, fast-math and register options; include "
                                            "folders go in include_dirs, libraries in libraries)",
                                            file.string(), i, c.flags[i], target));
  c.libraries = strings(t, "libraries", file);
  for (size_t i = 0; i < c.libraries.size(); ++i)
    if (!allowed(allowed_libraries, c.libraries[i]))
      throw SolutionConfigError(fmt::format("{}: libraries[{}]: \"{}\" is not allowed by this problem (allowed: {})",
                                            file.string(), i, c.libraries[i],
                                            allowed_libraries.empty() ? "none" : fmt::format("{}", fmt::join(allowed_libraries, ", "))));
  return c;
}

}  // namespace kb
