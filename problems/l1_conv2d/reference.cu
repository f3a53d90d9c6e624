// GPU reference for l1_conv2d (deck/gpu_reference.h): the definition of reference.cpp in double on
// the GPU. One thread per output element sums its in_channels * kernel_size^2 products in double, in
// the order of kb::ops::conv2d (channel, kh, kw); no padding (the problem has none). v3's shape is 66M
// outputs of 27 terms each, which the CPU oracle takes about a second over (deck/ops/conv.h) for
// each of the four cases; the parent checks this result against the CPU oracle on sampled rows.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"

namespace {

struct Conv {
  int64_t batch, in_c, out_c, height, width, kernel, stride, dilation, out_h, out_w;
};

__global__ void conv2d64(const float* x, const float* weight, double* y, Conv c) {
  const int64_t outputs = c.batch * c.out_c * c.out_h * c.out_w;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < outputs; e += step) {
    const int64_t j = e % c.out_w, i = e / c.out_w % c.out_h, o = e / (c.out_w * c.out_h) % c.out_c;
    const int64_t b = e / (c.out_w * c.out_h * c.out_c);
    double sum = 0;
    for (int64_t ch = 0; ch < c.in_c; ++ch)
      for (int64_t kh = 0; kh < c.kernel; ++kh) {
        const int64_t h = i * c.stride + kh * c.dilation;
        for (int64_t kw = 0; kw < c.kernel; ++kw) {
          const int64_t w = j * c.stride + kw * c.dilation;
          sum += static_cast<double>(x[((b * c.in_c + ch) * c.height + h) * c.width + w]) *
                 static_cast<double>(weight[((o * c.in_c + ch) * c.kernel + kh) * c.kernel + kw]);
        }
      }
    y[e] = sum;
  }
}

void l1_conv2d_gpu_reference(const kb::GpuReferenceCase& c) {
  Conv v{c.dim("batch"), c.dim("in_channels"), c.dim("out_channels"), c.dim("height"), c.dim("width"),
         c.dim("kernel_size"), c.dim("stride"), c.dim("dilation"), 0, 0};
  v.out_h = (v.height - v.dilation * (v.kernel - 1) - 1) / v.stride + 1;
  v.out_w = (v.width - v.dilation * (v.kernel - 1) - 1) / v.stride + 1;
  conv2d64<<<4096, 256, 0, static_cast<cudaStream_t>(c.stream)>>>(static_cast<const float*>(c.inputs[0]),
                                                                   static_cast<const float*>(c.weights[0]),
                                                                   c.expected[0], v);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string("l1_conv2d GPU reference: ") + cudaGetErrorString(e));
}

KB_REGISTER_GPU_REFERENCE("l1_conv2d", l1_conv2d_gpu_reference);

}  // namespace
