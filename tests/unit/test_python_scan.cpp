// The static scan of Python solutions (eval/python_scan.h): each rule with the exploit it catches
// (file and line asserted) and honest code that passes; the refusals (a file that does not parse,
// a scanner that crashes, hangs or is missing) fail closed with a message naming the cause.
#include "eval/python_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/bwrap.h"
#include "deck/problem.h"
#include "eval/static_scan.h"
#include "eval/worker_sandbox.h"
#include "test_support.h"

namespace fs = std::filesystem;
using kb::PythonScanOptions;
using kb::PythonScanRefused;
using kb::ScanHit;
using kb::testing_support::TempDir;

namespace {

class PythonScan : public ::testing::Test {
 protected:
  TempDir dir_{"python-scan"};

  void SetUp() override {
    if (kb::find_program("python3").empty()) GTEST_SKIP() << "no python3 on PATH (scripts/setup installs it)";
    fs::create_directories(dir_.path());
  }

  void write(const std::string& name, const std::string& text) {
    fs::create_directories((dir_.path() / name).parent_path());
    std::ofstream(dir_.path() / name) << text;
  }

  // Unsandboxed: the rules are the subject here; PythonScan.SandboxedScanFindsTheSame runs the
  // same fixture in the sandbox.
  std::vector<ScanHit> scan(const std::vector<std::string>& forbidden_torch = {},
                            const std::vector<std::string>& kit_modules = {}) {
    PythonScanOptions o;
    o.forbidden_torch = forbidden_torch;
    o.kit_modules = kit_modules;
    o.sandbox = false;
    return kb::python_scan(dir_.path(), o);
  }
};

std::string listing(const std::vector<ScanHit>& hits) { return kb::describe_hits(hits, 1000); }

// Whether a hit of `rule` (the rule's name, the start of ScanHit::rule) is on file:line.
bool caught(const std::vector<ScanHit>& hits, const std::string& file, int line, const std::string& rule) {
  for (const auto& h : hits)
    if (h.file == file && h.line == line && h.rule.rfind(rule + ": ", 0) == 0) return true;
  return false;
}

// Every line of `lines` (1-based numbers) caught by `rule`, and nothing else caught at all.
void expect_exactly(const std::vector<ScanHit>& hits, const std::string& file, const std::vector<int>& lines,
                    const std::string& rule) {
  for (int l : lines) EXPECT_TRUE(caught(hits, file, l, rule)) << file << ":" << l << " not caught as " << rule
                                                                << "; hits:" << listing(hits);
  for (const auto& h : hits)
    EXPECT_TRUE(std::find(lines.begin(), lines.end(), h.line) != lines.end())
        << "unexpected hit " << h.file << ":" << h.line << ": " << h.rule;
}

// An honest Triton solution with the tricky cases an honest one may use: @triton.autotune and
// @triton.jit kernels with tl.* calls, several kernels per call, a CUDA graph captured in setup
// (with the warm-up on a side stream, as torch's documentation does it), torch elementwise ops and
// reductions, F.gelu where only softmax is forbidden, a dataclass for the state, and the folder's
// own module imported both ways.
const char* kHonestTriton = R"py("""Row softmax in Triton: one program per row."""
from __future__ import annotations
import math
from dataclasses import dataclass, field
import torch
import torch.nn.functional as F
import triton
import triton.language as tl
import kit
from .kit import next_block


@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 2048}, num_warps=8)],
                 key=["n_cols"])
@triton.jit
def row_max_kernel(x_ptr, m_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
    tl.store(m_ptr + row, tl.max(x, axis=0))


@triton.jit
def normalise_kernel(x_ptr, m_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
    e = tl.exp(x - tl.load(m_ptr + row))
    tl.store(y_ptr + row * n_cols + offs, e / tl.sum(e, axis=0), mask=offs < n_cols)


@dataclass
class State:
    rows: int
    cols: int
    scratch: torch.Tensor = None
    graph: torch.cuda.CUDAGraph = None
    blocks: list = field(default_factory=list)


def setup(problem):
    state = State(problem.dims["batch"], problem.dims["n"])
    state.scratch = torch.empty(state.rows, device=problem.device)
    state.blocks.append(kit.next_block(state.cols))
    if problem.device == "cuda":
        x = torch.zeros(state.rows, state.cols, device="cuda")
        y = torch.empty_like(x)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            normalise_kernel[(state.rows,)](x, state.scratch, y, state.cols, BLOCK=next_block(state.cols))
        torch.cuda.current_stream().wait_stream(side)
        state.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(state.graph):
            normalise_kernel[(state.rows,)](x, state.scratch, y, state.cols, BLOCK=next_block(state.cols))
        torch.cuda.synchronize()
    return state


def run(state, inputs, outputs):
    x, = inputs
    y = outputs[0]
    grid = (state.rows,)
    row_max_kernel[grid](x, state.scratch, state.cols)
    normalise_kernel[grid](x, state.scratch, y, state.cols, BLOCK=triton.next_power_of_2(state.cols))
    m = x.max(dim=-1, keepdim=True).values
    e = torch.exp(x - m)
    y.copy_(e / e.sum(dim=-1, keepdim=True) + 0.0 * F.gelu(x) + 0.0 * math.pi)


def teardown(state):
    del state.scratch
)py";

const char* kHonestKit = R"py(import math


def next_block(n):
    return 1 << math.ceil(math.log2(n))
)py";

}  // namespace

TEST_F(PythonScan, AnHonestTritonSolutionPasses) {
  write("solution.py", kHonestTriton);
  write("kit.py", kHonestKit);
  const auto hits = scan({"softmax", "log_softmax"});
  EXPECT_TRUE(hits.empty()) << listing(hits);
}

TEST_F(PythonScan, AForbiddenOpIsCaughtInEveryForm) {
  write("solution.py", R"py(import torch
import torch as t
import torch.nn.functional as F
from torch import topk
from torch import topk as pick
import triton.language as tl
import operator
f = torch.topk
x = torch.empty(8)
torch.topk(x, 2)
torch.Tensor.topk(x, 2)
x.topk(2)
t.topk(x, 2)
torch.ops.aten.topk(x, 2)
torch.ops.aten.topk.default(x, 2)
getattr(torch, "topk")(x, 2)
getattr(torch, "top" + "k")(x, 2)
f(x, 2)
pick(x, 2)
x.sort()
torch.ops.aten._softmax(x, 0, False)
F.softmax(x, dim=0)
operator.methodcaller("topk", 2)(x)
torch.ops.aten.__getattr__("topk")
tl.sort(x)
y = x @ x
)py");
  const auto hits = scan({"topk", "sort", "softmax", "matmul"});
  std::vector<int> op_lines = {4, 5, 8, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 23, 24, 25, 26};
  for (int l : op_lines) EXPECT_TRUE(caught(hits, "solution.py", l, "forbidden_op")) << "line " << l << listing(hits);
  // A name built at run time cannot be checked: the access itself is the finding.
  EXPECT_TRUE(caught(hits, "solution.py", 17, "dynamic_attribute")) << listing(hits);
  EXPECT_TRUE(caught(hits, "solution.py", 24, "dynamic_attribute")) << listing(hits);  // __getattr__
  for (int l : {1, 2, 3, 6, 7, 9}) EXPECT_FALSE(caught(hits, "solution.py", l, "forbidden_op")) << l << listing(hits);
}

TEST_F(PythonScan, OpsTheProblemDoesNotForbidPass) {
  write("solution.py", R"py(import torch
import torch.nn.functional as F
def run(state, inputs, outputs):
    x, = inputs
    outputs[0].copy_(F.gelu(x) + torch.exp(x).sum(dim=-1, keepdim=True) + x.max(dim=-1).values[:, None])
    torch.cuda.synchronize()
)py");
  EXPECT_TRUE(scan({"softmax"}).empty());
  // The same source where gelu is forbidden: caught, on its line.
  expect_exactly(scan({"gelu"}), "solution.py", {5}, "forbidden_op");
}

TEST_F(PythonScan, ImportsOutsideTheAllowListAreCaught) {
  write("solution.py", R"py(import os
import sys
import subprocess
import threading
import multiprocessing
import concurrent.futures
import asyncio
import ctypes
import time
import gc
import inspect
import socket
import signal
import pickle
import io
import pathlib
import builtins
from os import path
import numpy as np
from ..outside import helper
from torch import *
import torch.multiprocessing as tmp
from torch.utils.data import DataLoader
import math, functools, itertools, typing, dataclasses, enum, numbers, operator, collections, abc
import torch.nn.functional, triton.language
)py");
  const auto hits = scan();
  for (int l = 1; l <= 21; ++l) EXPECT_TRUE(caught(hits, "solution.py", l, "forbidden_import")) << l << listing(hits);
  EXPECT_TRUE(caught(hits, "solution.py", 22, "thread_or_process")) << listing(hits);
  EXPECT_TRUE(caught(hits, "solution.py", 23, "thread_or_process")) << listing(hits);
  EXPECT_FALSE(caught(hits, "solution.py", 24, "forbidden_import")) << listing(hits);
  EXPECT_FALSE(caught(hits, "solution.py", 25, "forbidden_import")) << listing(hits);
}

TEST_F(PythonScan, DynamicImportAndCodeAreCaught) {
  write("solution.py", R"py(m = __import__("os")
import importlib
exec("import os")
eval("1 + 1")
code = compile("x = 1", "<s>", "exec")
b = __builtins__
m = torch.import_module("os")
name = "importlib"
)py");
  const auto hits = scan();
  for (int l : {1, 3, 4, 5, 7, 8}) EXPECT_TRUE(caught(hits, "solution.py", l, "dynamic_code")) << l << listing(hits);
  EXPECT_TRUE(caught(hits, "solution.py", 2, "forbidden_import")) << listing(hits);
  EXPECT_TRUE(caught(hits, "solution.py", 6, "dynamic_attribute")) << listing(hits);
}

// Kernels Inductor generates from torch operators would land in the Triton cache that kernel
// provenance reads as the solution's own (eval/jit_kernels.h): torch.compile and its machinery
// are refused in every spelling, as is compiling native code at run time.
TEST_F(PythonScan, TorchCompileAndRunTimeNativeCodeAreCaught) {
  write("solution.py", R"py(import torch
from torch import compile as c
import torch._inductor.config
fast = torch.compile(lambda x: x * 2)
from torch.utils.cpp_extension import load_inline
import torch._dynamo
)py");
  const auto hits = scan();
  for (int l : {2, 3, 4, 5, 6}) EXPECT_TRUE(caught(hits, "solution.py", l, "dynamic_code")) << l << listing(hits);
}

TEST_F(PythonScan, DynamicAttributeAccessIsCaughtAndLiteralOnesAreChecked) {
  write("solution.py", R"py(import torch
name = "graph"
class State:
    pass
state = State()
getattr(state, name)
setattr(state, name, 1)
delattr(state, name)
g = globals()
v = vars(torch)
locals()["x"] = 1
torch.__dict__["cuda"]
s = ().__class__.__bases__[0].__subclasses__()
fn = setup.__globals__
mods = [torch]
frame = err.__traceback__.tb_frame.f_back
state.graph = getattr(state, "graph", None)
)py");
  const auto hits = scan();
  expect_exactly(hits, "solution.py", {6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, "dynamic_attribute");
}

// Aliases are followed to a bound: a name whose paths would double at every step is reported
// rather than followed (and the scan answers quickly), so decoys cannot push the real one out.
TEST_F(PythonScan, ANameThatStandsForTooManyPathsIsReported) {
  write("solution.py", "import torch\na = torch\nfor i in range(3):\n    a = (a.x, a.y)\na = torch.cuda\n");
  expect_exactly(scan(), "solution.py", {4}, "dynamic_attribute");
}

TEST_F(PythonScan, MonkeyPatchingAnImportedModuleIsCaught) {
  write("solution.py", R"py(import torch
import triton
import torch.nn.functional as F
import kit
torch.cuda.synchronize = lambda: None
torch.Tensor.add = None
triton.language.core.x = 1
F.gelu = None
cuda = torch.cuda
cuda.current_stream = None
setattr(torch.cuda, "Stream", None)
del torch.Tensor.add
torch.backends.cuda.matmul.allow_tf32 = True
for torch.x in range(3):
    pass
torch.ops.aten.x += 1
kit.CACHE = {}
class State:
    pass
state = State()
state.value = torch.zeros(1)
mods = [torch.cuda]
mods[0].synchronize = None
for m in (torch.cuda, torch.Tensor):
    m.add = None
)py");
  write("kit.py", "CACHE = None\n");
  expect_exactly(scan(), "solution.py", {5, 6, 7, 8, 10, 11, 12, 13, 14, 16, 23, 25}, "monkey_patch");
}

TEST_F(PythonScan, KbenchsOwnModuleIsCaughtInAnySpelling) {
  write("solution.py", R"py(import kbench
from kbench.bridge import buffers
import torch
name = "kbench"
x = torch.kbench
)py");
  const auto hits = scan();
  for (int l : {1, 2, 4, 5}) EXPECT_TRUE(caught(hits, "solution.py", l, "monkey_patch")) << l << listing(hits);
}

TEST_F(PythonScan, TimersFilesThreadsAndProcessesAreCaught) {
  write("solution.py", R"py(import torch
import triton
start = torch.cuda.Event(enable_timing=True)
ms = start.elapsed_time(start)
t = triton.testing.do_bench(lambda: None)
data = open("expected.bin", "rb").read()
w = torch.load("weights.pt")
torch.save(w, "out.pt")
s = torch.UntypedStorage.from_file("x", False, 4)
loader = torch.utils.data.DataLoader([], num_workers=2)
p = torch.multiprocessing.Process(target=print)
torch.cuda.synchronize()
from torch.cuda import Event as CudaEvent
from triton.testing import do_bench
from torch import load
)py");
  const auto hits = scan();
  for (int l : {3, 4, 5, 13, 14}) EXPECT_TRUE(caught(hits, "solution.py", l, "timer")) << l << listing(hits);
  for (int l : {6, 7, 8, 9, 15}) EXPECT_TRUE(caught(hits, "solution.py", l, "file_access")) << l << listing(hits);
  for (int l : {10, 11}) EXPECT_TRUE(caught(hits, "solution.py", l, "thread_or_process")) << l << listing(hits);
  for (const auto& h : hits) EXPECT_NE(h.line, 12) << "torch.cuda.synchronize is allowed: " << h.rule;
}

// A deck solution imports its kits' modules (target/python_solution.h, python_kit_modules), which
// the build puts beside its own files: named to the scan, they are its own; unnamed (an agent's
// solution, which gets no kit), the same import is a forbidden one.
TEST_F(PythonScan, KitModulesAreTheSolutionsOwnOnlyWhenNamed) {
  write("solution.py", "import softmax_triton\nimport torch_baselines as tb\n");
  const auto as_deck = scan({}, {"softmax_triton", "torch_baselines"});
  EXPECT_TRUE(as_deck.empty()) << listing(as_deck);
  const auto as_agent = scan();
  EXPECT_TRUE(caught(as_agent, "solution.py", 1, "forbidden_import")) << listing(as_agent);
  EXPECT_TRUE(caught(as_agent, "solution.py", 2, "forbidden_import")) << listing(as_agent);
  // A kit module cannot make a standard module the solution's own.
  write("solution.py", "import os\n");
  EXPECT_TRUE(caught(scan({}, {"os"}), "solution.py", 1, "forbidden_import"));
}

// A file of the solution's own named like a standard module does not make the import its own:
// `import os` gets the interpreter's os (loaded at start-up, taken from sys.modules), whatever
// os.py the folder holds.
TEST_F(PythonScan, AnOwnFileNamedLikeAStandardModuleDoesNotOpenIt) {
  write("os.py", "X = 1\n");
  write("subprocess.py", "Y = 2\n");
  write("solution.py", "import os\nimport subprocess\nimport sys\n");
  write("sys.py", "Z = 3\n");
  const auto hits = scan();
  for (int l : {1, 2, 3}) EXPECT_TRUE(caught(hits, "solution.py", l, "forbidden_import")) << l << listing(hits);
}

TEST_F(PythonScan, EveryPythonFileOfTheFolderIsScannedAndNamed) {
  write("solution.py", "import kit\nfrom pkg import helpers\nimport fast\nimport native\n");
  write("kit.py", "import torch\n\n\ndef f(x):\n    return x.topk(2)\n");
  write("pkg/helpers.py", "import os\n");
  // Compiled extensions are not the folder's own readable code: importing them is forbidden.
  write("fast.cpython-311-x86_64-linux-gnu.so", "\x7f" "ELF");
  write("native/__init__.cpython-311-x86_64-linux-gnu.so", "\x7f" "ELF");
  const auto hits = scan({"topk"});
  EXPECT_TRUE(caught(hits, "solution.py", 3, "forbidden_import")) << listing(hits);
  EXPECT_TRUE(caught(hits, "solution.py", 4, "forbidden_import")) << listing(hits);
  EXPECT_TRUE(caught(hits, "kit.py", 5, "forbidden_op")) << listing(hits);
  EXPECT_TRUE(caught(hits, (fs::path("pkg") / "helpers.py").string(), 1, "forbidden_import")) << listing(hits);
  EXPECT_FALSE(caught(hits, "solution.py", 1, "forbidden_import")) << listing(hits);  // its own modules
  EXPECT_FALSE(caught(hits, "solution.py", 2, "forbidden_import")) << listing(hits);
  // The excerpt is the offending line, trimmed.
  for (const auto& h : hits) {
    if (h.file == "kit.py") {
      EXPECT_EQ(h.excerpt, "return x.topk(2)");
    }
  }
}

TEST_F(PythonScan, ASyntaxErrorIsTheSolutionsFaultAndNamesFileAndLine) {
  write("solution.py", "import torch\n\ndef run(state, inputs, outputs)\n    pass\n");
  try {
    scan();
    ADD_FAILURE() << "a file that does not parse was scanned";
  } catch (const PythonScanRefused& e) {
    EXPECT_TRUE(e.solution_fault);
    EXPECT_NE(std::string(e.what()).find("solution.py:3"), std::string::npos) << e.what();
  }
}

TEST_F(PythonScan, AMissingInterpreterIsAClearRefusal) {
  write("solution.py", "import torch\n");
  PythonScanOptions o;
  o.python = dir_.path() / "no-such-python3";
  o.sandbox = false;
  try {
    kb::python_scan(dir_.path(), o);
    ADD_FAILURE() << "scanned without an interpreter";
  } catch (const PythonScanRefused& e) {
    EXPECT_FALSE(e.solution_fault);
    EXPECT_NE(std::string(e.what()).find("no-such-python3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

// A stand-in interpreter (a shell script) that crashes, answers garbage or hangs: each a refusal
// naming what happened, never a pass.
TEST_F(PythonScan, AScannerThatFailsIsARefusal) {
  write("solution.py", "import torch\n");
  TempDir bin("python-scan-bin");
  fs::create_directories(bin.path());
  auto interpreter = [&](const std::string& name, const std::string& body) {
    const fs::path p = bin.path() / name;
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    fs::permissions(p, fs::perms::owner_all);
    return p;
  };
  PythonScanOptions o;
  o.sandbox = false;
  o.python = interpreter("crashing", "echo 'Traceback: MemoryError' >&2; exit 1");
  try {
    kb::python_scan(dir_.path(), o);
    ADD_FAILURE() << "a crashed scan passed";
  } catch (const PythonScanRefused& e) {
    EXPECT_FALSE(e.solution_fault);
    EXPECT_NE(std::string(e.what()).find("exit code 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("MemoryError"), std::string::npos) << e.what();
  }
  o.python = interpreter("lying", "echo '{\"hits\": \"none\"}'; exit 0");
  EXPECT_THROW(kb::python_scan(dir_.path(), o), PythonScanRefused);
  o.python = interpreter("hanging", "exec sleep 30");
  o.timeout = std::chrono::seconds(1);
  try {
    kb::python_scan(dir_.path(), o);
    ADD_FAILURE() << "a scan that never answered passed";
  } catch (const PythonScanRefused& e) {
    EXPECT_FALSE(e.solution_fault);
    EXPECT_NE(std::string(e.what()).find("ran past 1 s"), std::string::npos) << e.what();
  }
}

TEST_F(PythonScan, ItsHitsJoinTheRegexScansFinding) {
  write("solution.py", "import torch\nimport os\n\n\ndef run(state, inputs, outputs):\n    outputs[0].copy_(inputs[0].topk(1).values)\n");
  PythonScanOptions o;
  o.forbidden_torch = {"topk"};
  o.sandbox = false;
  const kb::Finding f = kb::scan_sources(dir_.path(), {"cudnn"}, o);
  ASSERT_EQ(f.reason, kb::Reason::forbidden_source) << f.message;
  ASSERT_EQ(f.evidence.size(), 2u) << f.message;
  EXPECT_EQ(f.evidence[0].file, "solution.py");
  EXPECT_EQ(f.evidence[0].line, 2);
  EXPECT_EQ(f.evidence[1].line, 6);
  EXPECT_NE(f.message.find("solution.py:6: forbidden_op"), std::string::npos) << f.message;
  // A folder that does not parse is the build's error, naming file and line.
  write("solution.py", "def run(:\n");
  const kb::Finding bad = kb::scan_sources(dir_.path(), {}, o);
  EXPECT_EQ(bad.reason, kb::Reason::build_error);
  EXPECT_NE(bad.message.find("solution.py:1"), std::string::npos) << bad.message;
  // Without Python sources the interpreter is never asked (a C++ folder on a machine without python3).
  fs::remove(dir_.path() / "solution.py");
  write("solution.cu", "__global__ void k() {}\n");
  o.python = dir_.path() / "no-such-python3";
  EXPECT_EQ(kb::scan_sources(dir_.path(), {}, o).reason, kb::Reason::none);
}

// In Python `//` is floor division, not a comment: the regex scan reads a .py file whole, so
// nothing after it on the line is hidden from the tampering patterns.
TEST_F(PythonScan, TheRegexScanDoesNotTakeFloorDivisionForAComment) {
  write("solution.py", "half = 7 // 2; where = \"/proc/self/mem\"\n");
  const auto hits = kb::static_scan(dir_.path(), {});
  ASSERT_EQ(hits.size(), 1u) << listing(hits);
  EXPECT_EQ(hits[0].line, 1);
  EXPECT_NE(hits[0].rule.find("/proc"), std::string::npos) << hits[0].rule;
  // A C++ file keeps its comments out of the scan, as before.
  write("kernel.cu", "int half = 7; // see /proc/self/maps\n");
  EXPECT_EQ(kb::static_scan(dir_.path(), {}).size(), 1u);
}

TEST_F(PythonScan, SandboxedScanFindsTheSame) {
  if (!kb::probe_worker_sandbox().ok) GTEST_SKIP() << "no working bubblewrap sandbox here";
  write("solution.py", "import torch\nimport subprocess\ny = torch.topk\n");
  write("kit.py", kHonestKit);
  PythonScanOptions o;
  o.forbidden_torch = {"topk"};
  const auto sandboxed = kb::python_scan(dir_.path(), o);
  EXPECT_EQ(listing(sandboxed), listing(scan({"topk"})));
  EXPECT_TRUE(caught(sandboxed, "solution.py", 2, "forbidden_import")) << listing(sandboxed);
  EXPECT_TRUE(caught(sandboxed, "solution.py", 3, "forbidden_op")) << listing(sandboxed);
}

// The scanner kbench runs is the one in the source tree (cmake/EmbedText.cmake keeps them equal).
TEST(PythonScanScript, TheBinaryCarriesTheSourceTreesScript) {
  std::ifstream in(fs::path(KBENCH_SOURCE_DIR) / "src/eval/python_scan.py", std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(std::string(kb::python_scan_script()), text.str());
}

// The deck's problems name the torch operations that would do their work (the libraries their
// policy.forbidden keeps from C++ solutions, or the whole problem where torch has it as one op),
// so that a Python solution meets the same rule as a C++ one (docs/problem-format.md).
TEST(PythonScanDeck, LibraryOpsAreForbiddenInTorchToo) {
  const fs::path problems = fs::path(KBENCH_SOURCE_DIR) / "problems";
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"softmax", "softmax"},       {"kahan_softmax", "softmax"}, {"l1_softmax", "softmax"},
      {"topk", "topk"},             {"topk", "sort"},             {"fp8_gemm", "matmul"},
      {"fp8_gemm", "scaled_mm"},    {"w4a16_gemm", "matmul"},     {"paged_attention", "scaled_dot_product_attention"},
      {"paged_attention", "softmax"}, {"moe_swiglu", "matmul"},   {"kda", "matmul"},
      {"l1_matmul", "matmul"},      {"l1_conv2d", "conv2d"},      {"l1_max_pool2d", "max_pool2d"},
      {"l1_gelu", "gelu"},          {"l1_layernorm", "layer_norm"}, {"l1_rmsnorm", "rms_norm"},
      {"l1_cross_entropy", "cross_entropy"}, {"l2_conv3d_softmax_maxpool", "conv3d"},
      {"l2_conv3d_softmax_maxpool", "softmax"}, {"l2_linear_swish_bias_groupnorm", "group_norm"}};
  for (const auto& [problem, op] : expected) {
    const kb::Problem p = kb::load_problem(problems / problem);
    EXPECT_NE(std::find(p.forbidden_torch.begin(), p.forbidden_torch.end(), op), p.forbidden_torch.end())
        << problem << " does not forbid torch's " << op;
  }
}

// Every level 1 and 2 problem of the deck loads with its list and has one, but l1_sum_dim: its
// operation, sum, is also triton.language's own reduction (tl.sum), which a rule by name cannot
// tell from torch.sum.
TEST(PythonScanDeck, EveryLevelOneAndTwoProblemForbidsItsTorchOps) {
  const auto deck = kb::load_deck(fs::path(KBENCH_SOURCE_DIR) / "problems");
  size_t checked = 0;
  for (const auto& p : deck) {
    if (p.name.rfind("l1_", 0) != 0 && p.name.rfind("l2_", 0) != 0) continue;
    ++checked;
    if (p.name == "l1_sum_dim") continue;
    EXPECT_FALSE(p.forbidden_torch.empty()) << p.name << " has no policy.forbidden_torch";
  }
  EXPECT_GE(checked, 30u);  // 15 + 15 in the deck today (docs/deck.md)
}
