#include "deck/ops/norms.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace kb::ops {

namespace {

using detail::fail;

void require_eps(const char* op, double eps) {
  if (!(eps >= 0) || !std::isfinite(eps)) fail(op, "eps must be finite and >= 0, got " + std::to_string(eps));
}

void require_param(const char* op, const char* arg, const Tensor64* t, const std::vector<int64_t>& shape) {
  if (t != nullptr && t->shape != shape)
    fail(op, std::string(arg) + " must have shape " + shape_string(shape) + ", got " + shape_string(t->shape));
}

// Checks that normalized_shape is x's trailing dims; returns their element count.
int64_t trailing_count(const char* op, const Tensor64& x, const std::vector<int64_t>& normalized_shape) {
  const size_t k = normalized_shape.size();
  if (k == 0 || k > x.shape.size() ||
      !std::equal(normalized_shape.begin(), normalized_shape.end(), x.shape.end() - static_cast<std::ptrdiff_t>(k)))
    fail(op, "normalized_shape " + shape_string(normalized_shape) + " is not the trailing dims of input " +
                 shape_string(x.shape));
  return numel_of(normalized_shape);
}

// Mean and biased variance of `count` elements at base + i * stride, two compensated passes.
struct Moments {
  double mean, var;
};
Moments moments(const double* p, int64_t count, int64_t stride) {
  detail::CompensatedSum s;
  for (int64_t i = 0; i < count; ++i) s.add(p[i * stride]);
  const double mean = s.value() / static_cast<double>(count);
  detail::CompensatedSum q;
  for (int64_t i = 0; i < count; ++i) {
    const double d = p[i * stride] - mean;
    q.add(d * d);
  }
  return {mean, q.value() / static_cast<double>(count)};
}

// x (N, C, *) split into N, C and the spatial element count, for the channel norms.
detail::AxisSplit channel_split(const char* op, const Tensor64& x) {
  if (x.rank() < 2) fail(op, "input must be (N, C, *), got shape " + shape_string(x.shape));
  return detail::split_at(x.shape, 1);
}

// rms over `n` elements along (outer, n, inner); weight indexed by the position along n.
Tensor64 rms_impl(const Tensor64& x, detail::AxisSplit s, const Tensor64* weight, double eps) {
  Tensor64 y(x.shape);
  const int64_t lines = s.outer * s.inner;
#pragma omp parallel for schedule(static) if (x.numel() > (1 << 16))
  for (int64_t line = 0; line < lines; ++line) {
    const int64_t base = (line / s.inner) * s.n * s.inner + line % s.inner;
    detail::CompensatedSum sq;
    for (int64_t a = 0; a < s.n; ++a) sq.add(x[base + a * s.inner] * x[base + a * s.inner]);
    const double inv = 1.0 / std::sqrt(sq.value() / static_cast<double>(s.n) + eps);
    for (int64_t a = 0; a < s.n; ++a) {
      const double v = x[base + a * s.inner] * inv;
      y[base + a * s.inner] = weight != nullptr ? v * (*weight)[a] : v;
    }
  }
  return y;
}

}  // namespace

Tensor64 rms_norm(const Tensor64& x, const std::vector<int64_t>& normalized_shape, const Tensor64* weight, double eps) {
  require_eps("rms_norm", eps);
  const int64_t n = trailing_count("rms_norm", x, normalized_shape);
  require_param("rms_norm", "weight", weight, normalized_shape);
  return rms_impl(x, {x.numel() / std::max<int64_t>(n, 1), n, 1}, weight, eps);
}

Tensor64 rms_norm_axis(const Tensor64& x, int64_t axis, double eps) {
  require_eps("rms_norm_axis", eps);
  axis = detail::normalize_axis("rms_norm_axis", "axis", axis, x.rank());
  return rms_impl(x, detail::split_at(x.shape, axis), nullptr, eps);
}

Tensor64 layer_norm(const Tensor64& x, const std::vector<int64_t>& normalized_shape, const Tensor64* weight,
                    const Tensor64* bias, double eps) {
  require_eps("layer_norm", eps);
  const int64_t n = trailing_count("layer_norm", x, normalized_shape);
  require_param("layer_norm", "weight", weight, normalized_shape);
  require_param("layer_norm", "bias", bias, normalized_shape);
  Tensor64 y(x.shape);
  const int64_t rows = x.numel() / std::max<int64_t>(n, 1);
  // Parallel inside a row as well as across rows: the deck's LayerNorm has 16 rows of 4M elements.
  for (int64_t r = 0; r < rows; ++r) {
    const double* p = x.data.data() + r * n;
    const auto m = moments(p, n, 1);
    const double inv = 1.0 / std::sqrt(m.var + eps);
    double* out = y.data.data() + r * n;
#pragma omp parallel for schedule(static) if (n > (1 << 16))
    for (int64_t i = 0; i < n; ++i) {
      double v = (p[i] - m.mean) * inv;
      if (weight != nullptr) v *= (*weight)[i];
      if (bias != nullptr) v += (*bias)[i];
      out[i] = v;
    }
  }
  return y;
}

Tensor64 group_norm(const Tensor64& x, int64_t groups, const Tensor64* weight, const Tensor64* bias, double eps) {
  require_eps("group_norm", eps);
  const auto s = channel_split("group_norm", x);
  if (groups < 1 || s.n % groups != 0)
    fail("group_norm", "groups " + std::to_string(groups) + " does not divide the input's " + std::to_string(s.n) +
                           " channels");
  require_param("group_norm", "weight", weight, {s.n});
  require_param("group_norm", "bias", bias, {s.n});
  Tensor64 y(x.shape);
  const int64_t per_group = s.n / groups * s.inner;  // a group is contiguous in (N, C, *)
#pragma omp parallel for schedule(dynamic) if (x.numel() > (1 << 16))
  for (int64_t t = 0; t < s.outer * groups; ++t) {
    const double* p = x.data.data() + t * per_group;
    const auto m = moments(p, per_group, 1);
    const double inv = 1.0 / std::sqrt(m.var + eps);
    for (int64_t i = 0; i < per_group; ++i) {
      const int64_t c = (t % groups) * (s.n / groups) + i / s.inner;
      double v = (p[i] - m.mean) * inv;
      if (weight != nullptr) v *= (*weight)[c];
      if (bias != nullptr) v += (*bias)[c];
      y[t * per_group + i] = v;
    }
  }
  return y;
}

Tensor64 instance_norm(const Tensor64& x, double eps) {
  require_eps("instance_norm", eps);
  // At least one spatial dim: PyTorch reads a 2-d input to InstanceNorm1d as unbatched (C, L), and
  // its planes of one element would normalise to 0 anyway.
  if (x.rank() < 3)
    fail("instance_norm", "input must be (N, C, spatial...) with at least one spatial dim, got shape " + shape_string(x.shape));
  const auto s = channel_split("instance_norm", x);
  Tensor64 y(x.shape);
#pragma omp parallel for schedule(dynamic) if (x.numel() > (1 << 16))
  for (int64_t plane = 0; plane < s.outer * s.n; ++plane) {
    const double* p = x.data.data() + plane * s.inner;
    const auto m = moments(p, s.inner, 1);
    const double inv = 1.0 / std::sqrt(m.var + eps);
    for (int64_t i = 0; i < s.inner; ++i) y[plane * s.inner + i] = (p[i] - m.mean) * inv;
  }
  return y;
}

Tensor64 batch_norm_inference(const Tensor64& x, const Tensor64& running_mean, const Tensor64& running_var,
                              const Tensor64* weight, const Tensor64* bias, double eps) {
  const char* op = "batch_norm_inference";
  require_eps(op, eps);
  const auto s = channel_split(op, x);
  require_param(op, "running_mean", &running_mean, {s.n});
  require_param(op, "running_var", &running_var, {s.n});
  require_param(op, "weight", weight, {s.n});
  require_param(op, "bias", bias, {s.n});
  for (int64_t c = 0; c < s.n; ++c)
    if (!(running_var[c] + eps > 0))
      fail(op, "running_var[" + std::to_string(c) + "] + eps is " + std::to_string(running_var[c] + eps) + ", not > 0");
  Tensor64 y(x.shape);
#pragma omp parallel for schedule(static) if (x.numel() > (1 << 16))
  for (int64_t plane = 0; plane < s.outer * s.n; ++plane) {
    const int64_t c = plane % s.n;
    const double inv = 1.0 / std::sqrt(running_var[c] + eps);
    for (int64_t i = 0; i < s.inner; ++i) {
      double v = (x[plane * s.inner + i] - running_mean[c]) * inv;
      if (weight != nullptr) v *= (*weight)[c];
      if (bias != nullptr) v += (*bias)[c];
      y[plane * s.inner + i] = v;
    }
  }
  return y;
}

}  // namespace kb::ops
