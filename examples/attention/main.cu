// Runs the kernels of attention.tyl on the GPU and checks every element of O and LSE against a
// float64 softmax(Q Kᵀ · scale) V, causal and not, at sequence lengths that are and are not tile
// multiples (the bounds of examples/emulate/ExampleChecks.h: O within 2u of max |V| plus u of |O|,
// u the input type's unit roundoff; LSE within 1e-4 relative).
//
// Exit codes: 0 all correct, 1 a wrong element or a CUDA error, 77 no CUDA device (the code
// ctest reports as skipped).
#include "attention.cuh"

#include <tylo/runtime.cuh>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
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

constexpr int D = 64;

float toFloat(__half v) { return __half2float(v); }
float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T, class Kernel>
bool run(const char* name, Kernel kernel, double u, int B, int H, int N, bool causal) {
  const size_t count = static_cast<size_t>(B) * H * N * D;
  std::vector<T> q(count), k(count), v(count), o(count);
  std::vector<float> lse(static_cast<size_t>(B) * H * N);
  std::mt19937 rng(static_cast<uint32_t>(N * 31 + causal));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto* x : {&q, &k, &v})
    for (T& e : *x) e = T(dist(rng));
  T *Q, *K, *V, *O;
  float* L;
  for (T** p : {&Q, &K, &V, &O}) CHECK_CUDA(cudaMalloc(p, std::max<size_t>(count, 1) * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&L, std::max<size_t>(lse.size(), 1) * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(Q, q.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(K, k.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(V, v.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(O, 0xff, count * sizeof(T)));
  CHECK_CUDA(cudaMemset(L, 0xff, lse.size() * sizeof(float)));
  const float scale = 0.125f;
  CHECK_CUDA(kernel(B, H, N, scale, causal ? 1 : 0, Q, K, V, O, L, 0));
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(o.data(), O, count * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(lse.data(), L, lse.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (T* p : {Q, K, V, O}) CHECK_CUDA(cudaFree(p));
  CHECK_CUDA(cudaFree(L));
  size_t wrong = 0;
  std::vector<double> s(static_cast<size_t>(N));
  for (size_t bh = 0; bh < static_cast<size_t>(B) * H; ++bh) {
    auto at = [&](const std::vector<T>& x, int row, int d) { return double(toFloat(x[(bh * N + row) * D + d])); };
    double vmax = 0;
    for (int j = 0; j < N; ++j)
      for (int d = 0; d < D; ++d) vmax = std::max(vmax, std::fabs(at(v, j, d)));
    for (int i = 0; i < N; ++i) {
      const int keys = causal ? i + 1 : N;
      double hi = -1e300, sum = 0;
      for (int j = 0; j < keys; ++j) {
        double dot = 0;
        for (int d = 0; d < D; ++d) dot += at(q, i, d) * at(k, j, d);
        s[j] = dot * scale;
        hi = std::max(hi, s[j]);
      }
      for (int j = 0; j < keys; ++j) sum += std::exp(s[j] - hi);
      for (int d = 0; d < D; ++d) {
        double want = 0;
        for (int j = 0; j < keys; ++j) want += std::exp(s[j] - hi) / sum * at(v, j, d);
        const double got = at(o, i, d);
        if (!(std::fabs(got - want) <= 2 * u * vmax + u * std::fabs(want)) && wrong++ < 5)
          std::fprintf(stderr, "%s: O[%zu, %d, %d] = %.6g, expected %.6g\n", name, bh, i, d, got, want);
      }
      const double want = hi + std::log(sum);
      if (!(std::fabs(lse[bh * N + i] - want) <= 1e-4 * (1 + std::fabs(want))) && wrong++ < 5)
        std::fprintf(stderr, "%s: LSE[%zu, %d] = %.6g, expected %.6g\n", name, bh, i, lse[bh * N + i], want);
    }
  }
  std::printf("%s%s: B = %d, H = %d, N = %d, d = %d: %s\n", name, causal ? " causal" : "", B, H, N, D,
              wrong == 0 ? "every element correct" : "WRONG");
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
  for (bool causal : {false, true})
    for (int n : {1, 77, 256, 300}) {
      ok = run<__half>("attention_f16", attention_f16, 0x1p-11, 2, 3, n, causal) && ok;
      ok = run<__nv_bfloat16>("attention_bf16", attention_bf16, 0x1p-8, 2, 3, n, causal) && ok;
    }
  return ok ? 0 : 1;
}
