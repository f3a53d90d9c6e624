#include "target/cuda/cuda_generate.h"

#include <cfloat>

#include <cuda/std/limits>

#include "core/dtype.h"
#include "core/float_formats.h"
#include "core/random.h"

namespace kb::cuda {
namespace {

// As store_from_double (core/dtype_convert.cpp) for the finite values the generators produce:
// round to nearest-even, finite out-of-range values saturate.
__device__ float to_f32_saturating(double v) {
  const float f = __double2float_rn(v);
  if (isinf(f)) return copysignf(FLT_MAX, f);
  return f;
}

template <class Int>
__device__ Int to_integer(double v) {
  if (isnan(v)) return 0;
  const double r = rint(v);
  const double lowest = static_cast<double>(::cuda::std::numeric_limits<Int>::min());
  const double highest = static_cast<double>(::cuda::std::numeric_limits<Int>::max());
  if (r <= lowest) return ::cuda::std::numeric_limits<Int>::min();
  if (r >= highest) return ::cuda::std::numeric_limits<Int>::max();
  return static_cast<Int>(r);
}

__device__ void store(DType t, void* data, int64_t i, double v) {
  switch (t) {
    case DType::f64: static_cast<double*>(data)[i] = v; return;
    case DType::f32: static_cast<float*>(data)[i] = to_f32_saturating(v); return;
    case DType::f16: static_cast<uint16_t*>(data)[i] = f16_from_double(v, Saturation::finite); return;
    case DType::bf16: static_cast<uint16_t*>(data)[i] = bf16_from_double(v, Saturation::finite); return;
    case DType::e4m3: static_cast<uint8_t*>(data)[i] = e4m3_from_double(v, Saturation::finite); return;
    case DType::e5m2: static_cast<uint8_t*>(data)[i] = e5m2_from_double(v, Saturation::finite); return;
    case DType::i64: static_cast<int64_t*>(data)[i] = to_integer<int64_t>(v); return;
    case DType::i32: static_cast<int32_t*>(data)[i] = to_integer<int32_t>(v); return;
    case DType::i16: static_cast<int16_t*>(data)[i] = to_integer<int16_t>(v); return;
    case DType::i8: static_cast<int8_t*>(data)[i] = to_integer<int8_t>(v); return;
    case DType::u8: static_cast<uint8_t*>(data)[i] = to_integer<uint8_t>(v); return;
  }
}

__global__ void generate_kernel(void* dst, DType dtype, int64_t n, GenerateKind kind, uint64_t seed, uint32_t stream,
                                double p0, double p1) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint64_t idx = static_cast<uint64_t>(i);
    double v = 0;
    switch (kind) {
      case GenerateKind::uniform_float: v = uniform(seed, stream, idx, p0, p1); break;
      case GenerateKind::uniform_int:
        v = static_cast<double>(uniform_int(seed, stream, idx, static_cast<int64_t>(p0), static_cast<int64_t>(p1)));
        break;
      case GenerateKind::normal: v = normal(seed, stream, idx, p0, p1); break;
    }
    store(dtype, dst, i, v);
  }
}

}  // namespace

cudaError_t launch_generate(void* dst, int dtype, int64_t n, GenerateKind kind, uint64_t seed, uint32_t stream,
                            double p0, double p1, cudaStream_t s) {
  if (n <= 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, 65536);
  generate_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, s>>>(dst, static_cast<DType>(dtype), n, kind, seed,
                                                                     stream, p0, p1);
  return cudaGetLastError();
}

}  // namespace kb::cuda
