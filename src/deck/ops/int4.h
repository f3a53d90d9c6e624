// Packed 4-bit weights as the deck's int4 GEMMs store them (w4a16_gemm, KernelBench-Hard's AWQ-style
// layout, and l4_int4_gemm, KernelBench v3's GPTQ-style one): two 4-bit integers per byte, the value
// of the even k in the low nibble and of the odd k in the high nibble (both problems' convention).
// The layouts differ (w4a16_gemm packs along K down the columns, w_q (K / 2, N); l4_int4_gemm along
// the rows, packed (N, K / 2)); the nibble order is the shared part, used by their fp64 oracles and
// GPU references alike.
//
// Header-only and KB_HD (core/hd.h): the GPU references (nvcc) include it as well.
#pragma once

#include <cstdint>

#include "core/hd.h"

namespace kb::ops::int4 {

// q[k] (0..15) from the byte that holds k and k ^ 1: even k in the low nibble.
KB_HD int nibble(uint8_t byte, int64_t k) { return (k % 2 == 0) ? (byte & 0xF) : (byte >> 4); }

}  // namespace kb::ops::int4
