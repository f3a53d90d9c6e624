// kbench's Python bridge: the C ABI of kbench/solution.h implemented by a Python solution
// (solution.py; docs/python-solutions.md). A Python solution is "built" into a cache entry holding a
// copy of this library as libsolution.so and, beside it, python/ with the solution's .py files
// (python/src) and python/bridge.conf (the interpreter and the device); the worker loads it as it
// loads any solution's library, so the evaluator, worker, timing and judging are those of C++.
//
//   kb_setup     starts an embedded CPython once (the configured interpreter's, so that a
//                virtualenv's site-packages are used), imports `solution` from python/src, wraps
//                the weights as torch tensors and calls solution.setup(problem).
//   kb_run       wraps this call's inputs and outputs as torch tensors that alias kbench's buffers
//                (DLPack, no copy) and calls solution.run(state, inputs, outputs), on cuda inside
//                torch.cuda.stream(torch.cuda.ExternalStream(c->stream)).
//   kb_teardown  calls solution.teardown(state) when the module defines it.
// An exception raised by the solution prints its traceback to stderr (the worker's log, whose tail
// the verdict quotes) and the entry returns 1.
//
// This file is kbench's own code, not the solution's: it is compiled with kbench and its bytes are
// part of every Python build's cache key (target/python_solution.h).
#include <Python.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kbench/solution.h"

namespace {

// What the build wrote beside this library (target/python_solution.cpp, write_bridge_config).
struct BridgeConfig {
  std::string folder;       // the folder of libsolution.so
  std::string interpreter;  // the python executable whose prefix and site-packages are used
  std::string device;       // "cpu" or "cuda": the torch device of the tensors
  std::string error;        // why the configuration could not be read, else empty
};

BridgeConfig read_config() {
  BridgeConfig c;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&kb_setup), &info) == 0 || info.dli_fname == nullptr) {
    c.error = "the bridge cannot tell where it was loaded from (dladdr failed)";
    return c;
  }
  c.folder = info.dli_fname;
  c.folder = c.folder.substr(0, c.folder.find_last_of('/') + 1);
  const std::string conf = c.folder + "python/bridge.conf";
  std::ifstream in(conf);
  if (!in) {
    c.error = "the bridge's configuration " + conf + " is missing (the cache entry is incomplete)";
    return c;
  }
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "interpreter") c.interpreter = value;
    if (key == "device") c.device = value;
  }
  if (c.interpreter.empty() || (c.device != "cpu" && c.device != "cuda"))
    c.error = "the bridge's configuration " + conf + " names no interpreter or no device (cpu or cuda)";
  return c;
}

// The helper module the bridge calls through: kept in Python because what it does (torch's DLPack
// import, the stream context, the traceback) is Python's to do. It is kbench's code, installed as
// the module _kbench_bridge before the solution is imported.
constexpr const char* kHelperSource = R"PY(
import sys, traceback, types

# torch is imported here, in the first kb_setup, whether or not the solution imports it: the
# tensors of every call are torch's, and an import inside kb_run would load machine code after the
# worker's system-call filter forbids it (W^X).
import torch
import torch.utils.dlpack

def _report(what):
    # The traceback goes to stderr, the worker's log, whose tail the verdict quotes.
    print(f"[kbench python] {what} raised an exception:", file=sys.stderr)
    traceback.print_exc(file=sys.stderr)
    sys.stderr.flush()

def tensor(capsule, view_dtype):
    t = torch.utils.dlpack.from_dlpack(capsule)
    # 8-bit floats travel as uint8 (DLPack 0.6 and torch 1.x know no float8 code) and are
    # reinterpreted here when this torch has the type.
    if view_dtype:
        dtype = getattr(torch, view_dtype, None)
        if dtype is None:
            # torch.float8_e4m3fn and float8_e5m2 came with torch 2.1.
            raise TypeError(f"this torch ({torch.__version__}) has no torch.{view_dtype}, the problem's fp8 type")
        t = t.view(dtype)
    return t

def setup(module, name, dims, weights, device):
    problem = types.SimpleNamespace(name=name, dims=dims, weights=weights, device=device)
    if device == "cuda":
        # torch's CUDA state (it shares the device's primary context with kbench) made now, not
        # lazily at the first call's stream, when loading code is no longer allowed.
        torch.cuda.init()
        torch.cuda.current_stream()
    try:
        return True, module.setup(problem)
    except BaseException:
        _report("solution.setup")
        return False, None

_streams = {}

def run(module, state, inputs, outputs, stream_ptr):
    try:
        if stream_ptr:
            s = _streams.get(stream_ptr)
            if s is None:
                s = _streams[stream_ptr] = torch.cuda.ExternalStream(stream_ptr)
            with torch.cuda.stream(s):
                module.run(state, inputs, outputs)
        else:
            module.run(state, inputs, outputs)
        return True
    except BaseException:
        _report("solution.run")
        return False

def teardown(module, state):
    try:
        if hasattr(module, "teardown"):
            module.teardown(state)
    except BaseException:
        _report("solution.teardown")
)PY";

struct Interpreter {
  bool ready = false;
  std::string device;
  PyObject* helper = nullptr;  // _kbench_bridge
  PyObject* module = nullptr;  // the solution's `solution`
};

Interpreter& interpreter() {
  static Interpreter i;
  return i;
}

void report(const std::string& message) {
  std::fprintf(stderr, "[kbench python] %s\n", message.c_str());
  std::fflush(stderr);
}

// Prints the pending Python exception (if any) after `what`, and clears it.
void report_python_error(const std::string& what) {
  report(what);
  if (PyErr_Occurred()) PyErr_Print();
  std::fflush(stderr);
}

// Starts CPython once per process. Returns false (having said why on stderr) when it cannot.
bool start_interpreter() {
  Interpreter& it = interpreter();
  if (it.ready) return true;
  const BridgeConfig c = read_config();
  if (!c.error.empty()) return report(c.error), false;
  it.device = c.device;

  // The worker loads this library with RTLD_LOCAL, which keeps libpython's symbols out of the
  // global scope; the extension modules (torch's _C, the standard library's lib-dynload) are not
  // linked against libpython and find its symbols there. Promote it before anything is imported.
  Dl_info py{};
  if (dladdr(reinterpret_cast<void*>(&Py_InitializeFromConfig), &py) != 0 && py.dli_fname != nullptr)
    dlopen(py.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);

  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  // The interpreter's own executable as program name and executable: CPython's path calculation
  // finds a virtualenv's pyvenv.cfg beside it and so that environment's site-packages.
  PyStatus s = PyConfig_SetBytesString(&config, &config.program_name, c.interpreter.c_str());
  if (!PyStatus_Exception(s)) s = PyConfig_SetBytesString(&config, &config.executable, c.interpreter.c_str());
  // No PYTHON* variables of the caller's environment, no user site-packages, no .pyc files, and
  // no signal handlers: the worker's signals stay the worker's. The availability probe runs the
  // interpreter with -E -s for the same view (target/python_solution.cpp).
  config.use_environment = 0;
  config.user_site_directory = 0;
  config.write_bytecode = 0;
  config.install_signal_handlers = 0;
  config.parse_argv = 0;
  if (!PyStatus_Exception(s)) s = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(s)) {
    report(std::string("CPython could not start with the interpreter ") + c.interpreter + ": " +
           (s.err_msg ? s.err_msg : "unknown error"));
    return false;
  }

  // sys.path[0]: the solution's own files, so that `import solution` and its own modules resolve there.
  const std::string src = c.folder + "python/src";
  PyObject* sys_path = PySys_GetObject("path");  // borrowed
  PyObject* folder = PyUnicode_DecodeFSDefault(src.c_str());
  if (!sys_path || !folder || PyList_Insert(sys_path, 0, folder) != 0) {
    Py_XDECREF(folder);
    report_python_error("cannot put the solution's folder on sys.path");
    return false;
  }
  Py_DECREF(folder);

  PyObject* code = Py_CompileString(kHelperSource, "<kbench python bridge>", Py_file_input);
  it.helper = code ? PyImport_ExecCodeModule("_kbench_bridge", code) : nullptr;
  Py_XDECREF(code);
  if (!it.helper) return report_python_error("the bridge's helper module failed"), false;

  it.module = PyImport_ImportModule("solution");
  if (!it.module) return report_python_error("`import solution` failed"), false;
  for (const char* required : {"setup", "run"})
    if (!PyObject_HasAttrString(it.module, required))
      return report(std::string("solution.py defines no `") + required + "` (docs/python-solutions.md)"), false;
  it.ready = true;
  return true;
}

// A DLManagedTensor that points at kbench's buffer (never owning it) and owns its shape and strides.
struct ManagedView {
  DLManagedTensor managed{};
  std::vector<int64_t> shape, strides;
};

void delete_view(DLManagedTensor* m) { delete static_cast<ManagedView*>(m->manager_ctx); }

// A capsule that no consumer took still owns its view.
void delete_unconsumed_capsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;  // consumed: renamed "used_dltensor", torch owns it
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (m && m->deleter) m->deleter(m);
}

// A torch tensor aliasing `t` (a dense row-major DLTensor of kbench's), or nullptr with a Python
// exception set.
PyObject* torch_tensor(const DLTensor& t) {
  auto* v = new ManagedView;
  v->shape.assign(t.shape, t.shape + t.ndim);
  v->strides.assign(t.ndim, 1);
  for (int d = t.ndim - 2; d >= 0; --d) v->strides[d] = v->strides[d + 1] * v->shape[d + 1];
  v->managed.dl_tensor = t;
  v->managed.dl_tensor.shape = v->shape.data();
  // Explicit row-major strides: consumers differ in how they read NULL strides.
  v->managed.dl_tensor.strides = v->strides.data();
  const char* view_dtype = nullptr;
  if (t.dtype.code == KB_DL_FLOAT8_E4M3FN || t.dtype.code == KB_DL_FLOAT8_E5M2) {
    view_dtype = t.dtype.code == KB_DL_FLOAT8_E4M3FN ? "float8_e4m3fn" : "float8_e5m2";
    v->managed.dl_tensor.dtype = DLDataType{kDLUInt, 8, 1};
  }
  v->managed.manager_ctx = v;
  v->managed.deleter = delete_view;
  PyObject* capsule = PyCapsule_New(&v->managed, "dltensor", delete_unconsumed_capsule);
  if (!capsule) {
    delete v;
    return nullptr;
  }
  PyObject* tensor = PyObject_CallMethod(interpreter().helper, "tensor", "Oz", capsule, view_dtype);
  Py_DECREF(capsule);
  return tensor;
}

// A Python list of torch tensors aliasing `n` DLTensors, or nullptr with a Python exception set.
PyObject* tensor_list(const DLTensor* ts, int n) {
  PyObject* list = PyList_New(n);
  if (!list) return nullptr;
  for (int i = 0; i < n; ++i) {
    PyObject* t = torch_tensor(ts[i]);
    if (!t) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, t);  // steals t
  }
  return list;
}

// The state kb_setup hands back: the solution's own state object.
struct SolutionState {
  PyObject* state = nullptr;
};

// Holds the GIL for a scope: the interpreter is released between calls, so that a call from any
// thread of the worker's finds it free.
struct Gil {
  PyGILState_STATE s = PyGILState_Ensure();
  ~Gil() { PyGILState_Release(s); }
};

int setup_with_gil(const kb_problem* p, void** state) {
  Interpreter& it = interpreter();
  PyObject* dims = PyDict_New();
  for (int i = 0; dims && i < p->n_dims; ++i) {
    PyObject* v = PyLong_FromLongLong(p->dim_values[i]);
    if (!v || PyDict_SetItemString(dims, p->dim_names[i], v) != 0) Py_CLEAR(dims);
    Py_XDECREF(v);
  }
  PyObject* weights = dims ? tensor_list(p->weights, p->n_weights) : nullptr;
  PyObject* result = weights ? PyObject_CallMethod(it.helper, "setup", "OsOOs", it.module, p->name, dims, weights,
                                                   it.device.c_str())
                             : nullptr;
  Py_XDECREF(dims);
  Py_XDECREF(weights);
  if (!result) return report_python_error("the problem could not be handed to solution.setup"), 1;
  // (ok, state): ok is False when the solution raised (its traceback is already in the log).
  const bool ok = PyObject_IsTrue(PyTuple_GetItem(result, 0)) == 1;
  auto* s = new SolutionState;
  s->state = PyTuple_GetItem(result, 1);
  Py_XINCREF(s->state);
  Py_DECREF(result);
  if (!ok) {
    Py_XDECREF(s->state);
    delete s;
    return 1;
  }
  *state = s;
  return 0;
}

}  // namespace

extern "C" {

KB_EXPORT int kb_setup(const kb_problem* p, void** state) {
  if (!Py_IsInitialized()) {
    if (!start_interpreter()) return 1;
    // The first start leaves this thread holding the GIL; release it until a call takes it.
    PyEval_SaveThread();
  } else if (!interpreter().ready) {
    return 1;
  }
  Gil gil;
  return setup_with_gil(p, state);
}

KB_EXPORT int kb_run(void* state, const kb_call* c) {
  auto* s = static_cast<SolutionState*>(state);
  if (!s) return 1;
  Gil gil;
  Interpreter& it = interpreter();
  PyObject* inputs = tensor_list(c->inputs, c->n_inputs);
  PyObject* outputs = inputs ? tensor_list(c->outputs, c->n_outputs) : nullptr;
  PyObject* ok = outputs ? PyObject_CallMethod(it.helper, "run", "OOOOK", it.module, s->state, inputs, outputs,
                                               static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(c->stream)))
                         : nullptr;
  Py_XDECREF(inputs);
  Py_XDECREF(outputs);
  if (!ok) return report_python_error("the call's tensors could not be handed to solution.run"), 1;
  const bool passed = PyObject_IsTrue(ok) == 1;
  Py_DECREF(ok);
  return passed ? 0 : 1;
}

KB_EXPORT void kb_teardown(void* state) {
  auto* s = static_cast<SolutionState*>(state);
  if (!s) return;
  {
    Gil gil;
    PyObject* r = PyObject_CallMethod(interpreter().helper, "teardown", "OO", interpreter().module, s->state);
    if (!r) report_python_error("solution.teardown could not be called");
    Py_XDECREF(r);
    Py_XDECREF(s->state);
  }
  delete s;
}

}  // extern "C"
