// Honest cuda solution for l2_conv3d_softmax_maxpool: the problem kit's fused kernel
// (kit/conv3d_softmax_pool4.cuh) with exact fp32 operands: a direct conv of fp32 FMA chains, the
// softmax over the channels in fp32, and both poolings as one max over 4 x 4 x 4 blocks, in one pass.
#include "conv3d_softmax_pool4.cuh"
#include "kbench/solution.h"

namespace {

struct State {
  conv3d_softmax_pool4::Volume volume;
  const float* weight;
  const float* bias;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  *state = new State{conv3d_softmax_pool4::volume_of(p->dim_values), static_cast<const float*>(p->weights[0].data),
                     static_cast<const float*>(p->weights[1].data)};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  return conv3d_softmax_pool4::launch(s->volume, static_cast<const float*>(c->inputs[0].data), s->weight, s->bias,
                                      static_cast<float*>(c->outputs[0].data), static_cast<cudaStream_t>(c->stream),
                                      v3kit::ExactOperand{});
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
