// Group-limited top-k routing in fp64, as DeepSeek-V3's MoE gate selects experts (MoEGate.forward
// with topk_method "noaux_tc" in modeling_deepseek.py of the model's Hugging Face repository
// deepseek-ai/DeepSeek-V3):
//   1. scores s_e = sigmoid(logit_e) for the num_experts experts;
//   2. the experts form n_group groups of num_experts / n_group consecutive experts; a group's score
//      is the sum of its `group_score_top` (DeepSeek-V3: 2) largest scores;
//   3. the topk_group groups with the largest group scores are kept;
//   4. the top_k experts with the largest scores among the kept groups' experts are selected;
//   5. their weights are their scores divided by the sum of the selected scores, times `scaling`
//      (norm_topk_prob, routed_scaling_factor: 2.5 in DeepSeek-V3).
// DeepSeek-V3 adds a correction bias to the scores for steps 2-4 only; KernelBench v3's problem
// keeps it zero, and so does this op.
//
// Ties: a larger score wins; between equal scores (group or expert), the lower index wins. The
// deck's data never reaches the rule (problems/l4_deepseek_moe/generators.cpp draws the logits so
// that every decision has a margin), but an oracle must be a function of its inputs.
//
// Plain C++17 types only: the GPU reference (a .cu file, C++17) calls it on the host too, so that
// both compute exactly the same routing.
#pragma once

#include <cstdint>
#include <vector>

namespace kb::ops {

struct GroupLimitedTopK {
  int64_t num_experts = 0, n_group = 1, topk_group = 1, top_k = 1;
  int64_t group_score_top = 2;  // a group's score: the sum of its this-many best scores
  double scaling = 1.0;         // routed_scaling_factor
};

// One token's routing.
struct TokenRoute {
  std::vector<int64_t> experts;  // top_k expert ids, best score first
  std::vector<double> weights;   // their weights, same order
  // How far each decision is from flipping, in score units: the topk_group-th best group score
  // minus the next one (infinity when every group is kept), and the top_k-th best score among the
  // kept groups' experts minus the next one (infinity when every candidate is selected).
  double group_margin = 0, expert_margin = 0;
};

// Fails (std::invalid_argument naming the parameter and its value) unless
// 1 <= topk_group <= n_group, n_group divides num_experts, 1 <= group_score_top <= experts per group,
// and 1 <= top_k <= topk_group * experts per group.
void check_routing(const GroupLimitedTopK& r);

// The routing of one token from its num_experts router logits.
TokenRoute route_token(const double* logits, const GroupLimitedTopK& r);

// Every token of a (tokens, num_experts) row-major logit matrix.
std::vector<TokenRoute> route_tokens(const std::vector<double>& logits, int64_t tokens, const GroupLimitedTopK& r);

}  // namespace kb::ops
