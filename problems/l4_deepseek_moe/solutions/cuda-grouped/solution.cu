// Honest: DeepSeek-V3's group-limited routing in fp32, one thread per token, then the
// shared MLP and the grouped fp32 SwiGLU experts of the kits (kit/deepseek_moe_layer.cuh,
// problems/kit/v3/routed_swiglu_experts.cuh).
#include "deepseek_moe_layer.cuh"

namespace {

using deepseek_moe::kMaxExperts;
using deepseek_moe::kMaxGroups;
using deepseek_moe::kMaxTopK;
using deepseek_moe::kRoutedScaling;

// One token per thread: sigmoid scores; each group's score is the sum of its two best; the
// topk_group best groups are kept; the top_k best experts of those are selected (a larger score
// wins, the lower index on equal scores); weights are the scores over their sum, times 2.5.
__global__ void route_kernel(const float* logits, int64_t tokens, int experts, int n_group, int topk_group, int top_k,
                             int* ids, float* weights) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= tokens) return;
  float s[kMaxExperts];
  for (int e = 0; e < experts; ++e) s[e] = 1.f / (1.f + expf(-logits[t * experts + e]));
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
  bool taken[kMaxExperts] = {};
  int chosen[kMaxTopK];
  float total = 0.f;
  for (int k = 0; k < top_k; ++k) {
    int pick = -1;
    for (int e = 0; e < experts; ++e)
      if (kept[e / per_group] && !taken[e] && (pick < 0 || s[e] > s[pick])) pick = e;
    taken[pick] = true;
    chosen[k] = pick;
    total += s[pick];
  }
  for (int k = 0; k < top_k; ++k) {
    ids[t * top_k + k] = chosen[k];
    weights[t * top_k + k] = s[chosen[k]] / total * kRoutedScaling;
  }
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) { return deepseek_moe::setup(p, state); }
extern "C" int kb_run(void* state, const kb_call* call) { return deepseek_moe::run(route_kernel, state, call); }
extern "C" void kb_teardown(void* state) { deepseek_moe::teardown(state); }
