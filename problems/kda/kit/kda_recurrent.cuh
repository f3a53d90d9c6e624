// Kimi Delta Attention, recurrent form, fp32 state in registers: the honest first solution of
// problems/kda, and the kernels of three of its exploits: two switch off a template flag (beta, the
// decay), the result cache (exploit-cuda-fingerprint-cache) passes a device flag `skip` that makes
// both kernels return at once on a cache hit. Honest callers pass no flag; the test of a kernel
// parameter against null costs them nothing measurable.
//
// Per (b, h) and step t, with S the K x V state (zero at t = 0):
//   S' = diag(exp(g_t)) S;   u = beta_t (v_t - S'^T k_t);   S = S' + k_t u^T;   o_t = S^T (scale q_t).
// The output is computed as o_t = scale (S'^T q_t + (q_t . k_t) u), which is S^T q_t expanded, so
// the three sums over K (S'^T k_t, S'^T q_t, q_t . k_t) are reduced together, once per step.
//
// Work split: columns of S are independent (u_j and o_j read only column j), so a warp owns
// (b, h, 4 columns). Its 32 lanes are 4 column groups x 8 key groups: lane (cg, kg) holds
// S[16 kg .. 16 kg + 15][j0 + cg] in registers, and the sums over K are 3-step butterflies over the
// 8 key groups. A block of 8 warps covers 32 columns of one (b, h), so the warps reading the same
// q, k, g rows share them through L1. Inputs of step t + 1 are loaded while step t computes.
// exp(g) is computed once per element by a separate elementwise kernel (every column group and
// every warp of a (b, h) needs all K decays, so computing them in the recurrence would repeat each
// exp 128 times).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace kda {

constexpr int kK = 128;             // key dim this kernel is written for
constexpr int kKeyGroups = 8;       // lanes sharing one column, each with kRows key rows
constexpr int kRows = kK / kKeyGroups;
constexpr int kColumnsPerWarp = 32 / kKeyGroups;
constexpr int kWarpsPerBlock = 8;
constexpr int kColumnsPerBlock = kColumnsPerWarp * kWarpsPerBlock;

// decay[i] = exp(g[i]), elementwise.
__global__ void exp_kernel(const float4* g, float4* decay, int64_t n4, const int* skip) {
  if (skip != nullptr && *skip) return;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float4 x = g[i];
    decay[i] = make_float4(expf(x.x), expf(x.y), expf(x.z), expf(x.w));
  }
}

// The inputs one lane reads for one step.
struct StepInputs {
  uint4 k[2], q[2];  // 16 bf16 each: key rows 16 kg .. 16 kg + 15
  float4 d[4];       // 16 decays
  __nv_bfloat16 v, beta;
};

template <bool kUseDecay>
__device__ __forceinline__ void load_step(StepInputs& in, const __nv_bfloat16* q, const __nv_bfloat16* k,
                                          const __nv_bfloat16* v, const float* decay, const __nv_bfloat16* beta,
                                          int64_t row, int kg, int64_t column, int64_t V) {
  const uint4* k4 = reinterpret_cast<const uint4*>(k + row * kK + kg * kRows);
  const uint4* q4 = reinterpret_cast<const uint4*>(q + row * kK + kg * kRows);
  in.k[0] = __ldg(k4);
  in.k[1] = __ldg(k4 + 1);
  in.q[0] = __ldg(q4);
  in.q[1] = __ldg(q4 + 1);
  if (kUseDecay) {
    const float4* d4 = reinterpret_cast<const float4*>(decay + row * kK + kg * kRows);
    for (int i = 0; i < 4; ++i) in.d[i] = __ldg(d4 + i);
  }
  in.v = v[row * V + column];
  in.beta = beta[row];
}

__device__ __forceinline__ void unpack16(const uint4 (&p)[2], float (&out)[kRows]) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(p);
  for (int i = 0; i < kRows / 2; ++i) {
    const float2 f = __bfloat1622float2(h[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

// grid (V / kColumnsPerBlock, H, B), block kWarpsPerBlock warps. kUseBeta / kUseDecay exist for the
// exploit corpus (a kernel that ignores beta or the decay); the honest solution sets both.
template <bool kUseBeta, bool kUseDecay>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    recurrent_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const float* decay,
                     const __nv_bfloat16* beta, __nv_bfloat16* o, int64_t T, int64_t H, int64_t V, float scale,
                     const int* skip) {
  if (skip != nullptr && *skip) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int kg = lane % kKeyGroups, cg = lane / kKeyGroups;
  const int64_t column = static_cast<int64_t>(blockIdx.x) * kColumnsPerBlock + warp * kColumnsPerWarp + cg;
  const int64_t h = blockIdx.y, b = blockIdx.z;

  float s[kRows];
  for (int r = 0; r < kRows; ++r) s[r] = 0.f;

  StepInputs cur, next;
  load_step<kUseDecay>(cur, q, k, v, decay, beta, (b * T) * H + h, kg, column, V);
  next = cur;  // stays a copy of the last step's inputs when there is no step after it
  for (int64_t t = 0; t < T; ++t) {
    const int64_t row = (b * T + t) * H + h;
    if (t + 1 < T) load_step<kUseDecay>(next, q, k, v, decay, beta, row + H, kg, column, V);

    float kf[kRows], qf[kRows];
    unpack16(cur.k, kf);
    unpack16(cur.q, qf);
    const float* d = reinterpret_cast<const float*>(cur.d);
    float ks = 0.f, qs = 0.f, qk = 0.f;
    for (int r = 0; r < kRows; ++r) {
      if (kUseDecay) s[r] *= d[r];
      ks = fmaf(kf[r], s[r], ks);
      qs = fmaf(qf[r], s[r], qs);
      qk = fmaf(qf[r], kf[r], qk);
    }
    for (int offset = 1; offset < kKeyGroups; offset *= 2) {  // sum over the 8 key groups of this column
      ks += __shfl_xor_sync(0xffffffffu, ks, offset);
      qs += __shfl_xor_sync(0xffffffffu, qs, offset);
      qk += __shfl_xor_sync(0xffffffffu, qk, offset);
    }
    const float bt = kUseBeta ? __bfloat162float(cur.beta) : 1.f;
    const float u = bt * (__bfloat162float(cur.v) - ks);
    for (int r = 0; r < kRows; ++r) s[r] = fmaf(kf[r], u, s[r]);
    if (kg == 0) o[row * V + column] = __float2bfloat16(scale * fmaf(qk, u, qs));
    cur = next;
  }
}

// Launches the whole computation on `stream`; decay_scratch holds B * T * H * K floats (unused
// when the decay is ignored); both kernels return at once while *skip is set. Returns false for
// shapes this kernel does not handle.
template <bool kUseBeta, bool kUseDecay>
bool launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const float* g,
            const __nv_bfloat16* beta, __nv_bfloat16* o, float* decay_scratch, int64_t B, int64_t T, int64_t H,
            int64_t K, int64_t V, cudaStream_t stream, const int* skip = nullptr) {
  if (K != kK || V % kColumnsPerBlock != 0 || B <= 0 || T <= 0 || H <= 0) return false;
  const float scale = 1.0f / sqrtf(static_cast<float>(K));
  if (kUseDecay) {
    const int64_t n4 = B * T * H * K / 4;
    exp_kernel<<<1024, 256, 0, stream>>>(reinterpret_cast<const float4*>(g), reinterpret_cast<float4*>(decay_scratch), n4, skip);
  }
  const dim3 grid(static_cast<unsigned>(V / kColumnsPerBlock), static_cast<unsigned>(H), static_cast<unsigned>(B));
  recurrent_kernel<kUseBeta, kUseDecay><<<grid, kWarpsPerBlock * 32, 0, stream>>>(q, k, v, decay_scratch, beta, o, T, H,
                                                                                V, scale, skip);
  return cudaGetLastError() == cudaSuccess;
}

}  // namespace kda
