// problems/kahan_softmax's and problems/topk's GPU references (reference.cu) on a real GPU, against
// the fp64 CPU oracle on every element of every deck shape (both are cheap in full): kahan_softmax
// element by element to 1e-12 of the element itself (a row spans many orders of magnitude, and the
// judge's max_ulp = 5 is relative to each element, so the row-scaled agreement of the evaluator
// would not see a wrong tail term), topk exactly, indices included (the same total order, ties by
// the lower column). Skipped (and reported skipped by ctest) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"
#include "target/cuda/cuda_gpu_reference.h"
#include "target/target.h"

namespace fs = std::filesystem;

namespace {

struct BothReferences {
  std::vector<std::vector<double>> gpu, cpu;
};

// The GPU reference and the oracle (every row) of one case of `shape_index`.
BothReferences both(const kb::Problem& p, size_t shape_index, uint64_t seed) {
  const kb::ShapeCase& shape = p.shapes.at(shape_index);
  const auto inputs = kb::generate_inputs(p, shape, seed);
  const std::vector<kb::HostTensor> weights;
  BothReferences r;
  for (const auto& o : p.outputs) {
    const auto n = static_cast<size_t>(kb::numel_of(p.tensor_shape(o, shape)));
    r.gpu.emplace_back(n, NAN);
    r.cpu.emplace_back(n, NAN);
  }
  EXPECT_TRUE(kb::run_cuda_gpu_reference(p, shape, inputs, weights, r.gpu)) << "no GPU reference for " << p.name;
  const std::vector<int64_t> all_rows;
  kb::OracleCase oc{p, shape, inputs, weights, r.cpu, all_rows};
  kb::find_oracle(p.name)(oc);
  return r;
}

TEST(SoftmaxTopkGpuReferences, KahanSoftmaxEqualsTheOracleElementByElementOnEveryShape) {
  if (!kb::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  const kb::Problem p = kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems/kahan_softmax");
  for (size_t s = 0; s < p.shapes.size(); ++s) {
    const BothReferences r = both(p, s, 7 + s);
    const auto& g = r.gpu.at(0);
    const auto& c = r.cpu.at(0);
    size_t wrong = 0, first = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      const bool same = g[i] == c[i] || std::fabs(g[i] - c[i]) <= 1e-12 * std::fabs(c[i]);
      if (!same && wrong++ == 0) first = i;
    }
    EXPECT_EQ(wrong, 0u) << "shape " << s << " (" << p.shape_label(s) << "): first at " << first << ": GPU " << g[first]
                         << ", oracle " << c[first];
  }
}

TEST(SoftmaxTopkGpuReferences, TopkEqualsTheOracleExactlyOnEveryShape) {
  if (!kb::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
  const kb::Problem p = kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems/topk");
  for (size_t s = 0; s < p.shapes.size(); ++s) {
    const BothReferences r = both(p, s, 7 + s);
    for (size_t out = 0; out < 2; ++out)
      for (size_t i = 0; i < r.cpu[out].size(); ++i) {
        const double g = r.gpu[out][i], c = r.cpu[out][i];
        // -0 and +0 are equal values here, as in the oracle's order; NaN is never generated.
        ASSERT_TRUE(g == c) << "shape " << s << " (" << p.shape_label(s) << "), output " << p.outputs[out].name
                            << " element " << i << ": GPU " << g << ", oracle " << c;
      }
  }
}

}  // namespace
