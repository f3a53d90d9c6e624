// Honest, fast host softmax: rows (or row blocks) spread over OpenMP threads, two passes per row
// (an online max-and-sum pass, then a scale pass), blocked accumulation in vector-friendly lanes.
#include <omp.h>

#include <algorithm>
#include <cmath>

#include "kbench/solution.h"

namespace {

constexpr int kLanes = 16;  // independent partial sums: vectorisable and more accurate than one

struct State {
  int64_t batch, vocab;
};

// One pass: running max and the sum of exp(x - max), rescaled when the max grows (the online
// softmax normaliser of Milakov & Gimelshein, 2018), kept per lane.
void max_and_sum(const float* x, int64_t n, float& out_max, float& out_sum) {
  float m[kLanes], s[kLanes];
  for (int l = 0; l < kLanes; ++l) m[l] = -INFINITY, s[l] = 0.f;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const float v = x[j + l];
      if (v > m[l]) {
        s[l] = s[l] * std::exp(m[l] - v) + 1.f;
        m[l] = v;
      } else {
        s[l] += std::exp(v - m[l]);
      }
    }
  for (; j < n; ++j) {
    const float v = x[j];
    if (v > m[0]) {
      s[0] = s[0] * std::exp(m[0] - v) + 1.f;
      m[0] = v;
    } else {
      s[0] += std::exp(v - m[0]);
    }
  }
  float mx = -INFINITY;
  for (int l = 0; l < kLanes; ++l) mx = std::max(mx, m[l]);
  float sum = 0.f;
  for (int l = 0; l < kLanes; ++l)
    if (s[l] > 0.f) sum += s[l] * std::exp(m[l] - mx);
  out_max = mx;
  out_sum = sum;
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new State{p->dim_values[0], p->dim_values[1]};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* st = static_cast<const State*>(state);
  const float* x = static_cast<const float*>(c->inputs[0].data);
  float* y = static_cast<float*>(c->outputs[0].data);
  const int64_t rows = st->batch, n = st->vocab;
  const int threads = omp_get_max_threads();
  if (rows >= threads) {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      float mx, sum;
      max_and_sum(x + r * n, n, mx, sum);
      const float inv = 1.f / sum;
      float* yr = y + r * n;
      const float* xr = x + r * n;
#pragma omp simd
      for (int64_t j = 0; j < n; ++j) yr[j] = std::exp(xr[j] - mx) * inv;
    }
  } else {
    // Fewer rows than threads: split each row into chunks, combine the partial normalisers.
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * n;
      float* yr = y + r * n;
      float pm[256], ps[256];
      const int parts = std::min(threads, 256);
#pragma omp parallel num_threads(parts)
      {
        const int t = omp_get_thread_num();
        const int64_t lo = n * t / parts, hi = n * (t + 1) / parts;
        max_and_sum(xr + lo, hi - lo, pm[t], ps[t]);
#pragma omp barrier
        float mx = -INFINITY, sum = 0.f;
        for (int i = 0; i < parts; ++i) mx = std::max(mx, pm[i]);
        for (int i = 0; i < parts; ++i)
          if (ps[i] > 0.f) sum += ps[i] * std::exp(pm[i] - mx);
        const float inv = 1.f / sum;
#pragma omp simd
        for (int64_t j = lo; j < hi; ++j) yr[j] = std::exp(xr[j] - mx) * inv;
      }
    }
  }
  return 0;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
