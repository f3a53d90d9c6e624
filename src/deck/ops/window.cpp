#include "deck/ops/window.h"

namespace kb::ops::detail {

Dims3 expand_window_param(std::string_view op, std::string_view arg, const std::vector<int64_t>& values, int spatial,
                          int64_t min, int64_t lift) {
  if (values.size() != 1 && values.size() != static_cast<size_t>(spatial))
    fail(op, std::string(arg) + " must have 1 or " + std::to_string(spatial) + " values, got " + std::to_string(values.size()));
  Dims3 d{lift, lift, lift};
  for (int i = 0; i < spatial; ++i) {
    const int64_t v = values.size() == 1 ? values[0] : values[static_cast<size_t>(i)];
    if (v < min) fail(op, std::string(arg) + " must be >= " + std::to_string(min) + ", got " + std::to_string(v));
    d[static_cast<size_t>(3 - spatial + i)] = v;
  }
  return d;
}

std::vector<int64_t> Window::out_shape(int spatial, int64_t channels) const {
  std::vector<int64_t> s{n, channels};
  for (int i = 3 - spatial; i < 3; ++i) s.push_back(out[static_cast<size_t>(i)]);
  return s;
}

void finish_window(std::string_view op, const Tensor64& x, int spatial, Window& w) {
  if (x.rank() != 2 + spatial)
    fail(op, "input must be (N, C" + std::string(spatial >= 3 ? ", D" : "") + std::string(spatial >= 2 ? ", H" : "") +
                 (spatial == 1 ? ", L" : ", W") + "), rank " + std::to_string(2 + spatial) + ", got shape " +
                 shape_string(x.shape));
  w.n = x.shape[0];
  w.c = x.shape[1];
  for (int i = 0; i < spatial; ++i) w.in[static_cast<size_t>(3 - spatial + i)] = x.shape[static_cast<size_t>(2 + i)];
  for (size_t i = 0; i < 3; ++i) {
    const int64_t span = w.dilation[i] * (w.kernel[i] - 1) + 1;
    const int64_t padded = w.in[i] + 2 * w.padding[i];
    if (padded < span)
      fail(op, "input " + shape_string(x.shape) + " is too small: spatial dim " + std::to_string(i - (3 - spatial)) +
                   " padded to " + std::to_string(padded) + " is shorter than the kernel's extent " + std::to_string(span) +
                   " (kernel " + std::to_string(w.kernel[i]) + ", dilation " + std::to_string(w.dilation[i]) + ")");
    w.out[i] = (padded - span) / w.stride[i] + 1;
  }
}

}  // namespace kb::ops::detail
