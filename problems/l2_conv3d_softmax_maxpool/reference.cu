// GPU reference for l2_conv3d_softmax_maxpool (deck/gpu_reference.h): reference.cpp's chain in double.
// One thread per output position (b, i, j, k) computes, for each of the 64 conv positions of its
// 4 x 4 x 4 pooling block, the 16 channels' conv sums (bias plus 81 products, in double, in the order
// input channel, kd, kh, kw), their softmax, and the running max per channel, then writes the 16
// channels. The parent checks the result against the CPU oracle on sampled rows.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"

namespace {

constexpr int kIn = 3, kOut = 16, kKernel = 3, kPool = 4, kThreads = 128;

__global__ void conv3d_softmax_pool4(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                                     double* __restrict__ y, int64_t batch, int64_t depth, int64_t height, int64_t width,
                                     int64_t od, int64_t oh, int64_t ow) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (t >= batch * od * oh * ow) return;
  const int64_t k = t % ow, j = (t / ow) % oh, i = (t / (ow * oh)) % od, n = t / (ow * oh * od);
  double best[kOut];
  for (int c = 0; c < kOut; ++c) best[c] = -INFINITY;
  for (int a = 0; a < kPool; ++a)
    for (int b = 0; b < kPool; ++b)
      for (int e = 0; e < kPool; ++e) {
        const int64_t d0 = kPool * i + a, h0 = kPool * j + b, w0 = kPool * k + e;
        double z[kOut];
        for (int c = 0; c < kOut; ++c) z[c] = bias[c];
        for (int ci = 0; ci < kIn; ++ci)
          for (int kd = 0; kd < kKernel; ++kd)
            for (int kh = 0; kh < kKernel; ++kh)
              for (int kw = 0; kw < kKernel; ++kw) {
                const double v = x[(((n * kIn + ci) * depth + d0 + kd) * height + h0 + kh) * width + w0 + kw];
                const int tap = ((ci * kKernel + kd) * kKernel + kh) * kKernel + kw;
                for (int c = 0; c < kOut; ++c) z[c] += static_cast<double>(w[c * kIn * 27 + tap]) * v;
              }
        double m = z[0], s = 0;
        for (int c = 1; c < kOut; ++c) m = fmax(m, z[c]);
        for (int c = 0; c < kOut; ++c) s += exp(z[c] - m);
        for (int c = 0; c < kOut; ++c) best[c] = fmax(best[c], exp(z[c] - m) / s);
      }
  for (int c = 0; c < kOut; ++c) y[(((n * kOut + c) * od + i) * oh + j) * ow + k] = best[c];
}

void l2_conv3d_softmax_maxpool_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t batch = c.dim("batch"), depth = c.dim("depth"), height = c.dim("height"), width = c.dim("width");
  const int64_t od = (depth - 2) / kPool, oh = (height - 2) / kPool, ow = (width - 2) / kPool;
  const int64_t positions = batch * od * oh * ow;
  conv3d_softmax_pool4<<<static_cast<unsigned>((positions + kThreads - 1) / kThreads), kThreads, 0,
                         static_cast<cudaStream_t>(c.stream)>>>(
      static_cast<const float*>(c.inputs[0]), static_cast<const float*>(c.weights[0]), static_cast<const float*>(c.weights[1]),
      c.expected[0], batch, depth, height, width, od, oh, ow);
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("l2_conv3d_softmax_maxpool GPU reference: launching its kernel: ") + cudaGetErrorString(e));
}

KB_REGISTER_GPU_REFERENCE("l2_conv3d_softmax_maxpool", l2_conv3d_softmax_maxpool_gpu_reference);

}  // namespace
