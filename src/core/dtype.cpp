// The dtype table and name parsing. Conversions live in dtype_convert.cpp.
#include "core/dtype.h"

#include <array>
#include <stdexcept>

#include "kbench/solution.h"

namespace kb {
namespace {

constexpr DLDataType dl(uint8_t code, uint8_t bits) { return DLDataType{code, bits, 1}; }

const std::array<DTypeInfo, 11> kTable = {{
    {DType::f64, "f64", 64, true, dl(kDLFloat, 64)},
    {DType::f32, "f32", 32, true, dl(kDLFloat, 32)},
    {DType::f16, "f16", 16, true, dl(kDLFloat, 16)},
    {DType::bf16, "bf16", 16, true, dl(kDLBfloat, 16)},
    {DType::e4m3, "e4m3", 8, true, dl(KB_DL_FLOAT8_E4M3FN, 8)},
    {DType::e5m2, "e5m2", 8, true, dl(KB_DL_FLOAT8_E5M2, 8)},
    {DType::i64, "i64", 64, false, dl(kDLInt, 64)},
    {DType::i32, "i32", 32, false, dl(kDLInt, 32)},
    {DType::i16, "i16", 16, false, dl(kDLInt, 16)},
    {DType::i8, "i8", 8, false, dl(kDLInt, 8)},
    {DType::u8, "u8", 8, false, dl(kDLUInt, 8)},
}};

struct Alias {
  std::string_view name;
  DType dtype;
};
constexpr Alias kAliases[] = {
    {"float64", DType::f64},  {"fp64", DType::f64},         {"double", DType::f64},
    {"float32", DType::f32},  {"fp32", DType::f32},         {"float", DType::f32},
    {"float16", DType::f16},  {"fp16", DType::f16},         {"half", DType::f16},
    {"bfloat16", DType::bf16},
    {"float8_e4m3fn", DType::e4m3}, {"fp8_e4m3", DType::e4m3}, {"e4m3fn", DType::e4m3},
    {"float8_e5m2", DType::e5m2},   {"fp8_e5m2", DType::e5m2},
    {"int64", DType::i64},    {"int32", DType::i32},        {"int16", DType::i16},
    {"int8", DType::i8},      {"uint8", DType::u8},
};

}  // namespace

const DTypeInfo& info(DType t) {
  const auto i = static_cast<size_t>(t);
  if (i >= kTable.size()) throw std::out_of_range("invalid dtype enumerator " + std::to_string(i));
  return kTable[i];
}

std::optional<DType> parse_dtype(std::string_view text) {
  for (const auto& e : kTable)
    if (e.name == text) return e.dtype;
  for (const auto& a : kAliases)
    if (a.name == text) return a.dtype;
  return std::nullopt;
}

std::string dtype_names() {
  std::string s;
  for (const auto& e : kTable) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

}  // namespace kb
