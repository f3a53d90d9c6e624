// Inputs for paged_attention that exercise what a paged decode kernel gets wrong: sequences of very
// different lengths (length 1, the maximum, a whole number of pages, and lengths that end inside a
// page), pages scattered over the pool in a random order, and V values whose outputs sit far from 0.
//
// paged_seq_lens   seq_lens (int32, [batch]): lengths in [1, max_seq_len] that sum to exactly
//                  total_tokens (a dim of the shape, so that the FLOP and byte counts in problem.toml
//                  are exact for every seed). With batch >= 2 one sequence has length 1 and one the
//                  maximum; with batch >= 3 one more is a random whole number of pages; the others
//                  are uniform around the mean the total implies, nudged by one token at a time until
//                  the total is met. The slots are then shuffled, so every seed puts them elsewhere.
//                  With batch == 1 the single length is total_tokens.
// paged_block_table  block_table (int32, [batch, max_pages]): a random permutation of the pool's
//                  pages dealt out to the sequences, ceil(len / page_size) pages each (it regenerates
//                  seq_lens from the same seed to know how many). The entries past a sequence's last
//                  page hold random valid page ids, as a reused table does in a serving engine: a
//                  kernel that reads past the length reads real data, gets a wrong answer, and does
//                  not crash.
// paged_kv_cache   kv_cache (bf16, [num_blocks, page_size, num_kv_heads, 2 * head_dim]): K in the first
//                  head_dim channels, uniform in [-k_range, k_range]; V in the last head_dim, a mean
//                  per (kv head, channel) drawn uniform in [-v_mean, v_mean] plus noise uniform in
//                  [-v_noise, v_noise]. The means keep outputs of order 1 (a softmax-weighted average
//                  of zero-mean V shrinks towards 0 as sequences grow, and an all-zero output would
//                  then pass); the noise keeps the outputs dependent on exactly which tokens are read.
// Every value is a pure function of (seed, stream, index), as src/deck/generate.h requires.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/random.h"
#include "deck/registry.h"

namespace {

// Index ranges of the Philox draws inside one generator's stream, far apart so they never overlap.
constexpr uint64_t kFreeLengthDraws = 0;             // + slot
constexpr uint64_t kWholePagesDraw = uint64_t{1} << 32;
constexpr uint64_t kNudgeOrderDraws = uint64_t{2} << 32;  // + position in the shuffle
constexpr uint64_t kSlotOrderDraws = uint64_t{3} << 32;
constexpr uint64_t kPagePermutationDraws = 0;         // + position in the shuffle (block_table's stream)
constexpr uint64_t kPaddingDraws = uint64_t{1} << 40;  // + flat index of the table entry


[[noreturn]] void fail(const kb::GeneratorCase& c, const std::string& generator, const std::string& what) {
  throw std::runtime_error((c.problem.dir / "problem.toml").string() + ": shape '" + c.shape_label() + "': generator " +
                           generator + ": " + what);
}

int64_t dim(const kb::GeneratorCase& c, const std::string& generator, const char* name) {
  const kb::Variables vars = c.problem.variables(c.shape);
  auto it = vars.find(name);
  if (it == vars.end()) fail(c, generator, std::string("needs a dim named '") + name + "'");
  return static_cast<int64_t>(it->second);
}


// Fisher-Yates shuffle of v, draw k taken at index base + k of (seed, stream).
template <class T>
void shuffle(std::vector<T>& v, uint64_t seed, uint32_t stream, uint64_t base) {
  for (size_t k = v.size(); k > 1; --k) {
    const auto j = static_cast<size_t>(kb::uniform_int(seed, stream, base + k, 0, static_cast<int64_t>(k) - 1));
    std::swap(v[k - 1], v[j]);
  }
}

// Shared with the block-table generator, which needs the lengths to deal out the pages.
std::vector<int64_t> paged_seq_lens_values(const kb::GeneratorCase& c) {
  const std::string g = "paged_seq_lens";
  const int64_t batch = dim(c, g, "batch"), max_len = dim(c, g, "max_seq_len"), page = dim(c, g, "page_size");
  const int64_t total = dim(c, g, "total_tokens");
  if (total < batch || total > batch * max_len)
    fail(c, g, "total_tokens = " + std::to_string(total) + " cannot be split into " + std::to_string(batch) +
                   " lengths in [1, " + std::to_string(max_len) + "]");
  if (batch == 1) return {total};
  // The reserved slots: length 1, the maximum, and (batch >= 3, max_len >= page) a whole number of pages.
  std::vector<int64_t> lens = {1, max_len};
  if (batch >= 3 && max_len >= page)
    lens.push_back(page * kb::uniform_int(c.seed, c.stream, kWholePagesDraw, 1, max_len / page));
  const auto reserved = static_cast<int64_t>(lens.size());
  int64_t rest = total;
  for (int64_t l : lens) rest -= l;
  const int64_t free_slots = batch - reserved;
  if (rest < free_slots || rest > free_slots * max_len)
    fail(c, g, "total_tokens = " + std::to_string(total) + " leaves " + std::to_string(rest) + " tokens for " +
                   std::to_string(free_slots) + " sequences besides the reserved lengths (1, the maximum, a whole "
                   "number of pages); choose a total between " + std::to_string(free_slots + 1 + max_len + page) +
                   " and " + std::to_string(batch * max_len - page) + " or so");
  if (free_slots > 0) {
    // Uniform on an interval centred on the mean the remaining total implies, inside [1, max_len].
    const double mean = static_cast<double>(rest) / static_cast<double>(free_slots);
    const double half = std::min(mean - 1.0, static_cast<double>(max_len) - mean);
    const auto lo = std::max<int64_t>(1, static_cast<int64_t>(mean - half));
    const auto hi = std::min<int64_t>(max_len, static_cast<int64_t>(mean + half));
    int64_t sum = 0;
    std::vector<size_t> order;
    for (int64_t j = 0; j < free_slots; ++j) {
      lens.push_back(kb::uniform_int(c.seed, c.stream, kFreeLengthDraws + static_cast<uint64_t>(j), lo, hi));
      sum += lens.back();
      order.push_back(lens.size() - 1);
    }
    // Nudge the free lengths one token at a time, in a random order, until they sum to `rest`.
    shuffle(order, c.seed, c.stream, kNudgeOrderDraws);
    for (int64_t diff = rest - sum; diff != 0;)
      for (size_t k = 0; k < order.size() && diff != 0; ++k) {
        int64_t& l = lens[order[k]];
        if (diff > 0 && l < max_len) ++l, --diff;
        else if (diff < 0 && l > 1) --l, ++diff;
      }
  }
  shuffle(lens, c.seed, c.stream, kSlotOrderDraws);
  return lens;
}

void paged_seq_lens(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const auto lens = paged_seq_lens_values(c);
  if (static_cast<int64_t>(lens.size()) != out.numel())
    fail(c, "paged_seq_lens", "the tensor must have shape [batch]");
  for (size_t b = 0; b < lens.size(); ++b) out.set(static_cast<int64_t>(b), static_cast<double>(lens[b]));
}

void paged_block_table(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const std::string g = "paged_block_table";
  const kb::Problem& p = c.problem;
  // The lengths, regenerated exactly as the input named seq_lens is (input i draws on stream i).
  size_t lens_input = p.inputs.size(), kv_input = p.inputs.size();
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (p.inputs[i].name == "seq_lens") lens_input = i;
    if (p.inputs[i].name == "kv_cache") kv_input = i;
  }
  if (lens_input == p.inputs.size() || kv_input == p.inputs.size())
    fail(c, g, "needs inputs named 'seq_lens' and 'kv_cache'");
  const kb::InitSpec& lens_init = p.init_for(p.inputs[lens_input], c.shape);
  if (lens_init.kind != kb::InitSpec::Kind::generator || lens_init.generator != "paged_seq_lens")
    fail(c, g, "the input 'seq_lens' must be drawn by the paged_seq_lens generator");
  const auto lens = paged_seq_lens_values(kb::GeneratorCase{p, c.shape, lens_init, c.seed, static_cast<uint32_t>(lens_input)});
  const int64_t num_blocks = p.tensor_shape(p.inputs[kv_input], c.shape).at(0);
  const int64_t page = dim(c, g, "page_size");
  if (out.shape.size() != 2 || out.shape[0] != static_cast<int64_t>(lens.size()))
    fail(c, g, "the tensor must have shape [batch, max_pages]");
  const int64_t max_pages = out.shape[1];
  int64_t used = 0;
  for (int64_t l : lens) {
    if ((l + page - 1) / page > max_pages) fail(c, g, "a sequence needs more pages than the table has columns");
    used += (l + page - 1) / page;
  }
  if (used > num_blocks)
    fail(c, g, "the sequences use " + std::to_string(used) + " pages but the pool (kv_cache's first dim) has only " +
                   std::to_string(num_blocks));
  std::vector<int64_t> pages(static_cast<size_t>(num_blocks));
  for (int64_t i = 0; i < num_blocks; ++i) pages[static_cast<size_t>(i)] = i;
  shuffle(pages, c.seed, c.stream, kPagePermutationDraws);
  size_t next = 0;
  for (size_t b = 0; b < lens.size(); ++b) {
    const int64_t own = (lens[b] + page - 1) / page;
    for (int64_t j = 0; j < max_pages; ++j) {
      const int64_t flat = static_cast<int64_t>(b) * max_pages + j;
      const int64_t id = j < own ? pages[next++]
                                 : kb::uniform_int(c.seed, c.stream, kPaddingDraws + static_cast<uint64_t>(flat), 0,
                                                   num_blocks - 1);
      out.set(flat, static_cast<double>(id));
    }
  }
}

void paged_kv_cache(const kb::GeneratorCase& c, kb::HostTensor& out) {
  const std::string g = "paged_kv_cache";
  const int64_t kv_heads = dim(c, g, "num_kv_heads"), head_dim = dim(c, g, "head_dim");
  const double k_range = c.init.param("k_range", 3.0), v_mean = c.init.param("v_mean", 2.0);
  const double v_noise = c.init.param("v_noise", 1.0);
  if (out.shape.size() != 4 || out.shape[2] != kv_heads || out.shape[3] != 2 * head_dim)
    fail(c, g, "the tensor must have shape [num_blocks, page_size, num_kv_heads, 2 * head_dim]");
  const int64_t n = out.numel();
  // The V means, one per (kv head, channel), drawn past the end of the element indices.
  std::vector<double> mean(static_cast<size_t>(kv_heads * head_dim));
  for (size_t i = 0; i < mean.size(); ++i)
    mean[i] = kb::uniform(c.seed, c.stream, static_cast<uint64_t>(n) + i, -v_mean, v_mean);
  // Two elements per Philox block (words x, y for the even element, z, w for the odd one): the
  // cache is the largest tensor of the deck's decode problems and is drawn for every seed.
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (int64_t pair = 0; pair < (n + 1) / 2; ++pair) {
    const kb::u32x4 r = kb::random_block(c.seed, c.stream, static_cast<uint64_t>(pair), 0);
    for (int64_t k = 0; k < 2 && 2 * pair + k < n; ++k) {
      const int64_t i = 2 * pair + k;
      const double u = k == 0 ? kb::uniform01_from_words(r.x, r.y) : kb::uniform01_from_words(r.z, r.w);
      const int64_t channel = i % (2 * head_dim), head = (i / (2 * head_dim)) % kv_heads;
      const double v = channel < head_dim
                           ? k_range * (2 * u - 1)
                           : mean[static_cast<size_t>(head * head_dim + channel - head_dim)] + v_noise * (2 * u - 1);
      out.set(i, v);
    }
  }
}

KB_REGISTER_GENERATOR("paged_seq_lens", paged_seq_lens);
KB_REGISTER_GENERATOR("paged_block_table", paged_block_table);
KB_REGISTER_GENERATOR("paged_kv_cache", paged_kv_cache);

}  // namespace
