// Runs twice_plus_one from scale.tyl and checks every element.
// Exit codes: 0 correct, 1 wrong or a CUDA error, 77 no CUDA device.
#include "scale.cuh"

#include <tylo/runtime.cuh>

#include <cstdio>
#include <cstring>
#include <vector>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  const int64_t n = 1000003;  // not a multiple of the 512-element block
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7919) % 10007) * 0.25f - 1000.5f;
  float *X = nullptr, *Y = nullptr;
  if (cudaMalloc(&X, n * sizeof(float)) != cudaSuccess || cudaMalloc(&Y, n * sizeof(float)) != cudaSuccess ||
      cudaMemcpy(X, x.data(), n * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemset(Y, 0xff, n * sizeof(float)) != cudaSuccess) {
    std::printf("CUDA setup failed\n");
    return 1;
  }
  cudaError_t err = twice_plus_one(n, X, Y);
  if (err != cudaSuccess) {
    std::printf("twice_plus_one: %s (%s)\n", cudaGetErrorString(err),
                tylo::last_launch_error() ? tylo::last_launch_error() : "");
    return 1;
  }
  if ((err = cudaMemcpy(y.data(), Y, n * sizeof(float), cudaMemcpyDeviceToHost)) != cudaSuccess) {
    std::printf("cudaMemcpy: %s\n", cudaGetErrorString(err));
    return 1;
  }
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float expected = x[i] * 2.0f + 1.0f;
    if (std::memcmp(&expected, &y[i], sizeof(float)) != 0 && wrong++ < 5)
      std::printf("element %lld: expected %.9g, got %.9g\n", static_cast<long long>(i), expected, y[i]);
  }
  std::printf("twice_plus_one: %lld/%lld elements correct\n", static_cast<long long>(n - wrong),
              static_cast<long long>(n));
  return wrong == 0 ? 0 : 1;
}
