// An agent's workspace: the folder it works in, and the private folder next to it that kbench's
// own ./kbench wrapper reads. `kbench prepare` and `kbench run` make both.
//
// The workspace holds prompt.md (the task), README.md (the interface), the starter solution (and,
// where Python solutions run, starter.py: docs/python-solutions.md),
// include/kbench/solution.h and include/dlpack/dlpack.h (so the agent can compile on its own), and ./kbench, a
// script that runs the real kbench binary's `check` or `bench` on exactly this problem and this
// folder. The private folder holds what that binary needs and nothing more: this problem's
// problem.toml (not its reference, solutions or prompt source), kbench's include folder, and
// on cuda the datasheet of this machine's GPU only. In a sandbox it is bound read-only; the
// kbench source tree, the other problems and the hardware tables stay out of reach.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "deck/problem.h"

namespace kb {

struct WorkspaceOptions {
  std::filesystem::path dir;            // the workspace; created, must be absent or empty
  std::filesystem::path private_dir;    // kbench's private copy; created, must be outside dir
  std::string target;                   // "host" or "cuda" (resolved, not "auto")
  std::string device;                   // the device's description, for the prompt and hardware match
  std::filesystem::path kbench_binary;  // absolute path written into ./kbench
  std::filesystem::path hardware_dir;   // datasheets; on cuda the one matching `device` is copied
  std::chrono::milliseconds budget{std::chrono::minutes(45)};  // for the prompt
  // Whether to offer Python solutions (starter.py, the prompt's and README's Python sections):
  // unset, where they run on the target here (target/python_solution.h).
  std::optional<bool> python;
};

struct Workspace {
  std::filesystem::path dir;
  std::filesystem::path private_dir;
  std::filesystem::path prompt_file;   // dir/prompt.md
  std::filesystem::path wrapper;       // dir/kbench
  std::string prompt;                  // the rendered prompt
  // What a sandbox must bind read-only for ./kbench to work: the binary and the private folder.
  std::vector<std::filesystem::path> read_only;
  std::vector<std::string> notes;      // things the user should know (no datasheet matched, ...)
  bool python = false;                 // Python solutions offered (starter.py written)
};

// Makes the workspace and the private folder. Throws std::invalid_argument for a bad folder
// (exists and not empty, private folder inside the workspace), SpecError for a bad prompt.md.
Workspace prepare_workspace(const Problem& problem, const WorkspaceOptions& options);

// The solution in a workspace: regular files at its top level that are sources or headers of the
// target (.cpp .cc .cxx .h .hpp .hh .inl .inc, and .cu .cuh on cuda), Python modules (.py) and
// solution.toml. Symlinks
// and subfolders are not part of it. Sorted.
std::vector<std::filesystem::path> solution_files(const std::filesystem::path& workspace, const std::string& target);

// What copy_solution takes: a kernel's sources are kilobytes, so these limits leave room for
// generated tables and headers while refusing what only costs kbench (a 2 GB sparse file costs an
// agent a few MB of disk, and kbench a full 2 GB copy). Recorded in run.json.
struct SolutionLimits {
  uint64_t max_file_bytes = 4ull << 20;    // apparent size of one file
  uint64_t max_total_bytes = 16ull << 20;  // apparent size of all files together
  // A file whose apparent size exceeds its allocated blocks by more than this is sparse: refused.
  uint64_t max_hole_bytes = 64ull << 10;
};

// Copies the solution files into `dest` (created, must not exist), each read once and never a
// file beyond `limits` (whose size is taken before reading: a sparse or huge file is never read).
// Returns one line per top-level entry that was left out -- a symlink to something else, a sparse
// file, a file over a size limit -- so the record says why a file the agent wrote is missing.
std::vector<std::string> copy_solution(const std::filesystem::path& workspace, const std::string& target,
                                       const std::filesystem::path& dest, const SolutionLimits& limits = {});

// The pieces, exposed for tests.
std::string starter_solution(const Problem& p, const std::string& target);
// starter.py: the Python starter, written where Python solutions are offered.
std::string python_starter(const Problem& p, const std::string& target);
std::string interface_readme(const Problem& p, const std::string& target, bool python = false);
// library_path: folders of kbench's own shared libraries put on LD_LIBRARY_PATH (core/bwrap.h's
// runtime_library_path()), empty when they are all in the system folders.
std::string wrapper_script(const Problem& p, const std::string& target, const std::filesystem::path& kbench_binary,
                           const std::filesystem::path& private_dir, const std::filesystem::path& workspace,
                           const std::string& library_path = {});

}  // namespace kb
