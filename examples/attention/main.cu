// Runs the kernels of attention.tyl on the GPU, head dimensions 64 and 128, and checks every
// element of O and LSE:
//  - against a float64 softmax(Q Kᵀ · scale) V, causal and not, at sequence lengths that are and
//    are not tile multiples (the bounds of examples/emulate/ExampleChecks.h: O within 2u of max |V|
//    plus u of |O|, u the input type's unit roundoff; LSE within 1e-4 relative);
//  - against the unfused cuBLAS reference of reference.cuh (batched GEMM, softmax, batched GEMM)
//    at sequence lengths of thousands, within the sum of both results' bounds (4u of max |V| plus
//    2u of |O|; LSE within 2e-4 relative).
//
// Exit codes: 0 all correct, 1 a wrong element or a CUDA error, 77 no CUDA device (the code
// ctest reports as skipped).
#include "attention.cuh"
#include "reference.cuh"

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

float toFloat(__half v) { return __half2float(v); }
float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

// Every element of O and LSE against float64 on the host.
template <class T, class Kernel>
bool run(const char* name, Kernel kernel, double u, int D, int B, int H, int N, bool causal) {
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

// Every element of O and LSE against the unfused cuBLAS reference, both computed on the GPU.
template <class T, class Kernel>
bool runAgainstCublas(cublasHandle_t handle, const char* name, Kernel kernel, double u, int D, int B, int H, int N,
                      bool causal) {
  const size_t count = static_cast<size_t>(B) * H * N * D, rows = static_cast<size_t>(B) * H * N;
  std::vector<T> q(count);
  std::mt19937 rng(static_cast<uint32_t>(N * 17 + D + causal));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  T *Q, *K, *V, *O, *Oref;
  float *L, *Lref;
  void* workspace;
  for (T** p : {&Q, &K, &V, &O, &Oref}) CHECK_CUDA(cudaMalloc(p, count * sizeof(T)));
  for (float** p : {&L, &Lref}) CHECK_CUDA(cudaMalloc(p, rows * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&workspace, attention_reference::workspaceBytes<T>(B, H, N)));
  float vmax = 0;
  for (T* p : {Q, K, V}) {
    for (T& e : q) e = T(dist(rng));
    CHECK_CUDA(cudaMemcpy(p, q.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  }
  for (const T& e : q) vmax = std::max(vmax, std::fabs(toFloat(e)));  // the last filled: V
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  CHECK_CUDA(kernel(B, H, N, scale, causal ? 1 : 0, Q, K, V, O, L, 0));
  CHECK_CUBLAS(attention_reference::unfused(handle, 0, B, H, N, D, scale, causal, Q, K, V, Oref, Lref, workspace));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<T> o(count), oref(count);
  std::vector<float> lse(rows), lref(rows);
  CHECK_CUDA(cudaMemcpy(o.data(), O, count * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(oref.data(), Oref, count * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(lse.data(), L, rows * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(lref.data(), Lref, rows * sizeof(float), cudaMemcpyDeviceToHost));
  for (T* p : {Q, K, V, O, Oref}) CHECK_CUDA(cudaFree(p));
  for (float* p : {L, Lref}) CHECK_CUDA(cudaFree(p));
  CHECK_CUDA(cudaFree(workspace));
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    const double got = toFloat(o[i]), want = toFloat(oref[i]);
    if (!(std::fabs(got - want) <= 4 * u * vmax + 2 * u * std::fabs(want)) && wrong++ < 5)
      std::fprintf(stderr, "%s: O[%zu] = %.6g, cuBLAS reference %.6g\n", name, i, got, want);
  }
  for (size_t i = 0; i < rows; ++i)
    if (!(std::fabs(lse[i] - lref[i]) <= 2e-4 * (1 + std::fabs(lref[i]))) && wrong++ < 5)
      std::fprintf(stderr, "%s: LSE[%zu] = %.6g, cuBLAS reference %.6g\n", name, i, lse[i], lref[i]);
  std::printf("%s%s: B = %d, H = %d, N = %d, d = %d: %s\n", name, causal ? " causal" : "", B, H, N, D,
              wrong == 0 ? "every element agrees with the unfused cuBLAS reference" : "WRONG");
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
      ok = run<__half>("attention_f16_64", attention_f16_64, 0x1p-11, 64, 2, 3, n, causal) && ok;
      ok = run<__nv_bfloat16>("attention_bf16_64", attention_bf16_64, 0x1p-8, 64, 2, 3, n, causal) && ok;
      ok = run<__half>("attention_f16_128", attention_f16_128, 0x1p-11, 128, 1, 3, n, causal) && ok;
      ok = run<__nv_bfloat16>("attention_bf16_128", attention_bf16_128, 0x1p-8, 128, 1, 3, n, causal) && ok;
    }
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  for (bool causal : {false, true})
    for (int n : {2048, 4000}) {
      ok = runAgainstCublas<__half>(handle, "attention_f16_64", attention_f16_64, 0x1p-11, 64, 2, 4, n, causal) && ok;
      ok = runAgainstCublas<__nv_bfloat16>(handle, "attention_bf16_64", attention_bf16_64, 0x1p-8, 64, 2, 4, n,
                                           causal) && ok;
      ok = runAgainstCublas<__half>(handle, "attention_f16_128", attention_f16_128, 0x1p-11, 128, 2, 4, n, causal) &&
           ok;
      ok = runAgainstCublas<__nv_bfloat16>(handle, "attention_bf16_128", attention_bf16_128, 0x1p-8, 128, 2, 4, n,
                                           causal) && ok;
    }
  CHECK_CUBLAS(cublasDestroy(handle));
  return ok ? 0 : 1;
}
