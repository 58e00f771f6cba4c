// Runs the kernels of softmax.tyl on the GPU, f32 and f16, and checks every element of Y and LSE
// against a float64 row softmax, within the bounds of softmax_check.h. `launchSoftmax` shows how
// a caller picks the kernel by the shape.
//
// Exit codes: 0 all correct, 1 a wrong element or a CUDA error, 77 no CUDA device (the code
// ctest reports as skipped).
#include "softmax.cuh"
#include "softmax_check.h"

#include <tylo/runtime.cuh>

#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <type_traits>
#include <utility>
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

float toFloat(float v) { return v; }
float toFloat(__half v) { return __half2float(v); }

template <class T>
using Kernel = cudaError_t (*)(int32_t, int32_t, const T*, T*, float*, cudaStream_t);

// One warp a row while M / 8 blocks of 8 rows fill the GPU twice over, 16-byte vectors when N is
// a multiple of 4; otherwise, for long rows and few of them, one block of 8 warps a row.
template <class T>
cudaError_t launchSoftmax(int32_t M, int32_t N, const T* X, T* Y, float* LSE, int sms, cudaStream_t stream) {
  Kernel<T> block, vectors, any;
  if constexpr (std::is_same_v<T, __half>)
    block = softmax_block_f16, vectors = softmax_v4_f16, any = softmax_f16;
  else
    block = softmax_block_f32, vectors = softmax_v4_f32, any = softmax_f32;
  if (N % 4 == 0 && N >= 2048 && (M + 7) / 8 < 2 * sms) return block(M, N, X, Y, LSE, stream);
  return (N % 4 == 0 ? vectors : any)(M, N, X, Y, LSE, stream);
}

// One M x N problem: X random in [-8, 8); Y and LSE poisoned with NaN before the run.
template <class T, class Launch>
bool run(const char* name, Launch launch, int32_t M, int32_t N) {
  const size_t count = static_cast<size_t>(M) * static_cast<size_t>(N);
  std::vector<T> x(count), y(count);
  std::vector<float> lse(static_cast<size_t>(M));
  std::mt19937 rng(static_cast<uint32_t>(M * 7919 + N));
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  for (T& v : x) v = T(dist(rng));
  T *X = nullptr, *Y = nullptr;
  float* L = nullptr;
  CHECK_CUDA(cudaMalloc(&X, std::max<size_t>(count, 1) * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&Y, std::max<size_t>(count, 1) * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&L, std::max<size_t>(M, 1) * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(X, x.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(Y, 0xff, count * sizeof(T)));
  CHECK_CUDA(cudaMemset(L, 0xff, static_cast<size_t>(M) * sizeof(float)));
  CHECK_CUDA(launch(M, N, X, Y, L));
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(y.data(), Y, count * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(lse.data(), L, static_cast<size_t>(M) * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(X));
  CHECK_CUDA(cudaFree(Y));
  CHECK_CUDA(cudaFree(L));
  const softmax_check::Rounding rounding =
      std::is_same_v<T, __half> ? softmax_check::Rounding::half() : softmax_check::Rounding{};
  int64_t wrong = 0;
  double worst = 0;
  std::vector<float> xr(static_cast<size_t>(N)), yr(static_cast<size_t>(N));
  for (int32_t i = 0; i < M; ++i) {
    const size_t at = static_cast<size_t>(i) * static_cast<size_t>(N);
    for (int32_t j = 0; j < N; ++j) xr[j] = toFloat(x[at + j]), yr[j] = toFloat(y[at + j]);
    wrong += softmax_check::wrongInRow(xr.data(), yr.data(), lse.data() + i, N, &worst, rounding);
  }
  const double tolerance = softmax_check::tolerance(N, rounding.roundoff);
  std::printf("%s: M = %d, N = %d: %s (largest relative error %.1e, bound %.1e)\n", name, M, N,
              wrong == 0 ? "every element correct" : "WRONG", worst, tolerance);
  return wrong == 0;
}

template <class T>
auto fixed(Kernel<T> kernel) {
  return [kernel](int32_t M, int32_t N, const T* X, T* Y, float* L) { return kernel(M, N, X, Y, L, 0); };
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    return 77;
  }
  int sms = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  bool ok = true;
  for (int32_t n : {1, 33, 1000, 4097}) {
    ok = run<float>("softmax_f32", fixed<float>(softmax_f32), 1000, n) && ok;
    ok = run<__half>("softmax_f16", fixed<__half>(softmax_f16), 1000, n) && ok;
  }
  for (int32_t n : {4, 1000, 4100}) {
    ok = run<float>("softmax_v4_f32", fixed<float>(softmax_v4_f32), 1000, n) && ok;
    ok = run<__half>("softmax_v4_f16", fixed<__half>(softmax_v4_f16), 1000, n) && ok;
  }
  for (int32_t n : {4, 1024, 3000, 65536}) {
    ok = run<float>("softmax_block_f32", fixed<float>(softmax_block_f32), 50, n) && ok;
    ok = run<__half>("softmax_block_f16", fixed<__half>(softmax_block_f16), 50, n) && ok;
  }
  // The kernel picked by the shape: a few long rows, many short ones, and odd N.
  for (auto [m, n] : {std::pair{16, 100000}, std::pair{100000, 256}, std::pair{300, 999}}) {
    ok = run<float>("launchSoftmax<f32>",
                    [&](int32_t M, int32_t N, const float* X, float* Y, float* L) {
                      return launchSoftmax(M, N, X, Y, L, sms, 0);
                    },
                    m, n) && ok;
    ok = run<__half>("launchSoftmax<f16>",
                     [&](int32_t M, int32_t N, const __half* X, __half* Y, float* L) {
                       return launchSoftmax(M, N, X, Y, L, sms, 0);
                     },
                     m, n) && ok;
  }
  return ok ? 0 : 1;
}
