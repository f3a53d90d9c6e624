// fp64 oracle for l1_conv2d (KernelBench v3's 63_conv_standard_2D__square_input__square_kernel):
// F.conv2d(x, weight, stride, dilation) without padding, kb::ops::conv2d. Products of two fp32 values are
// exact in double and each sum holds at most 576 terms, so the oracle errs by ~1e-14 relative.
//
// Beside the GPU reference (reference.cu) the oracle is asked for sampled rows only: a row is one
// output row y[b, o, i, :]. For each it lifts the input rows that output row reads (the window's
// dilation * (kernel_size - 1) + 1 rows) and the weight of channel o, and convolves them with the
// same column stride and dilation: one output row, computed by the same op as the full tensor.
#include <algorithm>

#include "deck/ops/conv.h"
#include "deck/registry.h"

namespace {

void l1_conv2d_oracle(kb::OracleCase& c) {
  using namespace kb::ops;
  const auto& d = c.shape.dims;  // batch, in_channels, out_channels, height, width, kernel_size, stride, dilation
  const int64_t in_c = d.at(1), out_c = d.at(2), height = d.at(3), width = d.at(4);
  const int64_t kernel = d.at(5), stride = d.at(6), dilation = d.at(7);
  const Tensor64 weight = to_tensor64(c.weights.at(0));
  if (c.rows.empty()) {
    const ConvOptions o{.stride = {stride}, .dilation = {dilation}};
    c.expected.at(0) = conv2d(to_tensor64(c.inputs.at(0)), weight, nullptr, o).data;
    return;
  }
  const int64_t out_h = (height - dilation * (kernel - 1) - 1) / stride + 1;
  const int64_t out_w = (width - dilation * (kernel - 1) - 1) / stride + 1;
  const int64_t extent = dilation * (kernel - 1) + 1, taps = in_c * kernel * kernel;
  const kb::HostTensor& x = c.inputs.at(0);
  // One output row's window: no stride along the rows (exactly `extent` rows in).
  const ConvOptions row_options{.stride = {1, stride}, .dilation = {dilation}};
  for (const int64_t r : c.rows) {
    const int64_t b = r / (out_c * out_h), o = r / out_h % out_c, i = r % out_h;
    Tensor64 window({1, in_c, extent, width});
    for (int64_t ch = 0; ch < in_c; ++ch)
      for (int64_t e = 0; e < extent; ++e) {
        const int64_t h = i * stride + e;
        for (int64_t w = 0; w < width; ++w)
          window[(ch * extent + e) * width + w] = x.get(((b * in_c + ch) * height + h) * width + w);
      }
    const Tensor64 w_o({1, in_c, kernel, kernel},
                       std::vector<double>(weight.data.begin() + o * taps, weight.data.begin() + (o + 1) * taps));
    const Tensor64 row = conv2d(window, w_o, nullptr, row_options);
    std::copy(row.data.begin(), row.data.end(), c.expected.at(0).begin() + r * out_w);
  }
}

KB_REGISTER_ORACLE("l1_conv2d", l1_conv2d_oracle);

}  // namespace
