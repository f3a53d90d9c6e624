// The safetensors file format (Hugging Face, https://github.com/huggingface/safetensors, "Format"):
//   8 bytes      N, the header's length, an unsigned little-endian 64-bit integer;
//   N bytes      a UTF-8 JSON object: for each tensor, "name": {"dtype": "F32", "shape": [2, 3],
//                "data_offsets": [begin, end]} (byte offsets into the data that follows, end
//                exclusive), and optionally "__metadata__": {string: string};
//   the rest     the tensors' bytes, little-endian, row-major, with no gaps and no overlaps.
// kbench writes it (`kbench dump`) so that a case can be loaded by any framework, and reads it back
// (tests, tools) with every rule above checked.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace kb {

class SafetensorsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The format's dtype name of a kbench dtype: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I64 I32 I16 I8 U8.
std::string safetensors_dtype(DType t);
// The inverse, for the dtypes kbench has; nullopt for any other name.
std::optional<DType> dtype_from_safetensors(const std::string& name);

struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;  // numel * element size, as stored
};

struct SafetensorsFile {
  std::vector<SafetensorsTensor> tensors;  // in data order
  std::map<std::string, std::string> metadata;
};

// The file's bytes: header (padded with spaces to a multiple of 8 bytes, so that the data starts
// aligned) and data, tensors in the order given. Throws SafetensorsError for a duplicate or empty
// name, the reserved name "__metadata__", or bytes that do not match dtype and shape.
std::vector<std::byte> encode_safetensors(const SafetensorsFile& file);
// The first part of that: the 8-byte length and the padded header. The tensors' bytes, in order,
// complete the file; a writer of a large file streams them after this instead of copying them.
std::string encode_safetensors_header(const SafetensorsFile& file);
void write_safetensors(const std::filesystem::path& path, const SafetensorsFile& file);

// Parses and validates; every error names what is wrong (the tensor, the field, the offsets).
SafetensorsFile decode_safetensors(const std::vector<std::byte>& bytes);
SafetensorsFile read_safetensors(const std::filesystem::path& path);

}  // namespace kb
