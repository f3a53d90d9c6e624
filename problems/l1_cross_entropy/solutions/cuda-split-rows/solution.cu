// Honest cuda cross-entropy for l1_cross_entropy: the problem kit's two passes (kit/cross_entropy_kernels.cuh).
// Pass 1 splits each row into chunks (several per row when the batch is small), one block each, and
// keeps the online (max, sum of exp(x - max)) pair in fp32 with expf; pass 2, one block, merges each
// row's pairs, takes log(sum) + (max - x[target]) and the mean over the rows. Scratch for the pairs is
// allocated once per shape in kb_setup.
#include "cross_entropy_kernels.cuh"
#include "kbench/solution.h"

namespace {

struct State {
  int64_t batch = 0, classes = 0, splits = 1, chunk = 0;
  float2* pairs = nullptr;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  s->batch = p->dim_values[0], s->classes = p->dim_values[1];
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 1;
  s->splits = cross_entropy::splits_for(s->batch, s->classes, sms);
  s->chunk = (s->classes + s->splits - 1) / s->splits;
  if (s->batch > 65535) return 2;  // the rows are the grid's y dimension
  return cudaMalloc(&s->pairs, sizeof(float2) * s->batch * s->splits) == cudaSuccess ? 0 : 3;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  const auto stream = static_cast<cudaStream_t>(c->stream);
  const auto* logits = static_cast<const float*>(c->inputs[0].data);
  const auto* targets = static_cast<const int64_t*>(c->inputs[1].data);
  const dim3 grid(static_cast<unsigned>(s->splits), static_cast<unsigned>(s->batch));
  cross_entropy::chunk_max_sum<<<grid, cross_entropy::kChunkThreads, 0, stream>>>(logits, s->pairs, s->classes, s->chunk);
  cross_entropy::mean_loss<<<1, cross_entropy::kMeanThreads, 0, stream>>>(
      logits, targets, s->pairs, static_cast<float*>(c->outputs[0].data), s->batch, s->classes, s->splits);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  if (s->pairs) cudaFree(s->pairs);
  delete s;
}
