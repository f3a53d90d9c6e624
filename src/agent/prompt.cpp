#include "agent/prompt.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "agent/budget.h"
#include "eval/comparator.h"

namespace kb {
namespace fs = std::filesystem;

std::string shape_text(const TensorSpec& t) {
  std::string s;
  for (const auto& e : t.shape) s += (s.empty() ? "" : ", ") + e.text();
  return "[" + s + "]";
}

namespace {

std::string signature(const Problem& p) {
  std::string s;
  auto list = [&](const std::vector<TensorSpec>& ts, const char* field, const char* what) {
    for (size_t i = 0; i < ts.size(); ++i)
      s += fmt::format("- `c->{}[{}]` / `{}`: {} {}, {}\n", field, i, ts[i].name, name(ts[i].dtype), shape_text(ts[i]), what);
  };
  list(p.inputs, "inputs", "input (read-only)");
  for (size_t i = 0; i < p.weights.size(); ++i)
    s += fmt::format("- `p->weights[{}]` / `{}`: {} {}, weight (read-only, given to kb_setup)\n", i, p.weights[i].name,
                     name(p.weights[i].dtype), shape_text(p.weights[i]));
  list(p.outputs, "outputs", "output (write every element)");
  return s;
}

std::string dims(const Problem& p) {
  std::string s;
  for (size_t i = 0; i < p.dims.size(); ++i) s += fmt::format("{}`p->dim_values[{}]` = {}", i ? ", " : "", i, p.dims[i]);
  return s;
}

std::string shapes(const Problem& p) {
  std::string s;
  for (size_t i = 0; i < p.shapes.size(); ++i) {
    std::string d;
    for (size_t k = 0; k < p.dims.size(); ++k) d += fmt::format("{}{} = {}", k ? ", " : "", p.dims[k], p.shapes[i].dims[k]);
    s += fmt::format("- shape {}: {}{}\n", i, d, p.shapes[i].label.empty() ? "" : " (" + p.shapes[i].label + ")");
  }
  return s;
}

std::string number(double v) { return fmt::format("{:g}", v); }

// Kept in step with the build commands of target/host/host_target.cpp and target/cuda/cuda_target.cpp.
std::string build_text(const std::string& target) {
  if (target == "cuda")
    return "`nvcc -std=c++17 -O3 -lineinfo --expt-relaxed-constexpr -shared -Xcompiler -fPIC` for this GPU's "
           "architecture, over every `.cu`, `.cpp`, `.cc` and `.cxx` file at the top of the workspace";
  return "`g++ -std=c++20 -O3 -march=native -fopenmp -shared -fPIC`, over every `.cpp`, `.cc` and `.cxx` file at "
         "the top of the workspace";
}

}  // namespace

std::string describe_tolerance_for_prompt(const TensorSpec& o) {
  // A comparator replaces the elementwise criteria (problem.toml keeps a tolerance it does not use).
  if (!o.comparator.empty()) {
    const ComparatorInfo* c = find_comparator(o.comparator);
    return fmt::format("`{}`: judged by the problem's `{}` comparator: {}", o.name, o.comparator,
                       c ? c->rule : "(not compiled into this kbench)");
  }
  const Tolerance& t = o.tolerance;
  std::vector<std::string> parts;
  if (t.atol || t.rtol)
    parts.push_back(fmt::format("every element within atol + rtol * |ref| of the fp64 reference, atol = {}, rtol = {}",
                                number(t.atol.value_or(0)), number(t.rtol.value_or(0))));
  if (t.max_ulp)
    parts.push_back(fmt::format("every element within {} ulp ({} units in the last place) of the fp64 reference",
                                number(*t.max_ulp), name(o.dtype)));
  if (t.rel_l2) parts.push_back(fmt::format("||{0} - ref||_2 / ||ref||_2 <= {1} over the whole tensor", o.name, number(*t.rel_l2)));
  std::string s = fmt::format("`{}`: ", o.name);
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; and " : "") + parts[i];
  s += "; NaN or infinity only where the reference has the same";
  return s;
}

std::map<std::string, std::string> prompt_variables(const Problem& p, const PromptContext& c) {
  std::string tolerance;
  for (const auto& o : p.outputs) tolerance += "- " + describe_tolerance_for_prompt(o) + "\n";
  std::string libraries = "none";
  if (!p.allowed_libraries.empty()) {
    libraries.clear();
    for (const auto& l : p.allowed_libraries) libraries += (libraries.empty() ? "" : ", ") + l;
  }
  const bool cuda = c.target == "cuda";
  return {
      {"problem", p.name},
      {"description", p.description},
      {"target", c.target},
      {"gpu", c.device},
      {"device", c.device},
      {"language", cuda ? "CUDA C++" : "C++ (for the CPU; OpenMP is allowed)"},
      {"source_file", cuda ? "solution.cu" : "solution.cpp"},
      {"budget", describe_duration(c.budget)},
      {"shapes", shapes(p)},
      {"tolerance", tolerance},
      {"signature", signature(p)},
      {"dims", dims(p)},
      {"seeds", fmt::format("{} fixed seeds plus {} secret seed{} drawn at run time", p.check_seeds.size(), p.secret_seeds,
                            p.secret_seeds == 1 ? "" : "s")},
      {"build", build_text(c.target)},
      {"regime", p.regime == Regime::memory ? "memory-bound" : "compute-bound"},
      {"flops", p.flops.text()},
      {"bytes", p.bytes.text()},
      {"libraries", libraries},
      {"threads_note", cuda ? " (and every kernel on the stream kbench hands you, `c->stream`)" : " (OpenMP is fine)"},
  };
}

std::string render_template(std::string_view text, const std::map<std::string, std::string>& vars, const std::string& file) {
  std::string out;
  size_t line = 1, i = 0;
  auto known = [&]() {
    std::string k;
    for (const auto& [name, _] : vars) k += (k.empty() ? "" : ", ") + name;
    return k;
  };
  while (i < text.size()) {
    if (text.compare(i, 2, "{{") != 0) {
      if (text[i] == '\n') ++line;
      out += text[i++];
      continue;
    }
    const size_t close = text.find("}}", i + 2);
    if (close == std::string_view::npos || text.substr(i + 2, close - i - 2).find('\n') != std::string_view::npos)
      throw SpecError(fmt::format("{}:{}: '{{{{' without a closing '}}}}' on the same line", file, line));
    std::string name(text.substr(i + 2, close - i - 2));
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    auto it = vars.find(name);
    if (it == vars.end())
      throw SpecError(fmt::format("{}:{}: unknown template variable {{{{{}}}}} (known: {})", file, line, name, known()));
    std::string value = it->second;
    // A list ends with a newline; the template line supplies its own.
    if (!value.empty() && value.back() == '\n' && close + 2 < text.size() && text[close + 2] == '\n') value.pop_back();
    out += value;
    i = close + 2;
  }
  return out;
}

std::string render_prompt(const Problem& p, const PromptContext& c) {
  const fs::path file = p.dir / "prompt.md";
  std::ifstream in(file);
  if (!in)
    throw SpecError(file.string() + ": missing: every problem needs a prompt.md (the agent's task, see docs/agent-runs.md)");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = render_template(ss.str(), prompt_variables(p, c), file.string());
  if (c.python) text += python_prompt_section(p, c.target);
  return text;
}

std::string forbidden_torch_list(const Problem& p) {
  std::string list;
  for (const auto& f : p.forbidden_torch) list += (list.empty() ? "`" : "`, `") + f;
  return list.empty() ? list : list + "`";
}

std::string python_prompt_section(const Problem& p, const std::string& target) {
  const bool cuda = target == "cuda";
  const std::string native = cuda ? "solution.cu" : "solution.cpp";
  const std::string forbidden = forbidden_torch_list(p);
  return fmt::format(
      "\n**Or in Python.** Python is accepted too: {0}. Rename `starter.py` to `solution.py`, delete `{1}` (when "
      "both are there, `{1}` is the one judged), and implement `setup`, `run` and `teardown` (README.md, \"Or in "
      "Python\"). It is judged exactly as C++ is: the same shapes, seeds, tolerances, timing and score, and "
      "`./kbench check` takes it as it is. A static scan of the folder's `.py` files refuses {2}threads, processes, "
      "timers, file access, monkey-patching, and imports beyond torch, triton and the standard library's "
      "pure-computation modules.\n",
      cuda ? "PyTorch with your own Triton kernels, compiled in `setup`" : "PyTorch on the CPU", native,
      forbidden.empty() ? "" : "the torch operations that would do the work for you (" + forbidden + "), ");
}

}  // namespace kb
