#include "protocol/recheck_reservoir.h"

#include "core/random.h"

namespace kb {

namespace {
// A Philox stream of its own (the input streams are 0, 1, ...; the perturbation key's is 0xFFFF0001).
constexpr uint32_t kReservoirStream = 0xFFFF0002u;
}  // namespace

std::optional<size_t> RecheckReservoir::slot_for(uint64_t call) const {
  if (size_ == 0) return std::nullopt;
  if (call < size_) return static_cast<size_t>(call);
  const auto j = static_cast<uint64_t>(uniform_int(seed_, kReservoirStream, call, 0, static_cast<int64_t>(call)));
  if (j < size_) return static_cast<size_t>(j);
  return std::nullopt;
}

std::vector<uint64_t> RecheckReservoir::sample_after(uint64_t calls) const {
  std::vector<uint64_t> held;
  for (uint64_t c = 0; c < calls; ++c)
    if (auto s = slot_for(c)) {
      if (*s == held.size()) held.push_back(c);
      else held[*s] = c;
    }
  return held;
}

}  // namespace kb
