#include "core/tensor.h"

#include <stdexcept>

namespace kb {

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("negative tensor dimension " + std::to_string(d));
    n *= d;
  }
  return n;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

HostTensor::HostTensor(std::string n, DType t, std::vector<int64_t> s)
    : name(std::move(n)), dtype(t), shape(std::move(s)),
      bytes(static_cast<size_t>(numel_of(shape)) * element_bytes(t)) {}

int64_t HostTensor::numel() const { return numel_of(shape); }

}  // namespace kb
