#include "deck/ops/pooling.h"

#include <cmath>
#include <string>

#include "deck/ops/window.h"

namespace kb::ops {

namespace {

Tensor64 pool_nd(const char* op, bool is_max, int spatial, const Tensor64& x, const PoolOptions& o) {
  using detail::fail;
  detail::Window w;
  w.kernel = detail::expand_window_param(op, "kernel", o.kernel, spatial, 1, 1);
  w.stride = detail::expand_window_param(op, "stride", o.stride.empty() ? o.kernel : o.stride, spatial, 1, 1);
  w.padding = detail::expand_window_param(op, "padding", o.padding, spatial, 0, 0);
  w.dilation = detail::expand_window_param(op, "dilation", o.dilation, spatial, 1, 1);
  for (size_t i = 3 - static_cast<size_t>(spatial); i < 3; ++i) {
    if (!is_max && w.dilation[i] != 1)
      fail(op, "dilation must be 1 (average pooling has none), got " + std::to_string(w.dilation[i]));
    const int64_t extent = is_max ? w.dilation[i] * (w.kernel[i] - 1) + 1 : w.kernel[i];
    if (2 * w.padding[i] > extent)
      fail(op, "padding " + std::to_string(w.padding[i]) + " is more than half of the kernel" +
                   std::string(is_max ? "'s dilated extent " : " ") + std::to_string(extent));
  }
  detail::finish_window(op, x, spatial, w);
  const auto [D, H, W] = w.in;
  const auto [OD, OH, OW] = w.out;
  Tensor64 y(w.out_shape(spatial, w.c));
  const int64_t planes = w.n * w.c, out_plane = OD * OH * OW, in_plane = D * H * W;
#pragma omp parallel for schedule(static) if (y.numel() > (1 << 14))
  for (int64_t p = 0; p < planes; ++p) {
    const double* in = x.data.data() + p * in_plane;
    for (int64_t od = 0; od < OD; ++od)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double best = -INFINITY, sum = 0;
          int64_t count = 0;
          for (int64_t kd = 0; kd < w.kernel[0]; ++kd) {
            const int64_t id = od * w.stride[0] - w.padding[0] + kd * w.dilation[0];
            if (id < 0 || id >= D) continue;
            for (int64_t kh = 0; kh < w.kernel[1]; ++kh) {
              const int64_t ih = oh * w.stride[1] - w.padding[1] + kh * w.dilation[1];
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < w.kernel[2]; ++kw) {
                const int64_t iw = ow * w.stride[2] - w.padding[2] + kw * w.dilation[2];
                if (iw < 0 || iw >= W) continue;
                const double v = in[(id * H + ih) * W + iw];
                if (v > best || std::isnan(v)) best = std::isnan(best) ? best : v;  // the first NaN sticks
                sum += v;
                ++count;
              }
            }
          }
          double& out = y[p * out_plane + (od * OH + oh) * OW + ow];
          if (is_max) {
            out = best;
          } else {
            // With ceil_mode false every window lies inside the padded input, so the padded window
            // is the whole kernel.
            const int64_t divisor = o.count_include_pad ? w.kernel[0] * w.kernel[1] * w.kernel[2] : count;
            out = sum / static_cast<double>(divisor);
          }
        }
  }
  return y;
}

}  // namespace

Tensor64 max_pool1d(const Tensor64& x, const PoolOptions& o) { return pool_nd("max_pool1d", true, 1, x, o); }
Tensor64 max_pool2d(const Tensor64& x, const PoolOptions& o) { return pool_nd("max_pool2d", true, 2, x, o); }
Tensor64 max_pool3d(const Tensor64& x, const PoolOptions& o) { return pool_nd("max_pool3d", true, 3, x, o); }
Tensor64 avg_pool1d(const Tensor64& x, const PoolOptions& o) { return pool_nd("avg_pool1d", false, 1, x, o); }
Tensor64 avg_pool2d(const Tensor64& x, const PoolOptions& o) { return pool_nd("avg_pool2d", false, 2, x, o); }
Tensor64 avg_pool3d(const Tensor64& x, const PoolOptions& o) { return pool_nd("avg_pool3d", false, 3, x, o); }

}  // namespace kb::ops
