// Honest host top-k: per row, a min-heap of the k best (value, column) seen so far (its root is the
// weakest winner, replaced by any larger element), then the heap emptied from the back so the values
// come out largest first. Rows run in parallel under OpenMP. Plain float comparisons: no
// -ffast-math, so denormals compare exactly; +-inf compare like any other value; -0 == +0 is a tie.
#include <cstdint>
#include <vector>

#include "kbench/solution.h"

namespace {

struct Entry {
  float value;
  int64_t column;
};

// Restores the min-heap property below position i of heap[0 .. size).
void sift_down(Entry* heap, int64_t size, int64_t i) {
  for (;;) {
    const int64_t l = 2 * i + 1, r = l + 1;
    int64_t least = i;
    if (l < size && heap[l].value < heap[least].value) least = l;
    if (r < size && heap[r].value < heap[least].value) least = r;
    if (least == i) return;
    const Entry t = heap[i];
    heap[i] = heap[least];
    heap[least] = t;
    i = least;
  }
}

void sift_up(Entry* heap, int64_t i) {
  while (i > 0) {
    const int64_t parent = (i - 1) / 2;
    if (!(heap[i].value < heap[parent].value)) return;
    const Entry t = heap[i];
    heap[i] = heap[parent];
    heap[parent] = t;
    i = parent;
  }
}

struct State {
  int64_t batch, n, k;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new State{p->dim_values[0], p->dim_values[1], p->dim_values[2]};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  const auto* x = static_cast<const float*>(c->inputs[0].data);
  auto* values = static_cast<float*>(c->outputs[0].data);
  auto* indices = static_cast<int64_t*>(c->outputs[1].data);
  const int64_t n = s->n, k = s->k;
#pragma omp parallel
  {
    std::vector<Entry> heap(static_cast<size_t>(k));
#pragma omp for schedule(static)
    for (int64_t r = 0; r < s->batch; ++r) {
      const float* row = x + r * n;
      int64_t size = 0;
      for (int64_t j = 0; j < n; ++j) {
        if (size < k) {
          heap[static_cast<size_t>(size)] = {row[j], j};
          sift_up(heap.data(), size++);
        } else if (row[j] > heap[0].value) {
          heap[0] = {row[j], j};
          sift_down(heap.data(), k, 0);
        }
      }
      // Pop the minimum k times, filling the output from its last position: largest first.
      for (int64_t out = k - 1; out >= 0; --out) {
        values[r * k + out] = heap[0].value;
        indices[r * k + out] = heap[0].column;
        heap[0] = heap[static_cast<size_t>(--size)];
        sift_down(heap.data(), size, 0);
      }
    }
  }
  return 0;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
