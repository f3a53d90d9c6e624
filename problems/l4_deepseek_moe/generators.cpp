// Router logits for l4_deepseek_moe (tensor router_logits, f32, [num_tokens, num_experts]): the
// gate's output x W_g^T of DeepSeek-V3's MoE, drawn directly so that the routing is skewed, changes
// with the seed, and is decided with a margin that fp32 arithmetic cannot cross.
//
// deepseek_router_logits (params: spread, noise, margin):
//   1. a random permutation of the experts ranks them by popularity; expert of rank r (0-based) gets
//      the offset spread * (1 - 2 r / (num_experts - 1)): the most popular +spread, the least
//      -spread. With spread = noise = 1 on v3's shape (8192 tokens, top 8 of 64) the most popular
//      expert gets 2800-3050 tokens and the least 60-90 (seeds 1 and 2), against a fair share of
//      1024 (tests/unit/test_deck_l4_deepseek_moe.cpp): a kernel that sizes experts for balanced
//      routing drops or misroutes tokens;
//   2. each token's logit for expert e is that offset plus a normal deviate of std `noise` (v3's
//      gate, x ~ N(0, 1) through a kaiming-uniform 2048 -> 64 Linear, gives logits of std 0.58;
//      1.0 spreads the sigmoid scores a little wider), stored in fp32;
//   3. the token's routing is computed in fp64 from the stored fp32 logits
//      (src/deck/ops/moe_routing.h); if its group decision (the 4th best group score against the
//      5th) or its expert decision (the 8th best candidate score against the 9th) is closer than
//      `margin`, the token's noise is drawn again (attempt 1, 2, ...): with margin = 1e-4, a small
//      fraction of the tokens, redrawn once or twice.
// Why 3: a solution computes the sigmoid scores and the group sums in fp32, with errors of a few
// 1e-8 (scores lie in (0, 1)); a decision closer than that could go either way in fp32 and flip a
// whole expert's contribution to the token's output, far outside any tolerance. Margins of 1e-4,
// a thousand times the fp32 error, make every honest fp32 routing agree with the fp64 oracle's, on
// every seed: no tie, and no near-tie, is ever reached.
// Every value is a pure function of (seed, stream): the draws use the Philox streams of
// core/random.h.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/random.h"
#include "deck/ops/moe_routing.h"
#include "deck/registry.h"

namespace {

constexpr uint64_t kExpertOrderDraws = 0;               // + position in the shuffle
constexpr uint64_t kNoiseDraws = uint64_t{1} << 32;     // + (attempt * num_tokens + token) * num_experts + expert
constexpr int64_t kMaxAttempts = 1000;

[[noreturn]] void fail(const kb::GeneratorCase& c, const std::string& what) {
  throw std::runtime_error((c.problem.dir / "problem.toml").string() + ": shape '" + c.shape_label() +
                           "': generator deepseek_router_logits: " + what);
}

int64_t dim(const kb::GeneratorCase& c, const char* name) {
  const kb::Variables vars = c.problem.variables(c.shape);
  auto it = vars.find(name);
  if (it == vars.end()) fail(c, std::string("needs a dim named '") + name + "'");
  return static_cast<int64_t>(it->second);
}

void deepseek_router_logits(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const int64_t tokens = dim(c, "num_tokens"), experts = dim(c, "num_experts");
  kb::ops::GroupLimitedTopK routing;
  routing.num_experts = experts;
  routing.n_group = dim(c, "n_group");
  routing.topk_group = dim(c, "topk_group");
  routing.top_k = dim(c, "top_k");
  try {
    kb::ops::check_routing(routing);
  } catch (const std::invalid_argument& e) {
    fail(c, e.what());
  }
  if (out.numel() != tokens * experts) fail(c, "the tensor must have shape [num_tokens, num_experts]");
  const double spread = c.init.param("spread", 1.0), noise = c.init.param("noise", 1.0);
  const double margin = c.init.param("margin", 1e-4);
  if (!(spread >= 0) || !(noise > 0) || !(margin >= 0))
    fail(c, "spread (" + std::to_string(spread) + ") and margin (" + std::to_string(margin) +
                ") must be >= 0 and noise (" + std::to_string(noise) + ") > 0");

  std::vector<int64_t> order(static_cast<size_t>(experts));
  for (int64_t e = 0; e < experts; ++e) order[static_cast<size_t>(e)] = e;
  for (size_t k = order.size(); k > 1; --k)
    std::swap(order[k - 1], order[static_cast<size_t>(kb::uniform_int(c.seed, c.stream, kExpertOrderDraws + k, 0,
                                                                      static_cast<int64_t>(k) - 1))]);
  std::vector<double> offset(static_cast<size_t>(experts), 0.0);
  for (int64_t r = 0; r < experts; ++r)
    offset[static_cast<size_t>(order[static_cast<size_t>(r)])] =
        experts > 1 ? spread * (1.0 - 2.0 * static_cast<double>(r) / static_cast<double>(experts - 1)) : 0.0;

  std::vector<int64_t> failed_tokens;
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<double> logits(static_cast<size_t>(experts));
    bool placed = false;
    for (int64_t attempt = 0; attempt < kMaxAttempts && !placed; ++attempt) {
      for (int64_t e = 0; e < experts; ++e) {
        const uint64_t index = kNoiseDraws + static_cast<uint64_t>((attempt * tokens + t) * experts + e);
        // The value the solution sees: the draw rounded to fp32.
        logits[static_cast<size_t>(e)] = static_cast<float>(
            kb::normal(c.seed, c.stream, index, offset[static_cast<size_t>(e)], noise));
      }
      const kb::ops::TokenRoute route = kb::ops::route_token(logits.data(), routing);
      placed = route.group_margin >= margin && route.expert_margin >= margin;
    }
    if (!placed) {
#pragma omp critical
      failed_tokens.push_back(t);
    }
    for (int64_t e = 0; e < experts; ++e) out.set(t * experts + e, logits[static_cast<size_t>(e)]);
  }
  if (!failed_tokens.empty())
    fail(c, "token " + std::to_string(*std::min_element(failed_tokens.begin(), failed_tokens.end())) +
                " found no routing with margins >= " + std::to_string(margin) + " in " + std::to_string(kMaxAttempts) +
                " draws: lower `margin` or raise `noise`");
}

KB_REGISTER_GENERATOR("deepseek_router_logits", deepseek_router_logits);

}  // namespace
