// The gated delta rule in recurrent form, fp32 state in registers: the honest recurrence of the
// deck's delta-rule problems (kda, given q/k/v/decay/beta in bf16; l4_kimi_delta_attention and
// l4_gated_deltanet, whole layers that produce them in fp32), and of their exploits: kUseBeta /
// kUseDecay / kResetPeriod switch a term off (a template flag, so honest callers pay nothing),
// and a device flag `skip` makes the kernel return at once (kda's result-cache exploit).
//
// Per (b, h) and step t, with S the K x V state (zero at t = 0):
//   S' = diag(d_t) S;   u = beta_t (v_t - S'^T k_t);   S = S' + k_t u^T;   o_t = S^T (scale q_t),
// with d_t = exp(g_t) given already exponentiated: K decays per step (kChannelDecay, KDA) or one
// per head (Gated DeltaNet). The output is computed as o_t = scale (S'^T q_t + (q_t . k_t) u), which
// is S^T q_t expanded, so the three sums over K (S'^T k_t, S'^T q_t, q_t . k_t) are reduced
// together, once per step.
//
// Work split: columns of S are independent (u_j and o_j read only column j), so a warp owns
// (b, h, 4 columns). Its 32 lanes are 4 column groups x 8 key groups: lane (cg, kg) holds
// S[16 kg .. 16 kg + 15][j0 + cg] in registers, and the sums over K are 3-step butterflies over the
// 8 key groups. A block of 8 warps covers 32 columns of one (b, h), so the warps reading the same
// q, k, d rows share them through L1. Inputs of step t + 1 are loaded while step t computes.
// Layout: fla's (B, T, H, D): q, k, d (channel) at ((b T + t) H + h) K, v and o at (...) V, beta and
// d (per head) at (b T + t) H + h. Rows of q, k and d must be 16-byte aligned.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace delta_rule {

constexpr int kK = 128;             // key dim this kernel is written for
constexpr int kKeyGroups = 8;       // lanes sharing one column, each with kRows key rows
constexpr int kRows = kK / kKeyGroups;
constexpr int kColumnsPerWarp = 32 / kKeyGroups;
constexpr int kWarpsPerBlock = 8;
constexpr int kColumnsPerBlock = kColumnsPerWarp * kWarpsPerBlock;

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class Elem>
__device__ __forceinline__ Elem from_float(float x) {
  if constexpr (std::is_same_v<Elem, float>) {
    return x;
  } else {
    return __float2bfloat16(x);
  }
}

// kRows consecutive elements of q or k, as raw 16-byte words.
template <class Elem>
struct RowSlice {
  static constexpr int kWords = kRows * static_cast<int>(sizeof(Elem)) / 16;
  uint4 w[kWords];
  __device__ __forceinline__ void load(const Elem* p) {
    const uint4* p4 = reinterpret_cast<const uint4*>(p);
#pragma unroll
    for (int i = 0; i < kWords; ++i) w[i] = __ldg(p4 + i);
  }
  __device__ __forceinline__ void unpack(float (&out)[kRows]) const {
    if constexpr (std::is_same_v<Elem, float>) {
      const float* f = reinterpret_cast<const float*>(w);
#pragma unroll
      for (int i = 0; i < kRows; ++i) out[i] = f[i];
    } else {
      const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(w);
#pragma unroll
      for (int i = 0; i < kRows / 2; ++i) {
        const float2 f = __bfloat1622float2(h[i]);
        out[2 * i] = f.x;
        out[2 * i + 1] = f.y;
      }
    }
  }
};

// The inputs one lane reads for one step.
template <class Elem>
struct StepInputs {
  RowSlice<Elem> k, q;  // key rows 16 kg .. 16 kg + 15
  float4 d[4];          // their 16 decays (d[0].x only, for a per-head decay)
  Elem v, beta;
};

template <class Elem, bool kChannelDecay, bool kUseDecay>
__device__ __forceinline__ void load_step(StepInputs<Elem>& in, const Elem* q, const Elem* k, const Elem* v,
                                          const float* decay, const Elem* beta, int64_t row, int kg, int64_t column,
                                          int64_t V) {
  in.k.load(k + row * kK + kg * kRows);
  in.q.load(q + row * kK + kg * kRows);
  if (kUseDecay) {
    if (kChannelDecay) {
      const float4* d4 = reinterpret_cast<const float4*>(decay + row * kK + kg * kRows);
#pragma unroll
      for (int i = 0; i < 4; ++i) in.d[i] = __ldg(d4 + i);
    } else {
      in.d[0].x = __ldg(decay + row);
    }
  }
  in.v = v[row * V + column];
  in.beta = beta[row];
}

// grid (V / kColumnsPerBlock, H, B), block kWarpsPerBlock warps.
// With kResetPeriod = P > 0 (exploits only) the state restarts from zero at the steps t >= kResetPhase
// with (t - kResetPhase) % P == 0, and only the steps at least P / 2 after a restart (or before the
// first) are written: two launches with phases 0 and P / 2 write every output from a window of the
// last P / 2 .. P - 1 tokens, as a chunk-parallel kernel that warms each chunk of P / 2 up on the
// P / 2 tokens before it (instead of carrying the state) would.
template <class Elem, bool kChannelDecay, bool kUseBeta, bool kUseDecay, int kResetPeriod, int kResetPhase>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    recurrent_kernel(const Elem* q, const Elem* k, const Elem* v, const float* decay, const Elem* beta, Elem* o,
                     int64_t T, int64_t H, int64_t V, float scale, const int* skip) {
  if (skip != nullptr && *skip) return;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int kg = lane % kKeyGroups, cg = lane / kKeyGroups;
  const int64_t column = static_cast<int64_t>(blockIdx.x) * kColumnsPerBlock + warp * kColumnsPerWarp + cg;
  const int64_t h = blockIdx.y, b = blockIdx.z;

  float s[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) s[r] = 0.f;

  StepInputs<Elem> cur, next;
  load_step<Elem, kChannelDecay, kUseDecay>(cur, q, k, v, decay, beta, (b * T) * H + h, kg, column, V);
  next = cur;  // stays a copy of the last step's inputs when there is no step after it
  for (int64_t t = 0; t < T; ++t) {
    const int64_t row = (b * T + t) * H + h;
    if (t + 1 < T) load_step<Elem, kChannelDecay, kUseDecay>(next, q, k, v, decay, beta, row + H, kg, column, V);
    constexpr int kPeriod = kResetPeriod > 0 ? kResetPeriod : 1;
    const bool restarted = kResetPeriod > 0 && t >= kResetPhase;
    if (restarted && (t - kResetPhase) % kPeriod == 0) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) s[r] = 0.f;
    }
    const bool write = !restarted || (t - kResetPhase) % kPeriod >= kPeriod / 2;

    float kf[kRows], qf[kRows];
    cur.k.unpack(kf);
    cur.q.unpack(qf);
    const float* d = reinterpret_cast<const float*>(cur.d);
    float ks = 0.f, qs = 0.f, qk = 0.f;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (kUseDecay) s[r] *= kChannelDecay ? d[r] : d[0];
      ks = fmaf(kf[r], s[r], ks);
      qs = fmaf(qf[r], s[r], qs);
      qk = fmaf(qf[r], kf[r], qk);
    }
#pragma unroll
    for (int offset = 1; offset < kKeyGroups; offset *= 2) {  // sum over the 8 key groups of this column
      ks += __shfl_xor_sync(0xffffffffu, ks, offset);
      qs += __shfl_xor_sync(0xffffffffu, qs, offset);
      qk += __shfl_xor_sync(0xffffffffu, qk, offset);
    }
    const float bt = kUseBeta ? to_float(cur.beta) : 1.f;
    const float u = bt * (to_float(cur.v) - ks);
#pragma unroll
    for (int r = 0; r < kRows; ++r) s[r] = fmaf(kf[r], u, s[r]);
    if (kg == 0 && write) o[row * V + column] = from_float<Elem>(scale * fmaf(qk, u, qs));
    cur = next;
  }
}

// Launches the recurrence on `stream`; `decay` holds exp(g), B T H K floats (kChannelDecay) or
// B T H (per head), unread when !kUseDecay. Returns false for shapes this kernel does not handle.
template <class Elem, bool kChannelDecay, bool kUseBeta = true, bool kUseDecay = true, int kResetPeriod = 0,
          int kResetPhase = 0>
bool launch_recurrence(const Elem* q, const Elem* k, const Elem* v, const float* decay, const Elem* beta, Elem* o,
                       int64_t B, int64_t T, int64_t H, int64_t K, int64_t V, cudaStream_t stream,
                       const int* skip = nullptr) {
  if (K != kK || V % kColumnsPerBlock != 0 || B <= 0 || T <= 0 || H <= 0) return false;
  const float scale = 1.0f / sqrtf(static_cast<float>(K));
  const dim3 grid(static_cast<unsigned>(V / kColumnsPerBlock), static_cast<unsigned>(H), static_cast<unsigned>(B));
  recurrent_kernel<Elem, kChannelDecay, kUseBeta, kUseDecay, kResetPeriod, kResetPhase>
      <<<grid, kWarpsPerBlock * 32, 0, stream>>>(q, k, v, decay, beta, o, T, H, V, scale, skip);
  return cudaGetLastError() == cudaSuccess;
}

}  // namespace delta_rule
