#include "deck/generate.h"

#include "core/random.h"
#include "deck/registry.h"

namespace kb {
namespace {

std::string generator_list() {
  std::string s;
  for (const auto& n : generator_names()) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

void check_generator(const Problem& p, const InitSpec& init, const std::string& where) {
  if (init.kind == InitSpec::Kind::generator && !find_generator(init.generator))
    throw SpecError((p.dir / "problem.toml").string() + ": " + where + ": unknown generator '" +
                    init.generator + "' (compiled-in generators: " + generator_list() + ")");
}

}  // namespace

HostTensor generate_tensor(const Problem& p, const ShapeCase& shape, const TensorSpec& t,
                           uint64_t seed, uint32_t stream) {
  HostTensor out(t.name, t.dtype, p.tensor_shape(t, shape));
  const InitSpec& init = p.init_for(t, shape);
  const int64_t n = out.numel();
  switch (init.kind) {
    case InitSpec::Kind::uniform:
      if (info(t.dtype).is_float) {
#pragma omp parallel for schedule(static) if (n > (1 << 16))
        for (int64_t i = 0; i < n; ++i) out.set(i, uniform(seed, stream, static_cast<uint64_t>(i), init.low, init.high));
      } else {
        const auto lo = static_cast<int64_t>(init.low), hi = static_cast<int64_t>(init.high);
#pragma omp parallel for schedule(static) if (n > (1 << 16))
        for (int64_t i = 0; i < n; ++i)
          out.set(i, static_cast<double>(uniform_int(seed, stream, static_cast<uint64_t>(i), lo, hi)));
      }
      break;
    case InitSpec::Kind::normal:
#pragma omp parallel for schedule(static) if (n > (1 << 16))
      for (int64_t i = 0; i < n; ++i) out.set(i, normal(seed, stream, static_cast<uint64_t>(i), init.mean, init.std));
      break;
    case InitSpec::Kind::generator: {
      GeneratorFn fn = find_generator(init.generator);
      if (!fn) check_generator(p, init, "tensor " + t.name);
      fn(GeneratorCase{p, shape, init, seed, stream}, out);
      break;
    }
  }
  return out;
}

std::vector<HostTensor> generate_inputs(const Problem& p, const ShapeCase& shape, uint64_t seed) {
  std::vector<HostTensor> v;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    v.push_back(generate_tensor(p, shape, p.inputs[i], seed, static_cast<uint32_t>(i)));
  return v;
}

std::vector<HostTensor> generate_weights(const Problem& p, const ShapeCase& shape, uint64_t seed) {
  std::vector<HostTensor> v;
  for (size_t i = 0; i < p.weights.size(); ++i)
    v.push_back(generate_tensor(p, shape, p.weights[i], seed, kWeightStreamBase + static_cast<uint32_t>(i)));
  return v;
}

std::vector<HostTensor> allocate_outputs(const Problem& p, const ShapeCase& shape) {
  std::vector<HostTensor> v;
  for (const auto& t : p.outputs) v.emplace_back(t.name, t.dtype, p.tensor_shape(t, shape));
  return v;
}

uint64_t output_bytes(const Problem& p, const ShapeCase& shape) {
  uint64_t n = 0;
  for (const auto& t : p.outputs) n += static_cast<uint64_t>(numel_of(p.tensor_shape(t, shape))) * element_bytes(t.dtype);
  return n;
}

uint64_t input_bytes(const Problem& p, const ShapeCase& shape) {
  uint64_t n = 0;
  for (const auto& t : p.inputs) n += static_cast<uint64_t>(numel_of(p.tensor_shape(t, shape))) * element_bytes(t.dtype);
  return n;
}

void require_generators(const Problem& p) {
  auto all = [&](const std::vector<TensorSpec>& ts, const char* kind) {
    for (const auto& t : ts) {
      check_generator(p, t.init, std::string(kind) + " " + t.name);
      for (size_t s = 0; s < p.shapes.size(); ++s) {
        auto it = p.shapes[s].init.find(t.name);
        if (it != p.shapes[s].init.end())
          check_generator(p, it->second, "shapes[" + std::to_string(s) + "].init." + t.name);
      }
    }
  };
  all(p.inputs, "input");
  all(p.weights, "weight");
}

}  // namespace kb
