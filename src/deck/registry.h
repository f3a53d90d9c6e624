// Compiled-in parts of problems: each problem's fp64 oracle (problems/<id>/reference.cpp) and its
// named input generators register themselves here by name at static-initialisation time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "deck/problem.h"

namespace kb {

// One case handed to an oracle. Inputs and weights are the exact tensors the solution sees.
struct OracleCase {
  const Problem& problem;
  const ShapeCase& shape;
  const std::vector<HostTensor>& inputs;
  const std::vector<HostTensor>& weights;
  // One vector per output, numel long, pre-filled with NaN. The oracle writes expected values
  // in double. When `rows` is non-empty the oracle may compute only those rows (row = index
  // over the leading dims, i.e. flat index / last-dim size) and leave the rest NaN; the judge
  // then checks only the rows it asked for.
  std::vector<std::vector<double>>& expected;
  const std::vector<int64_t>& rows;
};
using OracleFn = void (*)(OracleCase&);

// A named input generator: fills `out` (shape and dtype set) from the seed.
struct GeneratorCase {
  const Problem& problem;
  const ShapeCase& shape;
  const InitSpec& init;   // the generator's params live in init.params
  uint64_t seed;
  uint32_t stream;        // distinct per tensor of the case
  // The shape's label when it is one of the problem's shapes (a test may hand a generator its own),
  // for a generator's error messages.
  std::string shape_label() const {
    const auto& all = problem.shapes;
    for (size_t i = 0; i < all.size(); ++i)
      if (&all[i] == &shape) return problem.shape_label(i);
    return "(a shape not in problem.toml)";
  }
};
using GeneratorFn = void (*)(const GeneratorCase&, HostTensor& out);

void register_oracle(const std::string& problem, OracleFn fn);
void register_generator(const std::string& name, GeneratorFn fn);
OracleFn find_oracle(const std::string& problem);        // nullptr when none
GeneratorFn find_generator(const std::string& name);     // nullptr when none
std::vector<std::string> generator_names();

namespace detail {
struct Registrar {
  Registrar(const char* problem, OracleFn fn) { register_oracle(problem, fn); }
  Registrar(const char* name, GeneratorFn fn) { register_generator(name, fn); }
};
}  // namespace detail

#define KB_CONCAT_INNER(a, b) a##b
#define KB_CONCAT(a, b) KB_CONCAT_INNER(a, b)
// __COUNTER__, not __LINE__: two registrations on the same line of two files must not clash where
// the files share a translation unit.
#define KB_REGISTER_ORACLE(problem, fn) \
  static ::kb::detail::Registrar KB_CONCAT(kb_oracle_registrar_, __COUNTER__)(problem, static_cast<::kb::OracleFn>(fn))
#define KB_REGISTER_GENERATOR(name, fn) \
  static ::kb::detail::Registrar KB_CONCAT(kb_generator_registrar_, __COUNTER__)(name, static_cast<::kb::GeneratorFn>(fn))

}  // namespace kb
