// Routing for l4_moe_gated_gemm: the top_k experts of every token and their weights.
//
// moe_topk_indices (int64, [num_tokens, top_k]): top_k distinct experts per token, skewed and
// different for every seed, as moe_swiglu's routing is (problems/moe_swiglu/generators.cpp):
//   1. a random permutation of the experts ranks them;
//   2. the first tokens take the experts in rank order, top_k at a time (token t gets ranks
//      t * top_k .. t * top_k + top_k - 1, modulo num_experts), until every expert has a pair: the
//      byte count of problem.toml reads every expert's weights, which is then exact for every seed;
//   3. every other slot draws an expert with Zipf popularity (rank r with probability proportional
//      to 1 / (r + 1): with 8 experts the first takes 37% of the draws against a fair 12.5%),
//      redrawing one the token already has.
// A kernel that sizes its expert buffers for balanced routing (v3 routes uniformly at random) drops
// or misplaces pairs here.
//
// moe_topk_weights (f32, [num_tokens, top_k]): softmax over top_k standard normal logits per token,
// as a router's top-k renormalised softmax gives (weights positive, summing to 1 per token).
// Every value is a pure function of (seed, stream): Philox draws (core/random.h) and IEEE arithmetic.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/random.h"
#include "deck/registry.h"

namespace {

constexpr uint64_t kExpertOrderDraws = 0;          // + position in the shuffle
constexpr uint64_t kSlotDraws = uint64_t{1} << 32;  // + slot; attempt = redraw number
constexpr uint32_t kMaxRedraws = 64;

[[noreturn]] void fail(const kb::GeneratorCase& c, const std::string& generator, const std::string& what) {
  throw std::runtime_error((c.problem.dir / "problem.toml").string() + ": shape '" + c.shape_label() +
                           "': generator " + generator + ": " + what);
}

int64_t dim(const kb::GeneratorCase& c, const std::string& generator, const char* name) {
  const kb::Variables vars = c.problem.variables(c.shape);
  auto it = vars.find(name);
  if (it == vars.end()) fail(c, generator, std::string("needs a dim named '") + name + "'");
  return static_cast<int64_t>(it->second);
}

void moe_topk_indices(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const char* self = "moe_topk_indices";
  const int64_t tokens = dim(c, self, "num_tokens"), top_k = dim(c, self, "top_k"), experts = dim(c, self, "num_experts");
  if (out.numel() != tokens * top_k) fail(c, self, "the tensor must have shape [num_tokens, top_k]");
  if (top_k < 1 || top_k > experts)
    fail(c, self, "top_k = " + std::to_string(top_k) + " must be between 1 and num_experts (" + std::to_string(experts) + ")");
  if (tokens * top_k < experts)
    fail(c, self, "num_tokens * top_k = " + std::to_string(tokens * top_k) + " must be at least num_experts (" +
                      std::to_string(experts) + "): every expert gets a pair");
  std::vector<int64_t> order(static_cast<size_t>(experts));
  for (int64_t e = 0; e < experts; ++e) order[static_cast<size_t>(e)] = e;
  for (size_t k = order.size(); k > 1; --k)
    std::swap(order[k - 1], order[static_cast<size_t>(kb::uniform_int(c.seed, c.stream, kExpertOrderDraws + k, 0,
                                                                      static_cast<int64_t>(k) - 1))]);
  std::vector<double> cdf(static_cast<size_t>(experts));
  double total = 0;
  for (int64_t r = 0; r < experts; ++r) cdf[static_cast<size_t>(r)] = total += 1.0 / static_cast<double>(r + 1);
  const int64_t covering_tokens = (experts + top_k - 1) / top_k;
  std::vector<int64_t> mine(static_cast<size_t>(top_k));
  for (int64_t t = 0; t < tokens; ++t) {
    for (int64_t j = 0; j < top_k; ++j) {
      int64_t pick = -1;
      if (t < covering_tokens) {
        pick = order[static_cast<size_t>((t * top_k + j) % experts)];  // distinct: top_k <= experts
      } else {
        for (uint32_t attempt = 0; attempt < kMaxRedraws && pick < 0; ++attempt) {
          const kb::u32x4 w = kb::random_block(c.seed, c.stream, kSlotDraws + static_cast<uint64_t>(t * top_k + j), attempt);
          const double u = kb::uniform01_from_words(w.x, w.y) * total;
          const auto r = std::min<int64_t>(experts - 1, std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
          const int64_t e = order[static_cast<size_t>(r)];
          if (std::find(mine.begin(), mine.begin() + j, e) == mine.begin() + j) pick = e;
        }
        // Every draw hit an expert the token has (possible only when top_k is near num_experts):
        // the most popular one it lacks.
        for (int64_t r = 0; pick < 0; ++r)
          if (std::find(mine.begin(), mine.begin() + j, order[static_cast<size_t>(r)]) == mine.begin() + j)
            pick = order[static_cast<size_t>(r)];
      }
      mine[static_cast<size_t>(j)] = pick;
      out.set(t * top_k + j, static_cast<double>(pick));
    }
  }
}

void moe_topk_weights(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const char* self = "moe_topk_weights";
  const int64_t tokens = dim(c, self, "num_tokens"), top_k = dim(c, self, "top_k");
  if (out.numel() != tokens * top_k) fail(c, self, "the tensor must have shape [num_tokens, top_k]");
  std::vector<double> logit(static_cast<size_t>(top_k));
  for (int64_t t = 0; t < tokens; ++t) {
    double top = -INFINITY, sum = 0;
    for (int64_t j = 0; j < top_k; ++j) {
      logit[static_cast<size_t>(j)] = kb::normal(c.seed, c.stream, static_cast<uint64_t>(t * top_k + j), 0.0, 1.0);
      top = std::max(top, logit[static_cast<size_t>(j)]);
    }
    for (int64_t j = 0; j < top_k; ++j) sum += std::exp(logit[static_cast<size_t>(j)] - top);
    for (int64_t j = 0; j < top_k; ++j) out.set(t * top_k + j, std::exp(logit[static_cast<size_t>(j)] - top) / sum);
  }
}

KB_REGISTER_GENERATOR("moe_topk_indices", moe_topk_indices);
KB_REGISTER_GENERATOR("moe_topk_weights", moe_topk_weights);

}  // namespace
