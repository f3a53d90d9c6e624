// Calibration of moe_swiglu's tolerance (CALIBRATION.md). Draws the real inputs and weights (the
// problem's generators, through kbench's deck library), computes the fp64 oracle on sampled rows, and
// replays in fp32 the arithmetic of honest kernels, of a lossy shortcut and of the exploits, printing
// per shape the worst error and the worst "excess" |got - expected| / (atol + rtol |expected|) under
// the tolerance of problem.toml. Not part of the build; after building kbench (for its libraries):
//   g++ -std=c++20 -O2 -fopenmp -Isrc -Iinclude -DTOML_HEADER_ONLY=1 -DFMT_HEADER_ONLY \
//     problems/moe_swiglu/calibrate.cpp problems/moe_swiglu/generators.cpp \
//     problems/moe_swiglu/reference.cpp build/libkbench_deck.a build/libkbench_core.a -o /tmp/calib_moe
//   /tmp/calib_moe [seeds=3] [rows per seed=64]
// The weights are drawn once per shape (seed 1000), as kbench draws them once per evaluation.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "core/float_formats.h"
#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"

namespace {

float bf16_round(float x) { return kb::bf16_to_float(kb::bf16_from_float(x, kb::Saturation::finite)); }
float widen(uint16_t b) { return kb::bf16_to_float(b); }
float silu(float g) { return g / (1.0f + std::exp(-g)); }

// W quantised to e4m3 with one scale per (expert, output column): the lossy shortcut of keeping the
// weights in fp8 to halve their bytes. Returns the dequantised values, in the weight's layout.
std::vector<float> fp8_weights(const kb::HostTensor& w) {
  const int64_t experts = w.shape[0], hidden = w.shape[1], inter = w.shape[2];
  const auto* bits = static_cast<const uint16_t*>(w.data());
  std::vector<float> out(static_cast<size_t>(w.numel()));
#pragma omp parallel for
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t j = 0; j < inter; ++j) {
      float amax = 0;
      for (int64_t h = 0; h < hidden; ++h) amax = std::max(amax, std::fabs(widen(bits[(e * hidden + h) * inter + j])));
      const float scale = amax > 0 ? amax / 448.0f : 1.0f;
      for (int64_t h = 0; h < hidden; ++h) {
        const int64_t i = (e * hidden + h) * inter + j;
        out[i] = kb::e4m3_to_float(kb::e4m3_from_float(widen(bits[i]) / scale, kb::Saturation::finite)) * scale;
      }
    }
  return out;
}

struct Stat {
  double max_abs = 0, max_rel = 0, max_excess = 0;
  void add(double got, double e, double atol, double rtol) {
    const double err = std::fabs(got - e);
    max_abs = std::max(max_abs, err);
    if (std::fabs(e) > 0.1) max_rel = std::max(max_rel, err / std::fabs(e));
    max_excess = std::max(max_excess, err / (atol + rtol * std::fabs(e)));
  }
};

constexpr int kVariants = 6;
const char* kNames[kVariants] = {"fused, fp32 g and u, one rounding", "g and u rounded to bf16, then fused epilogue",
                                 "eager: g, u, silu(g) and product each rounded", "lossy: e4m3 weights (per-column scale)",
                                 "exploit: zero output", "exploit: balanced routing"};

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 3;
  const size_t rows_per_seed = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 64;
  const kb::Problem p = kb::load_problem("problems/moe_swiglu");
  const double atol = *p.outputs[0].tolerance.atol, rtol = *p.outputs[0].tolerance.rtol;
  std::printf("tolerance atol %g rtol %g; seeds 1-%d, %zu rows per seed\n", atol, rtol, seeds, rows_per_seed);
  for (size_t si = 0; si < p.shapes.size(); ++si) {
    const kb::ShapeCase& shape = p.shapes[si];
    const auto weights = kb::generate_weights(p, shape, 1000);
    const auto wg8 = fp8_weights(weights[0]), wu8 = fp8_weights(weights[1]);
    const auto* wg = static_cast<const uint16_t*>(weights[0].data());
    const auto* wu = static_cast<const uint16_t*>(weights[1].data());
    const int64_t experts = weights[0].shape[0], hidden = weights[0].shape[1], inter = weights[0].shape[2];
    Stat st[kVariants];
    double min_exploit[2] = {INFINITY, INFINITY}, mag_sum = 0, mag_max = 0;
    int64_t mag_n = 0, mag_small = 0, empty_experts = 0, max_rows = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      const auto in = kb::generate_inputs(p, shape, static_cast<uint64_t>(seed));
      const auto* x = static_cast<const uint16_t*>(in[0].data());
      const int64_t rows = in[0].shape[0];
      std::vector<int64_t> off(static_cast<size_t>(experts + 1));
      for (int64_t e = 0; e <= experts; ++e) off[e] = static_cast<int64_t>(in[1].get(e));
      for (int64_t e = 0; e < experts; ++e) {
        empty_experts += off[e + 1] == off[e];
        max_rows = std::max(max_rows, off[e + 1] - off[e]);
      }
      std::mt19937_64 rng(static_cast<uint64_t>(seed));
      std::vector<int64_t> sample;
      for (size_t i = 0; i < std::min<size_t>(rows_per_seed, static_cast<size_t>(rows)); ++i)
        sample.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(rows)));
      std::vector<std::vector<double>> expected(1, std::vector<double>(static_cast<size_t>(rows * inter), NAN));
      kb::OracleCase oc{p, shape, in, weights, expected, sample};
      kb::find_oracle("moe_swiglu")(oc);
      // The balanced-routing exploit's expert for row r: rows split evenly, in order.
      const int64_t per = (rows + experts - 1) / experts;
      std::vector<std::vector<float>> got(sample.size(), std::vector<float>(static_cast<size_t>(kVariants * inter)));
#pragma omp parallel for schedule(dynamic)
      for (size_t s = 0; s < sample.size(); ++s) {
        const int64_t r = sample[s];
        int64_t e = 0;
        while (off[e + 1] <= r) ++e;
        const int64_t eb = std::min(experts - 1, r / per);
        std::vector<float> g(inter, 0), u(inter, 0), g8(inter, 0), u8(inter, 0), gb(inter, 0), ubal(inter, 0);
        for (int64_t h = 0; h < hidden; ++h) {
          const float xv = widen(x[r * hidden + h]);
          const int64_t base = (e * hidden + h) * inter, bbase = (eb * hidden + h) * inter;
          for (int64_t j = 0; j < inter; ++j) {
            g[j] = std::fma(xv, widen(wg[base + j]), g[j]);
            u[j] = std::fma(xv, widen(wu[base + j]), u[j]);
            g8[j] = std::fma(xv, wg8[base + j], g8[j]);
            u8[j] = std::fma(xv, wu8[base + j], u8[j]);
            gb[j] = std::fma(xv, widen(wg[bbase + j]), gb[j]);
            ubal[j] = std::fma(xv, widen(wu[bbase + j]), ubal[j]);
          }
        }
        float* o = got[s].data();
        for (int64_t j = 0; j < inter; ++j) {
          const float g16 = bf16_round(g[j]), u16 = bf16_round(u[j]);
          o[0 * inter + j] = bf16_round(silu(g[j]) * u[j]);
          o[1 * inter + j] = bf16_round(silu(g16) * u16);
          o[2 * inter + j] = bf16_round(bf16_round(silu(g16)) * u16);
          o[3 * inter + j] = bf16_round(silu(g8[j]) * u8[j]);
          o[4 * inter + j] = 0;
          o[5 * inter + j] = bf16_round(silu(gb[j]) * ubal[j]);
        }
      }
      double seed_excess[2] = {0, 0};
      for (size_t s = 0; s < sample.size(); ++s)
        for (int64_t j = 0; j < inter; ++j) {
          const double e = expected[0][sample[s] * inter + j];
          for (int k = 0; k < kVariants; ++k) st[k].add(got[s][k * inter + j], e, atol, rtol);
          for (int k = 0; k < 2; ++k)
            seed_excess[k] = std::max(seed_excess[k], std::fabs(got[s][(4 + k) * inter + j] - e) / (atol + rtol * std::fabs(e)));
          mag_sum += std::fabs(e);
          mag_max = std::max(mag_max, std::fabs(e));
          mag_small += std::fabs(e) < atol;
          ++mag_n;
        }
      for (int k = 0; k < 2; ++k) min_exploit[k] = std::min(min_exploit[k], seed_excess[k]);
    }
    std::printf("\nshape %zu (%s): %.1f empty experts per seed, the busiest has %lld rows (fair share %lld); "
                "|expected| mean %.3f max %.3f, below atol %.2f%%\n",
                si, p.shape_label(si).c_str(), static_cast<double>(empty_experts) / seeds, static_cast<long long>(max_rows),
                static_cast<long long>(p.shapes[si].dims[0] * p.shapes[si].dims[1] / experts), mag_sum / mag_n, mag_max,
                100.0 * mag_small / mag_n);
    for (int k = 0; k < kVariants; ++k)
      std::printf("  %-48s max abs err %.3g  max rel err (|e| > 0.1) %.3g  max excess %.3g%s\n", kNames[k], st[k].max_abs,
                  st[k].max_rel, st[k].max_excess,
                  k >= 4 ? (" (smallest over seeds " + std::to_string(min_exploit[k - 4]) + ")").c_str() : "");
    std::fflush(stdout);
  }
}
