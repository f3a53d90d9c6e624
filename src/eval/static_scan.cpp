#include "eval/static_scan.h"

#include "eval/python_scan.h"

#include <elf.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace kb {
namespace fs = std::filesystem;

namespace {

struct Rule {
  const char* what;
  std::regex re;
};

// Tampering patterns: each stands for something a kernel never needs and a cheat does (reading or
// patching kbench's memory, interposing on the runtime, doing work on another thread or process,
// talking to the outside). They are matched on the text with comments removed.
const std::vector<Rule>& tamper_rules() {
  static const std::vector<Rule> rules = [] {
    const auto E = std::regex::ECMAScript | std::regex::optimize;
    std::vector<Rule> r;
    r.push_back({"dynamic loading or symbol lookup (dlopen/dlsym/...)",
                 std::regex(R"(\b(dlopen|dlmopen|dlsym|dlvsym|dladdr1?|dlinfo|dl_iterate_phdr)\b)", E)});
    r.push_back({"access to /proc (kbench's memory, maps, file descriptors)", std::regex(R"(/proc/)", E)});
    r.push_back({"raw system call", std::regex(R"(\bsyscall\b|\bsysenter\b|\bint\s*\$?0x80\b|\b__NR_\w+|\bSYS_[a-z]\w*)", E)});
    r.push_back({"dynamic loader environment (LD_PRELOAD/LD_AUDIT/...)", std::regex(R"(\bLD_(PRELOAD|AUDIT|LIBRARY_PATH)\b)", E)});
    r.push_back({"environment modification (setenv/putenv/...)", std::regex(R"(\b(setenv|putenv|unsetenv|clearenv)\s*\()", E)});
    r.push_back({"process creation or exec (fork/exec/clone/system/...)",
                 std::regex(R"((^|[^.\w>])(fork|vfork|clone|clone3|execve|execveat|execv|execvp|execvpe|execl|execlp|execle|)"
                            R"(fexecve|posix_spawnp?|popen|system|daemon)\s*\()", E)});
    r.push_back({"thread creation (pthread_create/std::thread/std::async)",
                 std::regex(R"(\bpthread_create\b|\bthrd_create\b|\bstd\s*::\s*(thread|jthread|async)\b)", E)});
    r.push_back({"ptrace or cross-process memory access",
                 std::regex(R"(\b(ptrace|process_vm_readv|process_vm_writev|pidfd_getfd)\b)", E)});
    r.push_back({"embedding a file into the binary (.incbin)", std::regex(R"(\.incbin\b)", E)});
    r.push_back({"symbol renaming or aliasing onto a runtime or C library name (asm label / alias)",
                 std::regex(R"((\b(asm|__asm__|__asm)\s*\(\s*"\s*_*(cuda|cu[A-Z]|dl|pthread_|fork|exec|clock_|gettimeofday))|)"
                            R"(\balias\s*\(\s*")", E)});
    return r;
  }();
  return rules;
}

// A definition of a function with a CUDA runtime/driver name: `name(params) {` (params with at
// most one level of nested parentheses), possibly `noexcept` or attributes in between. Calls never
// have a `{` right after their closing parenthesis.
const std::regex& cuda_definition() {
  static const std::regex re(
      R"(\b(cuda[A-Za-z0-9_]*|__cuda\w*|cu[A-Z]\w*)\s*\((?:[^;{}()]|\([^;{}()]*\))*\)\s*(?:const\s*)?(?:noexcept\s*)?)"
      R"((?:__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)\s*)*\{)",
      std::regex::ECMAScript | std::regex::optimize);
  return re;
}

std::string trim(std::string s) {
  s.erase(0, std::min(s.find_first_not_of(" \t\r"), s.size()));
  s.erase(s.find_last_not_of(" \t\r") + 1);
  if (s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

// The original line `n` (1-based) of `text`.
std::string line_of(const std::string& text, int n) {
  std::istringstream in(text);
  std::string l;
  for (int i = 1; std::getline(in, l); ++i)
    if (i == n) return trim(l);
  return "";
}

bool excluded(const fs::path& rel) {
  const std::string name = rel.filename().string();
  // The corpus' own metadata and prose are not compiled.
  return name == "expect.toml" || rel.extension() == ".md";
}

}  // namespace

std::string strip_comments(const std::string& t) {
  std::string out;
  out.reserve(t.size());
  enum { code, line_comment, block_comment, str, chr, raw } st = code;
  std::string raw_end;  // )delim" of a raw string literal
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    const char n = i + 1 < t.size() ? t[i + 1] : '\0';
    switch (st) {
      case code:
        if (c == '/' && n == '/') { st = line_comment; ++i; out += "  "; continue; }
        if (c == '/' && n == '*') { st = block_comment; ++i; out += "  "; continue; }
        if (c == 'R' && n == '"' && (i == 0 || !(isalnum(static_cast<unsigned char>(t[i - 1])) || t[i - 1] == '_'))) {
          const size_t open = t.find('(', i + 2);
          if (open != std::string::npos && open - (i + 2) <= 16) {
            raw_end = ")" + t.substr(i + 2, open - (i + 2)) + "\"";
            out.append(t, i, open - i + 1);
            i = open;
            st = raw;
            continue;
          }
        }
        if (c == '"') st = str;
        else if (c == '\'' && !(i > 0 && isxdigit(static_cast<unsigned char>(t[i - 1])))) st = chr;  // not 1'000'000
        out += c;
        break;
      case line_comment:
        if (c == '\n') { st = code; out += c; }
        else if (c == '\\' && n == '\n') { out += '\n'; ++i; }  // a continued // comment
        break;
      case block_comment:
        if (c == '*' && n == '/') { st = code; ++i; out += "  "; }
        else if (c == '\n') out += c;
        break;
      case str:
      case chr:
        out += c;
        if (c == '\\' && n) { out += n; ++i; }
        else if ((st == str && c == '"') || (st == chr && c == '\'') || c == '\n') st = code;
        break;
      case raw:
        out += c;
        if (c == ')' && t.compare(i, raw_end.size(), raw_end) == 0) {
          out.append(raw_end, 1, std::string::npos);
          i += raw_end.size() - 1;
          st = code;
        }
        break;
    }
  }
  return out;
}

std::regex forbidden_pattern(const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error&) {
    std::string lit;
    for (char c : pattern) {
      if (std::strchr(R"(\^$.|?*+()[]{}/)", c)) lit += '\\';
      lit += c;
    }
    return std::regex(lit, std::regex::ECMAScript);
  }
}

std::vector<ScanHit> static_scan(const fs::path& dir, const std::vector<std::string>& forbidden) {
  std::vector<Rule> problem_rules;
  for (const auto& f : forbidden) problem_rules.push_back({nullptr, forbidden_pattern(f)});
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied);
       it != fs::recursive_directory_iterator(); ++it)
    if (it->is_regular_file() && !excluded(fs::relative(it->path(), dir))) files.push_back(it->path());
  std::sort(files.begin(), files.end());

  std::vector<ScanHit> hits;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find('\0') != std::string::npos) continue;  // binary: cannot be compiled as source
    const std::string rel = fs::relative(f, dir).string();
    // C comments are removed from C-family text only: in Python `//` is floor division, and
    // removing "the rest of the line" would hide code from the scan (`n = k // 2; ...`). Python
    // text is scanned whole, its # comments included (python_scan.h parses it exactly).
    const std::string code = f.extension() == ".py" ? text : strip_comments(text);
    std::istringstream lines(code);
    std::string l;
    for (int n = 1; std::getline(lines, l); ++n) {
      for (const auto& r : tamper_rules())
        if (std::regex_search(l, r.re)) hits.push_back({rel, n, r.what, line_of(text, n)});
      for (size_t k = 0; k < problem_rules.size(); ++k)
        if (std::regex_search(l, problem_rules[k].re))
          hits.push_back({rel, n, "pattern '" + forbidden[k] + "' forbidden by the problem's policy", line_of(text, n)});
    }
    for (auto m = std::sregex_iterator(code.begin(), code.end(), cuda_definition()); m != std::sregex_iterator(); ++m) {
      const int n = 1 + static_cast<int>(std::count(code.begin(), code.begin() + m->position(), '\n'));
      hits.push_back({rel, n, "definition of a CUDA runtime/driver function '" + (*m)[1].str() +
                                  "' (it could stand in for the real one)", line_of(text, n)});
    }
  }
  std::stable_sort(hits.begin(), hits.end(),
                   [](const ScanHit& a, const ScanHit& b) { return std::tie(a.file, a.line) < std::tie(b.file, b.line); });
  return hits;
}

std::string describe_hits(const std::vector<ScanHit>& hits, size_t max_hits) {
  std::string s;
  for (size_t i = 0; i < hits.size() && i < max_hits; ++i)
    s += "\n  " + hits[i].file + ":" + std::to_string(hits[i].line) + ": " + hits[i].rule + ": " + hits[i].excerpt;
  if (hits.size() > max_hits) s += "\n  ... and " + std::to_string(hits.size() - max_hits) + " more";
  return s;
}

// --- exported dynamic symbols --------------------------------------------------------------------

namespace {

struct Elf {
  std::vector<char> bytes;

  template <class T>
  T at(uint64_t off) const {
    if (off > bytes.size() || bytes.size() - off < sizeof(T)) throw std::runtime_error("truncated ELF file");
    T v;
    std::memcpy(&v, bytes.data() + off, sizeof v);
    return v;
  }
};

}  // namespace

// Read the way the dynamic loader reads it: the PT_DYNAMIC segment gives DT_SYMTAB, DT_STRTAB and
// the hash tables (which give the symbol count); section headers, which the loader ignores and a
// crafted file could omit or falsify, are not used.
std::vector<std::string> exported_symbols(const fs::path& library) {
  Elf e;
  {
    std::ifstream in(library, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + library.string());
    e.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const auto eh = e.at<Elf64_Ehdr>(0);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB)
    throw std::runtime_error(library.string() + " is not a 64-bit little-endian ELF file");
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) throw std::runtime_error("unexpected ELF program header size");
  std::vector<Elf64_Phdr> loads;
  const Elf64_Phdr* dyn = nullptr;
  std::vector<Elf64_Phdr> ph;
  for (uint16_t i = 0; i < eh.e_phnum; ++i) ph.push_back(e.at<Elf64_Phdr>(eh.e_phoff + uint64_t{i} * sizeof(Elf64_Phdr)));
  for (const auto& p : ph) {
    if (p.p_type == PT_LOAD) loads.push_back(p);
    if (p.p_type == PT_DYNAMIC) dyn = &p;
  }
  if (!dyn) throw std::runtime_error(library.string() + " has no dynamic segment (not a shared library)");
  auto offset_of = [&](uint64_t vaddr) -> uint64_t {
    for (const auto& l : loads)
      if (vaddr >= l.p_vaddr && vaddr - l.p_vaddr < l.p_filesz) return l.p_offset + (vaddr - l.p_vaddr);
    throw std::runtime_error("an ELF dynamic-table address lies outside every loaded segment");
  };
  uint64_t symtab = 0, strtab = 0, strsz = 0, hash = 0, gnu_hash = 0, syment = sizeof(Elf64_Sym);
  for (uint64_t off = dyn->p_offset; off + sizeof(Elf64_Dyn) <= dyn->p_offset + dyn->p_filesz; off += sizeof(Elf64_Dyn)) {
    const auto d = e.at<Elf64_Dyn>(off);
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_SYMTAB) symtab = d.d_un.d_ptr;
    if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    if (d.d_tag == DT_STRSZ) strsz = d.d_un.d_val;
    if (d.d_tag == DT_HASH) hash = d.d_un.d_ptr;
    if (d.d_tag == DT_GNU_HASH) gnu_hash = d.d_un.d_ptr;
    if (d.d_tag == DT_SYMENT) syment = d.d_un.d_val;
  }
  if (!symtab || !strtab) return {};
  if (syment != sizeof(Elf64_Sym)) throw std::runtime_error("unexpected ELF symbol size");
  const uint64_t sym_off = offset_of(symtab), str_off = offset_of(strtab);
  // How many symbols: DT_HASH's nchain, else one past the last index the GNU hash chains reach.
  uint64_t count = 0;
  if (hash) {
    count = e.at<uint32_t>(offset_of(hash) + 4);
  } else if (gnu_hash) {
    const uint64_t h = offset_of(gnu_hash);
    const uint32_t nbuckets = e.at<uint32_t>(h), symoffset = e.at<uint32_t>(h + 4), bloom = e.at<uint32_t>(h + 8);
    const uint64_t buckets = h + 16 + uint64_t{bloom} * 8, chains = buckets + uint64_t{nbuckets} * 4;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; ++b) last = std::max(last, e.at<uint32_t>(buckets + uint64_t{b} * 4));
    if (last >= symoffset) {
      while (!(e.at<uint32_t>(chains + uint64_t{last - symoffset} * 4) & 1u)) ++last;
      count = uint64_t{last} + 1;
    } else {
      count = symoffset;
    }
  }
  if (count > e.bytes.size() / sizeof(Elf64_Sym)) throw std::runtime_error("implausible ELF symbol count");
  std::vector<std::string> out;
  for (uint64_t i = 1; i < count; ++i) {
    const auto s = e.at<Elf64_Sym>(sym_off + i * sizeof(Elf64_Sym));
    const unsigned bind = ELF64_ST_BIND(s.st_info), vis = ELF64_ST_VISIBILITY(s.st_other);
    if (s.st_shndx == SHN_UNDEF) continue;
    if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) continue;
    if (vis != STV_DEFAULT && vis != STV_PROTECTED) continue;
    if (strsz && s.st_name >= strsz) throw std::runtime_error("an ELF symbol name lies outside the string table");
    std::string name;
    for (uint64_t o = str_off + s.st_name; e.at<char>(o) != '\0'; ++o) name += e.at<char>(o);
    out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string symbol_violation(const std::string& n) {
  static const std::set<std::string> allowed = {"kb_setup", "kb_run", "kb_teardown", "__bss_start", "_edata", "_end",
                                                "_init", "_fini"};
  if (allowed.count(n)) return "";
  auto starts = [&](const char* p) { return n.rfind(p, 0) == 0; };
  const bool cuda = starts("cuda") || starts("__cuda") ||
                    (n.size() > 2 && n[0] == 'c' && n[1] == 'u' && std::isupper(static_cast<unsigned char>(n[2])));
  if (cuda) return "a CUDA runtime/driver name";
  if (starts("_Z")) {
    // C++: harmless (it cannot stand in for a C runtime name) unless it names kbench's own code.
    static const std::regex kbench_ns(R"(^_Z(T[VIST]|GV|Z)?N[KVr]*2kb)");
    return std::regex_search(n, kbench_ns) ? "a name in kbench's own C++ namespace kb" : "";
  }
  static const std::set<std::string> libc = {
      "dlopen", "dlsym", "dlvsym", "dlclose", "dladdr", "dl_iterate_phdr", "fork", "vfork", "clone", "execve", "execv",
      "execvp", "system", "popen", "posix_spawn", "pthread_create", "pthread_join", "clock_gettime", "gettimeofday",
      "time", "clock", "nanosleep", "usleep", "sleep", "malloc", "calloc", "realloc", "free", "memcpy", "memmove",
      "memset", "memcmp", "mmap", "munmap", "mprotect", "open", "openat", "read", "write", "close", "ioctl", "syscall",
      "getenv", "setenv", "exit", "_exit", "abort", "signal", "sigaction", "ptrace", "seccomp", "prctl"};
  if (libc.count(n) || starts("pthread_") || starts("__libc_") || starts("GOMP_") || starts("omp_") ||
      starts("__cxa_") || starts("_dl_") || starts("nv"))
    return "a C library, threading or loader name that could interpose on kbench's own calls";
  return "not one of kb_setup/kb_run/kb_teardown (everything else must have hidden visibility)";
}

// --- the two checks ------------------------------------------------------------------------------

Finding scan_sources(const fs::path& dir, const std::vector<std::string>& forbidden) {
  return scan_sources(dir, forbidden, PythonScanOptions{});
}

Finding scan_sources(const fs::path& dir, const std::vector<std::string>& forbidden, const PythonScanOptions& python) {
  auto hits = static_scan(dir, forbidden);
  if (has_python_sources(dir)) {
    try {
      auto more = python_scan(dir, python);
      hits.insert(hits.end(), more.begin(), more.end());
    } catch (const PythonScanRefused& e) {
      return {e.solution_fault ? Reason::build_error : Reason::internal_error, e.what()};
    }
    std::stable_sort(hits.begin(), hits.end(), [](const ScanHit& a, const ScanHit& b) {
      return std::tie(a.file, a.line) < std::tie(b.file, b.line);
    });
  }
  if (hits.empty()) return {};
  std::vector<Evidence> evidence;
  for (const auto& h : hits) evidence.push_back({"source", h.file, h.line, "", h.excerpt, h.rule});
  return {Reason::forbidden_source,
          fmt::format("the solution's sources contain {} forbidden pattern{} (docs/threat-model.md):{}", hits.size(),
                      hits.size() == 1 ? "" : "s", describe_hits(hits)),
          std::move(evidence)};
}

Finding check_exported_symbols(const fs::path& library) {
  // The message and the evidence name the first ten; the count is of all of them.
  constexpr size_t kNamed = 10;
  std::string listed;
  std::vector<Evidence> evidence;
  size_t n_bad = 0;
  for (const auto& name : exported_symbols(library)) {
    const std::string why = symbol_violation(name);
    if (why.empty() || n_bad++ >= kNamed) continue;
    listed += "\n  " + name + ": " + why;
    evidence.push_back({"symbol", "", 0, "", name, why});
  }
  if (!n_bad) return {};
  return {Reason::exported_runtime_symbol,
          fmt::format("the solution library exports {} symbol{} it must not (only kb_setup, kb_run and kb_teardown may "
                      "be visible; a CUDA runtime or C library name could stand in for the real one):{}",
                      n_bad, n_bad == 1 ? "" : "s", listed),
          std::move(evidence)};
}

}  // namespace kb
