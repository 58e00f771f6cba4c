// Add-one benchmark (PERFORMANCE.md): the generated add_one_n over 1 GiB of f32 against
// cudaMemcpyAsync device to device of the same bytes, in one process, on the same buffers; and
// the event-timed latency of one launch of the 32x4 add_one against an empty kernel.
//
//   add_one_bench [--json PATH] [--mib N] [--reps R] [--commit SHA]
//
// Bandwidth counts bytes read + bytes written (2 x the buffer). Inputs are random, the output
// is poisoned and every element checked before any timing; the L2 is flushed (by reading an
// unrelated buffer) before each timed operation; kernel and copy alternate, so drift affects
// both; each figure is the median of R event timings after warm-up.
// Exit codes: 0 ok, 1 a wrong result or a CUDA error, 2 bad arguments, 77 no CUDA device.
#include "add_one.cuh"

#include <tylo/runtime.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

#define CHECK_CUDA(call) checkCuda((call), #call, __LINE__)

void checkCuda(cudaError_t err, const char* what, int line) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "add_one_bench.cu:%d: %s failed: %s", line, what, cudaGetErrorString(err));
  if (err == cudaErrorInvalidValue && tylo::last_launch_error())
    std::fprintf(stderr, " (%s)", tylo::last_launch_error());
  std::fprintf(stderr, "\n");
  std::exit(1);
}

// After a launch: its own return code, then anything the launch left behind.
#define CHECK_LAUNCH(call)            \
  do {                                \
    CHECK_CUDA(call);                 \
    CHECK_CUDA(cudaGetLastError());   \
  } while (0)

__global__ void emptyKernel() {}

// Reads `words` words and writes only if their sum is a value it never is: evicts the L2 with
// clean lines, so the next timed operation starts with its data in DRAM and nothing to write back.
__global__ void flushKernel(const uint4* __restrict__ p, size_t words, uint32_t* sink) {
  uint32_t acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [-1000, 1000) with fractional parts; never zero.
void fillRandom(std::vector<float>& v, uint64_t seed) {
  for (float& x : v) {
    const float u = static_cast<float>(splitmix64(seed) >> 40) * (1.0f / 16777216.0f);
    x = u * 2000.0f - 1000.0f;
    if (x == 0.0f) x = 0.5f;
  }
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Every element of out == in + 1, bit for bit.
bool verify(const char* what, const std::vector<float>& in, const std::vector<float>& out) {
  size_t wrong = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (bits(out[i]) == bits(in[i] + 1.0f)) continue;
    if (wrong++ < 5)
      std::fprintf(stderr, "%s: element %zu: A = %.9g, expected %.9g, got %.9g\n", what, i, in[i], in[i] + 1.0f,
                   out[i]);
  }
  if (wrong != 0) std::fprintf(stderr, "%s: %zu of %zu elements wrong\n", what, wrong, in.size());
  return wrong == 0;
}

struct Stats {
  std::vector<float> ms;  // every timing, in milliseconds
  float median() const {
    std::vector<float> s = ms;
    std::sort(s.begin(), s.end());
    const size_t n = s.size();
    return n % 2 ? s[n / 2] : 0.5f * (s[n / 2 - 1] + s[n / 2]);
  }
  float min() const { return *std::min_element(ms.begin(), ms.end()); }
  float max() const { return *std::max_element(ms.begin(), ms.end()); }
};

// Times `op` on `stream` between two events, after `before` (not timed).
template <class Before, class Op>
float timeOnce(cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop, Before before, Op op) {
  before();
  CHECK_CUDA(cudaEventRecord(start, stream));
  op();
  CHECK_CUDA(cudaEventRecord(stop, stream));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  return ms;
}

std::string jsonArray(const std::vector<float>& v, float scale) {
  std::string s = "[";
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.4f", i ? ", " : "", v[i] * scale);
    s += buf;
  }
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  std::string jsonPath;
  std::string commit = "unknown";
  size_t mib = 1024;
  int reps = 30;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else if (a == "--mib" && i + 1 < argc)
      mib = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--commit" && i + 1 < argc)
      commit = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: add_one_bench [--json PATH] [--mib N] [--reps R] [--commit SHA]   (R >= 20 for reported "
                   "figures)\n");
      return 2;
    }
  }
  if (mib == 0 || reps < 1) {
    std::fprintf(stderr, "add_one_bench: --mib and --reps must be positive\n");
    return 2;
  }

  int devices = 0;
  const cudaError_t countErr = cudaGetDeviceCount(&devices);
  if (countErr != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n",
                countErr != cudaSuccess ? cudaGetErrorString(countErr) : "none found");
    return 77;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  CHECK_CUDA(cudaDriverGetVersion(&driver));
  CHECK_CUDA(cudaRuntimeGetVersion(&runtime));
  std::printf("device: %s (sm_%d%d, %d SMs, %d MB L2), driver API %d, runtime %d\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount, prop.l2CacheSize >> 20, driver, runtime);

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));

  // ---- add_one_n vs cudaMemcpyAsync ---------------------------------------------------------
  const size_t n = mib * 1024 * 1024 / sizeof(float);
  const size_t bytes = n * sizeof(float);
  const double moved = 2.0 * static_cast<double>(bytes);  // read + written
  std::vector<float> hostA(n), hostB(n);
  fillRandom(hostA, 20261129);
  float* A = nullptr;
  float* B = nullptr;
  CHECK_CUDA(cudaMalloc(&A, bytes));
  CHECK_CUDA(cudaMalloc(&B, bytes));
  const size_t flushBytes = std::max<size_t>(size_t(4) * prop.l2CacheSize, size_t(256) << 20);
  uint4* flush = nullptr;
  uint32_t* sink = nullptr;
  CHECK_CUDA(cudaMalloc(&flush, flushBytes));
  CHECK_CUDA(cudaMalloc(&sink, sizeof(uint32_t)));
  CHECK_CUDA(cudaMemset(flush, 0x5a, flushBytes));
  CHECK_CUDA(cudaMemcpy(A, hostA.data(), bytes, cudaMemcpyHostToDevice));

  // Correct first: poisoned output, every element checked.
  CHECK_CUDA(cudaMemset(B, 0xff, bytes));
  CHECK_LAUNCH(add_one_n(static_cast<int64_t>(n), A, B, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(hostB.data(), B, bytes, cudaMemcpyDeviceToHost));
  if (!verify("add_one_n", hostA, hostB)) return 1;
  std::printf("add_one_n: %zu/%zu elements correct\n", n, n);

  const auto flushL2 = [&] {
    CHECK_LAUNCH((flushKernel<<<4 * prop.multiProcessorCount, 512, 0, stream>>>(flush, flushBytes / 16, sink),
                  cudaGetLastError()));
  };
  const auto kernel = [&] { CHECK_LAUNCH(add_one_n(static_cast<int64_t>(n), A, B, stream)); };
  const auto memcpyD2D = [&] { CHECK_CUDA(cudaMemcpyAsync(B, A, bytes, cudaMemcpyDeviceToDevice, stream)); };

  constexpr int kWarmup = 5;
  for (int i = 0; i < kWarmup; ++i) {
    timeOnce(stream, start, stop, flushL2, kernel);
    timeOnce(stream, start, stop, flushL2, memcpyD2D);
  }
  Stats kernelStats, memcpyStats;
  for (int i = 0; i < reps; ++i) {
    kernelStats.ms.push_back(timeOnce(stream, start, stop, flushL2, kernel));
    memcpyStats.ms.push_back(timeOnce(stream, start, stop, flushL2, memcpyD2D));
  }
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));
  CHECK_CUDA(cudaFree(flush));
  CHECK_CUDA(cudaFree(sink));
  const double kernelGBs = moved / (kernelStats.median() * 1e-3) / 1e9;
  const double memcpyGBs = moved / (memcpyStats.median() * 1e-3) / 1e9;
  const double ratio = kernelGBs / memcpyGBs;

  // ---- one launch of the 32x4 add_one vs an empty kernel --------------------------------------
  float* a = nullptr;
  float* b = nullptr;
  std::vector<float> hostSmallA(128), hostSmallB(128);
  fillRandom(hostSmallA, 7);
  CHECK_CUDA(cudaMalloc(&a, 128 * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&b, 128 * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(a, hostSmallA.data(), 128 * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(b, 0xff, 128 * sizeof(float)));
  CHECK_LAUNCH(add_one(a, b, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(hostSmallB.data(), b, 128 * sizeof(float), cudaMemcpyDeviceToHost));
  if (!verify("add_one", hostSmallA, hostSmallB)) return 1;

  const auto nothing = [] {};
  const auto small = [&] { CHECK_LAUNCH(add_one(a, b, stream)); };
  const auto empty = [&] { CHECK_LAUNCH((emptyKernel<<<1, 32, 0, stream>>>(), cudaGetLastError())); };
  const int latencyReps = std::max(reps, 20) * 10;
  for (int i = 0; i < 20; ++i) {
    timeOnce(stream, start, stop, nothing, small);
    timeOnce(stream, start, stop, nothing, empty);
  }
  Stats smallStats, emptyStats;
  for (int i = 0; i < latencyReps; ++i) {
    smallStats.ms.push_back(timeOnce(stream, start, stop, nothing, small));
    emptyStats.ms.push_back(timeOnce(stream, start, stop, nothing, empty));
  }
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  CHECK_CUDA(cudaStreamDestroy(stream));

  // ---- JSON, then the table -------------------------------------------------------------------
  if (!jsonPath.empty()) {
    FILE* f = std::fopen(jsonPath.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "add_one_bench: cannot write %s\n", jsonPath.c_str());
      return 1;
    }
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::fprintf(f,
                 "{\n"
                 "  \"benchmark\": \"add_one\",\n"
                 "  \"date\": \"%s\",\n"
                 "  \"commit\": \"%s\",\n"
                 "  \"device\": {\"name\": \"%s\", \"sm\": %d, \"multiprocessors\": %d, \"l2_bytes\": %d, "
                 "\"driver_api\": %d, \"runtime\": %d},\n"
                 "  \"method\": {\"warmup\": %d, \"reps\": %d, \"statistic\": \"median\", \"timer\": \"cudaEvent\", "
                 "\"l2_flush_bytes\": %zu, \"order\": \"alternating\", \"verified\": true},\n"
                 "  \"bandwidth\": {\n"
                 "    \"elements\": %zu, \"buffer_bytes\": %zu, \"bytes_moved\": %.0f,\n"
                 "    \"add_one_n\": {\"median_ms\": %.5f, \"min_ms\": %.5f, \"max_ms\": %.5f, \"GBps\": %.1f, "
                 "\"ms\": %s},\n"
                 "    \"memcpy_d2d\": {\"median_ms\": %.5f, \"min_ms\": %.5f, \"max_ms\": %.5f, \"GBps\": %.1f, "
                 "\"ms\": %s},\n"
                 "    \"ratio_vs_memcpy\": %.4f, \"target_ratio\": 0.98\n"
                 "  },\n"
                 "  \"latency\": {\n"
                 "    \"reps\": %d,\n"
                 "    \"add_one_32x4\": {\"median_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f},\n"
                 "    \"empty_kernel\": {\"median_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f}\n"
                 "  }\n"
                 "}\n",
                 date, commit.c_str(), prop.name, prop.major * 10 + prop.minor, prop.multiProcessorCount, prop.l2CacheSize, driver,
                 runtime, kWarmup, reps, flushBytes, n, bytes, moved, kernelStats.median(), kernelStats.min(),
                 kernelStats.max(), kernelGBs, jsonArray(kernelStats.ms, 1.0f).c_str(), memcpyStats.median(),
                 memcpyStats.min(), memcpyStats.max(), memcpyGBs, jsonArray(memcpyStats.ms, 1.0f).c_str(), ratio,
                 latencyReps, smallStats.median() * 1e3, smallStats.min() * 1e3, smallStats.max() * 1e3,
                 emptyStats.median() * 1e3, emptyStats.min() * 1e3, emptyStats.max() * 1e3);
    if (std::fclose(f) != 0) {
      std::fprintf(stderr, "add_one_bench: cannot write %s\n", jsonPath.c_str());
      return 1;
    }
  }

  std::printf("\nadd-one on %s: medians of %d (bandwidth) and %d (latency) event timings, L2 flushed\n", prop.name,
              reps, latencyReps);
  std::printf("%-44s %10s %10s %10s %9s %7s\n", "what", "median", "min", "max", "GB/s", "ratio");
  std::printf("%-44s %7.3f ms %7.3f ms %7.3f ms %9.0f %6.1f%%\n",
              ("add_one_n, " + std::to_string(mib) + " MiB f32 in + out").c_str(), kernelStats.median(),
              kernelStats.min(), kernelStats.max(), kernelGBs, 100.0 * ratio);
  std::printf("%-44s %7.3f ms %7.3f ms %7.3f ms %9.0f %6.1f%%\n",
              ("cudaMemcpyAsync D2D, " + std::to_string(mib) + " MiB").c_str(), memcpyStats.median(),
              memcpyStats.min(), memcpyStats.max(), memcpyGBs, 100.0);
  std::printf("%-44s %7.2f us %7.2f us %7.2f us\n", "add_one 32x4, one launch", smallStats.median() * 1e3,
              smallStats.min() * 1e3, smallStats.max() * 1e3);
  std::printf("%-44s %7.2f us %7.2f us %7.2f us\n", "empty kernel <<<1, 32>>>, one launch", emptyStats.median() * 1e3,
              emptyStats.min() * 1e3, emptyStats.max() * 1e3);
  std::printf("add_one_n reaches %.1f%% of cudaMemcpyAsync (target: at least 98%%)\n", 100.0 * ratio);
  return 0;
}
