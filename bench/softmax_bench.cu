// Softmax benchmark (FUSED.md): the generated softmax_v4_f32 (one warp a row) over an M x N f32
// tensor of 256 MiB against cudaMemcpyAsync device to device of the same tensor, in one process,
// for N = 1024, 4096 and 16384; and softmax_block_f32 (one block a row) at N = 16384 and 65536. The kernel reads X twice (a pass for the row statistics, one for the result; the
// second mostly from L2) and writes Y once; the copy reads and writes once. The ratio is the
// copy's time over the kernel's (target >= 0.90). Rows are checked against float64 before timing;
// the L2 is flushed before each timed operation; each figure is the median of R event timings.
//
//   softmax_bench [--json PATH] [--reps R] [--commit SHA]
// Exit codes: 0 ok, 1 a wrong result or a CUDA error, 2 bad arguments, 77 no CUDA device.
#include "softmax.cuh"
#include "softmax_check.h"

#include "BenchCommon.cuh"

#include <cmath>
#include <cstdint>
#include <random>

namespace {

__global__ void flushKernel(const uint4* __restrict__ p, size_t words, uint32_t* sink) {
  uint32_t acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Args args = bench::parseArgs(argc, argv, "softmax_bench", 20);
  const cudaDeviceProp prop = bench::deviceOrSkip();
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  const size_t bytes = size_t(256) << 20, count = bytes / sizeof(float);
  float *X = nullptr, *Y = nullptr, *L = nullptr;
  CHECK_CUDA(cudaMalloc(&X, bytes));
  CHECK_CUDA(cudaMalloc(&Y, bytes));
  CHECK_CUDA(cudaMalloc(&L, count / 1024 * sizeof(float)));
  const size_t flushBytes = std::max<size_t>(size_t(4) * prop.l2CacheSize, size_t(256) << 20);
  uint4* flush = nullptr;
  uint32_t* sink = nullptr;
  CHECK_CUDA(cudaMalloc(&flush, flushBytes));
  CHECK_CUDA(cudaMalloc(&sink, sizeof(uint32_t)));
  CHECK_CUDA(cudaMemset(flush, 0x5a, flushBytes));
  std::vector<float> x(count);
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  for (float& v : x) v = dist(rng);
  CHECK_CUDA(cudaMemcpy(X, x.data(), bytes, cudaMemcpyHostToDevice));
  auto timed = [&](auto op) {
    flushKernel<<<4 * prop.multiProcessorCount, 256, 0, stream>>>(flush, flushBytes / sizeof(uint4), sink);
    CHECK_CUDA(cudaEventRecord(start, stream));
    op();
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  };
  bool ok = true;
  std::string json = bench::jsonStart(args, prop);
  using Kernel = cudaError_t (*)(int32_t, int32_t, const float*, float*, float*, cudaStream_t);
  struct Case {
    const char* name;
    Kernel kernel;
    int32_t N;
  };
  const Case cases[] = {{"softmax_v4_f32", softmax_v4_f32, 1024},
                        {"softmax_v4_f32", softmax_v4_f32, 4096},
                        {"softmax_v4_f32", softmax_v4_f32, 16384},
                        {"softmax_block_f32", softmax_block_f32, 16384},
                        {"softmax_block_f32", softmax_block_f32, 65536}};
  for (const Case& c : cases) {
    const char* name = c.name;
    const Kernel kernel = c.kernel;
    const int32_t N = c.N;
    const int32_t M = static_cast<int32_t>(count / static_cast<size_t>(N));
    CHECK_CUDA(kernel(M, N, X, Y, L, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    // 32 rows spread over the tensor, every element against float64.
    std::vector<float> y(static_cast<size_t>(N));
    for (int32_t r = 0; r < 32; ++r) {
      const size_t i = static_cast<size_t>(r) * static_cast<size_t>(M) / 32;
      CHECK_CUDA(cudaMemcpy(y.data(), Y + i * N, N * sizeof(float), cudaMemcpyDeviceToHost));
      double worst = 0;
      if (softmax_check::wrongInRow(x.data() + i * N, y.data(), nullptr, N, &worst) != 0) {
        std::fprintf(stderr, "%s N = %d: row %zu is wrong (relative error %.1e)\n", name, N, i, worst);
        ok = false;
      }
    }
    std::vector<float> kernelMs, copyMs;
    for (int rep = 0; rep < args.reps + 3; ++rep) {
      const float k = timed([&] { CHECK_CUDA(kernel(M, N, X, Y, L, stream)); });
      const float t = timed([&] { CHECK_CUDA(cudaMemcpyAsync(Y, X, bytes, cudaMemcpyDeviceToDevice, stream)); });
      if (rep >= 3) kernelMs.push_back(k), copyMs.push_back(t);
    }
    const float km = bench::median(kernelMs), cm = bench::median(copyMs);
    std::printf("%s M = %d, N = %d: %.3f ms; cudaMemcpyAsync of the same bytes %.3f ms: %.2f of the copy "
                "(%.0f GB/s of the tensor read and written once)\n",
                name, M, N, km, cm, cm / km, 2.0 * bytes / (km * 1e6));
    char row[256];
    std::snprintf(row, sizeof row,
                  "%s{\"kernel\": \"%s\", \"M\": %d, \"N\": %d, \"kernel_ms\": %.4f, \"memcpy_ms\": %.4f, "
                  "\"ratio\": %.4f}",
                  json.back() == '[' ? "" : ", ", name, M, N, km, cm, cm / km);
    json += row;
  }
  json += "]}\n";
  bench::writeJson(args, json);
  return ok ? 0 : 1;
}
