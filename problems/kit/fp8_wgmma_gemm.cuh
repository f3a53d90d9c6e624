// An FP8 GEMM on Hopper's FP8 tensor cores, shared by the deck's honest FP8 solutions (fp8_gemm's
// cuda-wgmma and its fast-accumulation counterpart, l4_fp8_matmul's cuda-wgmma-amax):
//   y[m, n] = (sum_k x[m, k] * w[n, k]) * sa[0] * sb[0]
// with x (M, K) and w (N, K) e4m3, both K-major, the two fp32 scales read on the device, and y
// stored as bf16 or fp16 (round to nearest even). wgmma.mma_async ... .f32.e4m3.e4m3 (SASS QGMMA),
// both operands read from shared memory through wgmma matrix descriptors.
//
// Layout. x (M, K) and w (N, K) are both K-major, which is the only layout fp8 wgmma takes (it has
// no transpose for 8-bit types). A block computes a BM x BN tile of y with one warpgroup per 64
// rows; K is walked in 128-byte slices (128 e4m3 values). A slice of R rows is stored in shared
// memory as R rows of 128 bytes in the 128-byte swizzle the descriptor declares: the 16-byte chunk c
// of row r sits at r * 128 + ((c ^ (r % 8)) * 16), and every tile starts on a 1024-byte boundary
// (one swizzle atom = 8 rows x 128 bytes). The descriptor then says: start address, stride between
// 8-row groups (SBO) 1024 bytes, 128-byte swizzle; the leading-dimension offset is unused for a
// swizzled K-major operand whose K extent (32 bytes per wgmma) lies inside the swizzle row, and is
// set to 16 bytes. Each of the slice's four k32 steps starts 32 bytes further into the rows.
//
// Loads are cp.async (16 bytes, zero-filled past M, N or the padded K), issued by every thread into
// a ring of STAGES slices; the loads run STAGES - 2 slices ahead of the MMAs and at most one wgmma
// group is left in flight (none with promotion, below), so a buffer is refilled only after every
// warpgroup has finished reading it.
// cp.async writes through the generic proxy and wgmma reads through the async proxy, hence the
// fence.proxy.async between the two.
//
// Edges. M and N tails: rows past the end are zero-filled and their outputs not stored. K: rows of
// x and w must start on 16-byte boundaries for cp.async, so the caller hands operands whose rows are
// k_padded = round_up(K, 16) bytes long, zero past K (pad_rows below makes such a copy; zeros add
// nothing to the sums). K slices past the padded length are zero-filled.
//
// Accumulation (PROMOTE): Hopper's FP8 wgmma does not accumulate in full fp32: measured on an H100
// (problems/fp8_gemm/CALIBRATION.md), one accumulator carried through all of K = 8192 errs by up to
// ~0.05 on outputs of rms ~1.8, against ~1e-5 for fp32 sums. With PROMOTE each 128-deep slice is
// summed by the tensor cores into a fresh partial that is then added to fp32 registers (as
// DeepSeek-V3's FP8 GEMM does): the reduced precision only ever sees 128 products. Without it one
// accumulator runs through all of K (fp8_gemm's cuda-wgmma-fast-accum shows that this fails).
//
// Use: fp8_wgmma::gemm<Out, PROMOTE>(...) enqueues the kernel, picking the tile for M (setup()
// must have been called once before, outside the timed region).
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace fp8_wgmma {

constexpr int kSliceBytes = 128;  // K per shared-memory slice: one 128-byte swizzle row

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// cp.async of 16 bytes; src_bytes = 0 zero-fills the destination without reading.
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accesses of an accumulator register across the asm around it.
__device__ __forceinline__ void fence_register(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// wgmma matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address >> 4,
// 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension byte offset >> 4, 49-51 base
// offset (0: atoms are 1024-byte aligned), 62-63 swizzle mode (1 = 128-byte swizzle).
__device__ __forceinline__ uint64_t make_descriptor(uint32_t addr) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((addr & 0x3FFFF) >> 4);
  d |= static_cast<uint64_t>(16 >> 4) << 16;
  d |= static_cast<uint64_t>(1024 >> 4) << 32;
  d |= static_cast<uint64_t>(1) << 62;
  return d;
}

// The accumulator operands of the wgmma wrappers below, d[i] .. d[i + 31] read and written ("+f"):
// inline asm takes its operands only as a written-out list.
#define FP8_WGMMA_ACC8(i) \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define FP8_WGMMA_ACC32(i) FP8_WGMMA_ACC8(i), FP8_WGMMA_ACC8(i + 8), FP8_WGMMA_ACC8(i + 16), FP8_WGMMA_ACC8(i + 24)

// D[64 x 64] (+)= A[64 x 32] * B[64 x 32]^T, e4m3 operands from shared memory, fp32 accumulators.
__device__ __forceinline__ void wgmma_m64n64k32(float* d, uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
      "}, %32, %33, p, 1, 1;\n}\n"
      : FP8_WGMMA_ACC32(0)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D[64 x 128] (+)= A[64 x 32] * B[128 x 32]^T, e4m3 operands from shared memory, fp32 accumulators.
__device__ __forceinline__ void wgmma_m64n128k32(float* d, uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
      "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
      "}, %64, %65, p, 1, 1;\n}\n"
      : FP8_WGMMA_ACC32(0), FP8_WGMMA_ACC32(32)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// D[64 x 256] (+)= A[64 x 32] * B[256 x 32]^T, e4m3 operands from shared memory, fp32 accumulators.
__device__ __forceinline__ void wgmma_m64n256k32(float* d, uint64_t desc_a, uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {"
      "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
      "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
      "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
      "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
      "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
      "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
      "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
      "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
      "}, %128, %129, p, 1, 1;\n}\n"
      : FP8_WGMMA_ACC32(0), FP8_WGMMA_ACC32(32), FP8_WGMMA_ACC32(64), FP8_WGMMA_ACC32(96)
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

#undef FP8_WGMMA_ACC32
#undef FP8_WGMMA_ACC8

template <int BN>
__device__ __forceinline__ void wgmma_k32(float* d, uint64_t desc_a, uint64_t desc_b, int scale_d) {
  if constexpr (BN == 64) wgmma_m64n64k32(d, desc_a, desc_b, scale_d);
  else if constexpr (BN == 128) wgmma_m64n128k32(d, desc_a, desc_b, scale_d);
  else wgmma_m64n256k32(d, desc_a, desc_b, scale_d);
}

// The epilogue's stores, rounding to nearest even.
__device__ __forceinline__ void store_pair(__nv_bfloat16* p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void store_one(__nv_bfloat16* p, float a) { *p = __float2bfloat16_rn(a); }
__device__ __forceinline__ void store_pair(__half* p, float a, float b) {
  *reinterpret_cast<__half2*>(p) = __floats2half2_rn(a, b);
}
__device__ __forceinline__ void store_one(__half* p, float a) { *p = __float2half_rn(a); }

// Copies rows x slice of a K-major operand into a swizzled shared-memory tile.
template <int ROWS, int THREADS>
__device__ __forceinline__ void load_slice(uint32_t tile, const uint8_t* src, int row0, int rows_total, int k0,
                                           int k_padded) {
#pragma unroll
  for (int q = threadIdx.x; q < ROWS * 8; q += THREADS) {
    const int r = q >> 3, c = q & 7;
    const int row = row0 + r, k = k0 + c * 16;
    const bool valid = row < rows_total && k < k_padded;
    const uint8_t* p = valid ? src + static_cast<size_t>(row) * k_padded + k : src;
    cp_async_16(tile + r * kSliceBytes + ((c ^ (r & 7)) << 4), p, valid ? 16 : 0);
  }
}

// WGS warpgroups (64 rows of y each), BN columns, STAGES slices in flight.
template <int WGS, int BN, int STAGES, bool PROMOTE, class Out>
__global__ void __launch_bounds__(WGS * 128) fp8_gemm_wgmma(const uint8_t* __restrict__ x, const uint8_t* __restrict__ w,
                                                            const float* __restrict__ sa, const float* __restrict__ sb,
                                                            Out* __restrict__ y, int M, int N, int k_padded) {
  static_assert(STAGES >= 3, "the loads run STAGES - 2 slices ahead");
  constexpr int BM = 64 * WGS, THREADS = 128 * WGS;
  constexpr int kATile = BM * kSliceBytes, kBTile = BN * kSliceBytes, kStage = kATile + kBTile;
  extern __shared__ uint8_t smem_raw[];
  // Swizzle atoms must sit on 1024-byte boundaries; the launch asks for 1 KB of slack.
  const uint32_t base = (smem_addr(smem_raw) + 1023) & ~1023u;

  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int wg = threadIdx.x / 128;
  const int slices = (k_padded + kSliceBytes - 1) / kSliceBytes;

  // acc: the running fp32 sums. part: one slice's 128-deep partial sum, which the wgmma accumulates
  // at the tensor core's own reduced precision and which is then added to acc in fp32 (PROMOTE);
  // without promotion the wgmma accumulates straight into acc.
  float acc[BN / 2], part[PROMOTE ? BN / 2 : 1];
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;

  auto load = [&](int slice) {
    const uint32_t stage = base + (slice % STAGES) * kStage;
    load_slice<BM, THREADS>(stage, x, m0, M, slice * kSliceBytes, k_padded);
    load_slice<BN, THREADS>(stage + kATile, w, n0, N, slice * kSliceBytes, k_padded);
  };
  for (int s = 0; s < STAGES - 2; ++s) {
    if (s < slices) load(s);
    cp_async_commit();
  }
  for (int kt = 0; kt < slices; ++kt) {
    // Slice kt has landed (cp.async group kt: one group per slice), for this thread's copies...
    cp_async_wait<STAGES - 3>();
    fence_proxy_async();
    // ...and for everyone's. Past this barrier every warpgroup has also retired the wgmma of slice
    // kt - 2 (each waited for it in iteration kt - 1), so its buffer can be refilled.
    __syncthreads();
    if (kt + STAGES - 2 < slices) load(kt + STAGES - 2);
    cp_async_commit();

    const uint32_t stage = base + (kt % STAGES) * kStage;
    const uint64_t desc_a = make_descriptor(stage + wg * 64 * kSliceBytes);
    const uint64_t desc_b = make_descriptor(stage + kATile);
    if constexpr (PROMOTE) {
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < kSliceBytes / 32; ++k)
        // 32 bytes further into the rows: +2 in the descriptor's address field (16-byte units).
        // The slice's first k32 step overwrites part (scale-d = 0).
        wgmma_k32<BN>(part, desc_a + 2 * k, desc_b + 2 * k, k > 0);
      wgmma_commit();
      wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) {
        fence_register(part[i]);
        acc[i] += part[i];
      }
    } else {
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) fence_register(acc[i]);
      wgmma_fence();
#pragma unroll
      for (int k = 0; k < kSliceBytes / 32; ++k) wgmma_k32<BN>(acc, desc_a + 2 * k, desc_b + 2 * k, 1);
      wgmma_commit();
      wgmma_wait<1>();
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) fence_register(acc[i]);
    }
  }
  wgmma_wait<0>();
#pragma unroll
  for (int i = 0; i < BN / 2; ++i) fence_register(acc[i]);

  // Accumulator layout of m64nN (PTX ISA, "Register Fragments" for wgmma .f32 D): thread t of the
  // warpgroup holds rows 16 * (t / 32) + (t % 32) / 4 and that + 8; acc[4 j .. 4 j + 3] are columns
  // 8 j + 2 (t % 4) and + 1 of the first row, then the same two columns of the second.
  const float scale = sa[0] * sb[0];
  const int t = threadIdx.x % 128;
  const int row_a = m0 + wg * 64 + (t / 32) * 16 + (t % 32) / 4;
  const bool pairs = (N % 2) == 0;  // 16-bit pairs are 4-byte aligned
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
    const int col = n0 + j * 8 + 2 * (t % 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row_a + 8 * h;
      if (row >= M) continue;
      const float v0 = acc[4 * j + 2 * h] * scale, v1 = acc[4 * j + 2 * h + 1] * scale;
      Out* out = y + static_cast<size_t>(row) * N + col;
      if (pairs && col + 1 < N) {
        store_pair(out, v0, v1);
      } else {
        if (col < N) store_one(out, v0);
        if (col + 1 < N) store_one(out + 1, v1);
      }
    }
  }
}

// Copies a (rows, k) e4m3 matrix into (rows, k_padded) with zeros past k, 16 bytes per thread.
static __global__ void pad_rows(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst, int rows, int k,
                                int k_padded) {
  const int chunks = k_padded / 16;
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<size_t>(rows) * chunks) return;
  const size_t row = i / chunks;
  const int c0 = static_cast<int>(i % chunks) * 16;
  alignas(16) uint8_t v[16];
#pragma unroll
  for (int b = 0; b < 16; ++b) v[b] = c0 + b < k ? src[row * k + c0 + b] : 0;
  *reinterpret_cast<uint4*>(dst + row * k_padded + c0) = *reinterpret_cast<const uint4*>(v);
}

static inline void pad(const uint8_t* src, uint8_t* dst, int rows, int k, int k_padded, cudaStream_t s) {
  const size_t n = static_cast<size_t>(rows) * (k_padded / 16);
  pad_rows<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(src, dst, rows, k, k_padded);
}

// The row length the kernel reads: K rounded up to 16 bytes (cp.async's granule).
inline int padded_k(int k) { return (k + 15) / 16 * 16; }

template <int WGS, int BN, int STAGES>
constexpr int smem_bytes() {
  return STAGES * (64 * WGS + BN) * kSliceBytes + 1024;
}

// Small M (decode-like, M <= 64): one warpgroup, 64-wide N tiles, so that N / 64 blocks fill the GPU.
constexpr int kSmallWgs = 1, kSmallBn = 64, kSmallStages = 6;
// Otherwise 128 x 128 tiles, two warpgroups.
constexpr int kLargeWgs = 2, kLargeBn = 128, kLargeStages = 4;

// Raises the kernels' dynamic shared-memory limit (once, in kb_setup); false on failure.
template <class Out, bool PROMOTE>
inline bool setup() {
  return cudaFuncSetAttribute(fp8_gemm_wgmma<kSmallWgs, kSmallBn, kSmallStages, PROMOTE, Out>,
                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                              smem_bytes<kSmallWgs, kSmallBn, kSmallStages>()) == cudaSuccess &&
         cudaFuncSetAttribute(fp8_gemm_wgmma<kLargeWgs, kLargeBn, kLargeStages, PROMOTE, Out>,
                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                              smem_bytes<kLargeWgs, kLargeBn, kLargeStages>()) == cudaSuccess;
}

// Enqueues y = (x w^T) * sa[0] * sb[0]; x (M, k_padded), w (N, k_padded), rows zero past K.
template <class Out, bool PROMOTE>
inline void gemm(const uint8_t* x, const uint8_t* w, const float* sa, const float* sb, Out* y, int M, int N,
                 int k_padded, cudaStream_t stream) {
  if (M <= 64) {
    const dim3 grid((M + 63) / 64, (N + kSmallBn - 1) / kSmallBn);
    fp8_gemm_wgmma<kSmallWgs, kSmallBn, kSmallStages, PROMOTE, Out>
        <<<grid, kSmallWgs * 128, smem_bytes<kSmallWgs, kSmallBn, kSmallStages>(), stream>>>(x, w, sa, sb, y, M, N,
                                                                                              k_padded);
  } else {
    const dim3 grid((M + 127) / 128, (N + kLargeBn - 1) / kLargeBn);
    fp8_gemm_wgmma<kLargeWgs, kLargeBn, kLargeStages, PROMOTE, Out>
        <<<grid, kLargeWgs * 128, smem_bytes<kLargeWgs, kLargeBn, kLargeStages>(), stream>>>(x, w, sa, sb, y, M, N,
                                                                                              k_padded);
  }
}

}  // namespace fp8_wgmma
