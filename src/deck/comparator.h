// Named comparators: judges for outputs with more than one right answer, which elementwise
// tolerances cannot express (topk's indices: any index of an element equal to the expected value
// is right, ties included). An output names its comparator in problem.toml (`comparator = "..."`);
// the comparator is C++ registered by the problem (problems/<id>/reference.cpp) and sees the whole
// case: the inputs and weights the solution saw, every output it wrote and the oracle's expected
// values of every output. It runs in the parent process, like the elementwise judge (eval/comparator.h).
//
// This is the registry the problems' folders see: a comparator's interface and its registration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "deck/problem.h"
#include "verdict/output_verdict.h"

namespace kb {

struct ComparatorCase {
  const Problem& problem;
  const ShapeCase& shape;
  const std::vector<HostTensor>& inputs;   // exactly the tensors the solution was handed
  const std::vector<HostTensor>& weights;
  const std::vector<HostTensor>& outputs;  // every output, as the solution wrote it
  // The oracle's values of every output (NaN where it did not compute, when `rows` is non-empty).
  const std::vector<std::vector<double>>& expected;
  size_t output;                           // index of the output to judge (into problem.outputs)
  const std::vector<int64_t>& rows;        // rows to judge (registry.h's rows); empty = all
};

// Returns the verdict on outputs[output]: pass, or a failure (Reason::unwritten, or Reason::comparator
// with a message naming the element and why it is wrong).
using ComparatorFn = OutputVerdict (*)(const ComparatorCase&);

struct ComparatorInfo {
  ComparatorFn fn = nullptr;
  // What the comparator accepts, in one sentence for people and agents (`kbench show`, prompts).
  std::string rule;
};

void register_comparator(const std::string& name, ComparatorFn fn, const std::string& rule);
const ComparatorInfo* find_comparator(const std::string& name);  // nullptr when none
std::vector<std::string> comparator_names();

namespace detail {
struct ComparatorRegistrar {
  ComparatorRegistrar(const char* name, ComparatorFn fn, const char* rule) { register_comparator(name, fn, rule); }
};
}  // namespace detail

#define KB_COMPARATOR_CONCAT_INNER(a, b) a##b
#define KB_COMPARATOR_CONCAT(a, b) KB_COMPARATOR_CONCAT_INNER(a, b)
#define KB_REGISTER_COMPARATOR(name, fn, rule)                                                     \
  static ::kb::detail::ComparatorRegistrar KB_COMPARATOR_CONCAT(kb_comparator_registrar_, __LINE__)( \
      name, static_cast<::kb::ComparatorFn>(fn), rule)

}  // namespace kb
