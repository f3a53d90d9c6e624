#include "eval/sass.h"

#include <cxxabi.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <regex>

#include "core/bwrap.h"
#include "core/subprocess.h"
#include "target/nvcc_toolkit.h"
#include "verdict/finding.h"

#ifndef KBENCH_NVCC
#define KBENCH_NVCC "nvcc"
#endif

namespace kb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// How many tensor-core/TMA instructions of one kernel are kept as evidence: enough to show what
// the kernel does, few enough to keep result.json readable.
constexpr size_t kEvidencePerKernel = 6;

// cuobjdump on a large CUTLASS-style library takes seconds; a minute means something is wrong.
constexpr std::chrono::seconds kDisassemblerTimeout{120};

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool ends_with(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(s.size() - p.size()) == p; }

// cuobjdump's listings, a line at a time, each trimmed (views into `text`).
std::vector<std::string_view> trimmed_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t pos = 0; pos <= text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(trim(text.substr(pos, nl - pos)));
    pos = nl + 1;
  }
  return lines;
}

std::string demangle(const std::string& name) {
  if (!starts_with(name, "_Z")) return "";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : "";
}

// Splits "sm_100a" into (100, 'a'); number 0 when it is not an arch.
std::pair<int, char> arch_parts(std::string_view arch) {
  if (!starts_with(arch, "sm_") || arch.size() < 5) return {0, 0};
  std::string_view d = arch.substr(3);
  char suffix = 0;
  if (d.back() == 'a' || d.back() == 'f') {
    suffix = d.back();
    d.remove_suffix(1);
  }
  int n = 0;
  for (char c : d) {
    if (c < '0' || c > '9') return {0, 0};
    n = n * 10 + (c - '0');
  }
  return {n, suffix};
}

std::string join(const std::vector<std::string>& v, std::string_view sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : std::string(sep)) + x;
  return s;
}

std::string describe_counts(const std::map<std::string, size_t>& m) {
  std::string s;
  for (const auto& [k, n] : m) s += fmt::format("{}{} x{}", s.empty() ? "" : ", ", k, n);
  return s.empty() ? "none" : s;
}

template <class Pred>
std::map<std::string, size_t> classes_where(const std::map<std::string, size_t>& all, Pred pred) {
  std::map<std::string, size_t> out;
  for (const auto& [k, n] : all)
    if (pred(k)) out.emplace(k, n);
  return out;
}

}  // namespace

std::string sass_class(std::string_view ins) {
  ins = trim(ins);
  if (!ins.empty() && ins.front() == '{') ins = trim(ins.substr(1));  // dual-issue braces (pre-Volta)
  if (!ins.empty() && ins.front() == '@') {                          // predicate guard: @P0, @!UPT
    const size_t sp = ins.find_first_of(" \t");
    ins = sp == std::string_view::npos ? std::string_view{} : trim(ins.substr(sp));
  }
  const size_t end = ins.find_first_of(" \t;.");
  return std::string(ins.substr(0, end));
}

bool is_tensor_core_class(std::string_view c) { return c.size() > 3 && ends_with(c, "MMA"); }
bool is_tma_class(std::string_view c) { return starts_with(c, "UTMA") || starts_with(c, "UBLK"); }
bool is_tensor_memory_class(std::string_view c) {
  return (starts_with(c, "UTC") && !is_tensor_core_class(c)) || c == "LDTM" || c == "STTM";
}

size_t SassKernel::count(std::string_view cls) const {
  auto it = classes.find(std::string(cls));
  return it == classes.end() ? 0 : it->second;
}
std::map<std::string, size_t> SassKernel::tensor_core() const { return classes_where(classes, is_tensor_core_class); }
std::map<std::string, size_t> SassKernel::tma() const { return classes_where(classes, is_tma_class); }
std::map<std::string, size_t> SassKernel::tensor_memory() const { return classes_where(classes, is_tensor_memory_class); }

SassListing parse_cuobjdump_sass(std::string_view text) {
  SassListing out;
  std::string arch;
  SassKernel* k = nullptr;
  for (const std::string_view line : trimmed_lines(text)) {
    if (line.empty()) continue;
    if (starts_with(line, "arch = ")) {
      arch = std::string(trim(line.substr(7)));
      k = nullptr;  // a new ELF: its functions follow
    } else if (starts_with(line, "code for ")) {
      arch = std::string(trim(line.substr(9)));
    } else if (starts_with(line, "Fatbin ")) {
      k = nullptr;  // "Fatbin elf code:" / "Fatbin ptx code:"
    } else if (starts_with(line, "Function : ")) {
      out.kernels.push_back({});
      k = &out.kernels.back();
      k->name = std::string(trim(line.substr(11)));
      k->demangled = demangle(k->name);
      k->arch = arch;
      if (!arch.empty()) out.archs.insert(arch);
    } else if (k && starts_with(line, "/*") && line.size() > 2 && line[2] != ' ') {
      // "/*0060*/  QGMMA.64x8x32... ;  /* 0x... */"; encoding-only lines start with "/* 0x".
      const size_t close = line.find("*/");
      if (close == std::string_view::npos) continue;
      const std::string_view offset = line.substr(2, close - 2);
      std::string_view ins = line.substr(close + 2);
      if (const size_t enc = ins.find("/*"); enc != std::string_view::npos) ins = ins.substr(0, enc);
      ins = trim(ins);
      const std::string cls = sass_class(ins);
      if (cls.empty()) continue;
      ++k->instructions;
      ++k->classes[cls];
      if ((is_tensor_core_class(cls) || is_tma_class(cls)) && k->evidence.size() < kEvidencePerKernel)
        k->evidence.push_back(fmt::format("{}: {}", offset, ins));
    }
  }
  return out;
}

size_t merge_resource_usage(std::string_view text, SassListing& listing) {
  static const std::regex field(R"(([A-Z_]+)(\[\d+\])?:(\d+))");
  std::string arch, function;
  size_t matched = 0;
  for (const std::string_view line : trimmed_lines(text)) {
    if (starts_with(line, "arch = ")) {
      arch = std::string(trim(line.substr(7)));
      function.clear();
    } else if (starts_with(line, "Function ") && ends_with(line, ":")) {
      function = std::string(trim(line.substr(9, line.size() - 10)));
    } else if (!function.empty() && starts_with(line, "REG:")) {
      auto it = std::find_if(listing.kernels.begin(), listing.kernels.end(),
                             [&](const SassKernel& k) { return k.name == function && k.arch == arch; });
      function.clear();
      if (it == listing.kernels.end()) continue;
      const std::string l(line);
      for (auto m = std::sregex_iterator(l.begin(), l.end(), field); m != std::sregex_iterator(); ++m) {
        if ((*m)[2].matched) continue;  // CONSTANT[0]: not a figure we report
        const std::string key = (*m)[1];
        const int v = std::stoi((*m)[3]);
        if (key == "REG") it->registers = v;
        else if (key == "STACK") it->stack_bytes = v;
        else if (key == "SHARED") it->shared_bytes = v;
        else if (key == "LOCAL") it->local_bytes = v;
      }
      ++matched;
    }
  }
  return matched;
}

std::string applicable_required_key(const std::map<std::string, std::vector<std::string>>& policy,
                                    const std::string& arch) {
  if (policy.count(arch)) return arch;
  const auto [n, suffix] = arch_parts(arch);
  if (n == 0) return "";
  // Family keys: same major (n / 10), minor (n % 10) at most the arch's; the highest minor wins.
  std::string best;
  int best_minor = -1;
  for (const auto& [key, classes] : policy) {
    const auto [kn, ks] = arch_parts(key);
    if (ks == 'f' && kn / 10 == n / 10 && kn % 10 <= n % 10 && kn % 10 > best_minor) {
      best = key;
      best_minor = kn % 10;
    }
  }
  if (!best.empty()) return best;
  const std::string plain = fmt::format("sm_{}", n);
  if (suffix != 0 && policy.count(plain)) return plain;
  return "";
}

std::vector<std::string> archs_in_build_command(const std::string& command) {
  static const std::regex re(R"((?:code=\[?|-arch=|--gpu-architecture=|-arch\s+)(sm_\d+[af]?))");
  std::vector<std::string> out;
  for (auto m = std::sregex_iterator(command.begin(), command.end(), re); m != std::sregex_iterator(); ++m)
    if (std::find(out.begin(), out.end(), (*m)[1].str()) == out.end()) out.push_back((*m)[1]);
  return out;
}

std::set<std::string> SassReport::kernel_names() const {
  std::set<std::string> names;
  for (const auto& k : listing.kernels) names.insert(k.name);
  return names;
}

json to_json(const SassReport& r) {
  auto opt = [](const std::optional<int>& v) { return v ? json(*v) : json(nullptr); };
  json kernels = json::array();
  for (const auto& k : r.listing.kernels) {
    kernels.push_back({{"name", k.name},
                       {"demangled", k.demangled},
                       {"arch", k.arch},
                       {"instructions", k.instructions},
                       {"tensor_core", k.tensor_core()},
                       {"tma", k.tma()},
                       {"tensor_memory", k.tensor_memory()},
                       {"local_stores", k.count("STL")},
                       {"local_loads", k.count("LDL")},
                       {"registers", opt(k.registers)},
                       {"stack_bytes", opt(k.stack_bytes)},
                       {"shared_bytes", opt(k.shared_bytes)},
                       {"local_bytes", opt(k.local_bytes)},
                       {"evidence", k.evidence}});
    if (!k.source_file.empty()) kernels.back().update({{"source_file", k.source_file}, {"source_line", k.source_line}});
  }
  json required = json::array();
  for (const auto& q : r.required)
    required.push_back({{"arch", q.arch},
                        {"key", q.key},
                        {"classes", q.classes},
                        {"found", q.found},
                        {"tensor_core_found", q.tensor_core_found},
                        {"satisfied", q.satisfied()}});
  const auto names = r.kernel_names();
  return {{"available", r.available},
          {"tool", r.tool},
          {"note", r.note},
          {"archs", r.listing.archs},
          {"kernel_names", std::vector<std::string>(names.begin(), names.end())},
          {"kernels", kernels},
          {"required", required}};
}

std::optional<fs::path> find_cuobjdump(std::string* looked) {
  std::vector<std::string> tried;
  auto executable = [&](const fs::path& p) {
    if (std::find(tried.begin(), tried.end(), p.string()) == tried.end()) tried.push_back(p.string());
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  auto done = [&](std::optional<fs::path> p) {
    if (looked) *looked = join(tried);
    return p;
  };
  if (const char* env = std::getenv("KBENCH_CUOBJDUMP"); env && *env)
    return done(executable(env) ? std::optional<fs::path>(env) : std::nullopt);  // explicit: no fallback
  for (const char* nvcc : std::initializer_list<const char*>{std::getenv("KBENCH_NVCC"), KBENCH_NVCC}) {
    if (!nvcc || !*nvcc || !fs::path(nvcc).has_parent_path()) continue;
    const fs::path candidate = fs::path(nvcc).parent_path() / "cuobjdump";
    if (executable(candidate)) return done(candidate);
    // nvcc may be a wrapper outside the toolkit (target/nvcc_toolkit.h): the toolkit's own bin/.
    if (const fs::path toolkit = fs::exists(nvcc) ? nvcc_toolkit_root(nvcc) : fs::path();
        !toolkit.empty() && toolkit / "bin" != fs::path(nvcc).parent_path() && executable(toolkit / "bin" / "cuobjdump"))
      return done(toolkit / "bin" / "cuobjdump");
  }
  if (const char* path = std::getenv("PATH")) {
    const size_t beside_nvcc = tried.size();
    std::string_view rest = path;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
      if (dir.empty()) continue;
      const fs::path candidate = fs::path(dir) / "cuobjdump";
      if (executable(candidate)) return done(candidate);
    }
    tried.resize(beside_nvcc);  // every PATH folder is too long a list for a message
    tried.push_back("cuobjdump on $PATH");
  }
  return done(std::nullopt);
}

namespace {

// cuobjdump parses the solution's library, an untrusted ELF file: with `sandbox` it runs in a
// bubblewrap sandbox that sees the system, the toolkit and that one file (core/bwrap.h).
CommandResult run_tool(const std::vector<std::string>& argv, const fs::path& library, bool sandbox) {
  if (!sandbox) return run_command(argv, kDisassemblerTimeout);
  std::vector<fs::path> read_only;
  std::error_code ec;
  const fs::path tool = fs::canonical(argv[0], ec);
  if (!ec && tool.has_parent_path() && !in_sandbox_system_folders(tool)) read_only.push_back(tool.parent_path().parent_path());
  read_only.push_back(fs::absolute(library));
  return run_tool_sandboxed(argv, read_only, kDisassemblerTimeout);
}

}  // namespace

SassReport inspect_sass(const fs::path& library, bool sandbox) {
  SassReport r;
  std::string looked;
  const auto tool = find_cuobjdump(&looked);
  if (!tool) {
    r.note = "no cuobjdump (looked at " + (looked.empty() ? std::string("$PATH") : looked) +
             "): install the CUDA toolkit's cuobjdump or set KBENCH_CUOBJDUMP";
    return r;
  }
  r.tool = tool->string();
  const CommandResult sass = run_tool({r.tool, "-sass", fs::absolute(library).string()}, library, sandbox);
  // cuobjdump exits with 255 and says so for a library without device code: that is a fact, not
  // a failure (the solution defines no kernel).
  if (sass.exit_code != 0 && sass.output.find("does not contain device code") != std::string::npos) {
    r.available = true;
    r.note = "the library contains no device code";
    return r;
  }
  if (sass.exit_code != 0 || sass.timed_out) {
    r.note = fmt::format("{} -sass failed ({}): {}", r.tool,
                         sass.timed_out ? "timed out" : fmt::format("exit code {}", sass.exit_code),
                         std::string(trim(sass.output.substr(0, 400))));
    return r;
  }
  r.listing = parse_cuobjdump_sass(sass.output);
  r.available = true;
  const CommandResult res = run_tool({r.tool, "-res-usage", fs::absolute(library).string()}, library, sandbox);
  if (res.exit_code == 0 && !res.timed_out) merge_resource_usage(res.output, r.listing);
  else r.note = "cuobjdump -res-usage failed: registers, stack and shared memory are not reported";
  return r;
}

std::set<std::string> library_kernel_names(const fs::path& library) {
  const SassReport r = inspect_sass(library);
  if (!r.available) throw SassUnavailable("cannot list the kernels of " + library.string() + ": " + r.note);
  return r.kernel_names();
}

namespace {

// The evidence of missing_required_instruction: for each unsatisfied requirement, what was compared,
// then the tensor-core and TMA lines of each kernel of that arch (or that it has none).
std::vector<Evidence> missing_instruction_evidence(const SassReport& report) {
  std::vector<Evidence> out;
  for (const auto& q : report.required) {
    if (q.satisfied()) continue;
    out.push_back({"message", "", 0, "",
                   fmt::format("{}: required one of [{}] (policy key {}); tensor-core classes found: {}", q.arch,
                               join(q.classes), q.key, describe_counts(q.tensor_core_found)),
                   "what the SASS check compared"});
    for (const auto& k : report.listing.kernels) {
      if (k.arch != q.arch) continue;
      const std::string name = k.demangled.empty() ? k.name : k.demangled;
      if (k.evidence.empty()) out.push_back({"kernel", "", 0, k.name, "no tensor-core or TMA instruction", name});
      for (const auto& line : k.evidence) out.push_back({"sass", "", 0, k.name, line, name});
    }
  }
  return out;
}

}  // namespace

std::optional<Finding> check_required_instructions(const std::map<std::string, std::vector<std::string>>& policy,
                                                  const std::string& build_command, SassReport& report) {
  report.required.clear();
  std::vector<std::string> archs(report.listing.archs.begin(), report.listing.archs.end());
  for (const auto& a : archs_in_build_command(build_command))
    if (std::find(archs.begin(), archs.end(), a) == archs.end()) archs.push_back(a);
  for (const auto& arch : archs) {
    const std::string key = applicable_required_key(policy, arch);
    if (key.empty() || policy.at(key).empty()) continue;
    RequiredInstructions q;
    q.arch = arch;
    q.key = key;
    q.classes = policy.at(key);
    std::map<std::string, size_t> all;
    for (const auto& k : report.listing.kernels)
      if (k.arch == arch)
        for (const auto& [c, n] : k.classes) all[c] += n;
    for (const auto& c : q.classes)
      if (all.count(c)) q.found.push_back(c);
    q.tensor_core_found = classes_where(all, is_tensor_core_class);
    report.required.push_back(std::move(q));
  }
  for (const auto& q : report.required) {
    const std::string wanted = fmt::format("policy.required_instructions.{} = [{}]", q.key, join(q.classes));
    if (!report.available)
      return Finding{Reason::instructions_unverified,
                         fmt::format("the problem requires one of [{}] in the solution's {} machine code ({}), and "
                                     "kbench cannot read that code: {}",
                                     join(q.classes), q.arch, wanted, report.note)};
    if (q.satisfied()) continue;
    std::vector<std::string> kernels;
    for (const auto& k : report.listing.kernels)
      if (k.arch == q.arch) kernels.push_back(k.demangled.empty() ? k.name : k.demangled);
    return Finding{
        Reason::missing_required_instruction,
        fmt::format("the solution's {} machine code contains none of the instruction classes the problem requires "
                    "there ({}); tensor-core classes found: {}; kernels: {}. The problem asks for this hardware path "
                    "(docs/problem-format.md, required_instructions): a kernel that reaches the right numbers "
                    "another way measures a different skill",
                    q.arch, wanted, describe_counts(q.tensor_core_found),
                    kernels.empty() ? "none (no SASS for this arch)" : join(kernels)),
        missing_instruction_evidence(report)};
  }
  return std::nullopt;
}

}  // namespace kb
