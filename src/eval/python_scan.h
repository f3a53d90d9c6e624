// The static scan of a Python solution's sources (docs/threat-model.md): every .py file of the
// folder parsed by Python's own `ast` module -- the exact grammar, not a grep -- for forbidden
// imports, forbidden torch operations in every spelling (torch.topk(x), x.topk(), F.softmax,
// torch.ops.aten.topk, getattr(torch, "topk"), aliases), dynamic code and attribute access,
// monkey-patching of imported modules or of kbench, timers, threads and processes, and file access.
//
// The scanner is kbench's own script (src/eval/python_scan.py), compiled into the binary and run
// with the system python3 in isolated mode (-I -B -S) inside the build sandbox (no network, a
// read-only view of the folder) with a timeout. It only parses: the solution's code is never
// imported, compiled or run. Like the regex scan (static_scan.h) it is a first line; the worker's
// sandbox, its system-call filter and the parent's judging hold whatever it misses.
#pragma once

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "eval/static_scan.h"

namespace kb {

struct PythonScanOptions {
  // The problem's policy.forbidden_torch: torch function names ("topk", "softmax") refused in every
  // form, as an attribute of anything (x.topk, torch.Tensor.topk, tl.topk) or a string naming it.
  std::vector<std::string> forbidden_torch;
  // Modules of the deck's kits the build puts beside a deck solution (target/python_solution.h,
  // python_kit_modules): imported as the solution's own. Empty for an agent's solution.
  std::vector<std::string> kit_modules;
  // The interpreter that parses; empty: python3 looked up on PATH.
  std::filesystem::path python;
  // Run it in the build sandbox (core/bwrap.h); false only where kbench runs with --no-sandbox.
  bool sandbox = true;
  // Parsing a solution takes well under a second; a minute leaves a loaded machine room.
  std::chrono::milliseconds timeout = std::chrono::seconds(60);
};

// Why the scan could not give an answer. The scan fails closed: a refusal is never a pass.
struct PythonScanRefused : std::runtime_error {
  // true: the solution's own fault (a file that does not parse as Python: build_error);
  // false: the scan's (no python3, a crash, a timeout, output that is not the scanner's).
  bool solution_fault = false;
  PythonScanRefused(const std::string& message, bool solution_fault)
      : std::runtime_error(message), solution_fault(solution_fault) {}
};

// Whether `dir` holds a Python source (a .py file anywhere under it).
bool has_python_sources(const std::filesystem::path& dir);

// The hits in every .py file under `dir`, sorted by file and line. Each hit's rule starts with the
// rule's name (forbidden_import, forbidden_op, dynamic_code, dynamic_attribute, monkey_patch,
// file_access, timer, thread_or_process), then ": " and why. Throws PythonScanRefused.
std::vector<ScanHit> python_scan(const std::filesystem::path& dir, const PythonScanOptions& options);

// The scanner's own text (src/eval/python_scan.py as built into kbench). Exposed for the tests.
const char* python_scan_script();

}  // namespace kb
