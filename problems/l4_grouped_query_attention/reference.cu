// GPU reference for l4_grouped_query_attention (deck/gpu_reference.h): the definition of
// reference.cpp in double on every token, with the deck's fp64 kernels
// (src/deck/gpu_reference_attention.cuh): q, k, v projections, RoPE on q and k (angles in double),
// causal grouped-query attention, o_proj into the expected output.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "deck/gpu_reference.h"
#include "deck/gpu_reference_attention.cuh"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("l4_grouped_query_attention GPU reference: ") + what + ": " + cudaGetErrorString(e));
}

void l4_grouped_query_attention_gpu_reference(const kb::GpuReferenceCase& c) {
  const int64_t B = c.dim("B"), T = c.dim("T"), C = c.dim("C"), HQ = c.dim("HQ"), HKV = c.dim("HKV"), D = c.dim("D");
  if (D != 128 || HQ % HKV != 0)
    throw std::runtime_error("l4_grouped_query_attention GPU reference: heads of 128 and HQ a multiple of HKV only, got D = " +
                             std::to_string(D));
  const int64_t rows = B * T;
  const auto* x = static_cast<const float*>(c.inputs[0]);
  const auto* const* w = reinterpret_cast<const float* const*>(c.weights);
  auto stream = static_cast<cudaStream_t>(c.stream);
  double *q = nullptr, *k = nullptr, *v = nullptr, *y = nullptr;
  check(cudaMallocAsync(reinterpret_cast<void**>(&q), sizeof(double) * rows * HQ * D, stream), "allocating q");
  check(cudaMallocAsync(reinterpret_cast<void**>(&k), sizeof(double) * rows * HKV * D, stream), "allocating k");
  check(cudaMallocAsync(reinterpret_cast<void**>(&v), sizeof(double) * rows * HKV * D, stream), "allocating v");
  check(cudaMallocAsync(reinterpret_cast<void**>(&y), sizeof(double) * rows * HQ * D, stream), "allocating the attention");
  namespace g = kb::gpu_ref;
  g::linear(x, w[0], static_cast<const float*>(nullptr), rows, HQ * D, C, q, stream);
  g::linear(x, w[1], static_cast<const float*>(nullptr), rows, HKV * D, C, k, stream);
  g::linear(x, w[2], static_cast<const float*>(nullptr), rows, HKV * D, C, v, stream);
  g::rotary(q, rows, T, HQ, D, 10000.0, stream);
  g::rotary(k, rows, T, HKV, D, 10000.0, stream);
  g::Attention a{};
  a.q = q, a.k = k, a.v = v, a.out = y;
  a.q_batch = T * HQ * D, a.q_head = D, a.q_row = HQ * D;
  a.k_batch = a.v_batch = T * HKV * D, a.k_head = a.v_head = D, a.k_row = a.v_row = HKV * D;
  a.o_batch = T * HQ * D, a.o_head = D, a.o_row = HQ * D;
  a.batch = static_cast<int>(B), a.heads_q = static_cast<int>(HQ), a.heads_kv = static_cast<int>(HKV);
  a.seq = T;
  a.causal = true;
  g::attention<128>(a, stream);
  g::linear(y, w[3], static_cast<const float*>(nullptr), rows, C, HQ * D, c.expected[0], stream);
  check(cudaGetLastError(), "launching its kernels");
  for (double* p : {q, k, v, y}) check(cudaFreeAsync(p, stream), "freeing");
}

KB_REGISTER_GPU_REFERENCE("l4_grouped_query_attention", l4_grouped_query_attention_gpu_reference);

}  // namespace
