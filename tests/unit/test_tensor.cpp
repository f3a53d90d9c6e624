#include <gtest/gtest.h>

#include "core/dtype.h"
#include "core/tensor.h"

namespace kb {

TEST(DTypeTable, NamesRoundTripAndAliasesResolve) {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::e4m3, DType::e5m2,
                  DType::i64, DType::i32, DType::i16, DType::i8, DType::u8}) {
    auto parsed = parse_dtype(name(t));
    ASSERT_TRUE(parsed.has_value()) << name(t);
    EXPECT_EQ(*parsed, t);
    EXPECT_EQ(info(t).bits, info(t).dl.bits);
  }
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(parse_dtype("float8_e4m3fn"), DType::e4m3);
  EXPECT_FALSE(parse_dtype("f8").has_value());
  EXPECT_EQ(info(DType::e4m3).dl.code, 10);  // DLPack 1.1 kDLFloat8_e4m3fn
  EXPECT_EQ(info(DType::e5m2).dl.code, 12);  // DLPack 1.1 kDLFloat8_e5m2
}

TEST(HostTensor, SizesStorageFromShapeAndDtype) {
  HostTensor t("x", DType::bf16, {3, 5});
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.bytes.size(), 30u);
  EXPECT_EQ(shape_string(t.shape), "(3, 5)");
  EXPECT_EQ(shape_string({7}), "(7,)");
  EXPECT_THROW(numel_of({2, -1}), std::invalid_argument);
}

}  // namespace kb
