// Honest: minGPT's causal self-attention in fp32, the problem's kit as it stands
// (kit/mingpt_attention_layer.cuh):
//   1. q|k|v = x W_attn^T + b_attn with the kit's fp32 GEMM (problems/kit/v3/fp32_tiled_gemm.cuh)
//   2. causal flash-style attention per (sequence, head) straight from the packed q|k|v rows
//      (problems/kit/v3/attention.cuh), heads written back side by side
//   3. out = y W_proj^T + b_proj with the kit's GEMM
#include "kbench/solution.h"
#include "mingpt_attention_layer.cuh"

extern "C" int kb_setup(const kb_problem* p, void** state) { return mingpt_attention::setup(p, state); }
extern "C" int kb_run(void* state, const kb_call* call) { return mingpt_attention::run(state, call); }
extern "C" void kb_teardown(void* state) { mingpt_attention::teardown(state); }
