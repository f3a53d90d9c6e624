// kbench's Python bridge (src/python/bridge.cpp) called through the C ABI directly, as the worker
// calls it, on the host: a Python solution is built into a cache entry (target/python_solution.h),
// its libsolution.so loaded, and kb_setup / kb_run / kb_teardown called on kbench-owned buffers.
// Proves what the judge cannot see from outside: the tensors alias kbench's buffers (no copy),
// the problem reaches setup as documented (docs/python-solutions.md), and a raised exception is a
// non-zero return with its traceback on stderr. Skipped where Python solutions are unavailable,
// except in CI (scripts/setup installs python3-dev and python3-torch there).
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "kbench/solution.h"
#include "scratch_dir.h"
#include "eval/static_scan.h"
#include "target/python_solution.h"

namespace fs = std::filesystem;

namespace {

// A solution folder under `root` holding solution.py = `source` (and `extra` files).
fs::path write_solution(const fs::path& root, const std::string& source,
                        const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  fs::create_directories(root);
  std::ofstream(root / "solution.py") << source;
  for (const auto& [name, text] : extra) std::ofstream(root / name) << text;
  return root;
}

bool python_required() { return std::getenv("CI") != nullptr; }

// The library's three entry points.
struct Bridge {
  void* handle = nullptr;
  decltype(&kb_setup) setup = nullptr;
  decltype(&kb_run) run = nullptr;
  decltype(&kb_teardown) teardown = nullptr;
  explicit Bridge(const fs::path& library) {
    handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
    setup = reinterpret_cast<decltype(setup)>(dlsym(handle, "kb_setup"));
    run = reinterpret_cast<decltype(run)>(dlsym(handle, "kb_run"));
    teardown = reinterpret_cast<decltype(teardown)>(dlsym(handle, "kb_teardown"));
  }
  // Never dlclose'd: an embedded CPython is not unloaded (the worker does not unload it either).
};

DLTensor tensor_of(void* data, DLDataType type, std::vector<int64_t>& shape) {
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int>(shape.size());
  t.dtype = type;
  t.shape = shape.data();
  return t;
}

class PythonBridge : public testing::Test {
 protected:
  void SetUp() override {
    if (const auto why = kb::python_unavailable_reason("host")) {
      if (python_required()) FAIL() << "Python solutions unavailable in CI: " << *why;
      GTEST_SKIP() << "Python solutions unavailable here: " << *why;
    }
    root_ = kb::test::scratch_dir("python-bridge");
  }
  void TearDown() override {
    std::error_code ec;
    if (!root_.empty()) fs::remove_all(root_, ec);
  }
  // Builds `source` and loads it (each test is its own process under ctest: one interpreter each).
  Bridge build(const std::string& source, const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    const fs::path dir = write_solution(root_ / "solution", source, extra);
    const kb::BuildResult b = kb::build_python_solution(dir, "host", root_ / "build");
    EXPECT_TRUE(b.ok) << b.log;
    Bridge bridge(b.library);
    EXPECT_NE(bridge.handle, nullptr) << dlerror();
    return bridge;
  }
  fs::path root_;
};

// The bridge is loaded as a solution's library, so the evaluator's symbol check reads it: it may
// export the ABI's three names and nothing else (src/python/bridge.map; on the H100 machine's
// toolchain the C++ runtime's __cxa_* names leaked out before the version script).
TEST(PythonBridgeLibrary, ExportsOnlyTheSolutionAbi) {
  const fs::path bridge = kb::python_bridge_library();
  if (bridge.empty()) {
    if (python_required()) FAIL() << "no Python bridge in this build";
    GTEST_SKIP() << "kbench was built without the Python bridge";
  }
  std::vector<std::string> names = kb::exported_symbols(bridge);
  std::erase_if(names, [](const std::string& n) { return kb::symbol_violation(n).empty() && n.rfind("kb_", 0) != 0; });
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"kb_run", "kb_setup", "kb_teardown"}));
  EXPECT_FALSE(kb::check_exported_symbols(bridge).failed());
}

// setup sees the problem as documented; run's tensors are kbench's buffers (same address, writes
// land in the C++ vector); teardown runs; the state object travels from setup to run.
TEST_F(PythonBridge, TensorsAliasKbenchBuffersAndTheProblemReachesSetup) {
  Bridge b = build(R"PY(
import torch
import helper   # a second module of the solution's own, beside solution.py

def setup(problem):
    assert problem.name == "bridge_test", problem.name
    assert list(problem.dims.items()) == [("rows", 2), ("cols", 3)], problem.dims
    assert problem.device == "cpu"
    (w,) = problem.weights
    assert w.dtype == torch.float32 and tuple(w.shape) == (3,)
    return {"w": w, "calls": 0}

def run(state, inputs, outputs):
    x, = inputs
    y, where = outputs
    state["calls"] += 1
    helper.scaled_sum(x, state["w"], out=y)
    # The addresses the tensors see, for the test to compare with its own buffers.
    where[0] = x.data_ptr()
    where[1] = y.data_ptr()
    where[2] = state["calls"]
)PY",
                   {{"helper.py", "import torch\n\ndef scaled_sum(x, w, out):\n    torch.mul(x, w, out=out)\n"}});
  ASSERT_TRUE(b.setup && b.run && b.teardown);

  std::vector<float> w = {1.0f, 10.0f, 100.0f};
  std::vector<int64_t> w_shape = {3};
  DLTensor weights = tensor_of(w.data(), DLDataType{kDLFloat, 32, 1}, w_shape);
  const char* dim_names[] = {"rows", "cols"};
  const int64_t dim_values[] = {2, 3};
  kb_problem p{"bridge_test", 2, dim_names, dim_values, &weights, 1};
  void* state = nullptr;
  ASSERT_EQ(b.setup(&p, &state), 0);

  std::vector<float> x = {1, 2, 3, 4, 5, 6}, y(6, -1.0f);
  std::vector<double> where(3, 0.0);
  std::vector<int64_t> xy_shape = {2, 3}, where_shape = {3};
  DLTensor in = tensor_of(x.data(), DLDataType{kDLFloat, 32, 1}, xy_shape);
  DLTensor outs[2] = {tensor_of(y.data(), DLDataType{kDLFloat, 32, 1}, xy_shape),
                      tensor_of(where.data(), DLDataType{kDLFloat, 64, 1}, where_shape)};
  kb_call c{&in, 1, outs, 2, nullptr};
  for (int call = 1; call <= 2; ++call) {
    ASSERT_EQ(b.run(state, &c), 0);
    EXPECT_EQ(where[0], static_cast<double>(reinterpret_cast<uintptr_t>(x.data())));
    EXPECT_EQ(where[1], static_cast<double>(reinterpret_cast<uintptr_t>(y.data())));
    EXPECT_EQ(where[2], call);  // the state object is the one setup returned, kept across calls
  }
  EXPECT_EQ(y, (std::vector<float>{1, 20, 300, 4, 50, 600}));
  b.teardown(state);
}

// An exception is the solution's error: a non-zero return and its traceback on stderr (the
// worker's log), in setup and in run alike.
TEST_F(PythonBridge, ExceptionsAreNonZeroReturnsWithTheirTraceback) {
  Bridge b = build(R"PY(
def setup(problem):
    if problem.dims["n"] == 0:
        raise ValueError("setup refuses n = 0")
    return None

def run(state, inputs, outputs):
    raise RuntimeError("run failed on purpose")
)PY");
  ASSERT_TRUE(b.setup && b.run && b.teardown);
  const char* names[] = {"n"};
  int64_t n = 0;
  kb_problem p{"bridge_test", 1, names, &n, nullptr, 0};
  void* state = nullptr;
  testing::internal::CaptureStderr();
  EXPECT_NE(b.setup(&p, &state), 0);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("solution.setup raised"), std::string::npos) << err;
  EXPECT_NE(err.find("ValueError: setup refuses n = 0"), std::string::npos) << err;

  n = 1;
  ASSERT_EQ(b.setup(&p, &state), 0);
  std::vector<float> y(4);
  std::vector<int64_t> shape = {4};
  DLTensor out = tensor_of(y.data(), DLDataType{kDLFloat, 32, 1}, shape);
  kb_call c{nullptr, 0, &out, 1, nullptr};
  testing::internal::CaptureStderr();
  EXPECT_NE(b.run(state, &c), 0);
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("Traceback"), std::string::npos) << err;
  EXPECT_NE(err.find("RuntimeError: run failed on purpose"), std::string::npos) << err;
  b.teardown(state);
}

// A solution.py without run is refused at setup, naming what is missing.
TEST_F(PythonBridge, AModuleWithoutRunIsRefusedByName) {
  Bridge b = build("def setup(problem):\n    return None\n");
  ASSERT_TRUE(b.setup);
  kb_problem p{"bridge_test", 0, nullptr, nullptr, nullptr, 0};
  void* state = nullptr;
  testing::internal::CaptureStderr();
  EXPECT_NE(b.setup(&p, &state), 0);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("defines no `run`"), std::string::npos) << err;
}

// The build: a content-addressed entry (the same folder twice is a hit; a changed file another
// entry) holding the bridge, the .py files and bridge.conf; a solution.toml is refused by name.
// A deck solution imports its kits' modules (target/solution_kit.h): the build puts the problem's
// kit (softmax_triton.py) and the deck's (torch_baselines.py) beside its own files. A copy of the
// same folder outside the deck (an agent's) gets none.
TEST_F(PythonBridge, ADeckSolutionsBuildTakesItsKitModulesAndAnAgentsDoesNot) {
  const fs::path deck_solution = fs::path(KBENCH_SOURCE_DIR) / "problems/softmax/solutions/triton-softmax";
  const kb::BuildResult deck = kb::build_python_solution(deck_solution, "host", root_ / "build");
  ASSERT_TRUE(deck.ok) << deck.log;
  const fs::path src = deck.library.parent_path() / "python" / "src";
  EXPECT_TRUE(fs::is_regular_file(src / "solution.py"));
  EXPECT_TRUE(fs::is_regular_file(src / "softmax_triton.py"));
  EXPECT_TRUE(fs::is_regular_file(src / "torch_baselines.py"));
  const std::vector<std::string> modules = kb::python_kit_modules(deck_solution);
  for (const char* m : {"softmax_triton", "softmax_torch", "torch_baselines"})
    EXPECT_NE(std::find(modules.begin(), modules.end(), m), modules.end()) << m;
  EXPECT_EQ(std::find(modules.begin(), modules.end(), "solution"), modules.end()) << "its own file is not a kit's";

  const fs::path copy = root_ / "agent" / "triton-softmax";
  fs::create_directories(copy);
  fs::copy_file(deck_solution / "solution.py", copy / "solution.py");
  const kb::BuildResult agent = kb::build_python_solution(copy, "host", root_ / "build");
  ASSERT_TRUE(agent.ok) << agent.log;
  EXPECT_FALSE(fs::exists(agent.library.parent_path() / "python" / "src" / "softmax_triton.py"));
  EXPECT_TRUE(kb::python_kit_modules(copy).empty());
}

TEST_F(PythonBridge, BuildIsACacheEntryKeyedByTheFolder) {
  const fs::path dir = write_solution(root_ / "cached", "def setup(p):\n    return None\n\ndef run(s, i, o):\n    pass\n",
                                      {{"util.py", "X = 1\n"}});
  const kb::BuildResult first = kb::build_python_solution(dir, "host", root_ / "build");
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cached);
  EXPECT_TRUE(fs::is_regular_file(first.library.parent_path() / "python" / "src" / "util.py"));
  std::ifstream conf(first.library.parent_path() / "python" / "bridge.conf");
  std::string conf_text((std::istreambuf_iterator<char>(conf)), std::istreambuf_iterator<char>());
  EXPECT_NE(conf_text.find("device=cpu"), std::string::npos) << conf_text;
  EXPECT_NE(conf_text.find("interpreter=" + kb::configured_python().string()), std::string::npos) << conf_text;

  const kb::BuildResult again = kb::build_python_solution(dir, "host", root_ / "build");
  ASSERT_TRUE(again.ok);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.library, first.library);

  std::ofstream(dir / "util.py") << "X = 2\n";
  const kb::BuildResult changed = kb::build_python_solution(dir, "host", root_ / "build");
  ASSERT_TRUE(changed.ok);
  EXPECT_NE(changed.library, first.library);

  std::ofstream(dir / "solution.toml") << "flags = [\"-O2\"]\n";
  const kb::BuildResult refused = kb::build_python_solution(dir, "host", root_ / "build");
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.log.find("solution.toml"), std::string::npos) << refused.log;
}

}  // namespace

namespace {

// An fp8 tensor (DLPack code 10, kDLFloat8_e4m3fn) arrives as torch.float8_e4m3fn where the torch
// has that type (torch >= 2.1), else the call fails naming the missing type, never a crash.
TEST_F(PythonBridge, Fp8TensorsArriveAsTorchFloat8OrFailByName) {
  Bridge b = build(R"PY(
import torch

def setup(problem):
    return None

def run(state, inputs, outputs):
    y, = outputs
    assert y.dtype == torch.float8_e4m3fn, y.dtype
    y.view(torch.uint8).fill_(0x38)   # 1.0 in E4M3
)PY");
  ASSERT_TRUE(b.setup && b.run && b.teardown);
  kb_problem p{"bridge_test", 0, nullptr, nullptr, nullptr, 0};
  void* state = nullptr;
  ASSERT_EQ(b.setup(&p, &state), 0);
  std::vector<uint8_t> y(8, 0);
  std::vector<int64_t> shape = {8};
  DLTensor out = tensor_of(y.data(), DLDataType{KB_DL_FLOAT8_E4M3FN, 8, 1}, shape);
  kb_call c{nullptr, 0, &out, 1, nullptr};
  testing::internal::CaptureStderr();
  const int rc = b.run(state, &c);
  const std::string err = testing::internal::GetCapturedStderr();
  if (rc == 0) {
    EXPECT_EQ(y, std::vector<uint8_t>(8, 0x38));
  } else {
    EXPECT_NE(err.find("has no torch.float8_e4m3fn"), std::string::npos) << err;
    EXPECT_EQ(y, std::vector<uint8_t>(8, 0));
  }
  b.teardown(state);
}

}  // namespace
