// A problem of the deck, as loaded and validated from problems/<id>/problem.toml.
// docs/problem-format.md documents every key; this is its in-memory form.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/expr.h"

namespace kb {

// Raised for any malformed problem.toml: the message names the file, the key path
// (e.g. "outputs[0].tolerance.max_ulp") and what was expected.
class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How one tensor's elements are drawn from the case's seed.
struct InitSpec {
  enum class Kind { uniform, normal, generator };
  Kind kind = Kind::uniform;
  double low = -1.0, high = 1.0;  // uniform (integers: inclusive range)
  double mean = 0.0, std = 1.0;   // normal
  std::string generator;          // a named generator registered in C++ (deck/registry.h)
  std::map<std::string, double> params;  // extra numeric keys, handed to the generator
  // The numeric key `key` of params, or `fallback` when problem.toml does not give it.
  double param(const std::string& key, double fallback) const {
    const auto it = params.find(key);
    return it == params.end() ? fallback : it->second;
  }
};

struct Tolerance {
  // Elementwise |got - expected| <= atol + rtol * |expected|, when either is given.
  std::optional<double> atol, rtol;
  // Elementwise |got - expected| <= max_ulp * ulp_at(dtype, expected).
  std::optional<double> max_ulp;
  // Whole-tensor ||got - expected||_2 / ||expected||_2 <= rel_l2.
  std::optional<double> rel_l2;
  std::string source;  // why these numbers (calibration), from the "source" key; may be empty
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::f32;
  std::vector<Expr> shape;  // symbolic, evaluated with the shape's dims
  InitSpec init;            // inputs and weights only
  Tolerance tolerance;      // outputs only (at least one criterion required)
  std::string comparator;   // outputs only: a named comparator instead of elementwise values; empty = values
  // Inputs only: whether timed calls see this input perturbed (core/perturb.h: two pairs of
  // elements swapped in every row of the innermost dimension). "perturb" key; default true
  // ("swap"); false ("none") for indices, offsets and tables that a swap would make invalid.
  bool perturb = true;
};

struct ShapeCase {
  std::string label;                       // optional "label" key; else derived from dims
  std::vector<int64_t> dims;               // in Problem::dims order
  std::map<std::string, InitSpec> init;    // per-tensor overrides (adversarial variants)
};

enum class Regime { memory, compute };

struct Problem {
  std::filesystem::path dir;  // problems/<id>
  std::string id;             // folder name == name
  std::string name;
  // Which deck it belongs to: "hard" (KernelBench-Hard's), "example", "calibration", "v3"... The
  // `deck` key; `kbench sweep --deck` selects by it.
  std::string deck;
  // KernelBench v3's level, 1 to 4 (deck/level.h), from the optional `level` key; none for
  // problems that v3 does not rank (KernelBench-Hard's). Brings v3's agent limits with it.
  std::optional<int> level;
  std::string description;
  std::vector<std::string> targets;  // "host", "cuda"

  std::vector<std::string> dims;     // ordered dim names passed to the ABI
  std::vector<TensorSpec> inputs, weights, outputs;
  std::vector<ShapeCase> shapes;

  Expr flops, bytes;                 // algorithmic counts per shape
  Regime regime = Regime::memory;    // which peak peak_fraction is measured against
  std::string compute_peak = "fp32"; // key into the hardware ceilings (hardware/*.toml)
  std::string memory_peak = "dram";

  std::vector<uint64_t> check_seeds; // at least 3
  int secret_seeds = 1;              // drawn at run time, at least 1

  std::vector<std::string> allowed_libraries;
  std::map<std::string, std::vector<std::string>> required_instructions;  // arch -> SASS classes
  std::vector<std::string> forbidden;  // source patterns the static scan rejects
  // torch (and triton.language) function names a Python solution may not use in any form
  // (eval/python_scan.h): [policy] forbidden_torch, e.g. ["topk", "sort"].
  std::vector<std::string> forbidden_torch;
  // Calls repeated on identical inputs must give bitwise-identical outputs ("bitwise"), or only
  // each pass the tolerance ("tolerance": where honest solutions may reduce in a nondeterministic
  // order, e.g. split-K with float atomics). [policy] determinism; default "bitwise".
  bool bitwise_deterministic = true;

  // The vendor-library reference line: baseline.cu (cuda) / baseline.cpp (host) in the problem
  // folder, timed like a solution and printed beside it, never scored. [baseline] in problem.toml.
  std::string baseline_description;
  std::vector<std::string> baseline_libraries;  // linked as -l<name>
  // The baseline waits for the device inside kb_run (e.g. reads data-dependent sizes back to the
  // host for a library call that takes them there): its cold samples are timed without the
  // blocking kernel, which such a wait would deadlock; launch overhead is then in its time.
  bool baseline_synchronizes = false;

  bool supports(std::string_view target) const;
  // dims of shape i as expression variables
  Variables variables(const ShapeCase& shape) const;
  // Concrete shape of a tensor for a shape case; throws SpecError on a dim that is not a positive integer.
  std::vector<int64_t> tensor_shape(const TensorSpec& t, const ShapeCase& shape) const;
  // The init in force for tensor `name` in `shape` (override or default).
  const InitSpec& init_for(const TensorSpec& t, const ShapeCase& shape) const;
  std::string shape_label(size_t shape_index) const;  // label, or "batch=32 vocab=4096"
};

// Loads and validates one problem folder. Throws SpecError.
Problem load_problem(const std::filesystem::path& dir);
// Loads every problems/*/problem.toml under root, sorted by id. Throws SpecError on the first bad one.
std::vector<Problem> load_deck(const std::filesystem::path& root);

std::string_view regime_name(Regime r);

}  // namespace kb
