// The safetensors writer and reader (src/core/safetensors.h): the bytes follow the format (length
// prefix, JSON header, aligned contiguous data), files read back equal, and malformed files are
// refused with a message naming what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/safetensors.h"

namespace kb {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> bytes_of(const std::vector<uint8_t>& v) {
  std::vector<std::byte> b(v.size());
  std::memcpy(b.data(), v.data(), v.size());
  return b;
}

SafetensorsFile sample() {
  SafetensorsFile f;
  SafetensorsTensor a{"x", DType::f32, {2, 3}, {}};
  a.bytes.resize(24);
  for (size_t i = 0; i < 24; ++i) a.bytes[i] = static_cast<std::byte>(i);
  SafetensorsTensor b{"w.q", DType::u8, {3}, bytes_of({7, 8, 9})};
  SafetensorsTensor c{"expected.y", DType::f64, {1}, {}};
  c.bytes.resize(8);
  const double v = -2.5;
  std::memcpy(c.bytes.data(), &v, 8);
  SafetensorsTensor empty{"none", DType::bf16, {0, 4}, {}};
  f.tensors = {a, b, c, empty};
  f.metadata = {{"problem", "topk"}, {"seed", "3"}};
  return f;
}

// The header length and the JSON header of an encoded file.
std::pair<uint64_t, nlohmann::json> header_of(const std::vector<std::byte>& bytes) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<uint64_t>(bytes[static_cast<size_t>(i)]) << (8 * i);
  return {n, nlohmann::json::parse(std::string(reinterpret_cast<const char*>(bytes.data()) + 8, n))};
}

std::string error_of(const std::vector<std::byte>& bytes) {
  try {
    decode_safetensors(bytes);
  } catch (const SafetensorsError& e) {
    return e.what();
  }
  return "(no error)";
}

// An encoded file with its header replaced (re-padded, data kept).
std::vector<std::byte> with_header(const std::vector<std::byte>& bytes, const std::string& header) {
  const uint64_t old = header_of(bytes).first;
  std::vector<std::byte> out(8);
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<std::byte>((header.size() >> (8 * i)) & 0xFF);
  for (char ch : header) out.push_back(static_cast<std::byte>(ch));
  out.insert(out.end(), bytes.begin() + 8 + static_cast<std::ptrdiff_t>(old), bytes.end());
  return out;
}

TEST(Safetensors, EncodingFollowsTheFormat) {
  const auto bytes = encode_safetensors(sample());
  const auto [n, h] = header_of(bytes);
  EXPECT_EQ(n % 8, 0u);  // padded: the data starts 8-byte aligned
  EXPECT_EQ(bytes.size(), 8 + n + 24 + 3 + 8);
  EXPECT_EQ(h["x"]["dtype"], "F32");
  EXPECT_EQ(h["x"]["shape"], nlohmann::json::array({2, 3}));
  EXPECT_EQ(h["x"]["data_offsets"], nlohmann::json::array({0, 24}));
  EXPECT_EQ(h["w.q"]["dtype"], "U8");
  EXPECT_EQ(h["w.q"]["data_offsets"], nlohmann::json::array({24, 27}));
  EXPECT_EQ(h["expected.y"]["dtype"], "F64");
  EXPECT_EQ(h["expected.y"]["data_offsets"], nlohmann::json::array({27, 35}));
  EXPECT_EQ(h["none"]["data_offsets"], nlohmann::json::array({35, 35}));
  EXPECT_EQ(h["__metadata__"]["problem"], "topk");
  // The data are the tensors' bytes in order.
  EXPECT_EQ(static_cast<int>(bytes[8 + n + 5]), 5);
  EXPECT_EQ(static_cast<int>(bytes[8 + n + 24]), 7);
  double v = 0;
  std::memcpy(&v, bytes.data() + 8 + n + 27, 8);
  EXPECT_EQ(v, -2.5);
}

TEST(Safetensors, FilesReadBackEqual) {
  const fs::path path = fs::temp_directory_path() / ("kbench-safetensors-" + std::to_string(getpid()) + ".safetensors");
  write_safetensors(path, sample());
  const SafetensorsFile back = read_safetensors(path);
  const SafetensorsFile want = sample();
  ASSERT_EQ(back.tensors.size(), want.tensors.size());
  for (size_t i = 0; i < want.tensors.size(); ++i) {
    EXPECT_EQ(back.tensors[i].name, want.tensors[i].name);
    EXPECT_EQ(back.tensors[i].dtype, want.tensors[i].dtype);
    EXPECT_EQ(back.tensors[i].shape, want.tensors[i].shape);
    EXPECT_EQ(back.tensors[i].bytes, want.tensors[i].bytes);
  }
  EXPECT_EQ(back.metadata, want.metadata);
  fs::remove(path);
}

TEST(Safetensors, EveryKbenchDtypeHasItsName) {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::e4m3, DType::e5m2, DType::i64, DType::i32,
                  DType::i16, DType::i8, DType::u8})
    EXPECT_EQ(dtype_from_safetensors(safetensors_dtype(t)), t);
  EXPECT_EQ(safetensors_dtype(DType::e4m3), "F8_E4M3");
  EXPECT_EQ(safetensors_dtype(DType::bf16), "BF16");
  EXPECT_FALSE(dtype_from_safetensors("Q4").has_value());
}

TEST(Safetensors, EncodingRefusesInconsistentTensors) {
  SafetensorsFile f = sample();
  f.tensors[1].bytes.pop_back();
  EXPECT_THROW(encode_safetensors(f), SafetensorsError);
  f = sample();
  f.tensors[1].name = "x";
  EXPECT_THROW(encode_safetensors(f), SafetensorsError);
  f = sample();
  f.tensors[0].name = "__metadata__";
  EXPECT_THROW(encode_safetensors(f), SafetensorsError);
}

TEST(Safetensors, MalformedFilesAreRefusedNamingTheFault) {
  const auto good = encode_safetensors(sample());
  EXPECT_NE(error_of(bytes_of({1, 2, 3})).find("too short"), std::string::npos);
  auto huge = good;
  huge[6] = std::byte{1};  // header length 2^48
  EXPECT_NE(error_of(huge).find("does not fit the file"), std::string::npos) << error_of(huge);
  EXPECT_NE(error_of(with_header(good, "[1, 2]")).find("not a JSON object"), std::string::npos);
  const std::string one = R"({"x": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}})";
  auto head = with_header(good, one);
  head.resize(8 + one.size() + 24);  // drop the other tensors' bytes
  EXPECT_EQ(error_of(head), "(no error)");
  auto q4 = with_header(head, R"({"x": {"dtype": "Q4", "shape": [2, 3], "data_offsets": [0, 24]}})");
  EXPECT_NE(error_of(q4).find("tensor 'x': unsupported dtype \"Q4\""), std::string::npos) << error_of(q4);
  auto size = with_header(head, R"({"x": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 24]}})");
  EXPECT_NE(error_of(size).find("tensor 'x': data_offsets hold 24 bytes, dtype F32 and shape [2,2] need 16"),
            std::string::npos)
      << error_of(size);
  auto gap = with_header(head, R"({"x": {"dtype": "F32", "shape": [2, 2], "data_offsets": [8, 24]}})");
  EXPECT_NE(error_of(gap).find("tensor 'x' starts at data byte 8, expected 0"), std::string::npos) << error_of(gap);
  auto past = with_header(head, R"({"x": {"dtype": "F32", "shape": [2, 4], "data_offsets": [0, 32]}})");
  EXPECT_NE(error_of(past).find("outside the 24 data bytes"), std::string::npos) << error_of(past);
  auto missing = with_header(head, R"({"x": {"dtype": "F32", "data_offsets": [0, 24]}})");
  EXPECT_NE(error_of(missing).find("tensor 'x': no \"shape\""), std::string::npos) << error_of(missing);
  auto meta = with_header(head, R"({"__metadata__": {"seed": 3}, "x": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}})");
  EXPECT_NE(error_of(meta).find("__metadata__.seed is not a string"), std::string::npos) << error_of(meta);
}

TEST(Safetensors, ReadErrorsNameTheFile) {
  try {
    read_safetensors("/nonexistent/case.safetensors");
    FAIL();
  } catch (const SafetensorsError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/case.safetensors: cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kb
