// What an ELF file says about RELRO, read from the file itself: a PT_GNU_RELRO segment (the
// dynamic tables are made read-only after relocation) and BIND_NOW (every relocation is done at
// load, so that read-only covers the whole GOT: "full RELRO"). For the hardening tests.
#pragma once

#include <elf.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kb::testing_support {

struct RelroFacts {
  bool relro_segment = false;  // PT_GNU_RELRO
  bool bind_now = false;       // DT_BIND_NOW, DT_FLAGS & DF_BIND_NOW or DT_FLAGS_1 & DF_1_NOW
  bool full() const { return relro_segment && bind_now; }
};

// Throws std::runtime_error for a file that is not a 64-bit ELF file.
inline RelroFacts read_relro(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  auto at = [&](size_t offset, size_t size) {
    if (offset > bytes.size() || size > bytes.size() - offset)
      throw std::runtime_error(file.string() + ": truncated ELF file");
    return bytes.data() + offset;
  };
  Elf64_Ehdr eh;
  std::memcpy(&eh, at(0, sizeof eh), sizeof eh);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error(file.string() + ": not a 64-bit ELF file");
  RelroFacts f;
  for (size_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, at(eh.e_phoff + i * eh.e_phentsize, sizeof ph), sizeof ph);
    if (ph.p_type == PT_GNU_RELRO) f.relro_segment = true;
    if (ph.p_type != PT_DYNAMIC) continue;
    for (size_t off = 0; off + sizeof(Elf64_Dyn) <= ph.p_filesz; off += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, at(ph.p_offset + off, sizeof d), sizeof d);
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag == DT_BIND_NOW || (d.d_tag == DT_FLAGS && (d.d_un.d_val & DF_BIND_NOW)) ||
          (d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_NOW)))
        f.bind_now = true;
    }
  }
  return f;
}

}  // namespace kb::testing_support
