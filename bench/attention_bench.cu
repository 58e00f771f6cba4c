// Attention benchmark (FUSED.md): the fused forward pass of attention.tyl against the unfused
// cuBLAS reference (examples/attention/reference.cuh: batched GEMM, softmax, batched GEMM) in one
// process, f16 and bf16, head dimension 128 (and 64), sequence lengths 1k to 16k, causal and not.
// Batch x sequence is 16k tokens and heads x d is 2048 (16 heads at d = 128): the shapes of
// published FlashAttention figures. TFLOP/s counts
// 4 · batch · heads · seq² · d, halved for causal, for both (the reference computes the masked
// half too). Before timing, every element of the fused result is compared with the reference's;
// each figure is the median of R event timings. Where the reference's S and P do not fit in
// memory, only the fused kernel is timed.
//
//   attention_bench [--json PATH] [--reps R] [--commit SHA]
// Exit codes: 0 ok, 1 a disagreement or a CUDA error, 2 bad arguments, 77 no CUDA device.
#include "attention.cuh"
#include "reference.cuh"

#include "BenchCommon.cuh"

#include <cmath>
#include <cstdint>
#include <random>

namespace {

float toFloat(__half v) { return __half2float(v); }
float toFloat(__nv_bfloat16 v) { return __bfloat162float(v); }

struct Timer {
  cudaEvent_t start, stop;
  Timer() {
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
  }
  template <class Op>
  float ms(Op op) {
    CHECK_CUDA(cudaEventRecord(start));
    op();
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    return t;
  }
};

// One configuration: times both, checks the fused result against the reference's, and appends
// a JSON row. Returns false on a disagreement.
template <class T, class Kernel>
bool benchOne(cublasHandle_t handle, Timer& timer, const char* type, Kernel kernel, double u, int D, int N, bool causal,
           int reps, std::string& json) {
  const int H = 2048 / D, B = std::max(1, 16384 / N);
  const size_t count = static_cast<size_t>(B) * H * N * D, rows = static_cast<size_t>(B) * H * N;
  T *Q, *K, *V, *O, *Oref;
  float *L, *Lref;
  for (T** p : {&Q, &K, &V, &O, &Oref}) CHECK_CUDA(cudaMalloc(p, count * sizeof(T)));
  for (float** p : {&L, &Lref}) CHECK_CUDA(cudaMalloc(p, rows * sizeof(float)));
  std::vector<T> host(count);
  std::mt19937 rng(static_cast<uint32_t>(N + D));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (T* p : {Q, K, V}) {
    for (T& e : host) e = T(dist(rng));
    CHECK_CUDA(cudaMemcpy(p, host.data(), count * sizeof(T), cudaMemcpyHostToDevice));
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  void* workspace = nullptr;
  size_t freeBytes = 0, totalBytes = 0;
  CHECK_CUDA(cudaMemGetInfo(&freeBytes, &totalBytes));
  const size_t need = attention_reference::workspaceBytes<T>(B, H, N);
  const bool withReference = need + (size_t(1) << 30) < freeBytes && cudaMalloc(&workspace, need) == cudaSuccess;
  auto fused = [&] { CHECK_CUDA(kernel(B, H, N, scale, causal ? 1 : 0, Q, K, V, O, L, 0)); };
  auto reference = [&] {
    CHECK_CUBLAS(attention_reference::unfused(handle, 0, B, H, N, D, scale, causal, Q, K, V, Oref, Lref, workspace));
  };
  bool ok = true;
  fused();
  if (withReference) {
    reference();
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<T> o(count), oref(count);
    CHECK_CUDA(cudaMemcpy(o.data(), O, count * sizeof(T), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(oref.data(), Oref, count * sizeof(T), cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) {
      const double got = toFloat(o[i]), want = toFloat(oref[i]);
      wrong += !(std::fabs(got - want) <= 4 * u + 2 * u * std::fabs(want));  // max |V| = 1
    }
    if (wrong) {
      std::fprintf(stderr, "attention_%s_%d N = %d%s: %zu elements differ from the reference\n", type, D, N,
                   causal ? " causal" : "", wrong);
      ok = false;
    }
  }
  std::vector<float> tf, tr;
  for (int rep = 0; rep < reps + 2; ++rep) {
    const float f = timer.ms(fused);
    const float r = withReference ? timer.ms(reference) : 0.0f;
    if (rep >= 2) tf.push_back(f), tr.push_back(r);
  }
  const double flops = 4.0 * B * H * double(N) * N * D / (causal ? 2 : 1);
  const float fm = bench::median(tf), rm = bench::median(tr);
  std::printf("attention_%s_%d%s B = %d, H = %d, N = %5d: %8.3f ms, %6.1f TFLOP/s", type, D, causal ? " causal" : "",
              B, H, N, fm, flops / (fm * 1e9));
  if (withReference)
    std::printf("; unfused cuBLAS %8.3f ms, %6.1f TFLOP/s: %.2fx\n", rm, flops / (rm * 1e9), rm / fm);
  else
    std::printf("; unfused cuBLAS reference not run (its %.1f GB of S and P do not fit)\n", need / 1e9);
  char row[320];
  std::snprintf(row, sizeof row,
                "%s{\"type\": \"%s\", \"d\": %d, \"causal\": %s, \"B\": %d, \"H\": %d, \"N\": %d, \"fused_ms\": %.4f, "
                "\"fused_tflops\": %.2f, \"unfused_ms\": %s, \"unfused_tflops\": %s}",
                json.back() == '[' ? "" : ", ", type, D, causal ? "true" : "false", B, H, N, fm, flops / (fm * 1e9),
                withReference ? std::to_string(rm).c_str() : "null",
                withReference ? std::to_string(flops / (rm * 1e9)).c_str() : "null");
  json += row;
  for (T* p : {Q, K, V, O, Oref}) CHECK_CUDA(cudaFree(p));
  for (float* p : {L, Lref}) CHECK_CUDA(cudaFree(p));
  if (workspace) CHECK_CUDA(cudaFree(workspace));
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Args args = bench::parseArgs(argc, argv, "attention_bench", 10);
  const cudaDeviceProp prop = bench::deviceOrSkip();
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  Timer timer;
  bool ok = true;
  std::string json = bench::jsonStart(args, prop);
  for (bool causal : {false, true})
    for (int N : {1024, 2048, 4096, 8192, 16384}) {
      ok = benchOne<__half>(handle, timer, "f16", attention_f16_128, 0x1p-11, 128, N, causal, args.reps, json) && ok;
      ok = benchOne<__nv_bfloat16>(handle, timer, "bf16", attention_bf16_128, 0x1p-8, 128, N, causal, args.reps, json) && ok;
    }
  // Head dimension 64 at one length, for comparison.
  ok = benchOne<__half>(handle, timer, "f16", attention_f16_64, 0x1p-11, 64, 8192, false, args.reps, json) && ok;
  json += "]}\n";
  CHECK_CUBLAS(cublasDestroy(handle));
  bench::writeJson(args, json);
  return ok ? 0 : 1;
}
