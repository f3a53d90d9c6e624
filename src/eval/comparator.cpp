#include "eval/comparator.h"

#include <map>
#include <stdexcept>

namespace kb {

bool uses_comparator(const Problem& p) {
  for (const auto& o : p.outputs)
    if (!o.comparator.empty()) return true;
  return false;
}

void require_comparators(const Problem& p) {
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const std::string& name = p.outputs[i].comparator;
    if (name.empty() || find_comparator(name)) continue;
    std::string known;
    for (const auto& n : comparator_names()) known += (known.empty() ? "" : ", ") + n;
    throw SpecError((p.dir / "problem.toml").string() + ": outputs[" + std::to_string(i) + "].comparator: unknown comparator '" +
                    name + "' (compiled-in comparators: " + (known.empty() ? "none" : known) + ")");
  }
}

std::vector<OutputVerdict> judge_outputs(const Problem& p, const ShapeCase& shape, const std::vector<HostTensor>& inputs,
                                         const std::vector<HostTensor>& weights, const std::vector<HostTensor>& outputs,
                                         const std::vector<std::vector<double>>& expected,
                                         const std::vector<int64_t>& rows) {
  std::vector<OutputVerdict> verdicts;
  for (size_t i = 0; i < p.outputs.size(); ++i) {
    const std::string& name = p.outputs[i].comparator;
    if (name.empty()) {
      verdicts.push_back(judge_output(p.outputs[i], outputs.at(i), expected.at(i), rows));
      continue;
    }
    const ComparatorInfo* c = find_comparator(name);
    if (!c) require_comparators(p);  // throws, naming the output and the known comparators
    if (inputs.size() != p.inputs.size())
      throw std::logic_error("output '" + p.outputs[i].name + "' is judged by comparator '" + name +
                             "', which needs the case's inputs, and none were kept");
    OutputVerdict v = c->fn(ComparatorCase{p, shape, inputs, weights, outputs, expected, i, rows});
    v.output = p.outputs[i].name;
    v.pass = v.failure == Reason::none;
    verdicts.push_back(std::move(v));
  }
  return verdicts;
}

}  // namespace kb
