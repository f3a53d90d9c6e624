// Integrity checks made before a solution runs (docs/threat-model.md):
//  - the static scan of its source files for the problem's `policy.forbidden` patterns and for
//    tampering patterns (reason `forbidden_source`);
//  - the check of the built library's exported dynamic symbols (reason `exported_runtime_symbol`).
// Both are cheap first lines; the worker's system-call filter and the parent's own judging are
// what a determined solution meets afterwards.
#pragma once

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "verdict/finding.h"

namespace kb {

struct ScanHit {
  std::string file;     // relative to the solution folder
  int line = 0;         // 1-based
  std::string rule;     // what was matched, in words
  std::string excerpt;  // the offending line, trimmed
};

// Scans every text file under `dir` (recursively; any of them could be #included, whatever its
// extension), except the corpus' expect.toml and *.md prose, with C comments removed (not from
// .py files, where // is an operator) and string literals kept. `forbidden` are the problem's patterns: each is an
// ECMAScript regex (case-sensitive), or a literal when it does not compile as one.
std::vector<ScanHit> static_scan(const std::filesystem::path& dir, const std::vector<std::string>& forbidden);

// A problem's `policy.forbidden` pattern as the scans use it: an ECMAScript regex (case-sensitive),
// or, when it does not compile as one, the literal text.
std::regex forbidden_pattern(const std::string& pattern);

// The hits as a message: one line per hit, "file:line: rule: excerpt", at most `max_hits`.
std::string describe_hits(const std::vector<ScanHit>& hits, size_t max_hits = 10);

// Comments removed from C/C++/CUDA text, newlines kept (so line numbers stay), string and
// character literals kept as they are. Exposed for the tests.
std::string strip_comments(const std::string& text);

// The names a shared library exports: defined (not undefined) GLOBAL, WEAK or GNU_UNIQUE symbols
// of its .dynsym with default or protected visibility. Parsed from the ELF file directly (64-bit,
// native byte order). Throws std::runtime_error on a file that is not such an ELF object.
std::vector<std::string> exported_symbols(const std::filesystem::path& library);

// Why an exported name is not allowed, or "" when it is (the rule of docs/threat-model.md):
// allowed are kb_setup, kb_run, kb_teardown, the linker's own __bss_start/_edata/_end/_init/_fini,
// and C++ mangled names (_Z...) outside kbench's namespace `kb`; everything else is refused,
// named specially when it is a CUDA runtime/driver name (cuda*, __cuda*, cu[A-Z]*) or a C library
// name that could interpose on kbench's own calls.
std::string symbol_violation(const std::string& name);

// The two checks as findings (verdict/finding.h); reason none when nothing was found.
// forbidden_source: one "source" evidence item per hit (file, line, the excerpt; note: the rule).
// The regex scan runs on every file; when the folder holds .py files, the Python scan
// (python_scan.h, with `python`) runs too and its hits join the regex scan's. A Python scan that
// cannot answer fails closed: build_error when a file does not parse (the message names file:line),
// internal_error when kbench cannot run the scan (no python3, a crash, a timeout).
struct PythonScanOptions;
Finding scan_sources(const std::filesystem::path& dir, const std::vector<std::string>& forbidden);
Finding scan_sources(const std::filesystem::path& dir, const std::vector<std::string>& forbidden,
                     const PythonScanOptions& python);
// exported_runtime_symbol: one "symbol" evidence item per refused name (the first ten; note: why).
// Throws std::runtime_error when the library cannot be read (exported_symbols).
Finding check_exported_symbols(const std::filesystem::path& library);

}  // namespace kb
