// GPU reference for l4_deepseek_moe (deck/gpu_reference.h): the definition of reference.cpp in
// double, for the whole output. The router logits are copied to the host and routed there by the
// same fp64 function the CPU oracle calls (src/deck/ops/moe_routing.h), so both route every token
// identically; then each SwiGLU MLP (the shared one over every token with weight 1, then each
// expert over its tokens with their routing weights) is two launches of a plain tiled kernel:
//   up:   h[m, :] = silu(x[token m] . W_gate^T) * (x[token m] . W_up^T)      (double h)
//   down: out[token m, :] += weight m * (h[m, :] . W_down^T)
// A block computes a 64 x 64 tile, each of its 256 threads 4 x 4 outputs accumulated in double
// over the whole inner dim, read through shared memory 16 at a time: the tiling is there only for
// speed (v3's shape is 1.4 TFLOP), every output is still one full-length double dot product. The
// launches run in order on one stream and a token appears once per expert, so `out` is
// accumulated without atomics: the shared MLP first, then the experts in index order (the oracle
// adds them in routing order; for a sum of 9 terms of ~1 in double the order moves it by ~1e-16).
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "deck/gpu_reference.h"
#include "deck/ops/moe_routing.h"

namespace {

constexpr int kTile = 64, kDepth = 16, kThreads = 256, kPer = 4;  // 16 x 16 threads, 4 x 4 outputs each
constexpr double kRoutedScaling = 2.5;                            // as reference.cpp
constexpr int64_t kGroupScoreTop = 2;

__device__ double silu(double g) { return g / (1.0 + exp(-g)); }

// h (rows, inter) = silu(x[token] W_gate^T) * (x[token] W_up^T); W_gate, W_up (inter, hidden).
__global__ void up_kernel(const float* x, const int* token, int64_t rows, const float* w_gate, const float* w_up,
                          int64_t hidden, int64_t inter, double* h) {
  __shared__ double xs[kTile][kDepth];
  __shared__ double gs[kDepth][kTile];
  __shared__ double us[kDepth][kTile];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t m0 = blockIdx.y * static_cast<int64_t>(kTile), n0 = blockIdx.x * static_cast<int64_t>(kTile);
  double g[kPer][kPer] = {}, u[kPer][kPer] = {};
  for (int64_t k0 = 0; k0 < hidden; k0 += kDepth) {
    for (int i = threadIdx.x; i < kTile * kDepth; i += kThreads) {
      const int r = i / kDepth, k = i % kDepth;
      xs[r][k] = m0 + r < rows && k0 + k < hidden ? static_cast<double>(x[token[m0 + r] * hidden + k0 + k]) : 0.0;
      const int n = i / kDepth;  // the weights are read along k, their contiguous dim
      const bool in = k0 + k < hidden && n0 + n < inter;
      gs[k][n] = in ? static_cast<double>(w_gate[(n0 + n) * hidden + k0 + k]) : 0.0;
      us[k][n] = in ? static_cast<double>(w_up[(n0 + n) * hidden + k0 + k]) : 0.0;
    }
    __syncthreads();
    for (int k = 0; k < kDepth; ++k)
      for (int i = 0; i < kPer; ++i)
        for (int j = 0; j < kPer; ++j) {
          g[i][j] += xs[ty * kPer + i][k] * gs[k][tx * kPer + j];
          u[i][j] += xs[ty * kPer + i][k] * us[k][tx * kPer + j];
        }
    __syncthreads();
  }
  for (int i = 0; i < kPer; ++i)
    for (int j = 0; j < kPer; ++j) {
      const int64_t r = m0 + ty * kPer + i, n = n0 + tx * kPer + j;
      if (r < rows && n < inter) h[r * inter + n] = silu(g[i][j]) * u[i][j];
    }
}

// out[token m, :] += weight[m] * (h[m, :] W_down^T); W_down (hidden, inter).
__global__ void down_kernel(const double* h, const int* token, const double* weight, int64_t rows, const float* w_down,
                            int64_t hidden, int64_t inter, double* out) {
  __shared__ double hs[kTile][kDepth];
  __shared__ double ds[kDepth][kTile];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t m0 = blockIdx.y * static_cast<int64_t>(kTile), n0 = blockIdx.x * static_cast<int64_t>(kTile);
  double acc[kPer][kPer] = {};
  for (int64_t k0 = 0; k0 < inter; k0 += kDepth) {
    for (int i = threadIdx.x; i < kTile * kDepth; i += kThreads) {
      const int r = i / kDepth, k = i % kDepth;
      hs[r][k] = m0 + r < rows && k0 + k < inter ? h[(m0 + r) * inter + k0 + k] : 0.0;
      ds[k][r] = k0 + k < inter && n0 + r < hidden ? static_cast<double>(w_down[(n0 + r) * inter + k0 + k]) : 0.0;
    }
    __syncthreads();
    for (int k = 0; k < kDepth; ++k)
      for (int i = 0; i < kPer; ++i)
        for (int j = 0; j < kPer; ++j) acc[i][j] += hs[ty * kPer + i][k] * ds[k][tx * kPer + j];
    __syncthreads();
  }
  for (int i = 0; i < kPer; ++i)
    for (int j = 0; j < kPer; ++j) {
      const int64_t r = m0 + ty * kPer + i, n = n0 + tx * kPer + j;
      if (r < rows && n < hidden) out[token[r] * hidden + n] += weight[r] * acc[i][j];
    }
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("l4_deepseek_moe GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

// Device buffers freed on every exit path.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { check(cudaMalloc(&p, std::max<size_t>(bytes, 1)), "allocating scratch"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

void l4_deepseek_moe_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t tokens = c.dim("num_tokens"), hidden = c.dim("hidden_size");
  const int64_t inter = c.dim("moe_intermediate_size"), shared_inter = c.dim("shared_intermediate_size");
  kb::ops::GroupLimitedTopK routing;
  routing.num_experts = c.dim("num_experts");
  routing.n_group = c.dim("n_group");
  routing.topk_group = c.dim("topk_group");
  routing.top_k = c.dim("top_k");
  routing.group_score_top = kGroupScoreTop;
  routing.scaling = kRoutedScaling;
  const int64_t experts = routing.num_experts;
  auto stream = static_cast<cudaStream_t>(c.stream);
  const auto* x = static_cast<const float*>(c.inputs[0]);
  const auto* w_gate = static_cast<const float*>(c.weights[0]);
  const auto* w_up = static_cast<const float*>(c.weights[1]);
  const auto* w_down = static_cast<const float*>(c.weights[2]);
  const auto* ws_gate = static_cast<const float*>(c.weights[3]);
  const auto* ws_up = static_cast<const float*>(c.weights[4]);
  const auto* ws_down = static_cast<const float*>(c.weights[5]);
  double* out = c.expected[0];

  std::vector<float> logits32(static_cast<size_t>(tokens * experts));
  check(cudaMemcpyAsync(logits32.data(), c.inputs[1], sizeof(float) * logits32.size(), cudaMemcpyDeviceToHost, stream),
        "copying router_logits");
  check(cudaStreamSynchronize(stream), "copying router_logits");
  const std::vector<kb::ops::TokenRoute> routes =
      kb::ops::route_tokens(std::vector<double>(logits32.begin(), logits32.end()), tokens, routing);

  // The work lists, one after another: the shared MLP's (every token, weight 1), then each expert's.
  std::vector<int> token_list;
  std::vector<double> weight_list;
  for (int64_t t = 0; t < tokens; ++t) token_list.push_back(static_cast<int>(t)), weight_list.push_back(1.0);
  std::vector<int64_t> begin(static_cast<size_t>(experts + 1));
  for (int64_t e = 0; e < experts; ++e) {
    begin[static_cast<size_t>(e)] = static_cast<int64_t>(token_list.size());
    for (int64_t t = 0; t < tokens; ++t) {
      const auto& r = routes[static_cast<size_t>(t)];
      for (size_t k = 0; k < r.experts.size(); ++k)
        if (r.experts[k] == e) token_list.push_back(static_cast<int>(t)), weight_list.push_back(r.weights[k]);
    }
  }
  begin[static_cast<size_t>(experts)] = static_cast<int64_t>(token_list.size());

  DeviceBuffer d_token(sizeof(int) * token_list.size()), d_weight(sizeof(double) * weight_list.size());
  DeviceBuffer d_h(sizeof(double) * static_cast<size_t>(tokens * std::max(inter, shared_inter)));
  check(cudaMemcpyAsync(d_token.p, token_list.data(), sizeof(int) * token_list.size(), cudaMemcpyHostToDevice, stream),
        "copying the token lists");
  check(cudaMemcpyAsync(d_weight.p, weight_list.data(), sizeof(double) * weight_list.size(), cudaMemcpyHostToDevice,
                        stream),
        "copying the routing weights");
  check(cudaMemsetAsync(out, 0, sizeof(double) * static_cast<size_t>(tokens * hidden), stream), "clearing the output");
  const auto* tok = static_cast<const int*>(d_token.p);
  const auto* wgt = static_cast<const double*>(d_weight.p);
  auto* h = static_cast<double*>(d_h.p);

  auto mlp = [&](int64_t first, int64_t rows, const float* wg, const float* wu, const float* wd, int64_t width) {
    if (rows == 0) return;
    const unsigned row_tiles = static_cast<unsigned>((rows + kTile - 1) / kTile);
    up_kernel<<<dim3(static_cast<unsigned>((width + kTile - 1) / kTile), row_tiles), kThreads, 0, stream>>>(
        x, tok + first, rows, wg, wu, hidden, width, h);
    down_kernel<<<dim3(static_cast<unsigned>((hidden + kTile - 1) / kTile), row_tiles), kThreads, 0, stream>>>(
        h, tok + first, wgt + first, rows, wd, hidden, width, out);
  };
  mlp(0, tokens, ws_gate, ws_up, ws_down, shared_inter);
  for (int64_t e = 0; e < experts; ++e)
    mlp(begin[static_cast<size_t>(e)], begin[static_cast<size_t>(e + 1)] - begin[static_cast<size_t>(e)],
        w_gate + e * inter * hidden, w_up + e * inter * hidden, w_down + e * hidden * inter, inter);
  check(cudaGetLastError(), "launching its kernels");
  // The scratch is freed on return: wait for the kernels that read it.
  check(cudaStreamSynchronize(stream), "running its kernels");
}

KB_REGISTER_GPU_REFERENCE("l4_deepseek_moe", l4_deepseek_moe_gpu_reference);

}  // namespace
