#include "agent/workspace.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "agent/prompt.h"
#include "core/bwrap.h"
#include "core/path_within.h"
#include "core/subprocess.h"
#include "target/ceilings.h"
#include "target/compile.h"
#include "target/python_solution.h"

namespace kb {
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& p, const std::string& text, fs::perms perms = fs::perms::owner_read | fs::perms::owner_write |
                                                                          fs::perms::group_read | fs::perms::others_read) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw std::runtime_error("cannot write " + p.string());
  fs::permissions(p, perms);
}

// Read-only for everyone: a private file is kbench's, not the agent's, even outside a sandbox.
constexpr fs::perms kReadOnly = fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read;
constexpr fs::perms kExecutable = kReadOnly | fs::perms::owner_write | fs::perms::owner_exec | fs::perms::group_exec |
                                  fs::perms::others_exec;

void copy_read_only(const fs::path& from, const fs::path& to) {
  if (!fs::is_regular_file(from)) throw std::runtime_error("cannot copy " + from.string() + ": not a file");
  fs::create_directories(to.parent_path());
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  fs::permissions(to, kReadOnly);
}

void make_empty_dir(const fs::path& dir, const char* what) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir)) throw std::invalid_argument(fmt::format("{} {} exists and is not a folder", what, dir.string()));
    if (!fs::is_empty(dir))
      throw std::invalid_argument(fmt::format("{} {} exists and is not empty: give a new folder", what, dir.string()));
  }
  fs::create_directories(dir);
}

// The C++ files of a solution, and .py: a Python solution's modules (docs/python-solutions.md).
std::vector<std::string> solution_extensions(const std::string& target) {
  std::vector<std::string> e = {".cpp", ".cc", ".cxx", ".h", ".hpp", ".hh", ".inl", ".inc"};
  if (target == "cuda") e.insert(e.end(), {".cu", ".cuh"});
  e.push_back(".py");
  return e;
}

bool is_solution_name(const fs::path& name, const std::string& target) {
  if (name == "solution.toml") return true;
  const auto exts = solution_extensions(target);
  return std::find(exts.begin(), exts.end(), name.extension().string()) != exts.end();
}

// How a starter names the tensors: each list's expression and the spaces after "[i]" that line the
// names up, and what it says of the outputs.
struct TensorListing {
  const char* prefix;  // before every line: a comment's or a docstring's indent
  const char *inputs, *inputs_gap, *weights, *weights_gap, *outputs, *outputs_gap;
  const char* outputs_note;
};

// One line per tensor, inputs, weights, outputs: its index, name, dtype and shape.
std::string tensor_lines(const Problem& p, const TensorListing& l) {
  std::string s;
  auto list = [&](const std::vector<TensorSpec>& ts, const char* what, const char* gap, const char* note) {
    for (size_t i = 0; i < ts.size(); ++i)
      s += fmt::format("{}{}[{}]{}{} {} {} {}\n", l.prefix, what, i, gap, ts[i].name, name(ts[i].dtype), shape_text(ts[i]), note);
  };
  list(p.inputs, l.inputs, l.inputs_gap, "(read-only)");
  list(p.weights, l.weights, l.weights_gap, "(read-only)");
  list(p.outputs, l.outputs, l.outputs_gap, l.outputs_note);
  return s;
}

std::string tensor_comment(const Problem& p) {
  return tensor_lines(p, {"//   ", "c->inputs", "   ", "p->weights", "  ", "c->outputs", "  ", "(write every element)"});
}

std::string dims_comment(const Problem& p) {
  std::string s;
  for (size_t i = 0; i < p.dims.size(); ++i) s += fmt::format("{}p->dim_values[{}] = {}", i ? ", " : "", i, p.dims[i]);
  return s;
}

// The problem's description, each line behind `prefix` (a comment's or a docstring's indent).
std::string description_lines(const Problem& p, const std::string& prefix) {
  std::string description = p.description;
  while (!description.empty() && description.back() == '\n') description.pop_back();
  std::string out;
  for (size_t start = 0; start <= description.size();) {
    size_t end = description.find('\n', start);
    if (end == std::string::npos) end = description.size();
    out += prefix + description.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string starter_solution(const Problem& p, const std::string& target) {
  const bool cuda = target == "cuda";
  const std::string desc_comment = description_lines(p, "//   ");
  return fmt::format(R"({0} for the {1} target: your solution.
//
// Implement:
{2}//
// kbench builds this file (with every other {3} file at the top of this folder) into a shared
// library and calls the three functions below; README.md describes the interface and prompt.md
// the task. Until they are implemented they return 1, so `./kbench check` fails with setup_error.
//
// Dimensions: {4}
// Tensors (dense, row-major DLTensors; ->data is {5} memory):
{6}#include "kbench/solution.h"
{7}
// Once per shape, untimed: read the dimensions, allocate scratch, repack weights into *state.
extern "C" int kb_setup(const kb_problem* p, void** state) {{
  (void)p;
  *state = nullptr;
  return 1;  // not implemented yet
}}

// Timed: compute every output from this call's inputs (and the weights).{8}
extern "C" int kb_run(void* state, const kb_call* c) {{
  (void)state;
  (void)c;
  return 1;  // not implemented yet
}}

// Once per shape: free what kb_setup allocated.
extern "C" void kb_teardown(void* state) {{ (void)state; }}
)",
                     "// " + p.name, target, desc_comment, cuda ? ".cu/.cpp" : ".cpp", dims_comment(p), cuda ? "device" : "host",
                     tensor_comment(p), cuda ? "\n#include <cuda_runtime.h>\n" : "",
                     cuda ? "\n// All device work goes on (cudaStream_t)c->stream; the call is done when that stream is." : "");
}

std::string python_starter(const Problem& p, const std::string& target) {
  const bool cuda = target == "cuda";
  const std::string desc = description_lines(p, "    ");
  const std::string tensors = tensor_lines(p, {"    ", "inputs", "          ", "problem.weights", " ", "outputs", "         ",
                                               "(write every element, in place)"});
  std::string dims;
  for (const auto& d : p.dims) dims += (dims.empty() ? "" : ", ") + fmt::format("\"{}\"", d);
  std::string forbidden;
  for (const auto& f : p.forbidden_torch) forbidden += (forbidden.empty() ? "" : ", ") + f;
  return fmt::format(R"PY("""{0} for the {1} target, in Python: the starter of a Python solution.

To submit Python instead of C++, rename this file to solution.py and delete {2}: when both
are at the top of the folder, {2} is the one judged. README.md describes the interface.

Implement:
{3}
problem.dims holds {4}; problem.device is "{5}", where every tensor lives.
Tensors (torch tensors aliasing kbench's own buffers, dense and row-major):
{6}
{7}Until setup is implemented it raises, so `./kbench check` fails with setup_error.
"""
import torch
{8}

def setup(problem):
    # Once per shape, untimed: read problem.dims, allocate scratch, prepare weights{9}.
    raise NotImplementedError("setup is not implemented yet")


def run(state, inputs, outputs):
    # Timed: write every element of every output tensor in place (out=..., .copy_(), a kernel's
    # stores): rebinding outputs[i] or returning a tensor writes nothing.{10}
    raise NotImplementedError("run is not implemented yet")


def teardown(state):
    # Once per shape: release what setup made (optional).
    pass
)PY",
                     p.name, target, cuda ? "solution.cu" : "solution.cpp", desc, dims, cuda ? "cuda" : "cpu", tensors,
                     forbidden.empty() ? ""
                                       : "The work must be your own: these torch operations are refused in every spelling\n"
                                         "(the static scan reads this folder's .py files): " +
                                             forbidden + ".\n",
                     cuda ? "import triton\nimport triton.language as tl\n" : "",
                     cuda ? ", and compile every Triton kernel by launching it once\n    # here on scratch tensors of "
                            "this shape (a first compilation inside run is killed)"
                          : "",
                     cuda ? "\n    # Launch on torch's current stream (kbench's stream during this call)." : "");
}

namespace {

// The README's section on Python solutions (docs/python-solutions.md, in short), where they are offered.
std::string python_readme(const Problem& p, const std::string& target) {
  const bool cuda = target == "cuda";
  const std::string native = cuda ? "solution.cu" : "solution.cpp";
  const std::string forbidden = forbidden_torch_list(p);
  return fmt::format(R"(
## Or in Python ({0})

This machine also judges a Python solution: `solution.py` (start from `starter.py`, which has the
tensors of this problem), defining

```python
def setup(problem):               # once per shape, untimed; returns the state
def run(state, inputs, outputs):  # timed
def teardown(state):              # optional; once per shape
```

- `problem.dims` is a dict of the dimensions, `problem.weights` a list of torch tensors
  (read-only), `problem.device` is `"{1}"`.
- `inputs` and `outputs` are lists of torch tensors that alias kbench's own buffers (dense,
  row-major). Write every element of every output *in place* (`out=`, `.copy_()`, a kernel's
  stores): rebinding `outputs[i]` or returning a tensor writes nothing.{2}
- Other `.py` files at the top of this folder are modules your solution may import.
- Judged exactly as C++ is (the same checks, timing and score). A static scan of the `.py` files
  first refuses {3}threads, processes, timers, file access, monkey-patching, and imports other
  than torch, triton and the standard library's pure-computation modules.
- When `solution.py` and `{4}` are both here, `{4}` is the one judged: delete it to submit Python.
)",
                     cuda ? "PyTorch and Triton" : "PyTorch on the CPU", cuda ? "cuda" : "cpu",
                     cuda ? "\n- `run` is called with kbench's stream as torch's current stream: launch everything on it. "
                            "Compile every Triton kernel in `setup` (one launch per configuration on scratch tensors of "
                            "the shape): a first compilation inside `run` is killed."
                          : "",
                     forbidden.empty() ? "" : "the torch operations that would do the work for you (" + forbidden + "), ",
                     native);
}

}  // namespace

std::string interface_readme(const Problem& p, const std::string& target, bool python) {
  const bool cuda = target == "cuda";
  const std::string src = cuda ? "solution.cu" : "solution.cpp";
  std::string exts;
  for (const auto& e : solution_extensions(target)) exts += (exts.empty() ? "`" : ", `") + e + "`";
  const std::string sig = prompt_variables(p, PromptContext{target, "", std::chrono::seconds(1)}).at("signature");
  return fmt::format(R"(# Workspace: {0} ({1} target)

| file | what it is |
|---|---|
| `prompt.md` | the task |
| `{2}` | your solution; it starts as a stub that fails `./kbench check` |
| `include/kbench/solution.h`, `include/dlpack/dlpack.h` | the interface headers, for your own compiles (`-Iinclude`); kbench builds with its own copies |
| `./kbench` | `./kbench check` (correctness) and `./kbench bench` (timing and score) on this folder |

## The interface

kbench compiles your sources into a shared library and calls three C functions, declared in
`include/kbench/solution.h`:

```c
int  kb_setup(const kb_problem* p, void** state);  // once per shape, untimed
int  kb_run(void* state, const kb_call* c);        // timed
void kb_teardown(void* state);                     // once per shape
```

Return 0 on success; anything else is reported as your solution's error. `kb_problem` gives the
dimensions of the shape ({3}) and the weights; `kb_call` the inputs, the outputs to fill and, on
cuda, the stream. Tensors are DLPack `DLTensor`s, dense and row-major (`strides == NULL`):

{4}
## What your solution is

When the run ends, kbench takes the regular files at the top of this folder whose names end in
{5}, plus `solution.toml` if you write one. Subfolders, symlinks and other files are not
taken. The official verdict is computed by kbench, outside this environment, from a fresh copy
of those files; what `./kbench check` printed here is not used.

## Rules kbench enforces

- Inputs and weights are read-only; every output element is written on every call (kbench fills
  outputs with a poison pattern before each call and looks for it afterwards).
- The result depends only on this call's inputs and the weights: nothing cached across calls
  (some timed calls are re-checked in secret).
- {6}
- No threads of your own{7}, no processes, no timers, no reading or writing outside this folder,
  no access to kbench's memory.
)",
                     p.name, target, src, dims_comment(p), sig, exts,
                     cuda ? "All device work is enqueued on `c->stream` and is finished when that stream is; only kernels "
                            "built from your own sources run."
                          : "Only code built from your own sources runs.",
                     cuda ? "" : " (OpenMP is allowed)") +
         (python ? python_readme(p, target) : std::string());
}

std::string wrapper_script(const Problem& p, const std::string& target, const fs::path& kbench_binary,
                           const fs::path& private_dir, const fs::path& workspace, const std::string& library_path) {
  auto q = [](const fs::path& path) { return join_command({path.string()}); };
  return fmt::format(R"(#!/bin/sh
# ./kbench check   correctness of the solution in this folder (fixed and secret seeds, every shape)
# ./kbench bench   its speed: cold timing, and the fraction of the hardware's peak it reaches
# Other options go through to kbench: --shape I, --json, --seed S --no-secret (reproduce a failure).
# Written by `kbench prepare` for problem {0} on the {1} target.
case "${{1:-}}" in
  check|bench) mode=$1; shift ;;
  *) echo "usage: ./kbench check|bench [--shape I] [--json] [--seed S --no-secret]" >&2; exit 2 ;;
esac
export KBENCH_INCLUDE_DIR={2}
{7}exec {3} "$mode" --in-agent-sandbox --problems {4} --hardware {5} --target {1} {0} {6} "$@"
)",
                     p.name, target, q(private_dir / "include"), q(kbench_binary), q(private_dir / "problems"),
                     q(private_dir / "hardware"), q(workspace),
                     // kbench's own libraries, where they live outside the system folders (the sandbox binds them).
                     library_path.empty() ? std::string()
                                          : "LD_LIBRARY_PATH=" + q(library_path) + "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\nexport LD_LIBRARY_PATH\n");
}

Workspace prepare_workspace(const Problem& p, const WorkspaceOptions& o) {
  if (o.target != "host" && o.target != "cuda")
    throw std::invalid_argument("prepare: target must be host or cuda, not '" + o.target + "'");
  if (!p.supports(o.target))
    throw std::invalid_argument("problem " + p.name + " does not support the " + o.target + " target");
  if (o.kbench_binary.empty() || !o.kbench_binary.is_absolute() || !fs::is_regular_file(o.kbench_binary))
    throw std::invalid_argument("prepare: the kbench binary '" + o.kbench_binary.string() + "' is not an absolute path to a file");
  Workspace w;
  w.dir = fs::absolute(o.dir).lexically_normal();
  w.private_dir = fs::absolute(o.private_dir).lexically_normal();
  if (path_within(w.private_dir, w.dir) || path_within(w.dir, w.private_dir))
    throw std::invalid_argument(fmt::format("the private folder {} and the workspace {} must not contain each other",
                                            w.private_dir.string(), w.dir.string()));
  make_empty_dir(w.dir, "workspace");
  make_empty_dir(w.private_dir, "private folder");

  // The private copy: only what the ./kbench wrapper needs.
  copy_read_only(p.dir / "problem.toml", w.private_dir / "problems" / p.id / "problem.toml");
  const fs::path include = kbench_include_dir();
  for (const auto& e : fs::directory_iterator(include / "kbench"))
    if (e.is_regular_file()) copy_read_only(e.path(), w.private_dir / "include" / "kbench" / e.path().filename());
  fs::create_directories(w.private_dir / "hardware");
  if (o.target == "cuda") {
    // bench scores against this GPU's datasheet, so that one file is needed; the other GPUs' are not.
    const auto specs = load_hardware(o.hardware_dir);
    if (const HardwareSpec* s = match_hardware(specs, o.device))
      copy_read_only(s->file, w.private_dir / "hardware" / s->file.filename());
    else
      w.notes.push_back(fmt::format("no datasheet in {} matches '{}': ./kbench bench will not be able to score", o.hardware_dir.string(),
                                    o.device));
  }

  // The workspace.
  // Python solutions are offered where they run (target/python_solution.h), unless told.
  bool python = false;
  if (o.python) {
    python = *o.python;
  } else if (const auto why = python_unavailable_reason(o.target)) {
    w.notes.push_back("Python solutions are not offered: " + *why);
  } else {
    python = true;
  }
  w.python = python;
  w.prompt = render_prompt(p, PromptContext{o.target, o.device, o.budget, python});
  w.prompt_file = w.dir / "prompt.md";
  write_text(w.prompt_file, w.prompt);
  write_text(w.dir / "README.md", interface_readme(p, o.target, python));
  write_text(w.dir / (o.target == "cuda" ? "solution.cu" : "solution.cpp"), starter_solution(p, o.target));
  if (python) write_text(w.dir / "starter.py", python_starter(p, o.target));
  // Under include/, because ./kbench (the wrapper) takes the name kbench at the top.
  fs::create_directories(w.dir / "include" / "kbench");
  for (const auto& e : fs::directory_iterator(include / "kbench"))
    if (e.is_regular_file()) fs::copy_file(e.path(), w.dir / "include" / "kbench" / e.path().filename());
  fs::create_directories(w.dir / "include" / "dlpack");
  fs::copy_file(fs::path(KBENCH_DLPACK_INCLUDE_DIR) / "dlpack" / "dlpack.h", w.dir / "include" / "dlpack" / "dlpack.h");
  w.wrapper = w.dir / "kbench";
  write_text(w.wrapper, wrapper_script(p, o.target, o.kbench_binary, w.private_dir, w.dir, runtime_library_path()), kExecutable);
  w.read_only = {o.kbench_binary, w.private_dir};
  if (python) {
    // ./kbench judges a Python solution with kbench's bridge library and the interpreter, torch
    // and Triton, wherever they live outside the folders every sandbox shows.
    if (const fs::path bridge = python_bridge_library(); !bridge.empty()) w.read_only.push_back(bridge);
    for (const auto& f : python_interpreter_folders(configured_python())) w.read_only.push_back(f);
  }
  return w;
}

std::vector<fs::path> solution_files(const fs::path& workspace, const std::string& target) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(workspace)) {
    if (e.is_symlink() || !e.is_regular_file()) continue;
    if (is_solution_name(e.path().filename(), target)) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> copy_solution(const fs::path& workspace, const std::string& target, const fs::path& dest,
                                       const SolutionLimits& limits) {
  if (fs::exists(dest)) throw std::invalid_argument("copy_solution: " + dest.string() + " already exists");
  fs::create_directories(dest);
  std::vector<std::string> notes;
  for (const auto& e : fs::directory_iterator(workspace))
    if (e.is_symlink() && is_solution_name(e.path().filename(), target))
      notes.push_back(fmt::format("{} is a symlink (to {}): not taken; a solution is regular files",
                                  e.path().filename().string(), fs::read_symlink(e.path()).string()));
  uint64_t total = 0;
  for (const auto& f : solution_files(workspace, target)) {
    struct stat st{};
    const std::string name = f.filename().string();
    if (lstat(f.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      notes.push_back(name + " is not a regular file: not taken");
      continue;
    }
    const uint64_t apparent = static_cast<uint64_t>(st.st_size), allocated = static_cast<uint64_t>(st.st_blocks) * 512;
    if (apparent > allocated + limits.max_hole_bytes) {
      notes.push_back(fmt::format("{} is a sparse file ({} bytes long, {} bytes allocated): not taken; a solution is "
                                  "ordinary source files",
                                  name, apparent, allocated));
      continue;
    }
    if (apparent > limits.max_file_bytes) {
      notes.push_back(fmt::format("{} is {} bytes, over the limit of {} bytes for one solution file: not taken", name,
                                  apparent, limits.max_file_bytes));
      continue;
    }
    if (total + apparent > limits.max_total_bytes) {
      notes.push_back(fmt::format("{} ({} bytes) would take the solution over its limit of {} bytes in all: not taken",
                                  name, apparent, limits.max_total_bytes));
      continue;
    }
    total += apparent;
    fs::copy_file(f, dest / f.filename());
    fs::permissions(dest / f.filename(), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  }
  return notes;
}

}  // namespace kb
