// Which timed calls are re-checked: a reservoir sample (Vitter's algorithm R, "Random sampling with a
// reservoir", ACM TOMS 11(1), 1985) of `size` calls among all the timed calls of a shape, however
// many the stopping rule lets run, drawn from a secret seed of the parent's. Every timed call is
// equally likely to be one of them, the last as much as the first, and whether a call is kept is
// decided before it runs (its outputs are then downloaded after it). The worker keeps the sample;
// the parent, knowing the seed and the number of calls, recomputes it and rejects a reply that
// re-checks other calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace kb {

class RecheckReservoir {
 public:
  RecheckReservoir(uint64_t seed, size_t size) : seed_(seed), size_(size) {}
  // The slot timed call `call` (0, 1, 2, ... in order) takes in the sample, replacing the call that
  // held it; nullopt when the call is not kept.
  std::optional<size_t> slot_for(uint64_t call) const;
  // The calls the sample holds after `calls` timed calls, by slot.
  std::vector<uint64_t> sample_after(uint64_t calls) const;
  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  size_t size_;
};

}  // namespace kb
