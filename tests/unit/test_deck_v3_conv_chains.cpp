// KernelBench v3's level-2 convolution chains (problems/l2_conv2d_*): for each, the output size and
// the cost formulas against a hand count on every shape, the oracle against an independent fp64
// evaluation of the chain (plain loops, none of src/deck/ops), and the calibrated tolerance in both
// directions (each problem's CALIBRATION.md): the honest kit solution's arithmetic, emulated in fp32
// (the kit's FMA chains, its block-reduction order for the norms' statistics, fp32 tails), passes
// every shape and seed; the same chain on a convolution with TF32 or bf16 operands fails. And the
// premise of l2_conv2d_batchnorm_scale's exploit: skipping BatchNorm passes v3's check under v3's
// initial BatchNorm state and fails kbench's judge under the drawn one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "deck/generate.h"
#include "v3_conv_support.h"
#include "v3_level1_support.h"

namespace {

using kb::v3conv_test::ConvParams;
using kb::v3conv_test::Operands;

// v3's constants (each problem's problem.toml names its v3 file).
constexpr double kEps = 1e-5;

ConvParams params_of(const kb::ShapeCase& s) {
  const auto& v = s.dims;  // batch, in_channels, out_channels, height, width, kernel_size[, groups]
  return {.batch = v[0], .in_c = v[1], .out_c = v[2], .height = v[3], .width = v[4], .kernel = v[5]};
}

// The chains' tails, in T (double: the independent reference; float: the honest kit solution).
template <class T>
using Tail = std::function<std::vector<T>(std::vector<T> conv, const ConvParams&, const kb::ShapeCase&,
                                          const std::vector<kb::HostTensor>& weights)>;

template <class T>
T w_at(const std::vector<kb::HostTensor>& w, size_t i, int64_t e) { return static_cast<T>(w.at(i).get(e)); }

// The kit's block sum (problems/kit/v3/block_reduce.cuh, 256 threads): strided partial sums per
// thread, a butterfly within each warp, a butterfly over the 8 warp sums. For double, a plain sum.
template <class T>
T block_sum(const std::function<T(int64_t)>& term, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += term(i);
    return s;
  } else {
    float lanes[256];
    for (int t = 0; t < 256; ++t) {
      float s = 0.f;
      for (int64_t i = t; i < n; i += 256) s += term(i);
      lanes[t] = s;
    }
    auto butterfly = [](float* v) {  // __shfl_xor_sync with offsets 16..1: every lane ends with the same sum
      for (int o = 16; o > 0; o /= 2) {
        float next[32];
        for (int l = 0; l < 32; ++l) next[l] = v[l] + v[l ^ o];
        std::copy(next, next + 32, v);
      }
      return v[0];
    };
    float warps[32] = {};
    for (int w = 0; w < 8; ++w) warps[w] = butterfly(lanes + 32 * w);
    return butterfly(warps);
  }
}

// Normalises each contiguous segment of `length` elements in place, as the kit's segment_stats
// (two passes: mean, then the squared deviations, each a block sum) and its users compute it.
template <class T>
void normalise_segments(std::vector<T>& v, int64_t length) {
  for (size_t s0 = 0; s0 < v.size(); s0 += static_cast<size_t>(length)) {
    T* seg = v.data() + s0;
    const T mean = block_sum<T>([&](int64_t i) { return seg[i]; }, length) / static_cast<T>(length);
    const T var = block_sum<T>([&](int64_t i) { const T d = seg[i] - mean; return d * d; }, length) / static_cast<T>(length);
    const T rstd = T(1) / std::sqrt(var + static_cast<T>(kEps));
    for (int64_t i = 0; i < length; ++i) seg[i] = (seg[i] - mean) * rstd;
  }
}

template <class T, bool kMax>
std::vector<T> pool2(const std::vector<T>& v, const ConvParams& c) {
  const int64_t h = c.out_h(), w = c.out_w(), oh = h / 2, ow = w / 2;
  std::vector<T> y(static_cast<size_t>(c.batch * c.out_c * oh * ow));
  for (int64_t p = 0; p < c.batch * c.out_c; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        T acc = kMax ? -INFINITY : 0;
        for (int64_t di = 0; di < 2; ++di)
          for (int64_t dj = 0; dj < 2; ++dj) {
            const T e = v[static_cast<size_t>((p * h + 2 * i + di) * w + 2 * j + dj)];
            acc = kMax ? std::max(acc, e) : acc + e;
          }
        y[static_cast<size_t>((p * oh + i) * ow + j)] = kMax ? acc : acc / 4;
      }
  return y;
}

template <class T>
int64_t channel_of(size_t e, const ConvParams& c) { return static_cast<int64_t>(e) / (c.out_h() * c.out_w()) % c.out_c; }

// BatchNorm in eval mode; weights 2..5 are bn_weight, bn_bias, running_mean, running_var.
template <class T>
T batch_norm(T v, int64_t o, const std::vector<kb::HostTensor>& w) {
  return (v - w_at<T>(w, 4, o)) * (T(1) / std::sqrt(w_at<T>(w, 5, o) + static_cast<T>(kEps))) * w_at<T>(w, 2, o) + w_at<T>(w, 3, o);
}

template <class T>
Tail<T> tail_of(const std::string& id) {
  if (id == "l2_conv2d_batchnorm_scale")
    return [](std::vector<T> v, const ConvParams& c, const kb::ShapeCase&, const std::vector<kb::HostTensor>& w) {
      for (size_t e = 0; e < v.size(); ++e) v[e] = 2 * batch_norm<T>(v[e], channel_of<T>(e, c), w);
      return v;
    };
  if (id == "l2_conv2d_mish_batchnorm")
    return [](std::vector<T> v, const ConvParams& c, const kb::ShapeCase&, const std::vector<kb::HostTensor>& w) {
      for (size_t e = 0; e < v.size(); ++e)
        v[e] = batch_norm<T>(v[e] * std::tanh(std::log1p(std::exp(v[e]))), channel_of<T>(e, c), w);
      return v;
    };
  if (id == "l2_conv2d_subtract_tanh_avgpool")
    return [](std::vector<T> v, const ConvParams& c, const kb::ShapeCase&, const std::vector<kb::HostTensor>&) {
      for (T& e : v) e = std::tanh(e - static_cast<T>(0.5)) - static_cast<T>(0.2);
      return pool2<T, false>(v, c);
    };
  if (id == "l2_conv2d_tanh_scale_bias_maxpool")
    return [](std::vector<T> v, const ConvParams& c, const kb::ShapeCase&, const std::vector<kb::HostTensor>& w) {
      for (size_t e = 0; e < v.size(); ++e) v[e] = std::tanh(v[e]) * 2 + w_at<T>(w, 2, channel_of<T>(e, c));
      return pool2<T, true>(v, c);
    };
  if (id == "l2_conv2d_groupnorm_scale_maxpool_clamp")
    return [](std::vector<T> v, const ConvParams& c, const kb::ShapeCase& s, const std::vector<kb::HostTensor>& w) {
      const int64_t groups = s.dims.at(6);
      normalise_segments<T>(v, c.out_c / groups * c.out_h() * c.out_w());
      for (size_t e = 0; e < v.size(); ++e) {
        const int64_t o = channel_of<T>(e, c);
        v[e] = (v[e] * w_at<T>(w, 2, o) + w_at<T>(w, 3, o)) * w_at<T>(w, 4, o);
      }
      std::vector<T> y = pool2<T, true>(v, c);
      for (T& e : y) e = std::min<T>(std::max<T>(e, 0), 1);
      return y;
    };
  if (id == "l2_conv2d_instancenorm_divide")
    return [](std::vector<T> v, const ConvParams& c, const kb::ShapeCase&, const std::vector<kb::HostTensor>&) {
      normalise_segments<T>(v, c.out_h() * c.out_w());
      for (T& e : v) e /= 2;
      return v;
    };
  ADD_FAILURE() << "no tail for " << id;
  return {};
}

// conv + bias in double, plain loops.
std::vector<double> conv2d_fp64(const kb::HostTensor& x, const kb::HostTensor& w, const kb::HostTensor& b, const ConvParams& c) {
  std::vector<double> y(static_cast<size_t>(c.outputs()));
  const int64_t oh = c.out_h(), ow = c.out_w();
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t o = 0; o < c.out_c; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double s = b.get(o);
          for (int64_t ci = 0; ci < c.in_c; ++ci)
            for (int64_t kh = 0; kh < c.kernel; ++kh)
              for (int64_t kw = 0; kw < c.kernel; ++kw)
                s += x.get(((n * c.in_c + ci) * c.height + i + kh) * c.width + j + kw) *
                     w.get(((o * c.in_c + ci) * c.kernel + kh) * c.kernel + kw);
          y[static_cast<size_t>(((n * c.out_c + o) * oh + i) * ow + j)] = s;
        }
  return y;
}

std::vector<double> chain_fp32(const std::string& id, const kb::ShapeCase& s, const std::vector<kb::HostTensor>& in,
                               const std::vector<kb::HostTensor>& w, Operands how) {
  const ConvParams c = params_of(s);
  return kb::v3conv_test::widened(tail_of<float>(id)(kb::v3conv_test::conv2d_fp32(in[0], w[0], &w[1], c, how), c, s, w));
}

std::vector<kb::ShapeCase> ci_shapes(const kb::Problem& p) {
  if (kb::v3test::full_shapes()) return p.shapes;
  using kb::v3test::resized;
  return {resized(p, 0, {{"batch", 1}, {"height", 64}, {"width", 64}}), resized(p, 1, {{"batch", 1}}),
          resized(p, 2, {{"batch", 1}})};
}

class DeckV3ConvChain : public testing::TestWithParam<std::string> {};

TEST_P(DeckV3ConvChain, OutputSizeAndCostMatchAHandCount) {
  const kb::Problem p = kb::v3test::load(GetParam());
  ASSERT_EQ(p.level, 2);
  ASSERT_EQ(p.deck, "v3");
  ASSERT_EQ(p.shapes.size(), 3u);
  const bool pooled = GetParam().find("pool") != std::string::npos;
  // v3's (16, 3, 256, 256) through Conv2d(3, 16, 3): (16, 16, 254, 254), pooled (16, 16, 127, 127).
  EXPECT_EQ(p.tensor_shape(p.outputs[0], p.shapes[0]),
            (std::vector<int64_t>{16, 16, pooled ? 127 : 254, pooled ? 127 : 254}));
  // Per channel, the parameters besides the convolution's weight: its bias and the chain's own.
  const double per_channel = static_cast<double>(p.weights.size() - 1);
  for (const auto& s : p.shapes) {
    const ConvParams c = params_of(s);
    const int64_t oh = pooled ? c.out_h() / 2 : c.out_h(), ow = pooled ? c.out_w() / 2 : c.out_w();
    EXPECT_EQ(p.tensor_shape(p.outputs[0], s), (std::vector<int64_t>{c.batch, c.out_c, oh, ow}));
    const auto v = p.variables(s);
    const double taps = static_cast<double>(c.in_c * c.kernel * c.kernel);
    EXPECT_EQ(p.flops.eval(v), 2 * static_cast<double>(c.outputs()) * taps);  // the convolution's multiply-adds
    EXPECT_EQ(p.bytes.eval(v), 4.0 * (c.batch * c.in_c * c.height * c.width + c.out_c * (taps + per_channel) +
                                      static_cast<double>(c.batch * c.out_c * oh * ow)));
  }
}

TEST_P(DeckV3ConvChain, OracleMatchesAnIndependentFp64Chain) {
  const kb::Problem p = kb::v3test::load(GetParam());
  const kb::ShapeCase s = kb::v3test::resized(p, 1, {{"batch", 2}, {"height", 21}, {"width", 18}});
  const auto in = kb::generate_inputs(p, s, 5);
  const auto w = kb::generate_weights(p, s, 5);
  const auto expected = kb::v3test::oracle_values(p, s, in, w).at(0);
  const ConvParams c = params_of(s);
  const auto independent = tail_of<double>(GetParam())(conv2d_fp64(in[0], w[0], w[1], c), c, s, w);
  ASSERT_EQ(expected.size(), independent.size());
  for (size_t e = 0; e < expected.size(); ++e)
    ASSERT_NEAR(expected[e], independent[e], 1e-12 * (1 + std::abs(independent[e]))) << "element " << e;
}

TEST_P(DeckV3ConvChain, ToleranceAcceptsTheFp32ChainAndRejectsTf32AndBf16Convolutions) {
  const kb::Problem p = kb::v3test::load(GetParam());
  const auto shapes = ci_shapes(p);
  for (size_t k = 0; k < shapes.size(); ++k) {
    double honest = 0, tf32 = INFINITY, tf32_share = 1, bf16 = INFINITY;
    for (uint64_t seed : {1, 2, 3}) {
      const auto in = kb::generate_inputs(p, shapes[k], seed);
      const auto w = kb::generate_weights(p, shapes[k], seed);
      const auto expected = kb::v3test::oracle_values(p, shapes[k], in, w).at(0);
      const auto fp32 = chain_fp32(GetParam(), shapes[k], in, w, Operands::fp32);
      const auto t = chain_fp32(GetParam(), shapes[k], in, w, Operands::tf32);
      const auto b = chain_fp32(GetParam(), shapes[k], in, w, Operands::bf16);
      const auto verdict = kb::v3test::judge(p, 0, shapes[k], fp32, expected);
      EXPECT_TRUE(verdict.pass) << "shape " << k << " seed " << seed << ": " << verdict.message;
      EXPECT_FALSE(kb::v3test::judge(p, 0, shapes[k], t, expected).pass) << "TF32 passes shape " << k << " seed " << seed;
      EXPECT_FALSE(kb::v3test::judge(p, 0, shapes[k], b, expected).pass) << "bf16 passes shape " << k << " seed " << seed;
      honest = std::max(honest, kb::v3conv_test::worst_fraction(p, 0, fp32, expected));
      tf32 = std::min(tf32, kb::v3conv_test::worst_fraction(p, 0, t, expected));
      tf32_share = std::min(tf32_share, kb::v3conv_test::failing_share(p, 0, t, expected));
      bf16 = std::min(bf16, kb::v3conv_test::worst_fraction(p, 0, b, expected));
    }
    EXPECT_LT(honest, 0.25) << "shape " << k << ": the fp32 chain uses more than a quarter of the bound";
    EXPECT_GT(tf32, 2.0) << "shape " << k << ": TF32 fails by less than 2x";
    std::printf("[ calib    ] %s shape %zu: fp32 %.3g of the bound, TF32 >= %.3gx (%.0f%% of elements fail), bf16 >= %.3gx\n",
                GetParam().c_str(), k, honest, tf32, 100 * tf32_share, bf16);
  }
}

INSTANTIATE_TEST_SUITE_P(Deck, DeckV3ConvChain,
                         testing::Values("l2_conv2d_instancenorm_divide", "l2_conv2d_subtract_tanh_avgpool",
                                         "l2_conv2d_mish_batchnorm", "l2_conv2d_batchnorm_scale",
                                         "l2_conv2d_tanh_scale_bias_maxpool", "l2_conv2d_groupnorm_scale_maxpool_clamp"),
                         [](const testing::TestParamInfo<std::string>& i) { return i.param; });

// l2_conv2d_batchnorm_scale's exploit-cuda-skip-batchnorm computes y = 2 conv(x): under v3's
// module (BatchNorm at its initial state: mean 0, variance 1, weight 1, bias 0) that is off by a
// factor 1/sqrt(1 + 1e-5) only, and v3's check passes it; under kbench's drawn BatchNorm it fails.
TEST(DeckV3ConvChainExploits, SkippingBatchNormPassesV3sStateAndFailsTheDrawnOne) {
  const kb::Problem p = kb::v3test::load("l2_conv2d_batchnorm_scale");
  const kb::ShapeCase s = kb::v3test::resized(p, 0, {{"batch", 1}, {"height", 64}, {"width", 64}});
  const ConvParams c = params_of(s);
  for (uint64_t seed : {1, 2, 3}) {
    const auto in = kb::generate_inputs(p, s, seed);
    auto w = kb::generate_weights(p, s, seed);
    std::vector<double> skipped = kb::v3conv_test::widened(kb::v3conv_test::conv2d_fp32(in[0], w[0], &w[1], c));
    for (double& v : skipped) v *= 2;
    EXPECT_FALSE(kb::v3test::judge(p, 0, s, skipped, kb::v3test::oracle_values(p, s, in, w).at(0)).pass) << "seed " << seed;
    for (int64_t o = 0; o < c.out_c; ++o) w[2].set(o, 1.0), w[3].set(o, 0.0), w[4].set(o, 0.0), w[5].set(o, 1.0);
    EXPECT_TRUE(kb::v3test::v3_check_passes(skipped, kb::v3test::oracle_values(p, s, in, w).at(0))) << "seed " << seed;
  }
}

}  // namespace
