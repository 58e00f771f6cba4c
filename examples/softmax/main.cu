// Runs the kernels of softmax.tyl on the GPU and checks every element of Y and LSE against a
// float64 row softmax, within the bounds of softmax_check.h.
//
// Exit codes: 0 all correct, 1 a wrong element or a CUDA error, 77 no CUDA device (the code
// ctest reports as skipped).
#include "softmax.cuh"
#include "softmax_check.h"

#include <tylo/runtime.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

#define CHECK_CUDA(call) checkCuda((call), #call, __FILE__, __LINE__)

void checkCuda(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s", file, line, what, cudaGetErrorString(err));
  if (err == cudaErrorInvalidValue && tylo::last_launch_error()) std::fprintf(stderr, " (%s)", tylo::last_launch_error());
  std::fprintf(stderr, "\n");
  std::exit(1);
}

using Kernel = cudaError_t (*)(int32_t, int32_t, const float*, float*, float*, cudaStream_t);

// One M x N problem: X random in [-8, 8); Y and LSE poisoned with NaN before the run.
bool run(const char* name, Kernel kernel, int32_t M, int32_t N) {
  const size_t count = static_cast<size_t>(M) * static_cast<size_t>(N);
  std::vector<float> x(count), y(count), lse(static_cast<size_t>(M));
  std::mt19937 rng(static_cast<uint32_t>(M * 7919 + N));
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  for (float& v : x) v = dist(rng);
  float *X = nullptr, *Y = nullptr, *L = nullptr;
  CHECK_CUDA(cudaMalloc(&X, std::max<size_t>(count, 1) * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&Y, std::max<size_t>(count, 1) * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&L, std::max<size_t>(M, 1) * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(X, x.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(Y, 0xff, count * sizeof(float)));
  CHECK_CUDA(cudaMemset(L, 0xff, static_cast<size_t>(M) * sizeof(float)));
  CHECK_CUDA(kernel(M, N, X, Y, L, 0));
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(y.data(), Y, count * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(lse.data(), L, static_cast<size_t>(M) * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(X));
  CHECK_CUDA(cudaFree(Y));
  CHECK_CUDA(cudaFree(L));
  int64_t wrong = 0;
  double worst = 0;
  for (int32_t i = 0; i < M; ++i) {
    const size_t at = static_cast<size_t>(i) * static_cast<size_t>(N);
    wrong += softmax_check::wrongInRow(x.data() + at, y.data() + at, lse.data() + i, N, &worst);
  }
  const double tolerance = softmax_check::tolerance(N);
  std::printf("%s: M = %d, N = %d: %s (largest relative error %.1e, bound %.1e)\n", name, M, N,
              wrong == 0 ? "every element correct" : "WRONG", worst, tolerance);
  return wrong == 0;
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    return 77;
  }
  bool ok = true;
  for (int32_t n : {1, 33, 1000, 4097}) ok = run("softmax", softmax, 1000, n) && ok;
  for (int32_t n : {4, 1000, 4100}) ok = run("softmax_v4", softmax_v4, 1000, n) && ok;
  return ok ? 0 : 1;
}
