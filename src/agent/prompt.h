// The agent's prompt: problems/<id>/prompt.md is a template whose {{variables}} are filled from
// the problem (shapes, tolerances as the judge enforces them, the interface) and the target
// (device, compiler, budget), so the numbers in the prompt cannot drift from the ones judged.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "deck/problem.h"

namespace kb {

struct PromptContext {
  std::string target;                 // "host" or "cuda"
  std::string device;                 // the device's description ("NVIDIA H100 80GB HBM3", a CPU model)
  std::chrono::milliseconds budget{0};
  // Whether Python solutions (PyTorch, Triton) are judged on this target here: the prompt then
  // says so, after the problem's own text (agent/workspace.h writes the Python starter).
  bool python = false;
};

// Every variable a prompt may use, by name (docs/agent-runs.md lists them).
std::map<std::string, std::string> prompt_variables(const Problem& p, const PromptContext& c);

// Replaces each {{ name }} in `text`. An unknown name is a SpecError naming `file`, the line and
// the variables there are; an unclosed "{{" too.
std::string render_template(std::string_view text, const std::map<std::string, std::string>& vars, const std::string& file);

// problems/<id>/prompt.md rendered. SpecError when the file is missing or a variable is unknown.
std::string render_prompt(const Problem& p, const PromptContext& c);

// The paragraph render_prompt adds where Python solutions are offered (PromptContext::python): that
// solution.py is accepted, how to start it, and what its static scan refuses (the problem's
// forbidden torch operations by name).
std::string python_prompt_section(const Problem& p, const std::string& target);

// The problem's forbidden torch operations as Markdown code spans ("`topk`, `sort`"), or "".
std::string forbidden_torch_list(const Problem& p);

// A tensor's shape as problem.toml writes it, "[batch, vocab]".
std::string shape_text(const TensorSpec& t);

// Human text of one output's tolerance, as the judge applies it (eval/judge.cpp).
std::string describe_tolerance_for_prompt(const TensorSpec& output);

}  // namespace kb
