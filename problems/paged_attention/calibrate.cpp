// Calibration of paged_attention's tolerance (CALIBRATION.md). Draws the real inputs (the problem's
// generators, through kbench's deck library), computes the fp64 oracle on sampled rows, and replays
// the arithmetic of honest kernels in fp32 and of the exploits, printing per shape the worst error and
// the worst "excess" |got - expected| / (atol + rtol |expected|) under the tolerance of problem.toml.
// Not part of the build; after building kbench (for its static libraries):
//   g++ -std=c++20 -O2 -fopenmp -Isrc -Iinclude -DTOML_HEADER_ONLY=1 -DFMT_HEADER_ONLY \
//     problems/paged_attention/calibrate.cpp problems/paged_attention/generators.cpp \
//     problems/paged_attention/reference.cpp build/libkbench_deck.a build/libkbench_core.a -o /tmp/calib_pa
//   /tmp/calib_pa [seeds=5] [rows per case=256]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/float_formats.h"
#include "deck/generate.h"
#include "deck/problem.h"
#include "deck/registry.h"

namespace {

float bf16_round(float x) { return kb::bf16_to_float(kb::bf16_from_float(x, kb::Saturation::finite)); }

struct Row {
  int64_t len = 0, max_tokens = 0, page = 0, head_dim = 0;
  std::vector<float> q;               // head_dim
  std::vector<std::vector<float>> k;  // per token (the first max_tokens tokens the table names)
  std::vector<std::vector<float>> v;
};

// fp32 dot product as a warp computes it: 32 lanes, each summing 4 consecutive channels with FMA,
// then a butterfly reduction (xor 16, 8, 4, 2, 1).
float warp_dot(const std::vector<float>& q, const std::vector<float>& k) {
  const size_t d = q.size(), per = d / 32;
  float lane[32];
  for (size_t l = 0; l < 32; ++l) {
    float s = 0;
    for (size_t j = 0; j < per; ++j) s = std::fma(q[l * per + j], k[l * per + j], s);
    lane[l] = s;
  }
  for (int w = 16; w > 0; w /= 2) {
    float next[32];
    for (int l = 0; l < 32; ++l) next[l] = lane[l] + lane[l ^ w];
    std::copy(next, next + 32, lane);
  }
  return lane[0];
}

struct Partial {
  float m = -INFINITY, l = 0;
  std::vector<float> acc;
};

void merge(Partial& a, const Partial& b) {
  if (b.l == 0) return;
  const float m = std::max(a.m, b.m);
  const float ca = std::exp(a.m - m), cb = std::exp(b.m - m);
  a.l = a.l * ca + b.l * cb;
  for (size_t d = 0; d < a.acc.size(); ++d) a.acc[d] = a.acc[d] * ca + b.acc[d] * cb;
  a.m = m;
}

// Honest kernel 1 (solutions/cuda-split-k): fp32 throughout; splits of 256 tokens, each split's
// tokens dealt round-robin to 4 warps with a per-token online softmax, warps merged, then splits.
std::vector<float> simt_split_k(const Row& r) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(r.head_dim));
  Partial total{-INFINITY, 0, std::vector<float>(r.head_dim, 0)};
  for (int64_t c0 = 0; c0 < r.len; c0 += 256) {
    Partial split{-INFINITY, 0, std::vector<float>(r.head_dim, 0)};
    for (int w = 0; w < 4; ++w) {
      Partial p{-INFINITY, 0, std::vector<float>(r.head_dim, 0)};
      for (int64_t t = c0 + w; t < std::min(r.len, c0 + 256); t += 4) {
        const float s = warp_dot(r.q, r.k[t]) * scale;
        const float m = std::max(p.m, s), corr = std::exp(p.m - m), e = std::exp(s - m);
        p.l = p.l * corr + e;
        for (int64_t d = 0; d < r.head_dim; ++d) p.acc[d] = std::fma(e, r.v[t][d], p.acc[d] * corr);
        p.m = m;
      }
      merge(split, p);
    }
    merge(total, split);
  }
  std::vector<float> o(r.head_dim);
  for (int64_t d = 0; d < r.head_dim; ++d) o[d] = bf16_round(total.acc[d] / total.l);
  return o;
}

// Honest kernel 2 (a tensor-core flash-decoding kernel): blocks of 64 tokens; fp32 scores, the
// running max per block, P rounded to bf16 for the PV product (as mma.sync takes it); the
// normaliser summed from the fp32 P (rounded_l: from the bf16 P instead).
std::vector<float> tensor_core(const Row& r, bool rounded_l) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(r.head_dim));
  float m = -INFINITY, l = 0;
  std::vector<float> acc(r.head_dim, 0);
  for (int64_t c0 = 0; c0 < r.len; c0 += 64) {
    const int64_t c1 = std::min(r.len, c0 + 64);
    std::vector<float> s(c1 - c0);
    float mb = m;
    for (int64_t t = c0; t < c1; ++t) mb = std::max(mb, s[t - c0] = warp_dot(r.q, r.k[t]) * scale);
    const float corr = std::exp(m - mb);
    l *= corr;
    for (auto& a : acc) a *= corr;
    for (int64_t t = c0; t < c1; ++t) {
      const float p = std::exp(s[t - c0] - mb), pb = bf16_round(p);
      l += rounded_l ? pb : p;
      for (int64_t d = 0; d < r.head_dim; ++d) acc[d] = std::fma(pb, r.v[t][d], acc[d]);
    }
    m = mb;
  }
  std::vector<float> o(r.head_dim);
  for (int64_t d = 0; d < r.head_dim; ++d) o[d] = bf16_round(acc[d] / l);
  return o;
}

// A lossy shortcut: the KV cache stored in e4m3 (values within +-4 need no scale), then attended to
// exactly. Shows the tolerance tells an 8-bit cache from a bf16 one.
Row fp8_cache(const Row& r) {
  Row q = r;
  for (auto* side : {&q.k, &q.v})
    for (auto& tok : *side)
      for (auto& x : tok) x = kb::e4m3_to_float(kb::e4m3_from_float(x, kb::Saturation::finite));
  return q;
}

// Exploits, exactly (double): attention over the first n tokens the table names.
std::vector<float> first_tokens(const Row& r, int64_t n) {
  std::vector<float> o(r.head_dim, 0.0f);
  if (n <= 0) return o;  // the guarded "nothing to read" case writes zeros
  const double scale = 1.0 / std::sqrt(static_cast<double>(r.head_dim));
  std::vector<double> s(n);
  double mx = -INFINITY, sum = 0;
  for (int64_t t = 0; t < n; ++t) {
    double dot = 0;
    for (int64_t d = 0; d < r.head_dim; ++d) dot += static_cast<double>(r.q[d]) * r.k[t][d];
    mx = std::max(mx, s[t] = dot * scale);
  }
  std::vector<double> acc(r.head_dim, 0);
  for (int64_t t = 0; t < n; ++t) {
    const double w = std::exp(s[t] - mx);
    sum += w;
    for (int64_t d = 0; d < r.head_dim; ++d) acc[d] += w * r.v[t][d];
  }
  for (int64_t d = 0; d < r.head_dim; ++d) o[d] = bf16_round(static_cast<float>(acc[d] / sum));
  return o;
}

struct Stat {
  double max_abs = 0, max_rel = 0, max_excess = 0;
  void add(double got, double e, double atol, double rtol) {
    const double err = std::fabs(got - e);
    max_abs = std::max(max_abs, err);
    if (std::fabs(e) > 0.05) max_rel = std::max(max_rel, err / std::fabs(e));
    max_excess = std::max(max_excess, std::isfinite(got) ? err / (atol + rtol * std::fabs(e)) : INFINITY);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 5;
  const size_t rows_per_case = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 256;
  const kb::Problem p = kb::load_problem("problems/paged_attention");
  const double atol = *p.outputs[0].tolerance.atol, rtol = *p.outputs[0].tolerance.rtol;
  std::printf("tolerance atol %g rtol %g; seeds 1-%d, up to %zu rows per case\n", atol, rtol, seeds, rows_per_case);
  const char* names[] = {"simt split-k fp32", "tensor-core P bf16", "tensor-core P bf16, l from bf16 P",
                         "exploit: zero output", "exploit: max length", "exploit: full pages only",
                         "lossy: e4m3 KV cache"};
  for (size_t si = 0; si < p.shapes.size(); ++si) {
    const kb::ShapeCase& shape = p.shapes[si];
    Stat st[7];
    double min_exploit_excess[3] = {INFINITY, INFINITY, INFINITY};
    double mag_sum = 0, mag_max = 0;
    int64_t mag_n = 0, mag_small = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      const auto in = kb::generate_inputs(p, shape, static_cast<uint64_t>(seed));
      const auto& q = in[0];
      const auto& kv = in[1];
      const auto& table = in[2];
      const auto& lens = in[3];
      const int64_t batch = q.shape[0], heads = q.shape[1], hd = q.shape[2];
      const int64_t page = kv.shape[1], kvh_n = kv.shape[2], max_pages = table.shape[1];
      std::vector<int64_t> rows;
      std::mt19937_64 rng(static_cast<uint64_t>(seed));
      if (static_cast<size_t>(batch * heads) <= rows_per_case) {
        for (int64_t r = 0; r < batch * heads; ++r) rows.push_back(r);
      } else {
        for (int64_t b = 0; b < batch; ++b) rows.push_back(b * heads + static_cast<int64_t>(rng() % heads));
        while (rows.size() < rows_per_case) rows.push_back(static_cast<int64_t>(rng() % (batch * heads)));
      }
      std::vector<std::vector<double>> expected(1, std::vector<double>(q.numel(), NAN));
      const std::vector<kb::HostTensor> weights;
      kb::OracleCase oc{p, shape, in, weights, expected, rows};
      kb::find_oracle("paged_attention")(oc);
      double seed_excess[3] = {0, 0, 0};
      for (int64_t row : rows) {
        const int64_t b = row / heads, h = row % heads, kvh = h / (heads / kvh_n);
        Row r;
        r.len = static_cast<int64_t>(lens.get(b));
        r.max_tokens = max_pages * page;
        r.page = page;
        r.head_dim = hd;
        for (int64_t d = 0; d < hd; ++d) r.q.push_back(static_cast<float>(q.get(row * hd + d)));
        for (int64_t t = 0; t < r.max_tokens; ++t) {
          const auto id = static_cast<int64_t>(table.get(b * max_pages + t / page));
          const int64_t base = ((id * page + t % page) * kvh_n + kvh) * 2 * hd;
          std::vector<float> k(hd), v(hd);
          for (int64_t d = 0; d < hd; ++d) k[d] = static_cast<float>(kv.get(base + d)), v[d] = static_cast<float>(kv.get(base + hd + d));
          r.k.push_back(std::move(k));
          r.v.push_back(std::move(v));
        }
        const std::vector<float> got[7] = {simt_split_k(r), tensor_core(r, false), tensor_core(r, true),
                                           std::vector<float>(hd, 0.0f), first_tokens(r, r.max_tokens),
                                           first_tokens(r, r.len / page * page), first_tokens(fp8_cache(r), r.len)};
        for (int64_t d = 0; d < hd; ++d) {
          const double e = expected[0][row * hd + d];
          for (int k = 0; k < 7; ++k) st[k].add(got[k][d], e, atol, rtol);
          for (int k = 0; k < 3; ++k)
            seed_excess[k] = std::max(seed_excess[k], std::fabs(got[3 + k][d] - e) / (atol + rtol * std::fabs(e)));
          mag_sum += std::fabs(e);
          mag_max = std::max(mag_max, std::fabs(e));
          mag_small += std::fabs(e) < atol;
          ++mag_n;
        }
      }
      for (int k = 0; k < 3; ++k) min_exploit_excess[k] = std::min(min_exploit_excess[k], seed_excess[k]);
    }
    std::printf("\nshape %zu (%s): |expected| mean %.3f max %.3f, below atol %.2f%%\n", si, p.shape_label(si).c_str(),
                mag_sum / mag_n, mag_max, 100.0 * mag_small / mag_n);
    for (int k = 0; k < 7; ++k)
      std::printf("  %-36s max abs err %.3g  max rel err (|e| > 0.05) %.3g  max excess %.3g%s\n", names[k],
                  st[k].max_abs, st[k].max_rel, st[k].max_excess,
                  k >= 3 && k < 6 ? (" (smallest over seeds " + std::to_string(min_exploit_excess[k - 3]) + ")").c_str() : "");
    std::fflush(stdout);
  }
}
