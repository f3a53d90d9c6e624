// Kahan-compensated fp32 accumulation in the same layout as host-naive-fp32 (256 strided "threads"
// per row, then a pairwise tree), so the two differ only in the compensation: each thread keeps a
// running sum and the low-order part its additions lost (Kahan, "Further remarks on reducing
// truncation errors", CACM 8(1), 1965), and the tree merges (sum, compensation) pairs with an exact
// TwoSum (Knuth, TAOCP vol. 2, 4.2.2). Everything stays fp32. Built without -ffast-math (kbench's
// host flags are -O3 -march=native), which would let the compiler cancel the compensation away.
#include <cmath>

#include "kbench/solution.h"

namespace {
constexpr int kLanes = 256;
struct State {
  int64_t batch, vocab;
};
struct Pair {
  float s, c;  // value = s + c, |c| <= ulp(s) / 2 after each step
};
// Knuth's TwoSum: s + e == a + b exactly, with s = fl(a + b).
inline void two_sum(float a, float b, float& s, float& e) {
  s = a + b;
  const float bb = s - a;
  e = (a - (s - bb)) + (b - bb);
}
inline Pair merge(Pair a, Pair b) {
  float s, e;
  two_sum(a.s, b.s, s, e);
  e += a.c + b.c;
  float s2, e2;
  two_sum(s, e, s2, e2);
  return {s2, e2};
}
}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new State{p->dim_values[0], p->dim_values[1]};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  const float* x = static_cast<const float*>(c->inputs[0].data);
  float* y = static_cast<float*>(c->outputs[0].data);
  for (int64_t r = 0; r < s->batch; ++r) {
    const float* xr = x + r * s->vocab;
    float* yr = y + r * s->vocab;
    float mx = -INFINITY;
    for (int64_t j = 0; j < s->vocab; ++j) mx = std::fmax(mx, xr[j]);
    Pair part[kLanes];
    for (int t = 0; t < kLanes; ++t) {
      float sum = 0.f, comp = 0.f;  // Kahan: sum + (-comp) is the running total
      for (int64_t j = t; j < s->vocab; j += kLanes) {
        const float term = std::exp(xr[j] - mx) - comp;
        const float next = sum + term;
        comp = (next - sum) - term;
        sum = next;
      }
      part[t] = {sum, -comp};
    }
    for (int width = kLanes / 2; width > 0; width /= 2)
      for (int t = 0; t < width; ++t) part[t] = merge(part[t], part[t + width]);
    const float total = part[0].s + part[0].c;
    for (int64_t j = 0; j < s->vocab; ++j) yr[j] = std::exp(xr[j] - mx) / total;
  }
  return 0;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
