// kda's entry to the shared recurrence (problems/kit/delta_rule_recurrent.cuh, used by the v3
// delta-rule layers as well): bf16 q/k/v/beta, a per-channel decay exp(g) computed by a first
// elementwise kernel into scratch (every column group and every warp of a (b, h) needs all K
// decays, so computing them in the recurrence would repeat each exp 128 times), then the
// recurrence. kUseBeta / kUseDecay exist for the exploit corpus; the honest solution sets both.
#pragma once

#include "delta_rule_recurrent.cuh"

namespace kda {

// decay[i] = exp(g[i]), elementwise.
__global__ void exp_kernel(const float4* g, float4* decay, int64_t n4, const int* skip) {
  if (skip != nullptr && *skip) return;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float4 x = g[i];
    decay[i] = make_float4(expf(x.x), expf(x.y), expf(x.z), expf(x.w));
  }
}

// Launches the whole computation on `stream`; decay_scratch holds B * T * H * K floats (unused
// when the decay is ignored); both kernels return at once while *skip is set. Returns false for
// shapes this kernel does not handle.
template <bool kUseBeta, bool kUseDecay>
bool launch(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const float* g,
            const __nv_bfloat16* beta, __nv_bfloat16* o, float* decay_scratch, int64_t B, int64_t T, int64_t H,
            int64_t K, int64_t V, cudaStream_t stream, const int* skip = nullptr) {
  if (K != delta_rule::kK || V % delta_rule::kColumnsPerBlock != 0 || B <= 0 || T <= 0 || H <= 0) return false;
  if (kUseDecay) {
    const int64_t n4 = B * T * H * K / 4;
    exp_kernel<<<1024, 256, 0, stream>>>(reinterpret_cast<const float4*>(g), reinterpret_cast<float4*>(decay_scratch), n4, skip);
  }
  return delta_rule::launch_recurrence<__nv_bfloat16, /*kChannelDecay=*/true, kUseBeta, kUseDecay>(
      q, k, v, decay_scratch, beta, o, B, T, H, K, V, stream, skip);
}

}  // namespace kda
