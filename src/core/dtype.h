// Element types kbench generates, passes to solutions and judges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <dlpack/dlpack.h>

namespace kb {

enum class DType : uint8_t {
  f64, f32, f16, bf16,
  e4m3,  // OCP FP8 E4M3FN: bias 7, no infinities, S.1111.111 is NaN, max 448
  e5m2,  // OCP FP8 E5M2: bias 15, IEEE-like, max 57344
  i64, i32, i16, i8, u8,
};

struct DTypeInfo {
  DType dtype;
  std::string_view name;  // as written in problem.toml: "f32", "bf16", "e4m3", ...
  int bits;               // storage bits per element
  bool is_float;
  DLDataType dl;          // DLPack type (fp8 codes as in DLPack 1.1, see solution.h)
};

const DTypeInfo& info(DType t);
inline std::string_view name(DType t) { return info(t).name; }
inline size_t element_bytes(DType t) { return static_cast<size_t>(info(t).bits / 8); }
// Accepts the canonical names and common aliases (float32, bfloat16, float8_e4m3fn, int64, ...).
std::optional<DType> parse_dtype(std::string_view text);
// All accepted canonical names, comma separated, for error messages.
std::string dtype_names();

// Element i of a buffer of type t, widened exactly to double (integers beyond 2^53 lose bits).
double load_as_double(DType t, const void* data, int64_t i);
// Store v into element i, rounded to nearest even; finite floats out of range saturate to the
// largest finite value (generated data is never meant to overflow); infinities stay infinite in
// formats that have them (e4m3 has none: largest finite); NaN stays NaN; integers are rounded
// and clamped to the type's range (NaN -> 0).
void store_from_double(DType t, void* data, int64_t i, double v);

// The spacing of representable values of float type t at magnitude |x| (the ULP used by
// max-ULP tolerances); for subnormal magnitudes, the subnormal spacing; beyond the finite range
// (infinity included), the spacing of the top binade; 1.0 for integer types.
double ulp_at(DType t, double x);

}  // namespace kb
