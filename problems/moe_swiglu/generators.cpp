// Routing for moe_swiglu: how many of the num_tokens * top_k routed rows each expert receives, as
// expert_offsets (int32, [num_experts + 1]: expert e owns rows offsets[e] .. offsets[e + 1] - 1).
//
// moe_routing: exactly `active_experts` experts (a dim of the shape, so that the byte count in
// problem.toml, which includes only the weights of experts that have rows, is exact for every seed)
// receive rows; which ones, and how popular each is, changes with the seed:
//   1. a random permutation of the experts; its first active_experts are the active ones, ranked
//      in that order;
//   2. each active expert gets one row, so that none of them is empty;
//   3. every other row goes to an active expert drawn with Zipf popularity: rank r (0-based) with
//      probability proportional to 1 / (r + 1) (Zipf's law with exponent 1: with 8 experts the first
//      takes 37% of the rows against a fair 12.5%, with 64 it takes 21% against 1.6%); an expert
//      never gets more than num_tokens rows, since top-k routing sends a token to k distinct
//      experts; a draw that lands on a full expert is redrawn.
// The result is far from balanced: a kernel that assumes num_tokens * top_k / num_experts rows per
// expert, or that every expert has rows, computes with the wrong weights.
// Every value is a pure function of (seed, stream): the draws use the Philox streams of core/random.h,
// and the popularity weights 1 / (r + 1) are IEEE divisions, the same on every machine.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/random.h"
#include "deck/registry.h"

namespace {

constexpr uint64_t kExpertOrderDraws = 0;            // + position in the shuffle
constexpr uint64_t kRowDraws = uint64_t{1} << 32;    // + row; attempt = redraw number
constexpr uint32_t kMaxRedraws = 64;


[[noreturn]] void fail(const kb::GeneratorCase& c, const std::string& what) {
  throw std::runtime_error((c.problem.dir / "problem.toml").string() + ": shape '" + c.shape_label() +
                           "': generator moe_routing: " + what);
}

int64_t dim(const kb::GeneratorCase& c, const char* name) {
  const kb::Variables vars = c.problem.variables(c.shape);
  auto it = vars.find(name);
  if (it == vars.end()) fail(c, std::string("needs a dim named '") + name + "'");
  return static_cast<int64_t>(it->second);
}

void moe_routing(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const int64_t tokens = dim(c, "num_tokens"), top_k = dim(c, "top_k"), experts = dim(c, "num_experts");
  const int64_t active = dim(c, "active_experts"), rows = tokens * top_k;
  if (out.numel() != experts + 1) fail(c, "the tensor must have shape [num_experts + 1]");
  if (active < top_k || active > experts || active > rows)
    fail(c, "active_experts = " + std::to_string(active) + " must be at least top_k (" + std::to_string(top_k) +
                "), at most num_experts (" + std::to_string(experts) + ") and at most num_tokens * top_k (" +
                std::to_string(rows) + ")");
  std::vector<int64_t> order(static_cast<size_t>(experts));
  for (int64_t e = 0; e < experts; ++e) order[static_cast<size_t>(e)] = e;
  for (size_t k = order.size(); k > 1; --k)
    std::swap(order[k - 1], order[static_cast<size_t>(kb::uniform_int(c.seed, c.stream, kExpertOrderDraws + k, 0,
                                                                      static_cast<int64_t>(k) - 1))]);
  // Cumulative Zipf weights of the active ranks.
  std::vector<double> cdf(static_cast<size_t>(active));
  double total = 0;
  for (int64_t r = 0; r < active; ++r) cdf[static_cast<size_t>(r)] = total += 1.0 / static_cast<double>(r + 1);
  std::vector<int64_t> count(static_cast<size_t>(experts), 0);
  for (int64_t r = 0; r < active; ++r) count[static_cast<size_t>(order[static_cast<size_t>(r)])] = 1;
  for (int64_t row = active; row < rows; ++row) {
    int64_t pick = -1;
    for (uint32_t attempt = 0; attempt < kMaxRedraws && pick < 0; ++attempt) {
      const kb::u32x4 w = kb::random_block(c.seed, c.stream, kRowDraws + static_cast<uint64_t>(row), attempt);
      const double u = kb::uniform01_from_words(w.x, w.y) * total;
      const auto r = std::min<int64_t>(active - 1, std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
      if (count[static_cast<size_t>(order[static_cast<size_t>(r)])] < tokens) pick = r;
    }
    // Every draw hit a full expert (possible only when nearly all are full): the most popular one
    // with room. One exists, since active * num_tokens >= top_k * num_tokens = rows.
    for (int64_t r = 0; pick < 0; ++r)
      if (count[static_cast<size_t>(order[static_cast<size_t>(r)])] < tokens) pick = r;
    ++count[static_cast<size_t>(order[static_cast<size_t>(pick)])];
  }
  int64_t offset = 0;
  out.set(0, 0);
  for (int64_t e = 0; e < experts; ++e) out.set(e + 1, static_cast<double>(offset += count[static_cast<size_t>(e)]));
}

KB_REGISTER_GENERATOR("moe_routing", moe_routing);

}  // namespace
