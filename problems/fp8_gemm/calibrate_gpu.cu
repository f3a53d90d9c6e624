// GPU half of fp8_gemm's tolerance calibration (CALIBRATION.md); not part of the build (CMake
// compiles only reference.cpp and reference.cu). It draws the operands exactly as kbench does
// (core/random.h, evaluated on the device: bit-identical with --fmad=false), computes the full
// fp64 reference with reference.cu's kernel, runs each solution library given on the command line
// (built as kbench builds them) through its kb_setup/kb_run, and prints per shape and seed: the
// worst |err| / (atol + rtol |exp|) for candidate tolerances (the judge's test), the largest error
// one bf16 rounding cannot explain (|err| - 2^-8 |exp|), max |err|, rel_l2 and the time of a call.
// The weights use the input seed here (kbench draws them from a secret seed).
//
// On an H100, from the repository root (the include of kbench/solution.h needs DLPack's header):
//   F="-std=c++17 -O3 -shared -Xcompiler -fPIC --expt-relaxed-constexpr -gencode=arch=compute_90a,code=sm_90a -Iinclude -Iproblems/kit"  # kit: the wgmma GEMM
//   for s in cuda-wgmma cuda-wgmma-fast-accum cuda-mma-sync; do nvcc $F -o /tmp/$s.so problems/fp8_gemm/solutions/$s/solution.cu; done
//   nvcc $F -o /tmp/baseline.so problems/fp8_gemm/baseline.cu -lcublasLt
//   nvcc -std=c++17 -O3 --fmad=false -Xcompiler -fopenmp -gencode=arch=compute_90a,code=sm_90a -Isrc -Iinclude
//     -o /tmp/fp8_calib_gpu problems/fp8_gemm/calibrate_gpu.cu -ldl -lgomp       (one command)
//   /tmp/fp8_calib_gpu /tmp/cuda-wgmma.so /tmp/cuda-wgmma-fast-accum.so /tmp/cuda-mma-sync.so /tmp/baseline.so
#include <dlfcn.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <cmath>
#include <algorithm>
#include "core/random.h"
#include "core/float_formats.h"
#include "deck/gpu_reference.h"
// reference.cu registers itself with kbench; here there is no registry to register with.
namespace kb { void register_gpu_reference(const std::string&, GpuReferenceFn) {} }
#include "reference.cu"  // fp8_gemm_reference, the double GEMM kbench runs
#include "kbench/solution.h"

constexpr uint32_t kWeightStream = 1u << 16;
__global__ void gen_e4m3(uint8_t* out, size_t n, uint64_t seed, uint32_t stream, double std) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = kb::e4m3_from_double(kb::normal(seed, stream, i, 0.0, std), kb::Saturation::finite);
}
struct Lib { std::string name; int (*setup)(const kb_problem*, void**); int (*run)(void*, const kb_call*); void (*teardown)(void*); };
int main(int argc, char** argv) {
  const double atol = 0.002, rtol = 1.0 / 128;  // problem.toml's tolerance
  std::vector<Lib> libs;
  for (int i = 1; i < argc; ++i) {
    void* h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlopen %s: %s\n", argv[i], dlerror()); return 1; }
    Lib l{argv[i], (int (*)(const kb_problem*, void**))dlsym(h, "kb_setup"), (int (*)(void*, const kb_call*))dlsym(h, "kb_run"), (void (*)(void*))dlsym(h, "kb_teardown")};
    libs.push_back(l);
  }
  int64_t shapes[][3] = {{4096, 4096, 4096}, {4096, 4096, 4127}, {32, 8192, 8192}, {4096, 14336, 4096}};
  for (auto& s : shapes) {
    const int64_t M = s[0], N = s[1], K = s[2];
    uint8_t *x, *w; float *sx, *sw; double* ref; uint16_t* y;
    cudaMalloc(&x, M * K); cudaMalloc(&w, N * K); cudaMalloc(&sx, 4); cudaMalloc(&sw, 4);
    cudaMalloc(&ref, M * N * 8); cudaMalloc(&y, M * N * 2);
    std::vector<double> href(M * N); std::vector<uint16_t> hy(M * N);
    for (uint64_t seed : {1, 2, 3}) {
      gen_e4m3<<<1024, 256>>>(x, M * K, seed, 0, 64.0);
      gen_e4m3<<<1024, 256>>>(w, N * K, seed, kWeightStream, 64.0);
      const float hsx = (float)kb::uniform(seed, 1, 0, 0.012, 0.016), hsw = (float)kb::uniform(seed, kWeightStream + 1, 0, 2.4e-4, 3.2e-4);
      cudaMemcpy(sx, &hsx, 4, cudaMemcpyHostToDevice); cudaMemcpy(sw, &hsw, 4, cudaMemcpyHostToDevice);
      const char* names[3] = {"M", "N", "K"}; int64_t dims[3] = {M, N, K};
      kb::GpuReferenceCase rc; rc.problem = "fp8_gemm"; rc.num_dims = 3; rc.dim_names = names; rc.dims = dims;
      const void* ins[2] = {x, sx}; const void* ws[2] = {w, sw}; double* outs[1] = {ref}; int64_t numel = M * N;
      rc.num_inputs = 2; rc.inputs = ins; rc.num_weights = 2; rc.weights = ws; rc.num_outputs = 1; rc.expected = outs; rc.expected_numel = &numel; rc.stream = nullptr;
      cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
      cudaEventRecord(e0);
      fp8_gemm_reference(rc);
      cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ref_ms; cudaEventElapsedTime(&ref_ms, e0, e1);
      cudaMemcpy(href.data(), ref, M * N * 8, cudaMemcpyDeviceToHost);
      double ref2 = 0; for (double v : href) ref2 += v * v;
      printf("\n(%ld, %ld, %ld) seed %lu: sx %.4g sw %.4g rms(y) %.3f  [fp64 reference %.1f ms, %s]\n", (long)M, (long)N, (long)K, (unsigned long)seed, hsx, hsw, std::sqrt(ref2 / (M * N)), ref_ms, cudaGetErrorString(cudaGetLastError()));
      for (auto& l : libs) {
        DLTensor wt[2] = {}; wt[0].data = w; wt[1].data = sw;
        DLTensor in[2] = {}; in[0].data = x; in[1].data = sx;
        int64_t yshape[2] = {M, N}; DLTensor out[1] = {}; out[0].data = y; out[0].ndim = 2; out[0].shape = yshape;
        kb_problem p{}; p.name = "fp8_gemm"; p.n_dims = 3; p.dim_names = names; p.dim_values = dims; p.weights = wt; p.n_weights = 2;
        void* st = nullptr;
        int r1 = l.setup(&p, &st);
        kb_call c{}; c.inputs = in; c.n_inputs = 2; c.outputs = out; c.n_outputs = 1; c.stream = nullptr;
        cudaMemset(y, 0xFF, M * N * 2);
        int r2 = l.run(st, &c);
        cudaDeviceSynchronize();
        cudaMemcpy(hy.data(), y, M * N * 2, cudaMemcpyDeviceToHost);
        // Time of a call: the mean of 10 back-to-back warm calls (kbench's own timing is colder).
        cudaEventRecord(e0);
        for (int i = 0; i < 10; ++i) l.run(st, &c);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); ms /= 10;
        l.teardown(st);
        // Candidates (atol, rtol); "beyond": max |err| - 2^-8 |exp| (what one bf16 rounding cannot explain).
        const double cand[4][2] = {{0.01, 1.0 / 128}, {0.002, 1.0 / 128}, {0.001, 1.0 / 128}, {0.0005, 1.0 / 128}};
        double worst[4] = {0, 0, 0, 0}, maxerr = 0, err2 = 0, beyond = 0; long fails = 0;
        int64_t wi = 0;
        for (int64_t i = 0; i < M * N; ++i) {
          const double g = kb::bf16_to_double(hy[i]), e = href[i];
          const double err = std::fabs(g - e);
          if (!(err <= atol + rtol * std::fabs(e))) ++fails;
          if (!(err <= maxerr)) { maxerr = err; }
          err2 += err * err;
          const double b = err - std::fabs(e) / 256;
          if (!(b <= beyond)) beyond = b;
          for (int c = 0; c < 4; ++c) {
            const double ex = err / (cand[c][0] + cand[c][1] * std::fabs(e));
            if (!(ex <= worst[c])) { worst[c] = ex; if (c == 1) wi = i; }
          }
        }
        const char* base = strrchr(l.name.c_str(), '/');
        printf("  %-30s rc %d/%d excess@(.01,.002,.001,.0005) %7.3f %7.3f %7.3f %7.3f  beyond-rounding %.3g  max|err| %.4g  rel_l2 %.3g  (worst@.002: %ld,%ld got %.6g exp %.6g)  %.3f ms = %.0f TFLOP/s %s\n",
               base ? base + 1 : l.name.c_str(), r1, r2, worst[0], worst[1], worst[2], worst[3], beyond, maxerr, std::sqrt(err2 / ref2),
               (long)(wi / N), (long)(wi % N), kb::bf16_to_double(hy[wi]), href[wi], ms, 2.0 * M * N * K / (ms * 1e-3) / 1e12, cudaGetErrorString(cudaGetLastError()));
        fflush(stdout);
      }
    }
    cudaFree(x); cudaFree(w); cudaFree(sx); cudaFree(sw); cudaFree(ref); cudaFree(y);
  }
}
