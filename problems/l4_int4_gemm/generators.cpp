// l4_int4_gemm's scales: abs_normal, |N(0, std)| per element (KernelBench v3's
// torch.randn(...).abs() * 0.1, 6_INT4_Quantized_GEMM.py of github:Infatoshi/kernelbench.com),
// stored in the tensor's dtype. Parameter: `std` (default 1). A pure function of (seed, stream,
// element), as every kbench draw is.
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/random.h"
#include "deck/registry.h"

namespace {

void abs_normal(const kb::GeneratorCase& c, kb::HostTensor& out) {
  auto it = c.init.params.find("std");
  const double std = it == c.init.params.end() ? 1.0 : it->second;
  if (!(std > 0))
    throw std::runtime_error((c.problem.dir / "problem.toml").string() + ": shape '" + c.shape_label() +
                             "': generator abs_normal: std must be > 0, got " + std::to_string(std));
  const int64_t n = out.numel();
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t i = 0; i < n; ++i) out.set(i, std::fabs(kb::normal(c.seed, c.stream, static_cast<uint64_t>(i), 0.0, std)));
}

KB_REGISTER_GENERATOR("abs_normal", abs_normal);

}  // namespace
