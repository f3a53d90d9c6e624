// Honest l4_moe_gated_gemm: the deck's routed fp32 FFN (problems/kit/v3/moe_routed_ffn.cuh, through
// the problem's kit, kit/moe_gated_gemm_layer.cuh: routing on the device, grouped fp32 GEMMs per
// expert for gate, up with the SwiGLU epilogue and down with the routing weight, then each token's
// slots summed in order), with room for every routed pair.
#include "moe_gated_gemm_layer.cuh"

namespace {

// An expert's capacity is num_tokens, the most it can receive (a token's experts are distinct): no
// pair is ever dropped.
int64_t capacity(const moe_ffn::Sizes& z) { return z.tokens; }

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) { return moe_gated_gemm::setup(p, state, capacity); }
extern "C" int kb_run(void* state, const kb_call* c) { return moe_gated_gemm::run(state, c); }
extern "C" void kb_teardown(void* state) { moe_gated_gemm::teardown(state); }
