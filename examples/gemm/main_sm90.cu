// Runs the Hopper GEMMs of gemm_sm90.tyl (TMA, wgmma, warp specialization, a persistent grid in
// clusters of two) on an sm_90 GPU, for f16 and bf16: gemm_sm90 and gemm_sm90_bt (B stored N x K)
// at sizes that are and are not multiples of their 128 x 256 x 64 tiles, M = 1, K = 0, a long K,
// more tiles than the SMs hold, and with A, B and C shifted by 16 bytes from their allocations;
// gemm_sm90 with alpha alone and with relu. Every element is checked against a float64 CPU
// reference and against cublasGemmEx on the same inputs (with B transposed for gemm_sm90_bt);
// poisoned guards around C must stay untouched. gemm_sm90_beta (D = alpha A @ B + beta C, 16-bit)
// is checked within 16-bit rounding of the CPU reference. A pointer off the 16 bytes TMA needs is
// refused with a reason, nothing written.
//
// Prints one line per kernel instantiation. Exit codes: 0 all correct (or a GPU that is not
// sm_90: skipped, said so), 1 a wrong element or a CUDA/cuBLAS error, 77 no CUDA device.
#include "gemm_driver.h"
#include "gemm_sm90.cuh"

#include <tylo/runtime.cuh>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace gemm_check;

// `shift` elements of A and B (and floats of C) past a 16-byte aligned allocation: 8 keeps the 16
// bytes TMA needs.
struct Shape {
  int M, N, K;
  int shift = 0;
};
// Tile multiples and not, M = 1, K below one K step, K = 0 (C = 0), an odd number of rows of
// tiles (the second block of a cluster past M), a long K, more units of work than the clusters
// of an H100 (24 x 8 tiles), and shifted pointers.
const Shape kShapes[] = {{128, 256, 64},  {200, 264, 136},  {1, 8, 8},       {129, 120, 40},  {40, 16, 0},
                         {520, 392, 200}, {256, 512, 8192}, {3000, 2048, 128}, {999, 1000, 1000, 8},
                         {264, 264, 72, 8}};

struct Epilogue {
  float alpha;
  bool relu;
};
const Epilogue kEpilogues[] = {{1.5f, false}, {-0.75f, true}};

constexpr size_t kFrontGuard = 64;  // floats of poison before C (a multiple of 16 bytes)
size_t backGuard(const Shape& s) { return std::max<size_t>(4096, size_t(256) * s.N + 256); }

// gemm_sm90_bt's launcher: C = alpha A @ B^T, B stored N x K.
template <class T>
using GemmBtFn = cudaError_t (*)(int32_t M, int32_t N, int32_t K, const T* A, const T* B, float* C, float alpha,
                                 cudaStream_t stream);

// One of fn and bt is set: gemm_sm90's launcher (both epilogues) or gemm_sm90_bt's (alpha only).
template <class T>
bool run(cublasHandle_t cublas, const char* name, GemmFn<T> fn, GemmBtFn<T> bt, uint64_t seed) {
  int runs = 0, failures = 0;
  double maxCpu = 0, maxCublas = 0;
  for (const Shape& s : kShapes) {
    const size_t countA = size_t(s.M) * s.K, countB = size_t(s.K) * s.N, countC = size_t(s.M) * s.N;
    const std::vector<T> hostA = randomMatrix<T>(countA, seed++), hostB = randomMatrix<T>(countB, seed++);
    // gemm_sm90_bt reads hostB as N x K: the reference multiplies by its transpose.
    std::vector<double> b = toDouble(hostB);
    if (bt)
      for (size_t k = 0; k < size_t(s.K); ++k)
        for (size_t n = 0; n < size_t(s.N); ++n) b[k * s.N + n] = Dtype<T>::toFloat(hostB[n * s.K + k]);
    const Reference ref = reference(s.M, s.N, s.K, toDouble(hostA), b);
    T *A = nullptr, *B = nullptr;
    float *C = nullptr, *Cublas = nullptr;
    const size_t guarded = kFrontGuard + s.shift + countC + backGuard(s);
    CHECK_CUDA(cudaMalloc(&A, (countA + s.shift + 1) * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&B, (countB + s.shift + 1) * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&C, guarded * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&Cublas, (countC + 1) * sizeof(float)));
    T* a = A + s.shift;
    T* dB = B + s.shift;
    float* c = C + kFrontGuard + s.shift;
    if (countA) CHECK_CUDA(cudaMemcpy(a, hostA.data(), countA * sizeof(T), cudaMemcpyHostToDevice));
    if (countB) CHECK_CUDA(cudaMemcpy(dB, hostB.data(), countB * sizeof(T), cudaMemcpyHostToDevice));
    std::vector<float> host(guarded), hostCublas(countC);
    for (const Epilogue& e : kEpilogues) {
      if (bt && e.relu) continue;
      ++runs;
      char label[160];
      std::snprintf(label, sizeof label, "%s %dx%dx%d%s alpha=%g%s", name, s.M, s.N, s.K,
                    s.shift ? " (shifted pointers)" : "", e.alpha, e.relu ? " relu" : "");
      bool ok = true;
      CHECK_CUDA(cudaMemset(C, kPoisonByte, guarded * sizeof(float)));
      CHECK_CUDA(bt ? bt(s.M, s.N, s.K, a, dB, c, e.alpha, 0) : fn(s.M, s.N, s.K, a, dB, c, e.alpha, e.relu, 0));
      CHECK_CUDA(cudaDeviceSynchronize());
      CHECK_CUDA(cudaMemcpy(host.data(), C, guarded * sizeof(float), cudaMemcpyDeviceToHost));
      const float* out = host.data() + kFrontGuard + s.shift;
      const Comparison cmp = compareToReference(out, ref, e.alpha, e.relu);
      maxCpu = std::max(maxCpu, cmp.relFrobenius);
      if (!cmp.ok(frobeniusBound(s.K))) {
        std::fprintf(stderr, "%s: vs CPU: relative error %.3g, %zu of %zu elements beyond their bound; first C[%zu][%zu] "
                     "= %.9g, expected %.9g\n", label, cmp.relFrobenius, cmp.outOfBound, cmp.elements,
                     cmp.first / s.N, cmp.first % s.N, cmp.firstGot, cmp.firstExpected);
        ok = false;
      }
      if (s.K > 0) {  // with K = 0 the product is exactly zero, which the CPU comparison checks
        CHECK_CUBLAS(bt ? cublasGemmBtRowMajor(cublas, s.M, s.N, s.K, e.alpha, a, dB, Cublas)
                        : cublasGemmRowMajor(cublas, s.M, s.N, s.K, e.alpha, a, dB, Cublas));
        CHECK_CUDA(cudaMemcpy(hostCublas.data(), Cublas, countC * sizeof(float), cudaMemcpyDeviceToHost));
        const double err = relativeFrobenius(out, hostCublas.data(), countC, e.relu);
        maxCublas = std::max(maxCublas, err);
        if (!(err <= 2 * frobeniusBound(s.K))) {
          std::fprintf(stderr, "%s: vs cuBLAS: relative error %.3g\n", label, err);
          ok = false;
        }
      }
      const size_t front = countWritten(host.data(), kFrontGuard + s.shift);
      const size_t back = countWritten(out + countC, backGuard(s));
      if (front || back) {
        std::fprintf(stderr, "%s: wrote outside C: %zu floats before it, %zu after it\n", label, front, back);
        ok = false;
      }
      failures += ok ? 0 : 1;
    }
    CHECK_CUDA(cudaFree(A));
    CHECK_CUDA(cudaFree(B));
    CHECK_CUDA(cudaFree(C));
    CHECK_CUDA(cudaFree(Cublas));
  }
  if (failures == 0)
    std::printf("%s: %d runs correct (%zu shapes), max rel err %.1e vs CPU, %.1e vs cuBLAS, guards untouched\n", name,
                runs, std::size(kShapes), maxCpu, maxCublas);
  else
    std::printf("%s: FAILED %d of %d runs\n", name, failures, runs);
  return failures == 0;
}

// A pointer 2 bytes off TMA's 16: refused with a reason, nothing launched.
bool checkRefusal() {
  __half* A = nullptr;
  float* C = nullptr;
  CHECK_CUDA(cudaMalloc(&A, 128 * 64 * sizeof(__half) + 16));
  CHECK_CUDA(cudaMalloc(&C, 128 * 256 * sizeof(float)));
  CHECK_CUDA(cudaMemset(C, kPoisonByte, 128 * 256 * sizeof(float)));
  const cudaError_t err = gemm_sm90_f16(128, 256, 64, A + 1, A, C, 1.0f, false, 0);
  const char* message = tylo::last_launch_error();
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> host(128 * 256);
  CHECK_CUDA(cudaMemcpy(host.data(), C, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(C));
  const size_t written = countWritten(host.data(), host.size());
  const bool ok = err == cudaErrorInvalidValue && message && written == 0;
  std::printf("gemm_sm90_f16 with A 2 bytes off 16: %s (%s)%s\n", ok ? "refused" : "NOT refused",
              message ? message : "no message", written ? ", but C was written" : "");
  return ok;
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    return 77;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  if (prop.major != 9) {
    std::printf("skipped: gemm_sm90 is built for sm_90a (TMA, wgmma, clusters); this GPU is sm_%d%d\n", prop.major,
                prop.minor);
    return 0;
  }
  cublasHandle_t cublas;
  CHECK_CUBLAS(cublasCreate(&cublas));
  bool ok = run<__half>(cublas, "gemm_sm90_f16", gemm_sm90_f16, nullptr, 5000);
  ok = run<__nv_bfloat16>(cublas, "gemm_sm90_bf16", gemm_sm90_bf16, nullptr, 6000) && ok;
  ok = run<__half>(cublas, "gemm_sm90_bt_f16", nullptr, gemm_sm90_bt_f16, 7000) && ok;
  ok = run<__nv_bfloat16>(cublas, "gemm_sm90_bt_bf16", nullptr, gemm_sm90_bt_bf16, 8000) && ok;
  // gemm_sm90_beta at sizes that are not tile multiples, beta reading C and beta = 0.
  for (const float beta : {-2.0f, 0.0f}) {
    ok = runBeta<__half>(gemm_sm90_beta_f16, "gemm_sm90_beta_f16", 9000, 1000, 520, 264, beta) && ok;
    ok = runBeta<__nv_bfloat16>(gemm_sm90_beta_bf16, "gemm_sm90_beta_bf16", 10000, 1000, 520, 264, beta) && ok;
  }
  ok = checkRefusal() && ok;
  CHECK_CUBLAS(cublasDestroy(cublas));
  return ok ? 0 : 1;
}
