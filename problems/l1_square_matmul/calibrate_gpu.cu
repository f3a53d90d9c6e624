// Tolerance calibration of KernelBench v3's fp32 matrix products (CALIBRATION.md): l1_square_matmul,
// l1_matmul, l1_irregular_matmul, l1_bmm and l1_tall_skinny_matmul share one tolerance, so one
// program measures every shape of all of them. Not part of the build (CMake compiles only
// reference.cpp and reference.cu).
//
// For every shape and seeds 1-3 it draws A and B exactly as kbench does (core/random.h evaluated on
// the device: bit-identical with --fmad=false; streams 0 and 1, the inputs' streams), computes the
// fp64 product with the GPU references' kernel (deck/gpu_gemm64.cuh) and compares, over every
// element, the honest kit kernel (problems/kit/v3/fp32_tiled_gemm.cuh), cuBLAS SGEMM (the
// baseline), cuBLAS with TF32 operands (CUBLAS_COMPUTE_32F_FAST_TF32) and with bf16 operands
// (CUBLAS_COMPUTE_32F_FAST_16BF), and, given as an argument, l1_square_matmul's TF32 exploit on
// v3's shape. Printed per variant: `excess`, the worst |err| / (1e-3 + 1e-3 |ref|) (kbench's test:
// above 1 fails), `v3`, max |err| / (1e-3 + 1e-3 max |ref|) (v3's one global test, same numbers:
// above 1 fails), and the time of one warm call.
//
// On an H100, from the repository root:
//   F="-std=c++17 -O3 -shared -Xcompiler -fPIC -gencode=arch=compute_90a,code=sm_90a -Iinclude"
//   nvcc $F -o /tmp/tf32.so problems/l1_square_matmul/solutions/exploit-cuda-tf32/solution.cu
//   nvcc -std=c++17 -O3 --fmad=false -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude -Iproblems/kit
//     -o /tmp/gemm_calib problems/l1_square_matmul/calibrate_gpu.cu -lcublas -ldl        (one command)
//   /tmp/gemm_calib /tmp/tf32.so
// (--fmad=false applies to this file's generator and metrics; the kit kernel calls fmaf itself.)
#include <cublas_v2.h>
#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/random.h"
#include "deck/gpu_gemm64.cuh"
#include "kbench/solution.h"
#include "v3/fp32_tiled_gemm.cuh"

namespace {

struct Case {
  const char* problem;
  int64_t batch, m, n, k;
};

// Every shape of the five problems' problem.toml, v3's first, and one probe beyond them: K = 8205,
// where the honest chain comes too close to the bound for a shape of the deck (CALIBRATION.md).
const Case kCases[] = {
    {"l1_square_matmul", 1, 2048, 2048, 2048}, {"l1_square_matmul", 1, 4096, 4096, 4096},
    {"l1_square_matmul", 1, 1023, 1023, 1023}, {"l1_matmul", 1, 1024, 2048, 4096},
    {"l1_matmul", 1, 999, 3001, 4095},         {"l1_matmul", 1, 33, 2048, 4096},
    {"l1_irregular_matmul", 1, 8205, 5921, 2949}, {"l1_irregular_matmul", 1, 4099, 1029, 2039},
    {"l1_irregular_matmul", 1, 129, 8209, 2951}, {"l1_bmm", 128, 128, 512, 256},
    {"l1_bmm", 7, 1000, 1001, 999},            {"l1_bmm", 1024, 16, 64, 48},
    {"l1_tall_skinny_matmul", 1, 16384, 16384, 16}, {"l1_tall_skinny_matmul", 1, 4099, 8191, 16},
    {"l1_tall_skinny_matmul", 1, 8192, 8192, 13}, {"probe: K beyond the deck", 1, 5921, 2949, 8205},
};

__global__ void draw_normal(float* out, int64_t n, uint64_t seed, uint32_t stream) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = static_cast<float>(kb::normal(seed, stream, static_cast<uint64_t>(i), 0.0, 1.0));
}

// Non-negative doubles order as their bit patterns: atomicMax on those.
__device__ void max_into(unsigned long long* slot, double v) { atomicMax(slot, __double_as_longlong(v)); }

// stats[0] = max excess, stats[1] = max |err|, stats[2] = max |ref|.
__global__ void compare(const float* got, const double* ref, int64_t n, unsigned long long* stats) {
  double excess = 0, err = 0, mag = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double e = fabs(static_cast<double>(got[i]) - ref[i]);
    const double x = e / (1e-3 + 1e-3 * fabs(ref[i]));
    excess = x != x ? INFINITY : fmax(excess, x);  // NaN counts as failing
    err = e != e ? INFINITY : fmax(err, e);
    mag = fmax(mag, fabs(ref[i]));
  }
  max_into(stats, excess);
  max_into(stats + 1, err);
  max_into(stats + 2, mag);
}

void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("failed: %s (%s)\n", what, cudaGetErrorString(cudaGetLastError()));
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using Setup = int (*)(const kb_problem*, void**);
  using Run = int (*)(void*, const kb_call*);
  using Teardown = void (*)(void*);
  Setup exploit_setup = nullptr;
  Run exploit_run = nullptr;
  Teardown exploit_teardown = nullptr;
  if (argc > 1) {
    void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    check(h != nullptr, "dlopen of the TF32 exploit");
    exploit_setup = reinterpret_cast<Setup>(dlsym(h, "kb_setup"));
    exploit_run = reinterpret_cast<Run>(dlsym(h, "kb_run"));
    exploit_teardown = reinterpret_cast<Teardown>(dlsym(h, "kb_teardown"));
  }
  cublasHandle_t handle;
  check(cublasCreate(&handle) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
  unsigned long long* stats;
  check(cudaMalloc(&stats, 3 * sizeof(unsigned long long)) == cudaSuccess, "cudaMalloc");
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (const Case& cs : kCases) {
    const int64_t sa = cs.m * cs.k, sb = cs.k * cs.n, sc = cs.m * cs.n;
    float *a, *b, *c;
    double* ref;
    check(cudaMalloc(&a, 4 * cs.batch * sa) == cudaSuccess && cudaMalloc(&b, 4 * cs.batch * sb) == cudaSuccess &&
              cudaMalloc(&c, 4 * cs.batch * sc) == cudaSuccess && cudaMalloc(&ref, 8 * cs.batch * sc) == cudaSuccess,
          "cudaMalloc of a case");
    std::printf("\n%s: batch %ld, M %ld, N %ld, K %ld\n", cs.problem, (long)cs.batch, (long)cs.m, (long)cs.n, (long)cs.k);
    for (uint64_t seed : {1, 2, 3}) {
      draw_normal<<<1024, 256>>>(a, cs.batch * sa, seed, 0);
      draw_normal<<<1024, 256>>>(b, cs.batch * sb, seed, 1);
      kb::gpu_gemm64::Gemm r;
      r.a = a, r.b = b, r.c = ref, r.batch = cs.batch, r.m = cs.m, r.n = cs.n, r.k = cs.k;
      r.lda = cs.k, r.ldb = cs.n, r.ldc = cs.n, r.stride_a = sa, r.stride_b = sb, r.stride_c = sc;
      cudaEventRecord(e0);
      check(kb::gpu_gemm64::gemm64(r, nullptr) == cudaSuccess, "fp64 reference");
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ref_ms;
      cudaEventElapsedTime(&ref_ms, e0, e1);
      std::printf("  seed %lu (fp64 reference %.1f ms)\n", (unsigned long)seed, ref_ms);
      auto measure = [&](const char* name, auto&& run) {
        cudaMemset(c, 0xFF, 4 * cs.batch * sc);  // NaN: an unwritten element fails
        if (!run()) {
          std::printf("    %-28s did not run (%s)\n", name, cudaGetErrorString(cudaGetLastError()));
          return;
        }
        cudaDeviceSynchronize();
        cudaMemset(stats, 0, 3 * sizeof(unsigned long long));
        compare<<<1024, 256>>>(c, ref, cs.batch * sc, stats);
        unsigned long long h[3];
        cudaMemcpy(h, stats, sizeof h, cudaMemcpyDeviceToHost);
        double excess, err, mag;
        std::memcpy(&excess, &h[0], 8), std::memcpy(&err, &h[1], 8), std::memcpy(&mag, &h[2], 8);
        cudaEventRecord(e0);
        run();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        std::printf("    %-28s excess %8.3f   v3 %7.3f   max|err| %.3g (max|ref| %.1f)   %.3f ms, %.1f TFLOP/s\n", name, excess,
                    err / (1e-3 + 1e-3 * mag), err, mag, ms, 2.0 * cs.batch * cs.m * cs.n * cs.k / (ms * 1e-3) / 1e12);
      };
      measure("kit fp32_tiled_gemm", [&] {
        v3gemm::Gemm g;
        g.a = a, g.b = b, g.c = c, g.batch = cs.batch, g.m = cs.m, g.n = cs.n, g.k = cs.k;
        g.lda = cs.k, g.ldb = cs.n, g.ldc = cs.n, g.stride_a = sa, g.stride_b = sb, g.stride_c = sc;
        return v3gemm::fp32_tiled_gemm(g, nullptr) == cudaSuccess;
      });
      auto cublas = [&](cublasComputeType_t compute) {
        const float one = 1.f, zero = 0.f;
        return cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, cs.n, cs.m, cs.k, &one, b, CUDA_R_32F, cs.n, sb, a,
                                          CUDA_R_32F, cs.k, sa, &zero, c, CUDA_R_32F, cs.n, sc, cs.batch, compute,
                                          CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
      };
      measure("cuBLAS fp32 (baseline)", [&] { return cublas(CUBLAS_COMPUTE_32F); });
      measure("cuBLAS TF32 operands", [&] { return cublas(CUBLAS_COMPUTE_32F_FAST_TF32); });
      measure("cuBLAS bf16 operands", [&] { return cublas(CUBLAS_COMPUTE_32F_FAST_16BF); });
      if (exploit_run && cs.batch == 1 && cs.m == cs.n && cs.n == cs.k && cs.n % 16 == 0) {
        const char* names[1] = {"N"};
        const int64_t dims[1] = {cs.n};
        kb_problem p{};
        p.name = "l1_square_matmul", p.n_dims = 1, p.dim_names = names, p.dim_values = dims;
        void* st = nullptr;
        check(exploit_setup(&p, &st) == 0, "exploit kb_setup");
        DLTensor in[2] = {}, out[1] = {};
        in[0].data = a, in[1].data = b, out[0].data = c;
        kb_call call{};
        call.inputs = in, call.n_inputs = 2, call.outputs = out, call.n_outputs = 1, call.stream = nullptr;
        measure("exploit-cuda-tf32 (WMMA)", [&] { return exploit_run(st, &call) == 0; });
        exploit_teardown(st);
      }
    }
    cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(ref);
  }
  return 0;
}
