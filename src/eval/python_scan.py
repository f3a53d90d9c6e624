# kbench's static scan of a Python solution (src/eval/python_scan.h, docs/threat-model.md).
#
# It parses every .py file of the solution folder with Python's own `ast` module (the exact Python
# grammar) and reports the constructs an honest solution never needs and a cheat does. It only
# parses: the solution is never imported, compiled to bytecode or run. kbench runs this script with
# the system python3 in isolated mode (-I -B -S) inside the build sandbox (no network, a read-only
# view), embedded in the kbench binary and passed with -c so that nothing on disk can stand in for it.
#
# Usage: python3 -I -B -S -c <this script> <solution folder> [--module=<kit module>...] [<forbidden torch name>...]
# Output: one JSON object on stdout. Exit 0 with {"hits": [{file, line, rule, detail, excerpt}...]}
# when every file parsed; exit 3 with {"refusal": "..."} when one did not (a syntax error names
# file:line). Any other outcome is a refusal on kbench's side too: the scan fails closed.
import ast
import json
import os
import re
import sys
import warnings

# Modules a solution may import (and their submodules): torch and Triton for the work, and the
# standard library's pure-computation modules. Everything else (os, sys, subprocess, threading,
# multiprocessing, time, gc, inspect, importlib, ctypes, io, pathlib, pickle, socket...) falls out.
ALLOWED_MODULES = {
    "torch", "triton", "math", "functools", "itertools", "typing", "dataclasses", "enum", "numbers",
    "operator", "collections", "abc", "__future__",
}

# The standard library's module names. A solution's own os.py does not make `import os` its own:
# os, sys and the other modules the interpreter loads at start-up are taken from sys.modules,
# never from the solution's folder, so such a name stays the standard module to the rules.
STANDARD_MODULES = set(getattr(sys, "stdlib_module_names", ())) | set(sys.builtin_module_names)

# Parts of the allowed packages that reach what the imports above keep out: processes and threads,
# downloads, pickled code, timers. An import of them or a path through them is a hit.
DENIED_PATHS = {
    "torch.multiprocessing": ("thread_or_process", "starts processes"),
    "torch.distributed": ("thread_or_process", "starts processes and opens sockets"),
    "torch.utils.data": ("thread_or_process", "its loaders start worker processes"),
    "torch.hub": ("file_access", "downloads and loads files"),
    "torch.package": ("file_access", "loads pickled code from files"),
    "torch.load": ("file_access", "reads a file (and unpickles it)"),
    "torch.save": ("file_access", "writes a file"),
    "torch.from_file": ("file_access", "reads a file"),
    "torch.jit.fork": ("thread_or_process", "runs a function on another thread"),
    "torch.jit._fork": ("thread_or_process", "runs a function on another thread"),
    "torch.utils.benchmark": ("timer", "a timer"),
    "torch.profiler": ("timer", "a profiler (it times the GPU)"),
    "torch.autograd.profiler": ("timer", "a profiler (it times the GPU)"),
    "torch.library": ("monkey_patch", "registers or replaces operator kernels in torch's dispatcher"),
    "triton.testing": ("timer", "do_bench and its timers"),
    "torch.ops.load_library": ("dynamic_code", "loads a shared library"),
    "torch._C": ("dynamic_attribute", "torch's C internals (dispatch by name, raw pointers)"),
    # Kernels generated from torch operators are torch's, not the solution's own: Inductor would
    # write Triton kernels for a forbidden operation into the cache that kernel provenance reads
    # as the solution's (eval/jit_kernels.h).
    "torch.compile": ("dynamic_code", "generates kernels from torch operators (Inductor): they are torch's work"),
    "torch._dynamo": ("dynamic_code", "generates kernels from torch operators (Inductor): they are torch's work"),
    "torch._inductor": ("dynamic_code", "generates kernels from torch operators (Inductor): they are torch's work"),
    "torch.export": ("dynamic_code", "compiles torch programs (Inductor): their kernels are torch's work"),
    "torch.utils.cpp_extension": ("dynamic_code", "compiles and loads native code at run time"),
}

# Attribute names that are a hit whatever object they are read from: timers (a solution that can
# time itself can tell kbench's timed calls from its checks), file access, loading native code.
DENIED_ATTRIBUTES = {
    "Event": ("timer", "CUDA events time the GPU (torch.cuda.Event)"),
    "elapsed_time": ("timer", "reads a timer"),
    "_sleep": ("timer", "spins the GPU for a given time"),
    "do_bench": ("timer", "a timer"),
    "do_bench_cudagraph": ("timer", "a timer"),
    "from_file": ("file_access", "reads a file"),
    "load_library": ("dynamic_code", "loads a shared library"),
}

# Introspection: each reaches objects the solution was not given (the caller's frames and buffers,
# the interpreter's modules) or changes objects behind the names the scan follows.
INTROSPECTION = {
    "__dict__", "__builtins__", "__subclasses__", "__globals__", "__class__", "__bases__", "__base__", "__mro__",
    "__code__", "__closure__", "__getattribute__", "__getattr__", "__setattr__", "__delattr__", "__self__",
    "__func__", "__loader__", "__spec__", "__import__", "__traceback__", "__reduce__", "__reduce_ex__",
    "__init_subclass__", "__set_name__", "__defaults__", "__kwdefaults__", "__wrapped__", "__objclass__",
    "tb_frame", "tb_next", "f_back", "f_globals", "f_locals", "f_builtins", "f_code", "gi_frame", "cr_frame",
    "ag_frame", "gi_code", "cr_code", "co_code", "co_consts",
}

# Builtins that run or compile text, or reach the interpreter's namespaces.
DYNAMIC_CODE_CALLS = {"exec", "eval", "compile", "__import__", "breakpoint"}
NAMESPACE_CALLS = {"globals", "vars"}


def excerpt(lines, n):
    text = lines[n - 1].strip() if 0 < n <= len(lines) else ""
    return text if len(text) <= 160 else text[:157] + "..."


class FileScan:
    def __init__(self, rel, source, tree, siblings, forbidden):
        self.rel = rel
        self.lines = source.decode("utf-8", "replace").splitlines()
        self.tree = tree
        self.siblings = siblings
        self.forbidden = forbidden
        self.hits = []
        self.seen = set()
        # name -> the dotted paths it may stand for ("torch.nn.functional"), from imports, simple
        # assignments and parameter defaults anywhere in the file (one scope: a name bound to a
        # module path anywhere is taken to be it everywhere, the safe side).
        self.aliases = {}
        # Names bound by a plain `import x` / `import x as y`: the module objects themselves.
        self.module_names = set()
        # Names that stand for too many paths to follow: name -> the expression that overflowed.
        self.overflow = {}

    def hit(self, node, rule, detail):
        line = getattr(node, "lineno", 0)
        key = (line, rule)  # one hit per line and rule: a chain (torch.a.b) is one finding
        if key in self.seen:
            return
        self.seen.add(key)
        self.hits.append({"file": self.rel, "line": line, "rule": rule, "detail": detail,
                          "excerpt": excerpt(self.lines, line)})

    # --- names ---------------------------------------------------------------------------------

    def normalised(self, name):
        return name.strip("_")

    def forbidden_name(self, name):
        return self.normalised(name) in self.forbidden

    def paths(self, node):
        """The dotted paths an expression may stand for: torch.nn.functional for F, torch.topk for
        getattr(torch, "topk"); empty when it is not a chain of names from an import."""
        if isinstance(node, ast.Name):
            return set(self.aliases.get(node.id, ()))
        if isinstance(node, ast.Attribute):
            return {p + "." + node.attr for p in self.paths(node.value)}
        if isinstance(node, ast.Subscript):
            return self.paths(node.value)  # an element of a container of module paths (below)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return set().union(*[self.paths(e) for e in node.elts]) if node.elts else set()
        if isinstance(node, ast.Dict):
            return set().union(*[self.paths(v) for v in node.values]) if node.values else set()
        if isinstance(node, ast.Starred):
            return self.paths(node.value)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)):
            return {p + "." + node.args[1].value for p in self.paths(node.args[0])}
        return set()

    def root_is_module(self, path):
        return path.split(".")[0] not in self.siblings

    # A name may stand for at most this many paths. Past it (`a = (a.x, a.y)` doubles them at every
    # round) the name is not followed further but reported: dropping paths could drop the one
    # that matters (`m = torch.cuda` after 64 decoys).
    MAX_PATHS = 64

    def bind(self, name, paths, node=None):
        if paths:
            known = self.aliases.setdefault(name, set())
            if name in self.overflow:
                return False
            if len(known | paths) > self.MAX_PATHS:
                self.overflow[name] = node
                return False
            before = len(known)
            known.update(paths)
            return len(known) != before
        return False

    def collect_aliases(self):
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.bind(a.asname, {a.name})
                        self.module_names.add(a.asname)
                    else:
                        root = a.name.split(".")[0]
                        self.bind(root, {root})
                        self.module_names.add(root)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                for a in node.names:
                    if a.name == "*":
                        continue
                    full = (base + "." + a.name) if base else a.name
                    self.bind(a.asname or a.name, {full})
        # Assignments chain (g = f; f = torch.topk): repeat until nothing new is learnt.
        changed = True
        rounds = 0
        while changed and rounds < 50:
            changed = False
            rounds += 1
            for node in ast.walk(self.tree):
                pairs = []
                if isinstance(node, ast.Assign):
                    for t in node.targets:
                        pairs.extend(self.assigned(t, node.value))
                elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                    pairs.extend(self.assigned(node.target, node.value))
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    args = node.args
                    positional = args.posonlyargs + args.args
                    for a, d in zip(positional[len(positional) - len(args.defaults):], args.defaults):
                        pairs.append((a.arg, d))
                    for a, d in zip(args.kwonlyargs, args.kw_defaults):
                        if d is not None:
                            pairs.append((a.arg, d))
                elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                    # for m in (torch.cuda, triton): m stands for each element.
                    pairs.extend(self.assigned(node.target, node.iter))
                elif isinstance(node, (ast.With, ast.AsyncWith)):
                    for item in node.items:
                        if item.optional_vars is not None:
                            pairs.extend(self.assigned(item.optional_vars, item.context_expr))
                for name, value in pairs:
                    if self.bind(name, self.paths(value), value):
                        changed = True

    def assigned(self, target, value):
        """(name, expression) pairs an assignment binds. A name bound to a container (a list, a
        tuple, a dict) stands for its elements too: `mods = [torch.cuda]; mods[0].x = 1`."""
        if isinstance(target, ast.Name):
            return [(target.id, value)]
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
            out = []
            for t, v in zip(target.elts, value.elts):
                out.extend(self.assigned(t, v))
            return out
        return []

    # --- rules ---------------------------------------------------------------------------------

    def check_module(self, node, module, how):
        parts = module.split(".")
        if parts[0] == "kbench" or parts[0].startswith("_kbench"):
            self.hit(node, "monkey_patch", f"{how} kbench's own module '{module}'")
            return
        if parts[0] not in ALLOWED_MODULES and parts[0] not in self.siblings:
            self.hit(node, "forbidden_import",
                     f"{how} module '{module}', which is not on the allow-list (torch, triton, "
                     "math, functools, itertools, typing, dataclasses, enum, numbers, operator, collections, abc, "
                     "__future__, and the solution's own modules)")
            return
        self.check_path(node, module)

    def check_path(self, node, path):
        parts = path.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in DENIED_PATHS:
                rule, why = DENIED_PATHS[prefix]
                self.hit(node, rule, f"'{path}': {why}")
                return
        if parts[0] in ("torch", "triton") and any(self.forbidden_name(p) for p in parts[1:]):
            self.hit(node, "forbidden_op", f"'{path}' is an operation the problem forbids")

    def check_import(self, node):
        if isinstance(node, ast.Import):
            for a in node.names:
                self.check_module(node, a.name, "imports")
            return
        if node.level > 1:
            self.hit(node, "forbidden_import", f"relative import from {'.' * node.level}{node.module or ''}: it "
                     "reaches outside the solution folder")
            return
        for a in node.names:
            if a.name != "*":
                self.check_attribute_name(node, a.name)  # from torch.cuda import Event
        if node.level == 1:
            return  # the solution folder's own modules
        self.check_module(node, node.module or "", "imports from")
        for a in node.names:
            if a.name == "*":
                if (node.module or "").split(".")[0] not in self.siblings:
                    self.hit(node, "forbidden_import", f"'from {node.module} import *' binds names the scan cannot "
                             "follow; import the names used")
                continue
            full = f"{node.module}.{a.name}"
            self.check_path(node, full)
            if self.forbidden_name(a.name):
                self.hit(node, "forbidden_op", f"'{full}' is an operation the problem forbids")

    def check_call(self, node):
        f = node.func
        if isinstance(f, ast.Name):
            if f.id in DYNAMIC_CODE_CALLS:
                self.hit(node, "dynamic_code", f"{f.id}() runs or compiles code the scan cannot read")
            elif f.id in NAMESPACE_CALLS:
                self.hit(node, "dynamic_attribute", f"{f.id}() exposes a namespace to reads and writes by name")
            elif f.id == "open":
                self.hit(node, "file_access", "open(): a solution reads and writes no files")
            elif f.id in ("getattr", "setattr", "delattr", "hasattr"):
                self.check_attribute_call(node, f.id)
        if isinstance(f, ast.Attribute) and f.attr in ("methodcaller", "attrgetter"):
            # methodcaller's first argument is the name (the rest are the call's); every one of
            # attrgetter's is a name.
            names = node.args[:1] if f.attr == "methodcaller" else node.args
            if not names or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in names):
                self.hit(node, "dynamic_attribute", f"operator.{f.attr} with a name that is not a string literal")
        if (isinstance(f, ast.Attribute) and f.attr in ("update", "setdefault", "pop", "popitem", "clear")
                and isinstance(f.value, ast.Call) and isinstance(f.value.func, ast.Name)
                and f.value.func.id == "locals"):
            self.hit(node, "dynamic_attribute", "writes through locals()")

    def check_attribute_call(self, node, which):
        if len(node.args) < 2:
            return
        name = node.args[1]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            self.hit(node, "dynamic_attribute", f"{which}() with a name that is not a string literal: the attribute "
                     "it reaches cannot be known")
            return
        self.check_attribute_name(node, name.value)
        if which in ("setattr", "delattr"):
            targets = {p for p in self.paths(node.args[0]) if self.root_is_module(p)}
            if targets or self.refers_to_kbench(node.args[0]):
                self.hit(node, "monkey_patch", f"{which}() on '{sorted(targets)[0] if targets else 'kbench'}' "
                         "changes a module the solution imported")
        else:
            for p in self.paths(node):
                self.check_path(node, p)

    def check_attribute_name(self, node, attr):
        if attr in INTROSPECTION:
            self.hit(node, "dynamic_attribute", f"'{attr}' reaches objects and namespaces the solution was not given")
        if attr in DENIED_ATTRIBUTES:
            rule, why = DENIED_ATTRIBUTES[attr]
            self.hit(node, rule, f"'.{attr}': {why}")
        if self.forbidden_name(attr):
            self.hit(node, "forbidden_op", f"'.{attr}' is an operation the problem forbids (in any form: "
                     "torch.X, x.X(), F.X, torch.ops.aten.X, tl.X)")
        if attr == "kbench" or attr.startswith("_kbench"):
            self.hit(node, "monkey_patch", f"'.{attr}' reaches kbench's own module")
        if attr in ("importlib", "import_module", "builtins"):
            self.hit(node, "dynamic_code", f"'{attr}' reaches the interpreter's import machinery")

    def refers_to_kbench(self, node):
        return any(p.split(".")[0] == "kbench" for p in self.paths(node))

    def check_store(self, node):
        """An attribute or item written or deleted: a hit when its object is a module the solution
        imported (or something reached from one: torch.Tensor.add, torch.cuda.Event)."""
        base = node.value
        targets = {p for p in self.paths(base) if self.root_is_module(p)}
        if targets:
            what = sorted(targets)[0] + ("." + node.attr if isinstance(node, ast.Attribute) else "[...]")
            verb = "deletes" if isinstance(node.ctx, ast.Del) else "assigns"
            self.hit(node, "monkey_patch", f"{verb} '{what}': it changes a module the solution imported "
                     "(torch, triton or the standard library), which kbench's own code may use")
        if isinstance(node, ast.Subscript) and isinstance(base, ast.Attribute) and base.attr == "modules":
            self.hit(node, "monkey_patch", "writes to a 'modules' table (sys.modules): it replaces imported modules")

    def check_module_escape(self, tree):
        """A module bound by `import` used as a plain value (put in a list, passed to a function)
        leaves the names the scan follows: its attributes could then be reached or changed
        unseen. Reading an attribute of it, calling it and aliasing it by a name are followed."""
        parents = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in self.module_names):
                continue
            if self.aliases.get(node.id, set()) & {s for s in self.siblings}:
                continue
            parent = parents.get(node)
            if isinstance(parent, ast.Attribute) and parent.value is node:
                continue
            if isinstance(parent, ast.Call) and parent.func is node:
                continue
            if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and parent.value is node:
                continue
            if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in (
                    "getattr", "hasattr", "setattr", "delattr") and parent.args and parent.args[0] is node:
                continue
            if isinstance(parent, ast.arguments):
                continue  # a parameter default, followed as an alias
            if isinstance(parent, ast.withitem) and parent.context_expr is node:
                continue
            self.hit(node, "dynamic_attribute", f"module '{node.id}' used as a value: its attributes could be "
                     "reached or changed where the scan cannot follow")

    def scan(self):
        self.collect_aliases()
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.check_import(node)
            elif isinstance(node, ast.Call):
                self.check_call(node)
            elif isinstance(node, ast.Attribute):
                self.check_attribute_name(node, node.attr)
                for p in self.paths(node):
                    self.check_path(node, p)
                if isinstance(node.ctx, (ast.Store, ast.Del)):
                    self.check_store(node)
            elif isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.MatMult):
                # a @ b is torch.matmul by another spelling.
                if self.forbidden_name("matmul"):
                    self.hit(node, "forbidden_op", "the @ operator is torch.matmul, an operation the problem forbids")
            elif isinstance(node, ast.Subscript):
                if isinstance(node.ctx, (ast.Store, ast.Del)):
                    self.check_store(node)
                    v = node.value
                    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "locals":
                        self.hit(node, "dynamic_attribute", "writes through locals()")
            elif isinstance(node, ast.Name):
                if node.id in INTROSPECTION or node.id in ("importlib", "__import__"):
                    self.hit(node, "dynamic_code" if "import" in node.id else "dynamic_attribute",
                             f"'{node.id}' reaches the interpreter's import machinery or namespaces")
                if node.id == "kbench" or node.id.startswith("_kbench"):
                    self.hit(node, "monkey_patch", f"'{node.id}' names kbench's own module")
                # A bare name bound to a forbidden operation (from torch import topk as t; t(x)).
                for p in self.aliases.get(node.id, ()):
                    parts = p.split(".")
                    if self.root_is_module(p) and parts[0] in ("torch", "triton") and any(
                            self.forbidden_name(q) for q in parts[1:]):
                        self.hit(node, "forbidden_op", f"'{node.id}' stands for '{p}', an operation the problem "
                                 "forbids")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                # A name spelt as a string (operator.methodcaller("topk"), "aten::topk",
                # attrgetter("cuda.Event")): each word of a string without spaces is checked as an
                # attribute name. Prose (docstrings, messages) has spaces and is left alone.
                s = node.value
                if len(s) <= 200 and not any(c.isspace() for c in s):
                    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", s):
                        self.check_attribute_name(node, word)
        self.check_module_escape(self.tree)
        for name, node in self.overflow.items():
            self.hit(node, "dynamic_attribute", f"'{name}' stands for more than {self.MAX_PATHS} module paths; the "
                     "scan does not follow it")
        return self.hits


def python_files(folder):
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(".py") or f.endswith(".pyw") or f.endswith(".pyi"):
                found.append(os.path.join(dirpath, f))
    return found


def sibling_modules(folder):
    """The solution folder's own importable names: its .py files and its sub-folders holding .py
    files (packages). Nothing else counts: a compiled extension (kit.so) is not the folder's own
    readable code, so importing it is a forbidden import."""
    names = set()
    for entry in sorted(os.listdir(folder)):
        path = os.path.join(folder, entry)
        if entry.endswith(".py"):
            names.add(entry[:-3])
        elif os.path.isdir(path) and entry.isidentifier() and python_files(path):
            names.add(entry)
    # A sibling module named like an allowed or forbidden one would shadow it: it stays a module
    # for the rules (a folder's own torch.py is still 'torch' to the reader of the code).
    return names - ALLOWED_MODULES - STANDARD_MODULES


def refuse(message):
    print(json.dumps({"refusal": message}))
    sys.exit(3)


def main():
    warnings.simplefilter("ignore")  # SyntaxWarning on odd escapes must not mix into the JSON
    if len(sys.argv) < 2:
        refuse("usage: python_scan <solution folder> [forbidden torch names...]")
    folder = sys.argv[1]
    # --module=NAME: a module of the deck's kits that the build puts beside a deck solution's own
    # files (target/solution_kit.h): the solution's own to import, though not in its folder.
    kit = {a[len("--module="):] for a in sys.argv[2:] if a.startswith("--module=")}
    forbidden = {n.strip("_") for n in sys.argv[2:] if not n.startswith("--module=") and n.strip("_")}
    siblings = sibling_modules(folder) | (kit - ALLOWED_MODULES - STANDARD_MODULES)
    hits = []
    for path in python_files(folder):
        rel = os.path.relpath(path, folder)
        try:
            with open(path, "rb") as f:
                source = f.read()
        except OSError as e:
            refuse(f"{rel}: cannot be read ({e.strerror})")
        try:
            tree = ast.parse(source, filename=rel)
        except SyntaxError as e:
            refuse(f"{rel}:{e.lineno or 0}: the file does not parse as Python ({e.msg}); kbench refuses a "
                   "solution it cannot read")
        except (ValueError, RecursionError, MemoryError) as e:
            refuse(f"{rel}: the file does not parse as Python ({type(e).__name__}: {e})")
        try:
            hits.extend(FileScan(rel, source, tree, siblings, forbidden).scan())
        except RecursionError:
            refuse(f"{rel}: expressions nested too deeply for the scan to follow")
    hits.sort(key=lambda h: (h["file"], h["line"]))
    print(json.dumps({"hits": hits}))


main()
