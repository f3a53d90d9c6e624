// Honest cuda w4a16 GEMM: int4 weights dequantized in registers straight into the B fragments of
// bf16 tensor-core MMAs (mma.sync m16n8k16, fp32 accumulation); nothing is repacked in kb_setup.
//
// Fragments from packed bytes. A B-fragment register holds two bf16 weights of one column n, at
// the two k of its k-pair; an A register holds x at the same two k. Which k the MMA pairs is free,
// as long as A and B agree, and so is which column a fragment column stands for (the accumulators
// are put back in place at the end). Both kernels use that freedom so that one 32-bit word of w_q
// (four columns, the two k of each byte) feeds four fragments with a few bit operations.
//
// Dequantization: (128 + q) is a bf16 whose low mantissa bits are q, so a nibble becomes a bf16 by
// OR-ing it into 0x4300; (128 + q) - (128 + zero) is exact, and one bf16 multiply by the scale rounds
// (q - zero) * scale to bf16 once, as a bf16 weight matrix would hold it.
//
// Two kernels:
//   narrow_m (M <= 32, memory-bound: the weights are the traffic). A warp covers 128 columns (each
//     lane 16 bytes of a w_q row, so a warp reads whole 128-byte lines) and 16 rows of y; the 8
//     warps of a block split K, and k_split blocks split it further; partial sums meet in shared
//     memory (plain stores and adds: fp32 atomics on shared memory are compare-and-swap loops),
//     then in an fp32 scratch buffer in global memory, where the last block of each tile (an
//     atomic ticket) converts to bf16 and zeroes the scratch again for the next call.
//   tiled (M > 32, compute-bound): 64 x 128 tiles, 4 warps of 64 x 32; x staged through shared
//     memory in chunks of 64 k (cp.async, double-buffered) and read with ldmatrix; each warp keeps
//     the w_q words of the next two chunks in flight.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "kbench/solution.h"

namespace {

constexpr int kGroup = 128;  // rows of K per scale/zero

__device__ __forceinline__ uint32_t as_u32(__nv_bfloat162 v) { return *reinterpret_cast<uint32_t*>(&v); }
__device__ __forceinline__ __nv_bfloat162 as_bf162(uint32_t v) { return *reinterpret_cast<__nv_bfloat162*>(&v); }

// Two biased nibbles (low halves of bits 0-3 and 16-19 of `v`) as (q - zero) * scale in bf16x2.
__device__ __forceinline__ uint32_t dequant(uint32_t v, uint32_t zero128, uint32_t scale) {
  const uint32_t biased = (v & 0x000F000Fu) | 0x43004300u;  // bf16 (128 + q_lo, 128 + q_hi)
  return as_u32(__hmul2(__hsub2(as_bf162(biased), as_bf162(zero128)), as_bf162(scale)));
}

// bf16 bits of 128 + zero (exact: zero is an integer in [0, 15]).
__device__ __forceinline__ uint32_t zero128_bits(uint16_t zero_bits) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(128.f + __bfloat162float(__ushort_as_bfloat16(zero_bits))));
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

// ---- narrow_m ---------------------------------------------------------------------------------
//
// k16 step at k0, lane (g = lane / 4, t = lane % 4). The lane reads w_q rows r1 = k0/2 + t and
// r2 = r1 + 4 (16 bytes each: columns 16 g .. 16 g + 15), i.e. k = 2 r1, 2 r1 + 1, 2 r2, 2 r2 + 1, and
// gives the MMA's k-slots 2t, 2t+1, 2t+8, 2t+9 the ks k0+2t, k0+2t+8, k0+2t+1, k0+2t+9: the two low
// nibbles of a column's bytes in r1 and r2 form one register, the two high nibbles the other.
// Fragment c (0..15) stands for the warp's column 16 j + c at fragment column j.
constexpr int kNarrowCols = 128;  // columns per warp and per block
constexpr int kNarrowWarps = 8;   // warps per block, each a slice of the block's K range
constexpr int kPartialStride = kNarrowCols + 4;  // floats per row of a partial tile

// Where (row, col) of a partial tile lives: one padding float per 32 columns and 4 per row make the
// bank of a fragment register's element 4 g + t + c (mod 32), different for the 32 lanes.
__device__ __forceinline__ int partial(int row, int col) { return row * kPartialStride + col + col / 32; }

__global__ void __launch_bounds__(32 * kNarrowWarps) narrow_m(const uint16_t* __restrict__ x,
                                                              const uint8_t* __restrict__ w_q,
                                                              const uint16_t* __restrict__ scales,
                                                              const uint16_t* __restrict__ zeros, int M, int N, int K,
                                                              float* scratch, unsigned* tickets,
                                                              __nv_bfloat16* __restrict__ y) {
  // Partial sums of warps 0-3, to which warps 4-7 add theirs; padded so that a warp's 32 stores of
  // one fragment register hit 32 different banks (see partial()).
  __shared__ float partials[4][16 * kPartialStride];
  __shared__ bool last;
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4, warp = threadIdx.y, tid = warp * 32 + lane;
  const int m0 = blockIdx.y * 16, n0 = blockIdx.x * kNarrowCols;
  const int k_slice = K / (gridDim.z * kNarrowWarps);
  const int k_begin = (blockIdx.z * kNarrowWarps + warp) * k_slice, steps = k_slice / 16;

  const uint8_t* wcol = w_q + n0 + 16 * g;
  auto load_w = [&](uint4 (&w)[2], int step) {
    const int64_t r1 = (k_begin + 16 * step) / 2 + t;
    w[0] = __ldg(reinterpret_cast<const uint4*>(wcol + r1 * N));
    w[1] = __ldg(reinterpret_cast<const uint4*>(wcol + (r1 + 4) * N));
  };
  float acc[16][4] = {};
  uint32_t scale[8], zero128[8];  // columns 16 g + 2 i and + 2 i + 1 in the halves of entry i
  uint4 cur[2], next1[2], next2[2];
  load_w(cur, 0);
  if (steps > 1) load_w(next1, 1);
  for (int step = 0; step < steps; ++step) {
    if (step + 2 < steps) load_w(next2, step + 2);
    const int k0 = k_begin + 16 * step;
    if (step == 0 || k0 % kGroup == 0) {
      const int64_t at = static_cast<int64_t>(k0 / kGroup) * N + n0 + 16 * g;
      const uint4 s0 = __ldg(reinterpret_cast<const uint4*>(scales + at));
      const uint4 s1 = __ldg(reinterpret_cast<const uint4*>(scales + at + 8));
      const uint4 z0 = __ldg(reinterpret_cast<const uint4*>(zeros + at));
      const uint4 z1 = __ldg(reinterpret_cast<const uint4*>(zeros + at + 8));
      const uint32_t sw[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
      const uint32_t zw[8] = {z0.x, z0.y, z0.z, z0.w, z1.x, z1.y, z1.z, z1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        scale[i] = sw[i];
        zero128[i] = zero128_bits(static_cast<uint16_t>(zw[i])) | (zero128_bits(static_cast<uint16_t>(zw[i] >> 16)) << 16);
      }
    }
    // A: x at k0+2t, k0+2t+1 (p1) and k0+2t+8, k0+2t+9 (p2) for rows g and g + 8, regrouped.
    const uint32_t p1 = load_x_pair(x, m0 + g, M, K, k0 + 2 * t), p2 = load_x_pair(x, m0 + g, M, K, k0 + 8 + 2 * t);
    const uint32_t p3 = load_x_pair(x, m0 + g + 8, M, K, k0 + 2 * t);
    const uint32_t p4 = load_x_pair(x, m0 + g + 8, M, K, k0 + 8 + 2 * t);
    const uint32_t a[4] = {__byte_perm(p1, p2, 0x5410), __byte_perm(p3, p4, 0x5410), __byte_perm(p1, p2, 0x7632),
                           __byte_perm(p3, p4, 0x7632)};
    const uint32_t w1[4] = {cur[0].x, cur[0].y, cur[0].z, cur[0].w}, w2[4] = {cur[1].x, cur[1].y, cur[1].z, cur[1].w};
#pragma unroll
    for (int c = 0; c < 16; ++c) {
      const int i = c / 4, j = c % 4;
      // Byte j of the r1 word to byte 0, byte j of the r2 word to byte 2.
      const uint32_t both = __byte_perm(w1[i], w2[i], j | (j << 4) | ((4 + j) << 8) | ((4 + j) << 12));
      const uint32_t sel = (c % 2) ? 0x3232 : 0x1010;  // broadcast one bf16 half to both
      const uint32_t s = __byte_perm(scale[c / 2], 0, sel), z = __byte_perm(zero128[c / 2], 0, sel);
      mma_bf16(acc[c], a, dequant(both, z, s), dequant(both >> 4, z, s));
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      cur[i] = next1[i];
      next1[i] = next2[i];
    }
  }
  // Sum the 8 warps' partial tiles without atomics: warps 4-7 store, warps 0-3 add theirs in place,
  // then each element is the sum of the 4 slots. Fragment c, fragment columns 2t and 2t + 1: the
  // warp's columns 16 (2t) + c and 16 (2t + 1) + c, rows g and g + 8.
  if (warp >= 4) {
    float* slot = partials[warp - 4];
#pragma unroll
    for (int c = 0; c < 16; ++c) {
      slot[partial(g, 32 * t + c)] = acc[c][0];
      slot[partial(g, 32 * t + c + 16)] = acc[c][1];
      slot[partial(g + 8, 32 * t + c)] = acc[c][2];
      slot[partial(g + 8, 32 * t + c + 16)] = acc[c][3];
    }
  }
  __syncthreads();
  if (warp < 4) {
    float* slot = partials[warp];
#pragma unroll
    for (int c = 0; c < 16; ++c) {
      slot[partial(g, 32 * t + c)] += acc[c][0];
      slot[partial(g, 32 * t + c + 16)] += acc[c][1];
      slot[partial(g + 8, 32 * t + c)] += acc[c][2];
      slot[partial(g + 8, 32 * t + c + 16)] += acc[c][3];
    }
  }
  __syncthreads();
  auto block_sum = [&](int row, int col) {
    const int at = partial(row, col);
    return (partials[0][at] + partials[1][at]) + (partials[2][at] + partials[3][at]);
  };
  const int rows = min(16, M - m0), threads = blockDim.x * blockDim.y;
  if (gridDim.z == 1) {
    for (int i = tid; i < rows * kNarrowCols; i += threads)
      y[static_cast<int64_t>(m0 + i / kNarrowCols) * N + n0 + i % kNarrowCols] =
          __float2bfloat16_rn(block_sum(i / kNarrowCols, i % kNarrowCols));
    return;
  }
  // Split K across blocks: add into the scratch tile; the last block to arrive writes y and zeroes it.
  for (int i = tid; i < rows * kNarrowCols; i += threads)
    atomicAdd(&scratch[static_cast<int64_t>(m0 + i / kNarrowCols) * N + n0 + i % kNarrowCols],
              block_sum(i / kNarrowCols, i % kNarrowCols));
  __threadfence();
  __syncthreads();
  const unsigned ticket_index = blockIdx.y * gridDim.x + blockIdx.x;
  if (tid == 0) last = atomicAdd(&tickets[ticket_index], 1u) == gridDim.z - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int i = tid; i < rows * kNarrowCols; i += threads) {
    float* at = &scratch[static_cast<int64_t>(m0 + i / kNarrowCols) * N + n0 + i % kNarrowCols];
    y[static_cast<int64_t>(m0 + i / kNarrowCols) * N + n0 + i % kNarrowCols] = __float2bfloat16_rn(__ldcg(at));
    *at = 0.f;
  }
  if (tid == 0) tickets[ticket_index] = 0;
}

// ---- tiled --------------------------------------------------------------------------------------
//
// k16 step at k0, lane (g, t): w_q words (4 adjacent columns) at rows k0/2 + t and k0/2 + 4 + t hold
// exactly the B registers' k-pairs (k0 + 2t, +1) and (k0 + 2t + 8, +9); byte f feeds fragment f,
// whose column j stands for the warp's column 4 j + f.
constexpr int kTileM = 64, kTileN = 128, kChunk = 64;
constexpr int kRowBytes = 2 * kChunk + 16;  // a staged x row, padded: ldmatrix's 8 rows hit 8 bank groups

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

// Byte f of `word` (a k-pair of one column) as the bf16x2 B register (q - zero) * scale.
__device__ __forceinline__ uint32_t dequant_byte(uint32_t word, int f, uint32_t zero128, uint32_t scale) {
  const uint32_t b = (word >> (8 * f)) & 0xFFu;
  return dequant(b | (b << 12), zero128, scale);  // low nibble to bits 0-3, high nibble to bits 16-19
}

// blockDim = 128 (4 warps along N); grid = (N / kTileN, ceil(M / kTileM)).
__global__ void __launch_bounds__(128) tiled(const uint16_t* __restrict__ x, const uint8_t* __restrict__ w_q,
                                             const uint16_t* __restrict__ scales, const uint16_t* __restrict__ zeros,
                                             int M, int N, int K, __nv_bfloat16* __restrict__ y) {
  constexpr int MT = kTileM / 16;
  __shared__ __align__(16) unsigned char smem[2 * kTileM * kRowBytes > kTileM * kTileN * 4 ? 2 * kTileM * kRowBytes
                                                                                           : kTileM * kTileN * 4];
  const int tid = threadIdx.x, lane = tid % 32, warp_n = tid / 32, g = lane / 4, t = lane % 4;
  const int m0 = blockIdx.y * kTileM, n_block = blockIdx.x * kTileN, n0 = n_block + warp_n * 32;
  const int chunks = K / kChunk;
  const uint32_t smem_base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));

  auto stage_x = [&](int c) {  // chunk c of x rows m0 .. m0 + kTileM into buffer c % 2
    for (int i = tid; i < kTileM * (kChunk / 8); i += blockDim.x) {
      const int row = i / (kChunk / 8), part = i % (kChunk / 8);
      const bool valid = m0 + row < M;
      const uint16_t* src = x + static_cast<int64_t>(valid ? m0 + row : 0) * K + c * kChunk + 8 * part;
      cp_async_16(smem_base + (c % 2) * kTileM * kRowBytes + row * kRowBytes + 16 * part, src, valid);
    }
    cp_async_commit();
  };
  const uint8_t* wcol = w_q + n0 + 4 * g;
  auto load_b = [&](uint32_t (&words)[8], int c) {  // k-step s: rows (k0 / 2 + t), (k0 / 2 + 4 + t)
    const int64_t row0 = c * kChunk / 2 + t;
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      words[2 * s] = __ldg(reinterpret_cast<const uint32_t*>(wcol + (row0 + 8 * s) * N));
      words[2 * s + 1] = __ldg(reinterpret_cast<const uint32_t*>(wcol + (row0 + 8 * s + 4) * N));
    }
  };

  float acc[MT][4][4] = {};
  uint32_t scale[4], zero128[4];
  uint32_t cur[8], next1[8], next2[8];
  load_b(cur, 0);
  if (chunks > 1) load_b(next1, 1);
  stage_x(0);
  for (int c = 0; c < chunks; ++c) {
    const bool more = c + 1 < chunks;
    if (c + 2 < chunks) load_b(next2, c + 2);
    if (more) {
      stage_x(c + 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const int kc = c * kChunk;
    if (kc % kGroup == 0) {
      const int64_t at = static_cast<int64_t>(kc / kGroup) * N + n0 + 4 * g;
      const uint2 sv = __ldg(reinterpret_cast<const uint2*>(scales + at));
      const uint2 zv = __ldg(reinterpret_cast<const uint2*>(zeros + at));
      const uint32_t sw[2] = {sv.x, sv.y}, zw[2] = {zv.x, zv.y};
#pragma unroll
      for (int f = 0; f < 4; ++f) {
        const uint32_t sh = (sw[f / 2] >> (16 * (f % 2))) & 0xFFFFu;
        const uint32_t zh = zero128_bits(static_cast<uint16_t>(zw[f / 2] >> (16 * (f % 2))));
        scale[f] = sh | (sh << 16);
        zero128[f] = zh | (zh << 16);
      }
    }
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      uint32_t b[4][2];
#pragma unroll
      for (int f = 0; f < 4; ++f) {
        b[f][0] = dequant_byte(cur[2 * s], f, zero128[f], scale[f]);
        b[f][1] = dequant_byte(cur[2 * s + 1], f, zero128[f], scale[f]);
      }
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        uint32_t a[4];
        const int row = 16 * mt + (lane & 15), col = 16 * s + (lane >> 4) * 8;
        ldmatrix_x4(a, smem_base + (c % 2) * kTileM * kRowBytes + row * kRowBytes + 2 * col);
#pragma unroll
        for (int f = 0; f < 4; ++f) mma_bf16(acc[mt][f], a, b[f][0], b[f][1]);
      }
    }
    __syncthreads();  // buffer c % 2 is refilled with chunk c + 2 in the next iteration
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      cur[i] = next1[i];
      next1[i] = next2[i];
    }
  }
  // Through shared memory, so that y is written in whole rows and the permuted columns land right.
  float* tile = reinterpret_cast<float*>(smem);
  // Fragment f's columns 2t and 2t + 1 are the warp's columns 4 (2t) + f and 4 (2t + 1) + f.
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int f = 0; f < 4; ++f) {
      const int row = 16 * mt + g, col = warp_n * 32 + 8 * t + f;
      tile[row * kTileN + col] = acc[mt][f][0];
      tile[row * kTileN + col + 4] = acc[mt][f][1];
      tile[(row + 8) * kTileN + col] = acc[mt][f][2];
      tile[(row + 8) * kTileN + col + 4] = acc[mt][f][3];
    }
  __syncthreads();
  for (int i = tid; i < kTileM * kTileN; i += blockDim.x) {
    const int row = m0 + i / kTileN;
    if (row < M) y[static_cast<int64_t>(row) * N + n_block + i % kTileN] = __float2bfloat16_rn(tile[i]);
  }
}

struct State {
  int M = 0, N = 0, K = 0;
  int k_split = 1;             // narrow_m: blocks along K
  float* scratch = nullptr;    // narrow_m with k_split > 1: M x N fp32, zero between calls
  unsigned* tickets = nullptr; // narrow_m with k_split > 1: one per output tile, zero between calls
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
  if (s->N % kTileN != 0 || s->K % kGroup != 0) return 1;  // the tilings below need these
  if (s->M > 32) return 0;
  // narrow_m: split K across blocks until there are two blocks per SM, each warp keeping >= 64 k.
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 2;
  const int tiles = (s->N / kNarrowCols) * ((s->M + 15) / 16);
  while (tiles * s->k_split < 2 * sms && s->K % (2 * s->k_split * kNarrowWarps * 64) == 0) s->k_split *= 2;
  if (s->K % (s->k_split * kNarrowWarps * 16) != 0) return 3;
  if (s->k_split > 1) {
    const size_t scratch = static_cast<size_t>(s->M) * s->N * sizeof(float);
    if (cudaMalloc(&s->scratch, scratch) != cudaSuccess || cudaMalloc(&s->tickets, tiles * sizeof(unsigned)) != cudaSuccess)
      return 4;
    if (cudaMemset(s->scratch, 0, scratch) != cudaSuccess || cudaMemset(s->tickets, 0, tiles * sizeof(unsigned)) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess)
      return 5;
  }
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  const auto* x = static_cast<const uint16_t*>(c->inputs[0].data);
  auto* y = static_cast<__nv_bfloat16*>(c->outputs[0].data);
  auto stream = static_cast<cudaStream_t>(c->stream);
  if (s->M <= 32) {
    const dim3 grid(s->N / kNarrowCols, (s->M + 15) / 16, s->k_split), block(32, kNarrowWarps);
    narrow_m<<<grid, block, 0, stream>>>(x, s->w_q, s->scales, s->zeros, s->M, s->N, s->K, s->scratch, s->tickets, y);
  } else {
    const dim3 grid(s->N / kTileN, (s->M + kTileM - 1) / kTileM);
    tiled<<<grid, 128, 0, stream>>>(x, s->w_q, s->scales, s->zeros, s->M, s->N, s->K, y);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 6;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->scratch);
  cudaFree(s->tickets);
  delete s;
}
