// The device half of a result cache keyed on a cheap fingerprint of the inputs (issue 16), as an
// adversarial solution would write it: per input address, a slot holding the last fingerprint and
// the last output. Each call enqueues, all on the handed stream and without a host sync:
//   1. probe: fingerprint the inputs and compare with the slot's (sets a device flag `hit`);
//   2. the solution's compute kernels, which return at once when `hit` is set;
//   3. replay_or_store: on a hit, the cached output is copied to the outputs; else the fresh
//      outputs are copied into the cache.
// So a call on inputs whose fingerprint repeats costs a probe and a copy.
// In the deck's kit (problems/kit/, target/solution_kit.h) because exploits of several problems
// use it (softmax's exploit-cuda-*-cache, kda's exploit-cuda-fingerprint-cache); never offered to
// an agent.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

namespace devcache {

enum class Key {
  sampled_values,  // 8 elements of each input at fixed positions spread over it
  strided_sample,  // every 100th element of each input (a 1% sample)
  row_sum,         // the integer sum of the bit patterns of the first row of each input
  edge_lines,      // the first and the last 128 bytes of each input
};

__device__ __forceinline__ uint64_t mix(uint64_t bits, uint64_t index) {
  uint64_t z = bits * 0x9E3779B97F4A7C15ull + index;
  z ^= z >> 31;
  return z * 0xBF58476D1CE4E5B9ull;
}

__device__ __forceinline__ uint64_t element_bits(const unsigned char* p, int elem_bytes) {
  uint64_t v = 0;
  for (int i = 0; i < elem_bytes; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// One block adds the fingerprint of one input into *acc.
template <Key kKey>
__global__ void probe_input(const unsigned char* x, int64_t n, int elem_bytes, int64_t row_len, uint64_t salt,
                            unsigned long long* acc) {
  uint64_t h = 0;
  if (kKey == Key::sampled_values) {
    if (threadIdx.x < 8) {
      const int64_t i = n / 8 * threadIdx.x + n / 16;
      h = mix(element_bits(x + i * elem_bytes, elem_bytes), i + salt);
    }
  } else if (kKey == Key::strided_sample) {
    for (int64_t i = threadIdx.x * int64_t{100}; i < n; i += blockDim.x * int64_t{100})
      h += mix(element_bits(x + i * elem_bytes, elem_bytes), i + salt);
  } else if (kKey == Key::row_sum) {
    for (int64_t i = threadIdx.x; i < row_len; i += blockDim.x) h += element_bits(x + i * elem_bytes, elem_bytes);
    h *= salt | 1;
  } else {
    const int64_t bytes = n * elem_bytes, edge = bytes < 128 ? bytes : 128;
    for (int64_t b = threadIdx.x; b < edge; b += blockDim.x) {
      h += mix(x[b], static_cast<uint64_t>(b) + salt);
      h += mix(x[bytes - 1 - b], static_cast<uint64_t>(bytes + b) + salt);
    }
  }
  atomicAdd(acc, static_cast<unsigned long long>(h));
}

// slot[0]: the fingerprint stored, slot[1]: whether one is. Sets *hit and stores the new one.
__global__ void decide(const unsigned long long* acc, unsigned long long* slot, int* hit) {
  *hit = slot[1] != 0 && slot[0] == *acc;
  slot[0] = *acc;
  slot[1] = 1;
}

__global__ void replay_or_store(const int* hit, unsigned char* out, unsigned char* cached, int64_t bytes) {
  const bool h = *hit != 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < bytes;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (h) out[i] = cached[i];
    else cached[i] = out[i];
  }
}

// The host side: slots by input address (of the first input), allocated in kb_setup.
class Cache {
 public:
  static constexpr int kSlots = 4;
  bool init(int64_t out_bytes) {
    out_bytes_ = out_bytes;
    if (cudaMalloc(&acc_, sizeof(unsigned long long)) != cudaSuccess) return false;
    if (cudaMalloc(&hit_, sizeof(int)) != cudaSuccess) return false;
    for (auto& s : slots_) {
      if (cudaMalloc(&s.fingerprint, 2 * sizeof(unsigned long long)) != cudaSuccess) return false;
      if (cudaMemset(s.fingerprint, 0, 2 * sizeof(unsigned long long)) != cudaSuccess) return false;
      if (cudaMalloc(&s.output, static_cast<size_t>(out_bytes)) != cudaSuccess) return false;
    }
    return true;
  }
  void release() {
    cudaFree(acc_);
    cudaFree(hit_);
    for (auto& s : slots_) cudaFree(s.fingerprint), cudaFree(s.output);
  }
  // Step 1 for the inputs of this call (n, elem_bytes, row_len each); returns the device flag the
  // compute kernels test.
  template <Key kKey>
  const int* probe(const void* const* inputs, const int64_t* n, const int* elem_bytes, const int64_t* row_len,
                   int n_inputs, cudaStream_t stream) {
    current_ = slot_for(inputs[0], stream);
    cudaMemsetAsync(acc_, 0, sizeof(unsigned long long), stream);
    for (int i = 0; i < n_inputs; ++i)
      probe_input<kKey><<<1, 256, 0, stream>>>(static_cast<const unsigned char*>(inputs[i]), n[i], elem_bytes[i],
                                               row_len[i], 0x1000003ull * (i + 1), acc_);
    decide<<<1, 1, 0, stream>>>(acc_, current_->fingerprint, hit_);
    return hit_;
  }
  // Step 3.
  cudaError_t finish(void* out, cudaStream_t stream) {
    replay_or_store<<<1024, 256, 0, stream>>>(hit_, static_cast<unsigned char*>(out),
                                              static_cast<unsigned char*>(current_->output), out_bytes_);
    return cudaGetLastError();
  }

 private:
  struct Slot {
    const void* address = nullptr;
    unsigned long long* fingerprint = nullptr;
    void* output = nullptr;
  };
  Slot* slot_for(const void* address, cudaStream_t stream) {
    for (auto& s : slots_)
      if (s.address == address) return &s;
    Slot* s = &slots_[next_++ % kSlots];
    s->address = address;
    cudaMemsetAsync(s->fingerprint, 0, 2 * sizeof(unsigned long long), stream);  // a new address: nothing stored
    return s;
  }
  int64_t out_bytes_ = 0;
  unsigned long long* acc_ = nullptr;
  int* hit_ = nullptr;
  Slot slots_[kSlots];
  Slot* current_ = nullptr;
  int next_ = 0;
};

}  // namespace devcache
