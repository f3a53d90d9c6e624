#include "target/cuda/cuda_perturb.h"

#include <algorithm>

#include "core/perturb.h"

namespace kb::cuda {
namespace {

__global__ void perturb_kernel(unsigned char* data, int64_t rows, int64_t row_len, int elem_bytes, uint64_t key,
                               uint32_t stream, bool undo) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x)
    perturb_row(data + r * row_len * elem_bytes, row_len, elem_bytes, key, stream, static_cast<uint64_t>(r), undo);
}

}  // namespace

cudaError_t launch_perturb(void* data, int64_t rows, int64_t row_len, int elem_bytes, uint64_t key, uint32_t stream,
                           bool undo, cudaStream_t s) {
  if (rows <= 0 || row_len < 2) return cudaSuccess;
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((rows + kThreads - 1) / kThreads, 65536);
  perturb_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(static_cast<unsigned char*>(data), rows, row_len,
                                                                    elem_bytes, key, stream, undo);
  return cudaGetLastError();
}

}  // namespace kb::cuda
