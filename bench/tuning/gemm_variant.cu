// Times one generated GEMM variant (gemm_bf16 from a .tyl file) at M = N = K = size and
// spot-checks 64 elements against a float64 reference. Used by try-variants.sh to compare
// tile shapes quickly; the full method (cuBLAS in the same process, every element checked)
// is bench/gemm_bench.cu.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "variant.cuh"

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 8192;
  const char* name = argc > 2 ? argv[2] : "variant";
  std::vector<__nv_bfloat16> a(size_t(n) * n), b(size_t(n) * n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& x : a) x = __float2bfloat16(dist(rng));
  for (auto& x : b) x = __float2bfloat16(dist(rng));
  __nv_bfloat16 *da, *db;
  float* dc;
  CHECK(cudaMalloc(&da, a.size() * 2));
  CHECK(cudaMalloc(&db, b.size() * 2));
  CHECK(cudaMalloc(&dc, size_t(n) * n * 4));
  CHECK(cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(dc, 0xff, size_t(n) * n * 4));
  CHECK(gemm_bf16(n, n, n, da, db, dc, 1.0f, false));
  CHECK(cudaDeviceSynchronize());
  std::vector<float> c(size_t(n) * n);
  CHECK(cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int s = 0; s < 64; ++s) {
    int i = rng() % n, j = rng() % n;
    double ref = 0;
    for (int k = 0; k < n; ++k)
      ref += double(__bfloat162float(a[size_t(i) * n + k])) * __bfloat162float(b[size_t(k) * n + j]);
    worst = std::max(worst, std::abs(ref - c[size_t(i) * n + j]) / (1e-3 + std::abs(ref)));
  }
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  std::vector<float> ms;
  for (int r = 0; r < 23; ++r) {
    CHECK(cudaEventRecord(t0));
    CHECK(gemm_bf16(n, n, n, da, db, dc, 1.0f, false));
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    float t;
    CHECK(cudaEventElapsedTime(&t, t0, t1));
    if (r >= 3) ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  double med = ms[ms.size() / 2];
  std::printf("%-28s %5d^3  %8.3f ms  %7.1f TFLOP/s  spot err %.1e%s\n", name, n, med,
              2.0 * n * double(n) * n / (med * 1e-3) / 1e12, worst, worst > 2e-2 ? "  WRONG" : "");
  return 0;
}
