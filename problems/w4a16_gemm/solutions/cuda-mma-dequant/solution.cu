// Honest cuda w4a16 GEMM: int4 weights dequantized in registers straight into the B fragments of
// bf16 tensor-core MMAs (mma.sync m16n8k16, fp32 accumulation); nothing is repacked in kb_setup.
//
// Layout trick: a B fragment register holds two bf16 weights of one column at rows k and k + 1, and
// one byte of w_q holds exactly that pair (even k in the low nibble). A lane loads one 32-bit word
// of a w_q row, four adjacent columns, and uses byte f for fragment f: fragment f's column j stands
// for the warp's column 4 j + f. The accumulators come back in that permuted order and are put
// right when they are added into the block's shared-memory tile.
//
// Dequantization: (128 + q) is a bf16 whose low mantissa bits are q, so a nibble becomes a bf16 by
// OR-ing it into 0x4300; (128 + q) - (128 + zero) is exact, and one bf16 multiply by the scale rounds
// (q - zero) * scale to bf16 once, as a bf16 weight matrix would hold it.
//
// Operand A (x): for large M, staged through shared memory a chunk of 64 k at a time (cp.async,
// double-buffered) and read with ldmatrix; for small M, loaded straight from global memory (a few
// rows, cached in L1), the whole chunk's fragments issued at once. Operand B: each warp keeps the
// w_q words of the next two chunks in flight while it computes the current one.
//
// Parallelism: a block covers 32 * WN columns and 16 * MT rows of y. For small M the problem is
// memory-bound (the weights dominate): blocks are one warp wide and WK warps deep, each warp taking
// a slice of K, and the slices are summed in shared memory, so that thousands of warps stream the
// weights at once. For large M the block is 4 warps wide and reuses each weight over 64 rows.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kbench/solution.h"

namespace {

constexpr int kGroup = 128;      // rows of K per scale/zero

__device__ __forceinline__ uint32_t as_u32(__nv_bfloat162 v) { return *reinterpret_cast<uint32_t*>(&v); }

// Byte f of `word` (a k pair of one column) as the bf16x2 B-fragment register (q - zero) * scale.
__device__ __forceinline__ uint32_t dequant_pair(uint32_t word, int f, __nv_bfloat162 zero128, __nv_bfloat162 scale) {
  const uint32_t b = (word >> (8 * f)) & 0xFFu;
  uint32_t biased = (b & 0xFu) | ((b & 0xF0u) << 12) | 0x43004300u;  // (128 + lo, 128 + hi)
  const __nv_bfloat162 q = *reinterpret_cast<__nv_bfloat162*>(&biased);
  return as_u32(__hmul2(__hsub2(q, zero128), scale));
}

__device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t load_x_pair(const uint16_t* __restrict__ x, int row, int M, int K, int k) {
  return row < M ? __ldg(reinterpret_cast<const uint32_t*>(x + static_cast<int64_t>(row) * K + k)) : 0u;
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&a)[4], uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
               : "r"(smem_addr));
}

// 16 bytes global -> shared, zero-filled when !valid.
__device__ __forceinline__ void cp_async_16(uint32_t smem_addr, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

constexpr int kChunk = 64;             // k per pipeline step: 4 MMA k-steps
constexpr int kRowBytes = 2 * kChunk + 16;  // a staged x row, padded: ldmatrix's 8 rows hit 8 bank groups

// blockDim = (32 * WN, WK); grid = (N / (32 * WN), ceil(M / (16 * MT))). Dynamic shared memory:
// the staged x chunks (kSmemA) and, after the K loop, the block's fp32 output tile.
template <int MT, bool kSmemA>
__global__ void __launch_bounds__(kSmemA ? 128 : 512) w4a16_mma(const uint16_t* __restrict__ x,
                                                                const uint8_t* __restrict__ w_q,
                                                                const uint16_t* __restrict__ scales,
                                                                const uint16_t* __restrict__ zeros, int M, int N,
                                                                int K, __nv_bfloat16* __restrict__ y) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int BM = 16 * MT;
  const int block_n = blockDim.x, threads = blockDim.x * blockDim.y;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x % 32, warp_n = threadIdx.x / 32, g = lane / 4, t = lane % 4;
  const int m0 = blockIdx.y * BM, n_block = blockIdx.x * block_n, n0 = n_block + warp_n * 32;
  const int k_slice = K / blockDim.y, k_begin = threadIdx.y * k_slice, chunks = k_slice / kChunk;
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));

  // Stages chunk c of x (rows m0 .. m0 + BM) into buffer c % 2 (kSmemA: one warp row, WK == 1).
  auto stage_x = [&](int c) {
    const int k = k_begin + c * kChunk;
    for (int i = tid; i < BM * (kChunk / 8); i += threads) {
      const int row = i / (kChunk / 8), part = i % (kChunk / 8);
      const bool valid = m0 + row < M;
      const uint16_t* src = x + static_cast<int64_t>(valid ? m0 + row : 0) * K + k + 8 * part;
      cp_async_16(smem_base + (c % 2) * BM * kRowBytes + row * kRowBytes + 16 * part, src, valid);
    }
    cp_async_commit();
  };
  // The w_q words of chunk c: for k-step s, rows (k0 / 2 + t) and (k0 / 2 + 4 + t), k0 = 16 s.
  const uint8_t* wcol = w_q + n0 + 4 * g;
  auto load_b = [&](uint32_t (&words)[8], int c) {
    const int64_t row0 = (k_begin + c * kChunk) / 2 + t;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      words[2 * s] = __ldg(reinterpret_cast<const uint32_t*>(wcol + (row0 + 8 * s) * N));
      words[2 * s + 1] = __ldg(reinterpret_cast<const uint32_t*>(wcol + (row0 + 8 * s + 4) * N));
    }
  };

  float acc[MT][4][4] = {};
  __nv_bfloat162 scale[4], zero128[4];
  // The w_q words of chunks c, c + 1 and c + 2: two chunks of loads stay in flight while one is used.
  uint32_t cur[8], next1[8], next2[8];
  load_b(cur, 0);
  if (chunks > 1) load_b(next1, 1);
  if (kSmemA) stage_x(0);
  for (int c = 0; c < chunks; ++c) {
    const bool more = c + 1 < chunks;
    if (c + 2 < chunks) load_b(next2, c + 2);
    if (kSmemA) {
      if (more) stage_x(c + 1);
      if (more)
        cp_async_wait<1>();
      else
        cp_async_wait<0>();
      __syncthreads();
    }
    const int kc = k_begin + c * kChunk;
    // Small M: the chunk's A fragments straight from global memory, all issued before any is used.
    uint32_t a_direct[kSmemA ? 1 : 4][MT][4];
    if (!kSmemA) {
#pragma unroll
      for (int s = 0; s < (kSmemA ? 1 : 4); ++s)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          const int r0 = m0 + 16 * mt + g, r1 = r0 + 8, k0 = kc + 16 * s;
          a_direct[s][mt][0] = load_x_pair(x, r0, M, K, k0 + 2 * t);
          a_direct[s][mt][1] = load_x_pair(x, r1, M, K, k0 + 2 * t);
          a_direct[s][mt][2] = load_x_pair(x, r0, M, K, k0 + 8 + 2 * t);
          a_direct[s][mt][3] = load_x_pair(x, r1, M, K, k0 + 8 + 2 * t);
        }
    }
    if (c == 0 || kc % kGroup == 0) {
      const int64_t at = static_cast<int64_t>(kc / kGroup) * N + n0 + 4 * g;
      const uint2 sv = __ldg(reinterpret_cast<const uint2*>(scales + at));
      const uint2 zv = __ldg(reinterpret_cast<const uint2*>(zeros + at));
      const uint32_t sw[2] = {sv.x, sv.y}, zw[2] = {zv.x, zv.y};
#pragma unroll
      for (int f = 0; f < 4; ++f) {
        const __nv_bfloat16 sf = __ushort_as_bfloat16(static_cast<uint16_t>(sw[f / 2] >> (16 * (f % 2))));
        const __nv_bfloat16 zf = __ushort_as_bfloat16(static_cast<uint16_t>(zw[f / 2] >> (16 * (f % 2))));
        scale[f] = __bfloat162bfloat162(sf);
        // 128 + zero is exact in bf16: zero is an integer in [0, 15].
        zero128[f] = __bfloat162bfloat162(__float2bfloat16_rn(128.f + __bfloat162float(zf)));
      }
    }
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      uint32_t b[4][2];
#pragma unroll
      for (int f = 0; f < 4; ++f) {
        b[f][0] = dequant_pair(cur[2 * s], f, zero128[f], scale[f]);
        b[f][1] = dequant_pair(cur[2 * s + 1], f, zero128[f], scale[f]);
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        uint32_t a[4];
        if (kSmemA) {
          const int row = 16 * mt + (lane & 15), col = 16 * s + (lane >> 4) * 8;
          ldmatrix_x4(a, smem_base + (c % 2) * BM * kRowBytes + row * kRowBytes + 2 * col);
        } else {
#pragma unroll
          for (int i = 0; i < 4; ++i) a[i] = a_direct[kSmemA ? 0 : s][mt][i];
        }
#pragma unroll
        for (int f = 0; f < 4; ++f) mma_bf16(acc[mt][f], a, b[f][0], b[f][1]);
      }
    }
    if (kSmemA) __syncthreads();  // buffer c % 2 is refilled with chunk c + 2 in the next iteration
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      cur[i] = next1[i];
      next1[i] = next2[i];
    }
  }

  // Sum the K slices (and put the permuted columns right) in the block's fp32 tile.
  float* tile = reinterpret_cast<float*>(smem);
  __syncthreads();
  for (int i = tid; i < BM * block_n; i += threads) tile[i] = 0.f;
  __syncthreads();
  // Fragment f's columns 2t and 2t + 1 are the warp's columns 4 (2t) + f and 4 (2t + 1) + f.
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int f = 0; f < 4; ++f) {
      const int row = 16 * mt + g, col = warp_n * 32 + 8 * t + f;
      atomicAdd(&tile[row * block_n + col], acc[mt][f][0]);
      atomicAdd(&tile[row * block_n + col + 4], acc[mt][f][1]);
      atomicAdd(&tile[(row + 8) * block_n + col], acc[mt][f][2]);
      atomicAdd(&tile[(row + 8) * block_n + col + 4], acc[mt][f][3]);
    }
  __syncthreads();
  for (int i = tid; i < BM * block_n; i += threads) {
    const int row = m0 + i / block_n;
    if (row < M) y[static_cast<int64_t>(row) * N + n_block + i % block_n] = __float2bfloat16_rn(tile[i]);
  }
}

struct State {
  int M = 0, N = 0, K = 0;
  int mt = 1, wn = 1, wk = 1;
  const uint8_t* w_q = nullptr;
  const uint16_t* scales = nullptr;
  const uint16_t* zeros = nullptr;
};

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  s->M = static_cast<int>(p->dim_values[0]);
  s->N = static_cast<int>(p->dim_values[1]);
  s->K = static_cast<int>(p->dim_values[2]);
  s->w_q = static_cast<const uint8_t*>(p->weights[0].data);
  s->scales = static_cast<const uint16_t*>(p->weights[1].data);
  s->zeros = static_cast<const uint16_t*>(p->weights[2].data);
  // Small M streams the weights (memory-bound): one warp per 32 columns and K split 16 or 8 ways.
  // Large M reuses each weight over 64 rows of x staged in shared memory.
  if (s->M <= 16) {
    s->mt = 1, s->wn = 1, s->wk = 16;
  } else if (s->M <= 32) {
    s->mt = 2, s->wn = 1, s->wk = 8;
  } else {
    s->mt = 4, s->wn = 4, s->wk = 1;
  }
  if (s->N % (32 * s->wn) != 0 || s->K % (kChunk * s->wk) != 0 || s->K % kGroup != 0) return 1;  // unsupported tiling
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  const auto* x = static_cast<const uint16_t*>(c->inputs[0].data);
  auto* y = static_cast<__nv_bfloat16*>(c->outputs[0].data);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const int bm = 16 * s->mt, block_n = 32 * s->wn;
  const dim3 grid(s->N / block_n, (s->M + bm - 1) / bm), block(block_n, s->wk);
  const size_t tile = static_cast<size_t>(bm) * block_n * sizeof(float);
  switch (s->mt) {
    case 1:
      w4a16_mma<1, false><<<grid, block, tile, stream>>>(x, s->w_q, s->scales, s->zeros, s->M, s->N, s->K, y);
      break;
    case 2:
      w4a16_mma<2, false><<<grid, block, tile, stream>>>(x, s->w_q, s->scales, s->zeros, s->M, s->N, s->K, y);
      break;
    default: {
      const size_t staged = static_cast<size_t>(2) * bm * kRowBytes;
      w4a16_mma<4, true><<<grid, block, staged > tile ? staged : tile, stream>>>(x, s->w_q, s->scales, s->zeros, s->M,
                                                                               s->N, s->K, y);
    }
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}

extern "C" void kb_teardown(void* state) { delete static_cast<State*>(state); }
