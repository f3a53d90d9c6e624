#include "deck/ops/conv.h"

#include <algorithm>
#include <string>

#include "deck/ops/window.h"

namespace kb::ops {

namespace {

// First and one-past-last output index o along a dim for which o * stride + offset lies in
// [0, in): the outputs this kernel tap reaches without touching padding.
std::pair<int64_t, int64_t> valid_outputs(int64_t offset, int64_t stride, int64_t in, int64_t out) {
  // o >= ceil(-offset / stride) and o <= floor((in - 1 - offset) / stride).
  auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const int64_t lo = std::max<int64_t>(0, -floor_div(offset, stride));
  const int64_t hi = std::min<int64_t>(out, floor_div(in - 1 - offset, stride) + 1);
  return {lo, std::max(lo, hi)};
}

Tensor64 conv_nd(const char* op, int spatial, const Tensor64& x, const Tensor64& weight, const Tensor64* bias,
                 const ConvOptions& o) {
  using detail::fail;
  detail::Window w;
  w.stride = detail::expand_window_param(op, "stride", o.stride, spatial, 1, 1);
  w.padding = detail::expand_window_param(op, "padding", o.padding, spatial, 0, 0);
  w.dilation = detail::expand_window_param(op, "dilation", o.dilation, spatial, 1, 1);
  if (o.groups < 1) fail(op, "groups must be >= 1, got " + std::to_string(o.groups));
  if (weight.rank() != 2 + spatial)
    fail(op, "weight must be (out_channels, in_channels / groups, kernel...), rank " + std::to_string(2 + spatial) +
                 ", got shape " + shape_string(weight.shape));
  for (int i = 0; i < spatial; ++i) {
    const int64_t k = weight.shape[static_cast<size_t>(2 + i)];
    if (k < 1) fail(op, "weight " + shape_string(weight.shape) + " has an empty kernel dim");
    w.kernel[static_cast<size_t>(3 - spatial + i)] = k;
  }
  if (x.rank() == 2 + spatial && weight.shape[1] * o.groups != x.shape[1])
    fail(op, "input has " + std::to_string(x.shape[1]) + " channels but the weight expects " +
                 std::to_string(weight.shape[1] * o.groups) + " (groups " + std::to_string(o.groups) + ")");
  detail::finish_window(op, x, spatial, w);
  const int64_t oc_total = weight.shape[0];
  if (oc_total % o.groups != 0)
    fail(op, "weight has " + std::to_string(oc_total) + " out_channels, not divisible by groups " + std::to_string(o.groups));
  if (bias != nullptr && (bias->rank() != 1 || bias->shape[0] != oc_total))
    fail(op, "bias must have shape " + shape_string({oc_total}) + ", got " + shape_string(bias->shape));

  const int64_t cin_g = weight.shape[1], cout_g = oc_total / o.groups;
  const auto [D, H, W] = w.in;
  const auto [KD, KH, KW] = w.kernel;
  const auto [OD, OH, OW] = w.out;
  const int64_t in_plane = D * H * W, out_plane = OD * OH * OW, k_volume = KD * KH * KW;
  Tensor64 y(w.out_shape(spatial, oc_total));
  const double* xp = x.data.data();
  const double* wp = weight.data.data();
  double* yp = y.data.data();
  const int64_t planes = w.n * oc_total;
#pragma omp parallel for schedule(dynamic)
  for (int64_t p = 0; p < planes; ++p) {
    const int64_t n = p / oc_total, oc = p % oc_total, g = oc / cout_g;
    double* out = yp + p * out_plane;
    std::fill(out, out + out_plane, bias != nullptr ? (*bias)[oc] : 0.0);
    for (int64_t icg = 0; icg < cin_g; ++icg) {
      const double* in = xp + (n * w.c + g * cin_g + icg) * in_plane;
      const double* taps = wp + (oc * cin_g + icg) * k_volume;
      for (int64_t kd = 0; kd < KD; ++kd)
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const double tap = taps[(kd * KH + kh) * KW + kw];
            const int64_t off_d = kd * w.dilation[0] - w.padding[0];
            const int64_t off_h = kh * w.dilation[1] - w.padding[1];
            const int64_t off_w = kw * w.dilation[2] - w.padding[2];
            const auto [d0, d1] = valid_outputs(off_d, w.stride[0], D, OD);
            const auto [h0, h1] = valid_outputs(off_h, w.stride[1], H, OH);
            const auto [w0, w1] = valid_outputs(off_w, w.stride[2], W, OW);
            const int64_t sw = w.stride[2];
            for (int64_t od = d0; od < d1; ++od)
              for (int64_t oh = h0; oh < h1; ++oh) {
                double* orow = out + (od * OH + oh) * OW;
                // Index of input element (id, ih, ow * sw + off_w) is row + ow * sw; it is in range for
                // every ow in [w0, w1).
                const int64_t row = ((od * w.stride[0] + off_d) * H + oh * w.stride[1] + off_h) * W + off_w;
                if (sw == 1) {
#pragma omp simd
                  for (int64_t ow = w0; ow < w1; ++ow) orow[ow] += tap * in[row + ow];
                } else {
                  for (int64_t ow = w0; ow < w1; ++ow) orow[ow] += tap * in[row + ow * sw];
                }
              }
          }
    }
  }
  return y;
}

}  // namespace

Tensor64 conv1d(const Tensor64& x, const Tensor64& weight, const Tensor64* bias, const ConvOptions& options) {
  return conv_nd("conv1d", 1, x, weight, bias, options);
}
Tensor64 conv2d(const Tensor64& x, const Tensor64& weight, const Tensor64* bias, const ConvOptions& options) {
  return conv_nd("conv2d", 2, x, weight, bias, options);
}
Tensor64 conv3d(const Tensor64& x, const Tensor64& weight, const Tensor64* bias, const ConvOptions& options) {
  return conv_nd("conv3d", 3, x, weight, bias, options);
}

}  // namespace kb::ops
