// A tensor in host memory, stored in its own dtype, with its shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace kb {

struct HostTensor {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;

  HostTensor() = default;
  HostTensor(std::string name, DType dtype, std::vector<int64_t> shape);

  int64_t numel() const;
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }
  double get(int64_t i) const { return load_as_double(dtype, bytes.data(), i); }
  void set(int64_t i, double v) { store_from_double(dtype, bytes.data(), i, v); }
};

int64_t numel_of(const std::vector<int64_t>& shape);
std::string shape_string(const std::vector<int64_t>& shape);  // "(32, 4096)"

}  // namespace kb
