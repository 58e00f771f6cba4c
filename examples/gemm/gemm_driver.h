// What the GEMM example drivers (main.cu, main_sm90.cu) share: CUDA and cuBLAS calls checked
// (a failure prints where and why, the launcher's own reason included, and exits 1), and the run
// of a beta kernel, D (16-bit) = alpha A @ B + beta C, checked within 16-bit rounding of the
// float64 reference. Include it from a .cu file after the kernels' headers.
#pragma once

#include <tylo/runtime.cuh>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gemm_check.h"

#define CHECK_CUDA(call) ::gemm_check::checkCuda((call), #call, __FILE__, __LINE__)
#define CHECK_CUBLAS(call) ::gemm_check::checkCublas((call), #call, __FILE__, __LINE__)

namespace gemm_check {

inline void checkCuda(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s", file, line, what, cudaGetErrorString(err));
  // A launcher's own checks explain themselves.
  if (err == cudaErrorInvalidValue && tylo::last_launch_error())
    std::fprintf(stderr, " (%s)", tylo::last_launch_error());
  std::fprintf(stderr, "\n");
  std::exit(1);
}

inline void checkCublas(cublasStatus_t status, const char* what, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, what, cublasStatusName(status));
  std::exit(1);
}

// D (16-bit) = alpha * A @ B + beta * C with `fn` (a gemm_beta launcher) at M x N x K, alpha 0.75;
// with beta = 0, C holds NaN, which must not reach D (C is not read). Prints one line; true when
// every element is within rounding of the CPU reference.
template <class T, class Fn>
bool runBeta(Fn fn, const char* name, uint64_t seed, int M, int N, int K, float beta) {
  const float alpha = 0.75f;
  const size_t countA = size_t(M) * K, countB = size_t(K) * N, countC = size_t(M) * N;
  const std::vector<T> hostA = randomMatrix<T>(countA, seed), hostB = randomMatrix<T>(countB, seed + 1);
  std::vector<T> hostC = randomMatrix<T>(countC, seed + 2);
  if (beta == 0) std::fill(hostC.begin(), hostC.end(), Dtype<T>::fromFloat(NAN));
  T *A = nullptr, *B = nullptr, *C = nullptr, *D = nullptr;
  CHECK_CUDA(cudaMalloc(&A, countA * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&B, countB * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&C, countC * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&D, countC * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(A, hostA.data(), countA * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(B, hostB.data(), countB * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(C, hostC.data(), countC * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(D, kPoisonByte, countC * sizeof(T)));
  CHECK_CUDA(fn(M, N, K, A, B, C, D, alpha, beta, 0));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<T> out(countC);
  CHECK_CUDA(cudaMemcpy(out.data(), D, countC * sizeof(T), cudaMemcpyDeviceToHost));
  const Reference ref = reference(M, N, K, toDouble(hostA), toDouble(hostB));
  // With beta = 0 the expected value is alpha A @ B alone (0 * NaN would be NaN).
  const std::vector<T> expectedC = beta == 0 ? std::vector<T>(countC, Dtype<T>::fromFloat(0.0f)) : hostC;
  const size_t bad = countBetaErrors(ref, expectedC, out.data(), alpha, beta, nullptr);
  std::printf("%s %dx%dx%d alpha=%g beta=%g: %zu/%zu elements within rounding of the CPU reference%s\n", name, M, N,
              K, alpha, beta, countC - bad, countC, bad ? "  <-- WRONG" : "");
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));
  CHECK_CUDA(cudaFree(C));
  CHECK_CUDA(cudaFree(D));
  return bad == 0;
}

}  // namespace gemm_check
