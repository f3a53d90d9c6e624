// The bytes kbench writes into every output before a call. An element still holding them after
// the call (and not equal to the expected value) was never written. Float outputs get a quiet
// NaN with a distinctive payload, so an unwritten element can never pass a tolerance either.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace kb {

struct Poison {
  uint64_t pattern;
  int bytes;  // element size
};

inline Poison poison_for(DType t) {
  switch (t) {
    case DType::f64: return {0x7FF8DEADBEEFA5A5ull, 8};
    case DType::f32: return {0x7FC0A5A5u, 4};
    case DType::f16: return {0x7E5Au, 2};   // exponent all ones, mantissa != 0: NaN
    case DType::bf16: return {0x7FA5u, 2};  // NaN
    case DType::e4m3: return {0x7Fu, 1};    // the only NaN encoding of E4M3FN (besides 0xFF)
    case DType::e5m2: return {0x7Fu, 1};    // NaN
    case DType::i64: return {0x5A5A5A5A5A5A5A5Aull, 8};
    case DType::i32: return {0x5A5A5A5Au, 4};
    case DType::i16: return {0x5A5Au, 2};
    case DType::i8:
    case DType::u8: return {0x5Au, 1};
  }
  return {0x5Au, 1};
}

}  // namespace kb
