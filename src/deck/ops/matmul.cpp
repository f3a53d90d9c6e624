#include "deck/ops/matmul.h"

#include <omp.h>

#include <algorithm>

namespace kb::ops {

namespace {

// Block sizes: a k-block x column-block of B is 128 x 512 doubles = 512 KiB (half of a 1 MiB L2),
// and four rows of C over 512 columns are 16 KiB (half of a 32 KiB L1).
constexpr int64_t kGemmKBlock = 128;
constexpr int64_t kGemmNBlock = 512;
constexpr int64_t kGemmRowBlock = 32;  // rows per parallel task

// C[i0:i1, :] += A[i0:i1, :] * B for row-major A (M, K) and C (M, N). B is (K, N) row-major, or,
// with kTransB, stored transposed as (N, K) (linear's weight); a transposed block is first packed
// into `pack` as a (k, n) block so that the inner loop runs over contiguous memory either way.
template <bool kTransB>
void gemm_rows(const double* A, const double* B, double* C, int64_t i0, int64_t i1, int64_t K, int64_t N,
               std::vector<double>& pack) {
  for (int64_t kb = 0; kb < K; kb += kGemmKBlock) {
    const int64_t kn = std::min(kGemmKBlock, K - kb);
    for (int64_t jb = 0; jb < N; jb += kGemmNBlock) {
      const int64_t jn = std::min(kGemmNBlock, N - jb);
      const double* bp;
      int64_t ldb;
      if constexpr (kTransB) {
        pack.resize(static_cast<size_t>(kn * jn));
        for (int64_t j = 0; j < jn; ++j)
          for (int64_t k = 0; k < kn; ++k) pack[static_cast<size_t>(k * jn + j)] = B[(jb + j) * K + kb + k];
        bp = pack.data();
        ldb = jn;
      } else {
        bp = B + kb * N + jb;
        ldb = N;
      }
      int64_t i = i0;
      // Four rows at a time: each element of B loaded once feeds four rows of C.
      for (; i + 4 <= i1; i += 4) {
        double* c0 = C + i * N + jb;
        double* c1 = c0 + N;
        double* c2 = c1 + N;
        double* c3 = c2 + N;
        const double* a0 = A + i * K + kb;
        for (int64_t k = 0; k < kn; ++k) {
          const double x0 = a0[k], x1 = a0[K + k], x2 = a0[2 * K + k], x3 = a0[3 * K + k];
          const double* b = bp + k * ldb;
#pragma omp simd
          for (int64_t j = 0; j < jn; ++j) {
            const double bj = b[j];
            c0[j] += x0 * bj;
            c1[j] += x1 * bj;
            c2[j] += x2 * bj;
            c3[j] += x3 * bj;
          }
        }
      }
      for (; i < i1; ++i) {
        double* c = C + i * N + jb;
        const double* a = A + i * K + kb;
        for (int64_t k = 0; k < kn; ++k) {
          const double x = a[k];
          const double* b = bp + k * ldb;
#pragma omp simd
          for (int64_t j = 0; j < jn; ++j) c[j] += x * b[j];
        }
      }
    }
  }
}

// C (batch, M, N) = A (batch, M, K) x B, B shared by every batch when b_batch_stride is 0.
template <bool kTransB>
void gemm(const double* A, const double* B, double* C, int64_t batch, int64_t M, int64_t K, int64_t N,
          int64_t b_batch_stride) {
  // A transposed B is packed once per task and k/column block: give each thread one task's worth
  // of rows (at least kGemmRowBlock), so that linear's weight is packed once per thread, not once
  // per 32 rows (128 rows x 4096 -> 4096 on 2 threads: 0.9 s -> 0.65 s).
  int64_t rows_per_task = kGemmRowBlock;
  if constexpr (kTransB)
    rows_per_task = std::max(kGemmRowBlock, (M + omp_get_max_threads() - 1) / omp_get_max_threads());
  const int64_t row_blocks = (M + rows_per_task - 1) / rows_per_task;
  const int64_t tasks = batch * row_blocks;
#pragma omp parallel
  {
    std::vector<double> pack;
#pragma omp for schedule(dynamic)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t bi = t / row_blocks, rb = t % row_blocks;
      const int64_t i0 = rb * rows_per_task, i1 = std::min(M, i0 + rows_per_task);
      gemm_rows<kTransB>(A + bi * M * K, B + bi * b_batch_stride, C + bi * M * N, i0, i1, K, N, pack);
    }
  }
}

void require_rank(const char* op, const char* arg, const Tensor64& t, int64_t rank) {
  if (t.rank() != rank)
    detail::fail(op, std::string(arg) + " must have rank " + std::to_string(rank) + ", got shape " + shape_string(t.shape));
}

}  // namespace

Tensor64 matmul(const Tensor64& a, const Tensor64& b) {
  require_rank("matmul", "a", a, 2);
  require_rank("matmul", "b", b, 2);
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  if (b.shape[0] != K)
    detail::fail("matmul", "a " + shape_string(a.shape) + " has K = " + std::to_string(K) + " but b " + shape_string(b.shape) +
                               " has " + std::to_string(b.shape[0]) + " rows");
  Tensor64 c({M, N});
  gemm<false>(a.data.data(), b.data.data(), c.data.data(), 1, M, K, N, 0);
  return c;
}

Tensor64 bmm(const Tensor64& a, const Tensor64& b) {
  require_rank("bmm", "a", a, 3);
  require_rank("bmm", "b", b, 3);
  const int64_t batch = a.shape[0], M = a.shape[1], K = a.shape[2], N = b.shape[2];
  if (b.shape[0] != batch)
    detail::fail("bmm", "a has batch " + std::to_string(batch) + " but b has batch " + std::to_string(b.shape[0]));
  if (b.shape[1] != K)
    detail::fail("bmm", "a " + shape_string(a.shape) + " has K = " + std::to_string(K) + " but b " + shape_string(b.shape) +
                            " has " + std::to_string(b.shape[1]) + " rows");
  Tensor64 c({batch, M, N});
  gemm<false>(a.data.data(), b.data.data(), c.data.data(), batch, M, K, N, K * N);
  return c;
}

Tensor64 gemv(const Tensor64& a, const Tensor64& x) {
  require_rank("gemv", "a", a, 2);
  require_rank("gemv", "x", x, 1);
  const int64_t M = a.shape[0], K = a.shape[1];
  if (x.shape[0] != K)
    detail::fail("gemv", "a " + shape_string(a.shape) + " has K = " + std::to_string(K) + " but x has " +
                             std::to_string(x.shape[0]) + " elements");
  Tensor64 y({M});
#pragma omp parallel for schedule(static) if (M * K > (1 << 16))
  for (int64_t i = 0; i < M; ++i) {
    const double* row = a.data.data() + i * K;
    double s = 0;
    for (int64_t k = 0; k < K; ++k) s += row[k] * x[k];
    y[i] = s;
  }
  return y;
}

Tensor64 linear(const Tensor64& x, const Tensor64& weight, const Tensor64* bias) {
  if (x.rank() < 1) detail::fail("linear", "x must have at least one dim (in_features), got a scalar");
  require_rank("linear", "weight", weight, 2);
  const int64_t out = weight.shape[0], in = weight.shape[1];
  if (x.shape.back() != in)
    detail::fail("linear", "x " + shape_string(x.shape) + " has " + std::to_string(x.shape.back()) +
                               " features but weight " + shape_string(weight.shape) + " expects in_features " +
                               std::to_string(in));
  if (bias != nullptr && (bias->rank() != 1 || bias->shape[0] != out))
    detail::fail("linear", "bias must have shape " + shape_string({out}) + ", got " + shape_string(bias->shape));
  std::vector<int64_t> shape = x.shape;
  shape.back() = out;
  Tensor64 y(shape);
  const int64_t rows = in == 0 ? numel_of(shape) / std::max<int64_t>(out, 1) : x.numel() / in;
  gemm<true>(x.data.data(), weight.data.data(), y.data.data(), 1, rows, in, out, 0);
  if (bias != nullptr)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < out; ++j) y[r * out + j] += (*bias)[j];
  return y;
}

}  // namespace kb::ops
