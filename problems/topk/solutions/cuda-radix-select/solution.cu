// Honest cuda top-k: radix select on order-preserving integer keys, one thread block per segment of a
// row, then a bitonic sort of the k winners.
//
// Keys: an fp32 bit pattern mapped so that unsigned integer order is float order (negative floats
// have every bit flipped, non-negative ones the sign bit set). Comparing integers instead of floats
// keeps denormals exact under any flush-to-zero setting and orders +-inf like any other value; -0
// lands just below +0, a tie either way.
//
// Per segment (held in shared memory): four passes of an 8-bit histogram find the k-th largest key
// digit by digit (shared-memory atomics into 256 bins; on a row of equal values they serialise on
// one bin, which costs a few microseconds, not correctness); then every key above it, and as many
// keys equal to it as are still needed, are gathered. Long rows (few rows, many columns) are split into segments whose
// winners a second kernel selects from, so that every SM has a block to run.
#include <cuda_runtime.h>
#include <stdint.h>

#include "kbench/solution.h"

namespace {

constexpr int kThreads = 256;
constexpr int kMaxSegment = 8192;  // keys of one segment in shared memory: 32 KiB
constexpr int kMaxK = 256;         // winners sorted in shared memory (bitonic, padded to a power of 2)
constexpr int kMinSegment = 1024;  // splitting a row further costs more in the merge than it gains
constexpr int kMaxCandidates = 4096;  // segments * k per row: the merge is one block per row
constexpr unsigned kFull = 0xFFFFFFFFu;

__device__ __forceinline__ uint32_t key_of(float f) {
  const uint32_t b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ float value_of(uint32_t key) {
  return __uint_as_float((key & 0x80000000u) ? (key & 0x7FFFFFFFu) : ~key);
}

struct Shared {
  uint32_t keys[kMaxSegment];
  uint32_t win_key[kMaxK];
  int win_pos[kMaxK];
  int hist[256];
  uint32_t prefix, mask;
  int remaining, n_greater, n_equal;
};

// Finds, among keys[0 .. len), the k largest (len >= 1): writes their keys and positions into
// s.win_key / s.win_pos[0 .. k), unordered; slots past len (when len < k) get key 0, which ranks below
// every fp32 value but a NaN with all bits set (never an input).
__device__ void block_select(Shared& s, int len, int k) {
  const int tid = threadIdx.x, lane = tid & 31;
  if (tid == 0) {
    s.prefix = 0;
    s.mask = 0;
    s.remaining = k;
    s.n_greater = 0;
    s.n_equal = 0;
  }
  __syncthreads();
  if (len > k) {
    for (int shift = 24; shift >= 0; shift -= 8) {
      for (int i = tid; i < 256; i += blockDim.x) s.hist[i] = 0;
      __syncthreads();
      const uint32_t prefix = s.prefix, mask = s.mask;
      for (int base = 0; base < len; base += blockDim.x) {
        const int i = base + tid;
        const uint32_t key = i < len ? s.keys[i] : 0u;
        if (i < len && (key & mask) == prefix) atomicAdd(&s.hist[(key >> shift) & 255u], 1);
      }
      __syncthreads();
      // Warp 0 finds the bin holding the remaining-th largest: lane L sums bins 255-8L .. 248-8L,
      // an inclusive scan from the top gives how many keys lie at or above each lane's bins.
      if (tid < 32) {
        int counts[8], sum = 0;
        for (int j = 0; j < 8; ++j) {
          counts[j] = s.hist[255 - 8 * lane - j];
          sum += counts[j];
        }
        int inclusive = sum;
        for (int d = 1; d < 32; d <<= 1) {
          const int up = __shfl_up_sync(kFull, inclusive, d);
          if (lane >= d) inclusive += up;
        }
        const int remaining = s.remaining;
        const int exclusive = inclusive - sum;
        if (exclusive < remaining && remaining <= inclusive) {
          int above = exclusive;
          for (int j = 0; j < 8; ++j) {
            if (above + counts[j] >= remaining) {
              const uint32_t bin = 255u - 8u * lane - j;
              s.prefix = prefix | (bin << shift);
              s.mask = mask | (255u << shift);
              s.remaining = remaining - above;
              // Every key with this digit is needed: the threshold is found, skip the lower digits.
              if (counts[j] == remaining - above) s.hist[0] = -1;
              break;
            }
            above += counts[j];
          }
        }
      }
      __syncthreads();
      if (s.hist[0] == -1) break;
    }
  }
  // Gather: keys above the threshold prefix go to [0, k - remaining), keys on it to the rest, first
  // come first served (any of them is right: they are equal up to the digits examined, and either all
  // digits were examined or all of them are taken).
  const uint32_t prefix = s.prefix, mask = s.mask;
  const int n_above = k - s.remaining, take_equal = s.remaining;
  for (int base = 0; base < len; base += blockDim.x) {
    const int i = base + tid;
    const uint32_t key = i < len ? s.keys[i] : 0u;
    const bool above = i < len && len > k && (key & mask) > prefix;
    const bool equal = i < len && (len <= k || (key & mask) == prefix);
    const unsigned above_mask = __ballot_sync(kFull, above), equal_mask = __ballot_sync(kFull, equal);
    const unsigned lower = (1u << lane) - 1u;
    int above_base = 0, equal_base = 0;
    if (lane == 0) {
      if (above_mask) above_base = atomicAdd(&s.n_greater, __popc(above_mask));
      if (equal_mask) equal_base = atomicAdd(&s.n_equal, __popc(equal_mask));
    }
    above_base = __shfl_sync(kFull, above_base, 0);
    equal_base = __shfl_sync(kFull, equal_base, 0);
    if (above) {
      const int slot = above_base + __popc(above_mask & lower);
      s.win_key[slot] = key;
      s.win_pos[slot] = i;
    } else if (equal) {
      const int slot = equal_base + __popc(equal_mask & lower);
      if (slot < (len > k ? take_equal : k)) {
        s.win_key[n_above + slot] = key;
        s.win_pos[n_above + slot] = i;
      }
    }
  }
  // Padding when the segment is shorter than k.
  for (int i = len + tid; i < k; i += blockDim.x) {
    s.win_key[i] = 0u;
    s.win_pos[i] = -1;
  }
  __syncthreads();
}

// Sorts s.win_key/win_pos[0 .. k) by key, largest first (bitonic network over the next power of 2).
__device__ void block_sort_winners(Shared& s, int k) {
  int p = 1;
  while (p < k) p <<= 1;
  for (int i = k + threadIdx.x; i < p; i += blockDim.x) {
    s.win_key[i] = 0u;
    s.win_pos[i] = -1;
  }
  __syncthreads();
  for (int size = 2; size <= p; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int i = threadIdx.x; i < p; i += blockDim.x) {
        const int j = i ^ stride;
        if (j > i) {
          const bool descending = (i & size) == 0;
          const uint32_t a = s.win_key[i], b = s.win_key[j];
          if (descending ? a < b : a > b) {
            s.win_key[i] = b;
            s.win_key[j] = a;
            const int t = s.win_pos[i];
            s.win_pos[i] = s.win_pos[j];
            s.win_pos[j] = t;
          }
        }
      }
      __syncthreads();
    }
  }
}

// Grid (segments, batch). With one segment per row, writes the answer; otherwise each segment's k
// winners (unordered) go to the candidate arrays, row-major [batch][segments * k].
__global__ void __launch_bounds__(kThreads) select_segments(const float* __restrict__ x, int64_t n, int k,
                                                            int segment, float* __restrict__ values,
                                                            int64_t* __restrict__ indices, uint32_t* cand_key,
                                                            int* cand_col) {
  __shared__ Shared s;
  const int64_t row = blockIdx.y;
  const int64_t begin = static_cast<int64_t>(blockIdx.x) * segment;
  const int64_t rest = n - begin;
  const int len = static_cast<int>(rest < segment ? rest : segment);
  const float* xr = x + row * n + begin;
  for (int i = threadIdx.x; i < len; i += blockDim.x) s.keys[i] = key_of(xr[i]);
  __syncthreads();
  block_select(s, len, k);
  if (gridDim.x == 1) {
    block_sort_winners(s, k);
    for (int i = threadIdx.x; i < k; i += blockDim.x) {
      values[row * k + i] = value_of(s.win_key[i]);
      indices[row * k + i] = begin + s.win_pos[i];
    }
  } else {
    const int64_t out = (row * gridDim.x + blockIdx.x) * k;
    for (int i = threadIdx.x; i < k; i += blockDim.x) {
      cand_key[out + i] = s.win_key[i];
      cand_col[out + i] = s.win_pos[i] < 0 ? -1 : static_cast<int>(begin + s.win_pos[i]);
    }
  }
}

// One block per row: the k largest of the row's candidates, sorted.
__global__ void __launch_bounds__(kThreads) merge_candidates(const uint32_t* __restrict__ cand_key,
                                                             const int* __restrict__ cand_col, int count, int k,
                                                             float* __restrict__ values, int64_t* __restrict__ indices) {
  __shared__ Shared s;
  const int64_t row = blockIdx.x;
  for (int i = threadIdx.x; i < count; i += blockDim.x) s.keys[i] = cand_key[row * count + i];
  __syncthreads();
  block_select(s, count, k);
  block_sort_winners(s, k);
  for (int i = threadIdx.x; i < k; i += blockDim.x) {
    values[row * k + i] = value_of(s.win_key[i]);
    indices[row * k + i] = cand_col[row * count + s.win_pos[i]];
  }
}

struct State {
  int64_t batch = 0, n = 0;
  int k = 0, segments = 1, segment = 0;
  uint32_t* cand_key = nullptr;
  int* cand_col = nullptr;
};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

extern "C" int kb_setup(const kb_problem* p, void** state) {
  auto* s = new State;
  *state = s;
  s->batch = p->dim_values[0];
  s->n = p->dim_values[1];
  s->k = static_cast<int>(p->dim_values[2]);
  if (s->k < 1 || s->k > kMaxK || s->k > s->n || s->n > (int64_t{1} << 30)) return 1;  // outside what this kernel handles
  // Segments: as few as shared memory allows, then doubled while the grid is smaller than two blocks
  // per SM, each segment keeps kMinSegment elements and the merge has at most kMaxCandidates.
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess)
    return 2;
  int64_t segments = ceil_div(s->n, kMaxSegment);
  while (s->batch * segments < 2 * sms && ceil_div(s->n, 2 * segments) >= kMinSegment &&
         2 * segments * s->k <= kMaxCandidates)
    segments *= 2;
  if (segments > 1 && segments * s->k > kMaxSegment) return 3;  // candidates would not fit in the merge
  s->segments = static_cast<int>(segments);
  s->segment = static_cast<int>(ceil_div(s->n, segments));
  s->segments = static_cast<int>(ceil_div(s->n, s->segment));
  if (s->segments > 1) {
    const size_t count = static_cast<size_t>(s->batch) * s->segments * s->k;
    if (cudaMalloc(&s->cand_key, count * sizeof(uint32_t)) != cudaSuccess) return 4;
    if (cudaMalloc(&s->cand_col, count * sizeof(int)) != cudaSuccess) return 5;
  }
  return 0;
}

extern "C" int kb_run(void* state, const kb_call* c) {
  const auto* s = static_cast<const State*>(state);
  auto stream = static_cast<cudaStream_t>(c->stream);
  const auto* x = static_cast<const float*>(c->inputs[0].data);
  auto* values = static_cast<float*>(c->outputs[0].data);
  auto* indices = static_cast<int64_t*>(c->outputs[1].data);
  select_segments<<<dim3(s->segments, static_cast<unsigned>(s->batch)), kThreads, 0, stream>>>(
      x, s->n, s->k, s->segment, values, indices, s->cand_key, s->cand_col);
  if (s->segments > 1)
    merge_candidates<<<static_cast<unsigned>(s->batch), kThreads, 0, stream>>>(s->cand_key, s->cand_col,
                                                                              s->segments * s->k, s->k, values, indices);
  return cudaGetLastError() == cudaSuccess ? 0 : 6;
}

extern "C" void kb_teardown(void* state) {
  auto* s = static_cast<State*>(state);
  cudaFree(s->cand_key);
  cudaFree(s->cand_col);
  delete s;
}
