// Honest: DeepSeek-V3's group-limited routing in fp32, one thread per token, then the
// shared MLP and the grouped fp32 SwiGLU experts of the kits (kit/deepseek_moe_layer.cuh,
// problems/kit/v3/routed_swiglu_experts.cuh).
#include "deepseek_moe_layer.cuh"

namespace {

using deepseek_moe::kMaxExperts;
using deepseek_moe::kMaxGroups;

// One token per thread: sigmoid scores; each group's score is the sum of its two best; the
// topk_group best groups are kept; the top_k best experts of those are selected (a larger score
// wins, the lower index on equal scores); weights are the scores over their sum, times 2.5.
__global__ void route_kernel(const float* logits, int64_t tokens, int experts, int n_group, int topk_group, int top_k,
                             int* ids, float* weights) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= tokens) return;
  float s[kMaxExperts];
  deepseek_moe::sigmoid_scores(logits, t, experts, s);
  const int per_group = experts / n_group;
  float group_score[kMaxGroups];
  for (int g = 0; g < n_group; ++g) {
    float best = -1.f, second = -1.f;  // scores lie in [0, 1]
    for (int e = g * per_group; e < (g + 1) * per_group; ++e) {
      if (s[e] > best) second = best, best = s[e];
      else if (s[e] > second) second = s[e];
    }
    group_score[g] = best + second;
  }
  bool kept[kMaxGroups] = {};
  for (int k = 0; k < topk_group; ++k) {
    int pick = -1;
    for (int g = 0; g < n_group; ++g)
      if (!kept[g] && (pick < 0 || group_score[g] > group_score[pick])) pick = g;
    kept[pick] = true;
  }
  deepseek_moe::write_top_k(s, experts, top_k, [&](int e) { return kept[e / per_group]; }, t, ids, weights);
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) { return deepseek_moe::setup(p, state); }
extern "C" int kb_run(void* state, const kb_call* call) { return deepseek_moe::run(route_kernel, state, call); }
extern "C" void kb_teardown(void* state) { deepseek_moe::teardown(state); }
