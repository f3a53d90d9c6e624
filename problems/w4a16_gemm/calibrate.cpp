// Standalone calibration of w4a16_gemm's tolerance (CALIBRATION.md). Not part of the build (CMake
// compiles only reference.cpp and generators.cpp); run from the repository root with
//   g++ -std=c++20 -O2 -march=native -fopenmp -Isrc -Iproblems/w4a16_gemm \
//       -o /tmp/calib problems/w4a16_gemm/calibrate.cpp && /tmp/calib
// It draws x exactly as kbench does (normal(0, 1) rounded to bf16, input stream 0) and the weights
// through quantize.h (the generators' own code), takes `kRows` rows of x per seed (the error of one
// output element does not depend on M), and measures, against the fp64 oracle's arithmetic, the
// error of five ways to compute y, each rounded to bf16 at the end:
//   bf16-dequant   W' = bf16((q - z) * s), fp32 products and a sequential fp32 sum (what a tensor-core
//                  kernel that dequantizes to bf16 computes, up to the order of its fp32 sum)
//   exact-dequant  x * (q - z) summed in fp32 per group, times s, groups summed in fp32
//   fp64           the oracle's sum in double, then the bf16 output rounding alone
//   bf16-accum     bf16 dequant and a bf16 running sum (fp32-or-better accumulation is required)
//   fp16-accum     bf16 dequant and an fp16 running sum
// It prints, per method, the largest |err| / (atol + rtol |ref|) for the tolerance in problem.toml, the
// largest |err| and the rms of y.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/float_formats.h"
#include "core/random.h"
#include "quantize.h"

namespace {

constexpr int64_t kN = 12288, kK = 4096;  // the shapes' K; N of the largest-N-count shapes
constexpr int kRows = 4;
constexpr int kSeeds = 8;
constexpr double kStd = 0.02;             // problem.toml's W std
constexpr double kAtol = 0.02, kRtol = 0.0078125;  // problem.toml's tolerance

// Round to bf16 (nearest, ties to even) by the bit trick, for finite values: the same result as
// kb::bf16_from_float, an order of magnitude faster in this inner loop.
float bf16f(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  std::memcpy(&v, &u, 4);
  return v;
}
float f16f(float v) { return static_cast<float>(static_cast<_Float16>(v)); }

}  // namespace

int main() {
  const char* names[] = {"bf16-dequant", "exact-dequant", "fp64", "bf16-accum", "fp16-accum"};
  constexpr int kMethods = 5;
  // worst_beyond: the largest |err| - rtol |ref|, the part of the error atol has to cover.
  double worst_ratio[kMethods] = {}, worst_abs[kMethods] = {}, worst_beyond[kMethods] = {}, sum_y2 = 0;
  int64_t count = 0;
  std::vector<int> q(static_cast<size_t>(kK * kN));
  std::vector<double> scale(static_cast<size_t>(kK / w4a16::kGroup * kN)), zero(scale.size());
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
#pragma omp parallel
    {
      w4a16::GroupWeights g;
#pragma omp for schedule(static)
      for (int64_t i = 0; i < kK / w4a16::kGroup * kN; ++i) {
        const int64_t group = i / kN, n = i % kN;
        w4a16::group_weights(seed + 1000, group, n, kN, kStd, g);
        scale[static_cast<size_t>(i)] = g.params.scale;
        zero[static_cast<size_t>(i)] = g.params.zero;
        for (int64_t j = 0; j < w4a16::kGroup; ++j) q[static_cast<size_t>((group * w4a16::kGroup + j) * kN + n)] = g.q[j];
      }
    }
    for (int row = 0; row < kRows; ++row) {
      std::vector<double> x(kK);
      for (int64_t k = 0; k < kK; ++k)
        x[static_cast<size_t>(k)] = w4a16::to_bf16(kb::normal(seed, 0, static_cast<uint64_t>(row * kK + k), 0.0, 1.0));
#pragma omp parallel for schedule(static) reduction(+ : sum_y2, count)
      for (int64_t n = 0; n < kN; ++n) {
        double exact = 0;
        float acc_bf = 0, acc_group_total = 0, acc_b = 0, acc_h = 0;
        for (int64_t g = 0; g < kK / w4a16::kGroup; ++g) {
          const double s = scale[static_cast<size_t>(g * kN + n)], z = zero[static_cast<size_t>(g * kN + n)];
          float acc_group = 0;
          for (int64_t k = g * w4a16::kGroup; k < (g + 1) * w4a16::kGroup; ++k) {
            const int qv = q[static_cast<size_t>(k * kN + n)];
            const double xv = x[static_cast<size_t>(k)];
            exact += xv * ((qv - z) * s);
            const float wb = bf16f(static_cast<float>((qv - z) * s));
            acc_bf += static_cast<float>(xv) * wb;
            acc_group += static_cast<float>(xv) * static_cast<float>(qv - z);
            acc_b = bf16f(acc_b + bf16f(static_cast<float>(xv) * wb));
            acc_h = f16f(acc_h + f16f(static_cast<float>(xv) * wb));
          }
          acc_group_total += acc_group * static_cast<float>(s);
        }
        const double got[kMethods] = {bf16f(acc_bf), bf16f(acc_group_total), w4a16::to_bf16(exact), bf16f(acc_b),
                                      bf16f(acc_h)};
        for (int m = 0; m < kMethods; ++m) {
          const double err = std::fabs(got[m] - exact);
          const double ratio = err / (kAtol + kRtol * std::fabs(exact));
#pragma omp critical
          {
            if (ratio > worst_ratio[m]) worst_ratio[m] = ratio;
            if (err > worst_abs[m]) worst_abs[m] = err;
            if (err - kRtol * std::fabs(exact) > worst_beyond[m]) worst_beyond[m] = err - kRtol * std::fabs(exact);
          }
        }
        sum_y2 += exact * exact;
        ++count;
      }
    }
    std::fprintf(stderr, "seed %d done\n", static_cast<int>(seed));
  }
  std::printf("%lld elements (N=%lld, K=%lld, %d rows x %d seeds), rms(y) = %.4f, atol = %g, rtol = %g\n",
              static_cast<long long>(count), static_cast<long long>(kN), static_cast<long long>(kK), kRows, kSeeds,
              std::sqrt(sum_y2 / count), kAtol, kRtol);
  for (int m = 0; m < kMethods; ++m)
    std::printf("  %-14s max err/allowed %.3f   max |err| %.5f   max |err| - rtol |ref| %.5f\n", names[m],
                worst_ratio[m], worst_abs[m], worst_beyond[m]);
}
