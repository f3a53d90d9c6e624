// The perturbation of a timed call's inputs: before every timed call, each row of each perturbed
// input has two pairs of its elements swapped, at positions drawn from a secret key, so that no
// timed call sees inputs any earlier call saw (docs/evaluation.md, "What a timed call's inputs
// are"). A swap keeps every row's multiset of values, so the inputs stay exactly in the problem's
// distribution (ranges, row norms, levels, special values), and it is the same bytes moved on the
// host and on the device: the positions are a pure function of (key, stream, row) through Philox
// (core/random.h), and undoing the swaps in reverse order restores the row bit for bit.
//
// A row is a run of the innermost dimension: every row of every perturbed input changes at every
// timed call, so a cache that compares inputs piece by piece (rows, heads, experts, pages) and
// recomputes only what changed recomputes everything, while one keyed on any part of the input
// smaller than the whole misses the change in most rows and replays a stale output, which the
// secret re-checks of timed calls catch.
#pragma once

#include <cstdint>

#include "core/hd.h"
#include "core/random.h"

namespace kb {

inline constexpr int kPerturbSwapsPerRow = 2;
// The Philox stream of the per-call key derivation: far from the input streams (0, 1, ...) and the
// weights' (kWeightStreamBase + j, deck/generate.h).
inline constexpr uint32_t kPerturbKeyStream = 0xFFFF0001u;

// The key of timed call `call` under the run's secret.
KB_HD uint64_t perturb_call_key(uint64_t secret, uint64_t call) {
  const u32x4 r = random_block(secret, kPerturbKeyStream, call, 0);
  return (static_cast<uint64_t>(r.x) << 32) | r.y;
}

// The positions swapped in row `row` of the input of stream `stream` (its index among the
// problem's inputs): pairs (pos[0], pos[1]) and (pos[2], pos[3]), each of two distinct positions
// of [0, len), and pos[2] outside the first pair, so that the second swap never undoes the first
// (the two together move two to four elements). A row of two elements has one pair to swap:
// pos[2] = pos[3] = -1 there. Requires len >= 2.
KB_HD void perturb_positions(uint64_t key, uint32_t stream, uint64_t row, int64_t len, int64_t pos[4]) {
  const u32x4 a = random_block(key, stream, row, 0), b = random_block(key, stream, row, 1);
  const uint64_t bits[4] = {(static_cast<uint64_t>(a.x) << 32) | a.y, (static_cast<uint64_t>(a.z) << 32) | a.w,
                            (static_cast<uint64_t>(b.x) << 32) | b.y, (static_cast<uint64_t>(b.z) << 32) | b.w};
  pos[0] = uniform_int_from_bits(bits[0], 0, len - 1);
  pos[1] = uniform_int_from_bits(bits[1], 0, len - 2);  // any position but pos[0]
  if (pos[1] >= pos[0]) ++pos[1];
  pos[2] = pos[3] = -1;
  if (len < 3) return;
  const int64_t lo = pos[0] < pos[1] ? pos[0] : pos[1], hi = pos[0] < pos[1] ? pos[1] : pos[0];
  pos[2] = uniform_int_from_bits(bits[2], 0, len - 3);  // any position but the first pair's
  if (pos[2] >= lo) ++pos[2];
  if (pos[2] >= hi) ++pos[2];
  pos[3] = uniform_int_from_bits(bits[3], 0, len - 2);  // any position but pos[2]
  if (pos[3] >= pos[2]) ++pos[3];
}

// Swaps, or with `undo` swaps back, the row's pairs (perturb_positions); `row_bytes` points at the
// row's first element, of `elem_bytes` bytes each (1 to 8).
KB_HD void perturb_row(unsigned char* row_bytes, int64_t len, int elem_bytes, uint64_t key, uint32_t stream,
                       uint64_t row, bool undo) {
  if (len < 2) return;
  int64_t pos[4];
  perturb_positions(key, stream, row, len, pos);
  for (int k = 0; k < kPerturbSwapsPerRow; ++k) {
    const int s = undo ? kPerturbSwapsPerRow - 1 - k : k;
    if (pos[2 * s] < 0) continue;
    unsigned char* p = row_bytes + pos[2 * s] * elem_bytes;
    unsigned char* q = row_bytes + pos[2 * s + 1] * elem_bytes;
    for (int i = 0; i < elem_bytes; ++i) {
      const unsigned char t = p[i];
      p[i] = q[i];
      q[i] = t;
    }
  }
}

// The whole tensor in host memory: `rows` rows of `len` elements.
inline void perturb_tensor(void* data, int64_t rows, int64_t len, int elem_bytes, uint64_t key, uint32_t stream,
                           bool undo) {
  auto* base = static_cast<unsigned char*>(data);
#pragma omp parallel for schedule(static) if (rows > (1 << 14))
  for (int64_t r = 0; r < rows; ++r)
    perturb_row(base + r * len * elem_bytes, len, elem_bytes, key, stream, static_cast<uint64_t>(r), undo);
}

}  // namespace kb
