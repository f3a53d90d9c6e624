// Honest cuda max pooling for l1_max_pool2d: one thread per output element (consecutive threads own
// consecutive outputs of a row, so their loads of one window row are `stride` floats apart and mostly
// share cache lines), scanning its kernel_size x kernel_size dilated window and skipping the positions
// in the padding, which never win. fmaxf would drop a NaN; `v > m || v != v` keeps it, as PyTorch does.
#include "kbench/solution.h"

namespace {

struct Pool {
  int64_t height, width, out_h, out_w;
  int kernel, stride, padding, dilation;
};

__global__ void max_pool2d(const float* __restrict__ x, float* __restrict__ y, int64_t planes, Pool p) {
  const int64_t outputs = planes * p.out_h * p.out_w;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < outputs; o += step) {
    const int64_t j = o % p.out_w, i = (o / p.out_w) % p.out_h, plane = o / (p.out_w * p.out_h);
    const float* xp = x + plane * p.height * p.width;
    const int64_t h0 = i * p.stride - p.padding, w0 = j * p.stride - p.padding;
    float m = -INFINITY;
    for (int di = 0; di < p.kernel; ++di) {
      const int64_t h = h0 + static_cast<int64_t>(di) * p.dilation;
      if (h < 0 || h >= p.height) continue;
      for (int dj = 0; dj < p.kernel; ++dj) {
        const int64_t w = w0 + static_cast<int64_t>(dj) * p.dilation;
        if (w < 0 || w >= p.width) continue;
        const float v = __ldg(xp + h * p.width + w);
        if (v > m || v != v) m = v;
        if (m != m) break;
      }
    }
    y[o] = m;
  }
}

struct State {
  int64_t planes;
  Pool pool;
  int blocks;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  const int64_t* d = p->dim_values;  // batch, channels, height, width, kernel_size, stride, padding, dilation
  Pool pool{d[2], d[3], 0, 0, static_cast<int>(d[4]), static_cast<int>(d[5]), static_cast<int>(d[6]),
            static_cast<int>(d[7])};
  pool.out_h = (d[2] + 2 * d[6] - d[7] * (d[4] - 1) - 1) / d[5] + 1;
  pool.out_w = (d[3] + 2 * d[6] - d[7] * (d[4] - 1) - 1) / d[5] + 1;
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 1;
  const int64_t outputs = d[0] * d[1] * pool.out_h * pool.out_w;
  const int64_t wanted = (outputs + 255) / 256;
  *state = new State{d[0] * d[1], pool, static_cast<int>(wanted < 16LL * sms ? wanted : 16LL * sms)};
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  max_pool2d<<<s->blocks, 256, 0, static_cast<cudaStream_t>(c->stream)>>>(
      static_cast<const float*>(c->inputs[0].data), static_cast<float*>(c->outputs[0].data), s->planes, s->pool);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
