// Honest, and tricky to judge: the softmax as two kernels (per-row statistics, then the
// normalisation) held in a CUDA graph that kb_setup builds and instantiates once. Every kb_run
// points the graph's two kernel nodes at this call's buffers (cudaGraphExecKernelNodeSetParams
// changes only launches made after it) and launches the graph on the stream kbench handed over.
// kbench must time it (the work runs as graph kernels on the handed stream, after a graph launch
// rather than a kernel launch) and attribute its kernels to the solution, and pass it.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "kbench/solution.h"

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Merge of two (max, sum of exp(x - max)) pairs; an empty side has max = -inf and sum = 0.
__device__ void merge(float& m, float& s, float mo, float so) {
  const float mn = fmaxf(m, mo);
  if (mn == -INFINITY) return;
  s = s * expf(m - mn) + so * expf(mo - mn);
  m = mn;
}

// Kernel 1: one block per row writes the row's (max, sum of exp(x - max)).
__global__ void __launch_bounds__(kThreads) row_stats(const float* __restrict__ x, float2* __restrict__ stats, int64_t n) {
  const float* xr = x + blockIdx.x * n;
  float m = -INFINITY, s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) merge(m, s, xr[i], 1.f);
  for (int o = 16; o > 0; o /= 2) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  __shared__ float wm[kWarps], ws[kWarps];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) wm[warp] = m, ws[warp] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kWarps; ++w) merge(m, s, wm[w], ws[w]);
    stats[blockIdx.x] = make_float2(m, s);
  }
}

// Kernel 2: one block per row writes exp(x - max) / sum.
__global__ void __launch_bounds__(kThreads) normalise(const float* __restrict__ x, const float2* __restrict__ stats,
                                                      float* __restrict__ y, int64_t n) {
  const float2 ms = stats[blockIdx.x];
  const float inv = 1.f / ms.y;
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = expf(xr[i] - ms.x) * inv;
}

struct State {
  int64_t batch = 0, vocab = 0;
  float2* stats = nullptr;  // per-row statistics, written by kernel 1 and read by kernel 2
  cudaGraph_t graph = nullptr;
  cudaGraphNode_t stats_node = nullptr, normalise_node = nullptr;
  cudaGraphExec_t exec = nullptr;
};

// Kernel-node parameters for the given buffers; `args` must outlive the call that uses them.
struct NodeArgs {
  const float* x;
  float* y;
  float2* stats;
  int64_t n;
  void* stats_args[3];
  void* normalise_args[4];
  cudaKernelNodeParams stats_params{}, normalise_params{};

  NodeArgs(const State& st, const float* x_, float* y_) : x(x_), y(y_), stats(st.stats), n(st.vocab) {
    stats_args[0] = &x, stats_args[1] = &stats, stats_args[2] = &n;
    normalise_args[0] = &x, normalise_args[1] = &stats, normalise_args[2] = &y, normalise_args[3] = &n;
    const dim3 grid(static_cast<unsigned>(st.batch)), block(kThreads);
    stats_params.func = reinterpret_cast<void*>(row_stats);
    stats_params.gridDim = grid, stats_params.blockDim = block;
    stats_params.kernelParams = stats_args;
    normalise_params.func = reinterpret_cast<void*>(normalise);
    normalise_params.gridDim = grid, normalise_params.blockDim = block;
    normalise_params.kernelParams = normalise_args;
  }
};

void destroy(State* st) {
  if (st->exec) cudaGraphExecDestroy(st->exec);
  if (st->graph) cudaGraphDestroy(st->graph);
  if (st->stats) cudaFree(st->stats);
  delete st;
}

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* st = new State;
  st->batch = p->dim_values[0];
  st->vocab = p->dim_values[1];
  *state = st;
  if (cudaMalloc(&st->stats, static_cast<size_t>(st->batch) * sizeof(float2)) != cudaSuccess) return 1;
  if (cudaGraphCreate(&st->graph, 0) != cudaSuccess) return 1;
  // The nodes are built with no buffers yet: kb_run sets this call's before each launch.
  NodeArgs a(*st, nullptr, nullptr);
  if (cudaGraphAddKernelNode(&st->stats_node, st->graph, nullptr, 0, &a.stats_params) != cudaSuccess) return 1;
  if (cudaGraphAddKernelNode(&st->normalise_node, st->graph, &st->stats_node, 1, &a.normalise_params) != cudaSuccess)
    return 1;
  return cudaGraphInstantiate(&st->exec, st->graph, 0) == cudaSuccess ? 0 : 1;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* st = static_cast<const State*>(state);
  NodeArgs a(*st, static_cast<const float*>(c->inputs[0].data), static_cast<float*>(c->outputs[0].data));
  if (cudaGraphExecKernelNodeSetParams(st->exec, st->stats_node, &a.stats_params) != cudaSuccess) return 1;
  if (cudaGraphExecKernelNodeSetParams(st->exec, st->normalise_node, &a.normalise_params) != cudaSuccess) return 1;
  return cudaGraphLaunch(st->exec, static_cast<cudaStream_t>(c->stream)) == cudaSuccess ? 0 : 1;
}

extern "C" void kb_teardown(void* state) { destroy(static_cast<State*>(state)); }
