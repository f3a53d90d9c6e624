#include "deck/ops/moe_routing.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "deck/ops/activations.h"

namespace kb::ops {

namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("group_limited_topk: " + what); }

// The index of the largest value among those with allowed[i], the lower index on a tie; -1 if none.
int64_t best_of(const std::vector<double>& v, const std::vector<bool>& allowed) {
  int64_t best = -1;
  for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i)
    if (allowed[static_cast<size_t>(i)] && (best < 0 || v[static_cast<size_t>(i)] > v[static_cast<size_t>(best)])) best = i;
  return best;
}

// Picks the `count` best of the allowed values (best first), clearing them in `allowed`; returns
// them and, in `margin`, the last picked value minus the best value left (infinity when none is left).
std::vector<int64_t> pick_best(const std::vector<double>& v, std::vector<bool>& allowed, int64_t count, double& margin) {
  std::vector<int64_t> picked;
  for (int64_t k = 0; k < count; ++k) {
    const int64_t b = best_of(v, allowed);
    picked.push_back(b);
    allowed[static_cast<size_t>(b)] = false;
  }
  const int64_t next = best_of(v, allowed);
  margin = next < 0 ? std::numeric_limits<double>::infinity()
                    : v[static_cast<size_t>(picked.back())] - v[static_cast<size_t>(next)];
  return picked;
}

}  // namespace

void check_routing(const GroupLimitedTopK& r) {
  if (r.num_experts < 1) bad("num_experts = " + std::to_string(r.num_experts) + " must be positive");
  if (r.n_group < 1 || r.num_experts % r.n_group != 0)
    bad("n_group = " + std::to_string(r.n_group) + " must divide num_experts = " + std::to_string(r.num_experts));
  const int64_t per_group = r.num_experts / r.n_group;
  if (r.topk_group < 1 || r.topk_group > r.n_group)
    bad("topk_group = " + std::to_string(r.topk_group) + " must be in [1, n_group = " + std::to_string(r.n_group) + "]");
  if (r.group_score_top < 1 || r.group_score_top > per_group)
    bad("group_score_top = " + std::to_string(r.group_score_top) + " must be in [1, experts per group = " +
        std::to_string(per_group) + "]");
  if (r.top_k < 1 || r.top_k > r.topk_group * per_group)
    bad("top_k = " + std::to_string(r.top_k) + " must be in [1, topk_group * experts per group = " +
        std::to_string(r.topk_group * per_group) + "]");
}

TokenRoute route_token(const double* logits, const GroupLimitedTopK& r) {
  check_routing(r);
  const int64_t per_group = r.num_experts / r.n_group;
  std::vector<double> score(static_cast<size_t>(r.num_experts));
  for (int64_t e = 0; e < r.num_experts; ++e) score[static_cast<size_t>(e)] = sigmoid(logits[e]);

  std::vector<double> group_score(static_cast<size_t>(r.n_group));
  for (int64_t g = 0; g < r.n_group; ++g) {
    const std::vector<double> members(score.begin() + g * per_group, score.begin() + (g + 1) * per_group);
    std::vector<bool> open(static_cast<size_t>(per_group), true);
    double unused = 0, sum = 0;
    for (int64_t e : pick_best(members, open, r.group_score_top, unused)) sum += members[static_cast<size_t>(e)];
    group_score[static_cast<size_t>(g)] = sum;
  }

  TokenRoute route;
  std::vector<bool> group_open(static_cast<size_t>(r.n_group), true);
  const std::vector<int64_t> kept = pick_best(group_score, group_open, r.topk_group, route.group_margin);
  std::vector<bool> candidate(static_cast<size_t>(r.num_experts), false);
  for (int64_t g : kept)
    for (int64_t e = g * per_group; e < (g + 1) * per_group; ++e) candidate[static_cast<size_t>(e)] = true;
  route.experts = pick_best(score, candidate, r.top_k, route.expert_margin);

  double total = 0;
  for (int64_t e : route.experts) total += score[static_cast<size_t>(e)];
  for (int64_t e : route.experts) route.weights.push_back(score[static_cast<size_t>(e)] / total * r.scaling);
  return route;
}

std::vector<TokenRoute> route_tokens(const std::vector<double>& logits, int64_t tokens, const GroupLimitedTopK& r) {
  check_routing(r);
  if (tokens < 0 || static_cast<int64_t>(logits.size()) != tokens * r.num_experts)
    bad("the logits hold " + std::to_string(logits.size()) + " values, not tokens * num_experts = " +
        std::to_string(tokens) + " * " + std::to_string(r.num_experts));
  std::vector<TokenRoute> routes(static_cast<size_t>(tokens));
#pragma omp parallel for schedule(static) if (tokens > 256)
  for (int64_t t = 0; t < tokens; ++t) routes[static_cast<size_t>(t)] = route_token(logits.data() + t * r.num_experts, r);
  return routes;
}

}  // namespace kb::ops
