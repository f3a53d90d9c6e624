// How fast the judge compares a large output: one bf16 output of N elements (default 2^25, a
// 16K-row x 2K-column tensor) against its expected values with atol/rtol, as `judge_output` does for
// every checked call. Prints the wall time per element; run it with OMP_NUM_THREADS=1 and without to
// see how the comparison scales over threads. (The MoE deck shapes judge 400M-element outputs about
// a dozen times per shape.)
//
//   kbench_judge_throughput [ELEMENTS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/tensor.h"
#include "eval/judge.h"

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : int64_t{1} << 25;
  const int64_t cols = 2048;
  if (n <= 0 || n % cols) {
    std::fprintf(stderr, "kbench_judge_throughput: ELEMENTS must be a positive multiple of %lld\n", static_cast<long long>(cols));
    return 2;
  }
  kb::HostTensor got("out", kb::DType::bf16, {n / cols, cols});
  std::vector<double> expected(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    expected[static_cast<size_t>(i)] = 0.001 * static_cast<double>(i % 2000) - 1;
    got.set(i, expected[static_cast<size_t>(i)] * 1.001);  // within tolerance: every element is judged in full
  }
  kb::TensorSpec spec;
  spec.name = "out";
  spec.dtype = kb::DType::bf16;
  spec.tolerance.atol = 0.01;
  spec.tolerance.rtol = 0.02;
  const auto t0 = std::chrono::steady_clock::now();
  const kb::OutputVerdict v = kb::judge_output(spec, got, expected, {});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("judged %lld bf16 elements (%s) in %.3f s: %.1f ns per element\n", static_cast<long long>(v.checked),
              v.pass ? "pass" : "fail", s, s * 1e9 / static_cast<double>(n));
  return v.pass ? 0 : 1;
}
