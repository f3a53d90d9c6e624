// problems/kda's GPU reference (reference.cu) on a real GPU: it equals the fp64 CPU oracle on every
// element of a small case (ragged T, several batches and heads), and it computes the largest deck
// shape within the time the evaluator can afford per case (the brief asked for about a second).
// Skipped (and reported skipped by ctest) without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"
#include "target/cuda/cuda_gpu_reference.h"
#include "target/target.h"

namespace fs = std::filesystem;

namespace {

class KdaGpuReference : public testing::Test {
 protected:
  void SetUp() override {
    if (!kb::cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine";
    p = kb::load_problem(fs::path(KBENCH_SOURCE_DIR) / "problems/kda");
  }
  kb::Problem p;
};

// The largest |difference| over the rows the CPU oracle computed, relative to each row's largest
// |value| (the evaluator's own agreement test, src/eval/expected.cpp, allows 1e-9).
double worst_disagreement(const std::vector<double>& gpu, const std::vector<double>& cpu, int64_t row_len) {
  double worst = 0;
  for (size_t begin = 0; begin < cpu.size(); begin += static_cast<size_t>(row_len)) {
    if (std::isnan(cpu[begin])) continue;
    double scale = 0, diff = 0;
    for (int64_t j = 0; j < row_len; ++j) {
      scale = std::max(scale, std::fabs(cpu[begin + j]));
      diff = std::max(diff, std::fabs(gpu[begin + j] - cpu[begin + j]));
    }
    worst = std::max(worst, scale > 0 ? diff / scale : diff);
  }
  return worst;
}

TEST_F(KdaGpuReference, EqualsTheFp64OracleOnEveryElementOfASmallCase) {
  kb::ShapeCase shape = p.shapes.at(3);
  shape.dims = {2, 203, 3, 128, 128};  // B, T (ragged), H, K, V
  const auto inputs = kb::generate_inputs(p, shape, 11);
  const std::vector<kb::HostTensor> weights;
  const size_t n = static_cast<size_t>(inputs.at(2).numel());
  std::vector<std::vector<double>> gpu(1, std::vector<double>(n, NAN)), cpu(1, std::vector<double>(n, NAN));
  ASSERT_TRUE(kb::run_cuda_gpu_reference(p, shape, inputs, weights, gpu));
  const std::vector<int64_t> all_rows;
  kb::OracleCase oc{p, shape, inputs, weights, cpu, all_rows};
  kb::find_oracle("kda")(oc);
  for (size_t i = 0; i < n; ++i) ASSERT_FALSE(std::isnan(gpu[0][i])) << "element " << i << " not written";
  EXPECT_LT(worst_disagreement(gpu[0], cpu[0], 128), 1e-10);
}

TEST_F(KdaGpuReference, LargestShapeIsFastAndAgreesOnSampledRows) {
  const kb::ShapeCase& shape = p.shapes.at(2);  // B 1, T 4096, H 8
  ASSERT_EQ(shape.dims[1], 4096);
  const auto inputs = kb::generate_inputs(p, shape, 1);
  const std::vector<kb::HostTensor> weights;
  const size_t n = static_cast<size_t>(inputs.at(2).numel());
  std::vector<std::vector<double>> gpu(1, std::vector<double>(n, NAN)), cpu(1, std::vector<double>(n, NAN));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(kb::run_cuda_gpu_reference(p, shape, inputs, weights, gpu));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("kda GPU reference, B 1 T 4096 H 8: %.3f s (uploads and the copy back included)\n", seconds);
  EXPECT_LT(seconds, 2.0);
  // The first and last rows (the whole of one sequence) and a few in between.
  const int64_t rows = static_cast<int64_t>(n) / 128;
  const std::vector<int64_t> sample = {0, 7, 2048 * 8 + 5, rows - 1};
  kb::OracleCase oc{p, shape, inputs, weights, cpu, sample};
  kb::find_oracle("kda")(oc);
  EXPECT_LT(worst_disagreement(gpu[0], cpu[0], 128), 1e-10);
}

}  // namespace
