#include "eval/jit_kernels.h"

#include <fmt/format.h>

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <regex>

#include "target/python_solution.h"

namespace kb {
namespace fs = std::filesystem;

bool looks_like_library_kernel(const std::string& name) {
  if (name.rfind("_Z", 0) == 0) return true;
  // Unmangled kernel names of NVIDIA's libraries, by family (as CUPTI and cuobjdump print them on
  // Ampere and Hopper): cuBLAS's nvjet_* (CUDA 12.x Hopper GEMMs), <arch>_xmma_* (cuBLAS and
  // cuDNN's xmma kernels, sm80_xmma_gemm_..., sm90_xmma_...), <gpu>_[sdhi]gemm_* and
  // <gpu>_*_fprop_* (cuBLAS and cuDNN's older named kernels: ampere_sgemm_128x64_nn,
  // volta_fp16_s884gemm_...), cutlass_<arch>_* (cuBLAS's CUTLASS-generated kernels), xmma_*.
  static const std::regex vendor(R"(^(nvjet_|sm[0-9]+_xmma_|xmma_|cutlass_[0-9]+_|(kepler|maxwell|pascal|volta|turing|ampere|ada|hopper|blackwell)_))",
                                 std::regex::icase);
  return std::regex_search(name, vendor);
}

std::optional<std::vector<std::string>> cubin_functions(const fs::path& cubin) {
  // Read whole (a Triton cubin is kilobytes to a few megabytes; more is not a kernel cache's).
  constexpr std::streamsize kMaxBytes = 256 << 20;
  std::ifstream in(cubin, std::ios::binary);
  if (!in) return std::nullopt;
  in.seekg(0, std::ios::end);
  const std::streamsize size = in.tellg();
  if (size < static_cast<std::streamsize>(sizeof(Elf64_Ehdr)) || size > kMaxBytes) return std::nullopt;
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) return std::nullopt;
  // Every offset and count comes from the file, which the solution's process wrote: each is
  // checked against the file's size before use.
  auto fits = [&](uint64_t offset, uint64_t length) { return offset <= bytes.size() && length <= bytes.size() - offset; };
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      eh.e_shnum == 0 || eh.e_shstrndx >= eh.e_shnum || !fits(eh.e_shoff, uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr)))
    return std::nullopt;
  auto section = [&](size_t i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, bytes.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    return sh;
  };
  const Elf64_Shdr names = section(eh.e_shstrndx);
  if (!fits(names.sh_offset, names.sh_size)) return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_name >= names.sh_size) continue;
    const char* name = bytes.data() + names.sh_offset + sh.sh_name;
    const size_t room = names.sh_size - sh.sh_name;
    const std::string n(name, strnlen(name, room));
    // A function's machine code is the section .text.<name> (cuobjdump's "Function : <name>").
    if (sh.sh_type == SHT_PROGBITS && n.rfind(".text.", 0) == 0 && n.size() > 6) out.push_back(n.substr(6));
  }
  return out;
}

JitKernels jit_kernels(const fs::path& cache, bool sandbox) {
  JitKernels j;
  std::error_code ec;
  std::vector<fs::path> cubins;
  if (fs::is_directory(cache, ec))
    for (auto it = fs::recursive_directory_iterator(cache, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if (!it->is_symlink(ec) && it->is_regular_file(ec) && it->path().extension() == ".cubin") cubins.push_back(it->path());
  std::sort(cubins.begin(), cubins.end());
  j.cubins = cubins.size();
  j.available = true;
  j.sass.available = true;
  std::vector<std::string> unreadable;
  for (const auto& c : cubins) {
    // The names, from the ELF file itself: a cubin that is not one defines nothing of the
    // solution's (its kernels, if any ran, are foreign), and no disassembler is needed for them.
    const auto functions = cubin_functions(c);
    if (!functions) {
      unreadable.push_back(c.filename().string());
      continue;
    }
    for (const auto& name : *functions) {
      if (!looks_like_library_kernel(name)) {
        j.names.insert(name);
      } else if (std::find(j.refused.begin(), j.refused.end(), name) == j.refused.end()) {
        j.refused.push_back(name);
      }
    }
    // The machine code (required instruction classes), where cuobjdump is at hand.
    if (!j.sass.available) continue;
    SassReport r = inspect_sass(c, sandbox);
    if (!r.available) {
      j.sass = SassReport{};
      j.sass.note = fmt::format("the machine code Triton compiled ({}) was not read: {}", c.filename().string(), r.note);
      continue;
    }
    if (j.sass.tool.empty()) j.sass.tool = r.tool;
    for (auto& k : r.listing.kernels) j.sass.listing.kernels.push_back(std::move(k));
    j.sass.listing.archs.insert(r.listing.archs.begin(), r.listing.archs.end());
  }
  std::string unread;
  for (const auto& n : unreadable) unread += (unread.empty() ? "" : ", ") + n;
  if (!unreadable.empty()) j.note = "not ELF cubins, none of their kernels counted as the solution's: " + unread;
  std::string listed;
  for (const auto& n : j.refused) listed += (listed.empty() ? "" : ", ") + n;
  if (!j.refused.empty())
    j.note += std::string(j.note.empty() ? "" : "; ") + fmt::format("{} kernel name{} of the solution's Triton code look{} like a library's and {} not taken as its own "
                         "(mangled C++ names and NVIDIA's library kernel families: eval/jit_kernels.h): {}",
                         j.refused.size(), j.refused.size() == 1 ? "" : "s", j.refused.size() == 1 ? "s" : "",
                         j.refused.size() == 1 ? "is" : "are", listed);
  return j;
}

namespace {

// How many brackets a line of Python opens minus how many it closes (its strings are not told
// apart: a decorator's arguments rarely hold a bracket in a string).
int bracket_balance(const std::string& line) {
  int n = 0;
  for (char c : line) {
    if (c == '#') break;
    if (c == '(' || c == '[' || c == '{') ++n;
    if (c == ')' || c == ']' || c == '}') --n;
  }
  return n;
}

}  // namespace

std::map<std::string, KernelDefinition> triton_kernel_definitions(const fs::path& dir) {
  static const std::regex decorator(R"(^@\s*([A-Za-z_][\w.]*))");
  static const std::regex def(R"(^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\()");
  std::map<std::string, KernelDefinition> out;
  for (const fs::path& rel : python_files(dir)) {
    std::ifstream in(dir / rel);
    std::string line;
    int number = 0, depth = 0;
    bool jit = false;  // the decorators read so far, directly above, include a jit one
    while (std::getline(in, line)) {
      ++number;
      if (depth > 0) {  // inside a decorator's arguments, over several lines
        depth += bracket_balance(line);
        continue;
      }
      const size_t first = line.find_first_not_of(" \t");
      const std::string t = first == std::string::npos ? "" : line.substr(first);
      std::smatch m;
      if (std::regex_search(t, m, decorator)) {
        const std::string name = m[1];
        if (name == "jit" || (name.size() > 4 && name.compare(name.size() - 4, 4, ".jit") == 0)) jit = true;
        depth = std::max(0, bracket_balance(t));
      } else if (std::regex_search(t, m, def)) {
        if (jit) out.try_emplace(m[1], KernelDefinition{rel.generic_string(), number});
        jit = false;
      } else if (!t.empty() && t[0] != '#') {
        jit = false;  // a decorator applies to the def right below it
      }
    }
  }
  return out;
}

}  // namespace kb
