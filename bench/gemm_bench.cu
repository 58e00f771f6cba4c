// GEMM benchmark (PERFORMANCE.md): the generated GEMMs (examples/gemm/gemm.tyl, mma.sync +
// ldmatrix + cp.async, a four-stage pipeline with fragments loaded across the barrier;
// gemm_stages.tyl's gemm_prefetch, the same pipeline written by hand; and gemm_sm90.tyl, TMA +
// wgmma + a warp-specialized persistent pipeline, built for sm_90a like this whole benchmark,
// which runs on an H100 or H200) against cublasGemmEx in the same process, on the same
// inputs: bf16 and f16 in, f32 out and f32 accumulation, C = A @ B with A, B row-major, at
// 2048^3, 4096^3 and 8192^3 and two shapes of linear layers, 8192 x 8192 x 1024 and
// 4096 x 14336 x 4096 (M x N x K). At one size (default 4096) it also times the hand-written one- and
// two-stage pipelines of gemm_stages.tyl, to show what the overlap buys, and gemm.tyl's gemm_any
// (tiles staged through registers, for sizes cp.async cannot copy), to show what that costs; at another (default the
// largest) the tile and pipeline variants of bench/CMakeLists.txt (bf16 and f16), to show which
// configuration the examples should use. At the cubes of 4096 and more it also times gemm_bt and
// gemm_sm90_bt, C = A @ B^T with B stored N x K (linear layers' weights), against cuBLAS called
// with B transposed on the same stored matrix.
//
//   gemm_bench [--json PATH] [--sizes 2048,4096,8192,8192x8192x1024,...] [--stages-size N|0]
//              [--variants-size N|0] [--reps R] [--commit SHA]
//
// Method: random inputs (never zero); each output poisoned, then checked before any timing
// against cuBLAS (relative Frobenius error over every element; PERFORMANCE.md's bounds, bf16
// 1e-2 and f16 1e-3) and against a float64 CPU product at 1024 sampled elements; 5 warm-up
// runs, then the median of R (default 30) CUDA-event timings of one launch each, the L2
// flushed (by reading an unrelated buffer) before each timing; the kernels and cuBLAS
// alternate, so drift affects all alike. Every CUDA and cuBLAS return code and the last error
// after each launch are checked. FLOPs = 2 M N K. Prints a table last and writes JSON.
// Exit codes: 0 ok, 1 a wrong result or a CUDA/cuBLAS error, 2 bad arguments, 77 no CUDA device.
#include "gemm.cuh"
#include "gemm_check.h"
#include "gemm_sm90.cuh"
#include "gemm_stages.cuh"
#include "gemm_variants.h"

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

using namespace gemm_check;

#define CHECK_CUDA(call) checkCuda((call), #call, __LINE__)
#define CHECK_CUBLAS(call) checkCublas((call), #call, __LINE__)

void checkCuda(cudaError_t err, const char* what, int line) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "gemm_bench.cu:%d: %s failed: %s", line, what, cudaGetErrorString(err));
  if (err == cudaErrorInvalidValue && tylo::last_launch_error())
    std::fprintf(stderr, " (%s)", tylo::last_launch_error());
  std::fprintf(stderr, "\n");
  std::exit(1);
}

void checkCublas(cublasStatus_t status, const char* what, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "gemm_bench.cu:%d: %s failed: %s\n", line, what, cublasStatusName(status));
  std::exit(1);
}

// After a launch: its own return code, then anything the launch left behind.
#define CHECK_LAUNCH(call)          \
  do {                              \
    CHECK_CUDA(call);               \
    CHECK_CUDA(cudaGetLastError()); \
  } while (0)

// Reads `words` words and writes only if their sum is a value it never is: evicts the L2 with
// clean lines, so the next timed operation starts with its inputs in DRAM.
__global__ void flushKernel(const uint4* __restrict__ p, size_t words, uint32_t* sink) {
  uint32_t acc = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < words; i += size_t(gridDim.x) * blockDim.x) {
    const uint4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
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

std::string jsonArray(const std::vector<float>& v) {
  std::string s = "[";
  char buf[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.5f", i ? ", " : "", v[i]);
    s += buf;
  }
  return s + "]";
}

// A problem: M x N x K.
struct Shape {
  int64_t m = 0, n = 0, k = 0;
  bool cube() const { return m == n && n == k; }
  double flops() const { return double(m) * double(n) * double(k); }
  bool operator==(const Shape& o) const { return m == o.m && n == o.n && k == o.k; }
  std::string text() const {
    return cube() ? std::to_string(n) + "^3" : std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
};

// One timed configuration: a kernel (or cuBLAS) at one shape and dtype.
struct Row {
  std::string kernel;  // "gemm", "gemm_prefetch", "gemm_two_stage", ..., a variant, or "cublasGemmEx"
  std::string what;    // a variant's tiles and pipeline; empty for the examples' kernels
  std::string dtype;
  Shape shape;
  bool bt = false;  // B stored N x K: C = A @ B^T of the stored matrix (cuBLAS with B transposed)
  Stats stats;
  double relErrCublas = 0;   // vs cuBLAS, every element (0 for cuBLAS itself)
  double relErrSampled = 0;  // vs float64 at the sampled elements
  double tflops() const { return 2.0 * shape.flops() / (stats.median() * 1e-3) / 1e12; }
};

struct Context {
  cudaStream_t stream;
  cudaEvent_t start, stop;
  cublasHandle_t cublas;
  uint4* flush;
  size_t flushBytes;
  uint32_t* sink;
  int multiprocessors;
  int reps;
};

constexpr int kWarmup = 5;
constexpr int kSamples = 1024;

void flushL2(const Context& c) {
  CHECK_LAUNCH((flushKernel<<<4 * c.multiprocessors, 512, 0, c.stream>>>(c.flush, c.flushBytes / 16, c.sink),
                cudaGetLastError()));
}

template <class Op>
float timeOnce(const Context& c, Op op) {
  flushL2(c);
  CHECK_CUDA(cudaEventRecord(c.start, c.stream));
  op();
  CHECK_CUDA(cudaEventRecord(c.stop, c.stream));
  CHECK_CUDA(cudaEventSynchronize(c.stop));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, c.start, c.stop));
  return ms;
}

// Relative error of got against float64 dot products at kSamples random (i, j); B stored K x N,
// or N x K with `bt`.
template <class T>
double sampledError(const std::vector<float>& got, const std::vector<T>& A, const std::vector<T>& B, const Shape& p,
                    uint64_t seed, bool bt = false) {
  double errSq = 0, refSq = 0;
  for (int s = 0; s < kSamples; ++s) {
    const uint64_t h = splitmix64(seed + s);
    const int64_t i = int64_t(h % uint64_t(p.m)), j = int64_t((h >> 32) % uint64_t(p.n));
    double ref = 0;
    for (int64_t k = 0; k < p.k; ++k)
      ref += double(Dtype<T>::toFloat(A[size_t(i * p.k + k)])) *
             double(Dtype<T>::toFloat(B[size_t(bt ? j * p.k + k : k * p.n + j)]));
    const double d = double(got[size_t(i * p.n + j)]) - ref;
    errSq += d * d;
    refSq += ref * ref;
  }
  const double r = std::sqrt(errSq / std::max(refSq, 1e-300));
  return std::isnan(r) ? INFINITY : r;
}

template <class T>
struct Candidate {
  const char* kernel;
  GemmFn<T> fn;
  const char* what = "";  // a variant's tiles and pipeline
};

// Which kernels are timed at which shape.
struct Plan {
  std::vector<Shape> shapes;
  int64_t stagesSize = 0;    // at this cube also the hand-written one- and two-stage pipelines, and gemm_any
  int64_t variantsSize = 0;  // at this cube also the tile variants
};

// The kernels of the examples: the first two at every size, the others at Plan::stagesSize; `bt`
// (B stored N x K) at the cubes of 4096 and more, against cuBLAS with B transposed.
template <class T>
struct Kernels {
  std::vector<Candidate<T>> main, stages, variants, bt;
};

// A launcher without a relu flag (gemm_sm90_bt) in GemmFn's form; the flag is never set here.
template <class T, cudaError_t (*F)(int32_t, int32_t, int32_t, const T*, const T*, float*, float, cudaStream_t)>
cudaError_t withoutRelu(int32_t M, int32_t N, int32_t K, const T* A, const T* B, float* C, float alpha, bool,
                        cudaStream_t stream) {
  return F(M, N, K, A, B, C, alpha, stream);
}

// Checks then times every candidate and cuBLAS at shape p; appends the rows. With `bt` the
// candidates take B stored N x K, and cuBLAS is called with B transposed.
template <class T>
bool benchShape(const Context& c, const Shape& p, const std::vector<Candidate<T>>& candidates, T* A, T* B, float* C,
                float* Cref, const std::vector<T>& hostA, const std::vector<T>& hostB, std::vector<Row>& rows,
                bool bt = false) {
  const size_t count = size_t(p.m) * size_t(p.n);
  const int mi = static_cast<int>(p.m), ni = static_cast<int>(p.n), ki = static_cast<int>(p.k);
  const std::string name = p.text();
  const double bound = std::strcmp(Dtype<T>::name, "bf16") == 0 ? 1e-2 : 1e-3;  // PERFORMANCE.md
  // The first M*K and K*N elements of the host matrices are this shape's A and B (row-major, B
  // read as N x K with bt).
  CHECK_CUDA(cudaMemcpy(A, hostA.data(), size_t(p.m) * size_t(p.k) * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(B, hostB.data(), size_t(p.k) * size_t(p.n) * sizeof(T), cudaMemcpyHostToDevice));

  // cuBLAS first: its result is the reference, itself checked at the sampled elements.
  std::vector<float> ref(count), got(count);
  const auto cublasGemm = [&] {
    return bt ? cublasGemmBtRowMajor(c.cublas, mi, ni, ki, 1.0f, A, B, Cref)
              : cublasGemmRowMajor(c.cublas, mi, ni, ki, 1.0f, A, B, Cref);
  };
  CHECK_CUDA(cudaMemsetAsync(Cref, kPoisonByte, count * sizeof(float), c.stream));
  CHECK_CUBLAS(cublasGemm());
  CHECK_CUDA(cudaStreamSynchronize(c.stream));
  CHECK_CUDA(cudaMemcpy(ref.data(), Cref, count * sizeof(float), cudaMemcpyDeviceToHost));
  Row cublasRow;
  cublasRow.kernel = "cublasGemmEx";
  cublasRow.dtype = Dtype<T>::name;
  cublasRow.shape = p;
  cublasRow.bt = bt;
  cublasRow.relErrSampled = sampledError(ref, hostA, hostB, p, 77 + p.n, bt);
  if (countWritten(ref.data(), count) != count || !(cublasRow.relErrSampled <= bound)) {
    std::fprintf(stderr, "cublasGemmEx %s %s: rel err %.3g vs float64 at %d samples\n", Dtype<T>::name,
                 name.c_str(), cublasRow.relErrSampled, kSamples);
    return false;
  }

  std::vector<Row> mine;
  for (const Candidate<T>& k : candidates) {
    Row r;
    r.kernel = k.kernel;
    r.what = k.what;
    r.dtype = Dtype<T>::name;
    r.shape = p;
    r.bt = bt;
    CHECK_CUDA(cudaMemsetAsync(C, kPoisonByte, count * sizeof(float), c.stream));
    CHECK_LAUNCH(k.fn(mi, ni, ki, A, B, C, 1.0f, false, c.stream));
    CHECK_CUDA(cudaStreamSynchronize(c.stream));
    CHECK_CUDA(cudaMemcpy(got.data(), C, count * sizeof(float), cudaMemcpyDeviceToHost));
    r.relErrCublas = relativeFrobenius(got.data(), ref.data(), count);
    r.relErrSampled = sampledError(got, hostA, hostB, p, 77 + p.n, bt);
    std::printf("%s_%s %s: rel err %.2e vs cuBLAS (every element), %.2e vs float64 (%d samples)\n", k.kernel,
                Dtype<T>::name, name.c_str(), r.relErrCublas, r.relErrSampled, kSamples);
    if (!(r.relErrCublas <= bound) || !(r.relErrSampled <= bound)) {
      std::fprintf(stderr, "%s_%s %s: wrong result (bound %.0e): not timed\n", k.kernel, Dtype<T>::name,
                   name.c_str(), bound);
      return false;
    }
    mine.push_back(r);
  }

  const auto runCublas = [&] {
    CHECK_CUBLAS(cublasGemm());
    CHECK_CUDA(cudaGetLastError());
  };
  for (int i = 0; i < kWarmup; ++i) {
    for (const Candidate<T>& k : candidates)
      timeOnce(c, [&] { CHECK_LAUNCH(k.fn(mi, ni, ki, A, B, C, 1.0f, false, c.stream)); });
    timeOnce(c, runCublas);
  }
  for (int i = 0; i < c.reps; ++i) {
    for (size_t j = 0; j < candidates.size(); ++j) {
      const Candidate<T>& k = candidates[j];
      mine[j].stats.ms.push_back(timeOnce(c, [&] { CHECK_LAUNCH(k.fn(mi, ni, ki, A, B, C, 1.0f, false, c.stream)); }));
    }
    cublasRow.stats.ms.push_back(timeOnce(c, runCublas));
  }
  // The timed runs rewrote C: it still matches.
  CHECK_CUDA(cudaMemcpy(got.data(), C, count * sizeof(float), cudaMemcpyDeviceToHost));
  if (!(relativeFrobenius(got.data(), ref.data(), count) <= bound)) {
    std::fprintf(stderr, "%s %s: the result changed during timing\n", Dtype<T>::name, name.c_str());
    return false;
  }
  rows.insert(rows.end(), mine.begin(), mine.end());
  rows.push_back(cublasRow);
  return true;
}

template <class T>
bool benchType(const Context& c, const Plan& plan, const Kernels<T>& kernels, uint64_t seed, std::vector<Row>& rows) {
  size_t maxA = 0, maxB = 0, maxC = 0;
  for (const Shape& p : plan.shapes) {
    maxA = std::max(maxA, size_t(p.m) * size_t(p.k));
    maxB = std::max(maxB, size_t(p.k) * size_t(p.n));
    maxC = std::max(maxC, size_t(p.m) * size_t(p.n));
  }
  const std::vector<T> hostA = randomMatrix<T>(maxA, seed);
  const std::vector<T> hostB = randomMatrix<T>(maxB, seed + 1);
  T* A = nullptr;
  T* B = nullptr;
  float* C = nullptr;
  float* Cref = nullptr;
  CHECK_CUDA(cudaMalloc(&A, maxA * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&B, maxB * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&C, maxC * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&Cref, maxC * sizeof(float)));
  bool ok = true;
  for (const Shape& p : plan.shapes) {
    std::vector<Candidate<T>> candidates = kernels.main;
    if (p.cube() && p.n == plan.stagesSize)
      candidates.insert(candidates.end(), kernels.stages.begin(), kernels.stages.end());
    if (p.cube() && p.n == plan.variantsSize)
      candidates.insert(candidates.end(), kernels.variants.begin(), kernels.variants.end());
    ok = benchShape<T>(c, p, candidates, A, B, C, Cref, hostA, hostB, rows) && ok;
    if (!kernels.bt.empty() && p.cube() && p.n >= 4096)
      ok = benchShape<T>(c, p, kernels.bt, A, B, C, Cref, hostA, hostB, rows, true) && ok;
  }
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));
  CHECK_CUDA(cudaFree(C));
  CHECK_CUDA(cudaFree(Cref));
  return ok;
}

const Row* cublasFor(const std::vector<Row>& rows, const Row& r) {
  for (const Row& x : rows)
    if (x.kernel == "cublasGemmEx" && x.dtype == r.dtype && x.shape == r.shape && x.bt == r.bt) return &x;
  return nullptr;
}

// "2048,8192x8192x1024": cubes N and shapes MxNxK; empty when malformed.
std::vector<Shape> parseShapes(const char* s) {
  std::vector<Shape> v;
  for (const char* p = s; *p;) {
    int64_t x[3] = {0, 0, 0};
    int count = 0;
    char* end = const_cast<char*>(p);
    for (; count < 3; ++count) {
      const char* from = end;
      x[count] = std::strtoll(from, &end, 10);
      if (end == from) return {};
      if (*end != 'x') break;
      ++end;
    }
    if (count == 0) v.push_back({x[0], x[0], x[0]});
    else if (count == 2) v.push_back({x[0], x[1], x[2]});
    else return {};
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return {};
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::string jsonPath;
  std::string commit = "unknown";
  std::vector<Shape> shapes{{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 8192, 1024},
                            {4096, 14336, 4096}};
  int64_t stagesSize = 4096;
  int64_t variantsSize = -1;  // the largest size
  int reps = 30;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      jsonPath = argv[++i];
    else if (a == "--sizes" && i + 1 < argc)
      shapes = parseShapes(argv[++i]);
    else if (a == "--stages-size" && i + 1 < argc)
      stagesSize = std::strtoll(argv[++i], nullptr, 10);
    else if (a == "--variants-size" && i + 1 < argc)
      variantsSize = std::strtoll(argv[++i], nullptr, 10);
    else if (a == "--reps" && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (a == "--commit" && i + 1 < argc)
      commit = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: gemm_bench [--json PATH] [--sizes 2048,4096,8192,8192x8192x1024] [--stages-size N|0] "
                   "[--variants-size N|0] [--reps R] [--commit SHA]   (R >= 20 for reported figures)\n");
      return 2;
    }
  }
  bool sizesOk = !shapes.empty() && reps >= 1;
  for (const Shape& p : shapes)
    for (int64_t n : {p.m, p.n, p.k}) sizesOk = sizesOk && n >= 8 && n % 8 == 0 && n <= 32768;
  if (!sizesOk) {
    std::fprintf(stderr, "gemm_bench: sizes must be multiples of 8 in [8, 32768], and --reps positive\n");
    return 2;
  }
  int64_t largestCube = 0;
  for (const Shape& p : shapes)
    if (p.cube()) largestCube = std::max(largestCube, p.n);

  int devices = 0;
  const cudaError_t countErr = cudaGetDeviceCount(&devices);
  if (countErr != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n",
                countErr != cudaSuccess ? cudaGetErrorString(countErr) : "none found");
    return 77;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  if (prop.major != 9) {
    std::printf("skipped: built for sm_90a (Hopper), this GPU is sm_%d%d\n", prop.major, prop.minor);
    return 77;
  }
  int driver = 0, runtime = 0, cublasVersion = 0;
  CHECK_CUDA(cudaDriverGetVersion(&driver));
  CHECK_CUDA(cudaRuntimeGetVersion(&runtime));
  std::printf("device: %s (sm_%d%d, %d SMs, %d MB L2), driver API %d, runtime %d\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, prop.l2CacheSize >> 20, driver, runtime);

  Context c{};
  c.reps = reps;
  c.multiprocessors = prop.multiProcessorCount;
  CHECK_CUDA(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaEventCreate(&c.start));
  CHECK_CUDA(cudaEventCreate(&c.stop));
  CHECK_CUBLAS(cublasCreate(&c.cublas));
  CHECK_CUBLAS(cublasSetStream(c.cublas, c.stream));
  CHECK_CUBLAS(cublasGetVersion(c.cublas, &cublasVersion));
  c.flushBytes = std::max<size_t>(size_t(4) * prop.l2CacheSize, size_t(256) << 20);
  CHECK_CUDA(cudaMalloc(&c.flush, c.flushBytes));
  CHECK_CUDA(cudaMalloc(&c.sink, sizeof(uint32_t)));
  CHECK_CUDA(cudaMemset(c.flush, 0x5a, c.flushBytes));

  Plan plan{shapes, stagesSize, variantsSize < 0 ? largestCube : variantsSize};
  Kernels<__nv_bfloat16> bf16;
  bf16.main = {{"gemm", gemm_bf16}, {"gemm_prefetch", gemm_prefetch_bf16}, {"gemm_sm90", gemm_sm90_bf16}};
  bf16.stages = {{"gemm_two_stage", gemm_two_stage_bf16},
                 {"gemm_one_stage", gemm_one_stage_bf16},
                 {"gemm_any", gemm_any_bf16}};
  bf16.bt = {{"gemm_bt", gemm_bt_bf16}, {"gemm_sm90_bt", withoutRelu<__nv_bfloat16, gemm_sm90_bt_bf16>}};
  Kernels<__half> f16;
  f16.main = {{"gemm", gemm_f16}, {"gemm_prefetch", gemm_prefetch_f16}, {"gemm_sm90", gemm_sm90_f16}};
  f16.stages = {{"gemm_two_stage", gemm_two_stage_f16}, {"gemm_one_stage", gemm_one_stage_f16}, {"gemm_any", gemm_any_f16}};
  f16.bt = {{"gemm_bt", gemm_bt_f16}, {"gemm_sm90_bt", withoutRelu<__half, gemm_sm90_bt_f16>}};
#define TYLO_VARIANT(name, what)                                              \
  bf16.variants.push_back({"gemm_" #name, gemm_##name##_bf16, what}); \
  f16.variants.push_back({"gemm_" #name, gemm_##name##_f16, what});
  TYLO_GEMM_VARIANTS(TYLO_VARIANT)
#undef TYLO_VARIANT

  std::vector<Row> rows;
  bool ok = benchType<__nv_bfloat16>(c, plan, bf16, 20261129, rows);
  ok = benchType<__half>(c, plan, f16, 20261130, rows) && ok;

  CHECK_CUDA(cudaFree(c.flush));
  CHECK_CUDA(cudaFree(c.sink));
  CHECK_CUBLAS(cublasDestroy(c.cublas));
  CHECK_CUDA(cudaEventDestroy(c.start));
  CHECK_CUDA(cudaEventDestroy(c.stop));
  CHECK_CUDA(cudaStreamDestroy(c.stream));
  if (!ok) return 1;

  // ---- JSON, then the table ---------------------------------------------------------------------
  if (!jsonPath.empty()) {
    FILE* f = std::fopen(jsonPath.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "gemm_bench: cannot write %s\n", jsonPath.c_str());
      return 1;
    }
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::fprintf(
        f,
        "{\n"
        "  \"benchmark\": \"gemm\",\n"
        "  \"date\": \"%s\",\n"
        "  \"commit\": \"%s\",\n"
        "  \"device\": {\"name\": \"%s\", \"sm\": %d, \"multiprocessors\": %d, \"l2_bytes\": %d, "
        "\"driver_api\": %d, \"runtime\": %d, \"cublas\": %d},\n"
        "  \"method\": {\"warmup\": %d, \"reps\": %d, \"statistic\": \"median\", \"timer\": \"cudaEvent\", "
        "\"l2_flush_bytes\": %zu, \"order\": \"alternating\", \"verified\": true, \"flops\": \"2*M*N*K\", "
        "\"problem\": \"C(f32) = A @ B, A and B row-major 16-bit (b_stored NxK: B^T stored)\", \"sampled_f64_elements\": %d},\n"
        "  \"results\": [\n",
        date, commit.c_str(), prop.name, prop.major * 10 + prop.minor, prop.multiProcessorCount, prop.l2CacheSize,
        driver, runtime, cublasVersion, kWarmup, reps, c.flushBytes, kSamples);
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      const Row* ref = cublasFor(rows, r);
      std::fprintf(f,
                   "    {\"kernel\": \"%s\", \"variant\": \"%s\", \"b_stored\": \"%s\", \"dtype\": \"%s\", "
                   "\"M\": %lld, \"N\": %lld, "
                   "\"K\": %lld, "
                   "\"median_ms\": %.5f, \"min_ms\": %.5f, \"max_ms\": %.5f, \"tflops\": %.2f, "
                   "\"ratio_vs_cublas\": %.4f, \"rel_err_vs_cublas\": %.3e, \"rel_err_vs_f64_sampled\": %.3e, "
                   "\"ms\": %s}%s\n",
                   r.kernel.c_str(), r.what.c_str(), r.bt ? "NxK" : "KxN", r.dtype.c_str(), static_cast<long long>(r.shape.m),
                   static_cast<long long>(r.shape.n), static_cast<long long>(r.shape.k), r.stats.median(), r.stats.min(), r.stats.max(), r.tflops(),
                   ref ? r.tflops() / ref->tflops() : 0.0, r.relErrCublas, r.relErrSampled,
                   jsonArray(r.stats.ms).c_str(), i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    if (std::fclose(f) != 0) {
      std::fprintf(stderr, "gemm_bench: cannot write %s\n", jsonPath.c_str());
      return 1;
    }
  }

  std::printf(
      "\nGEMM on %s: C(f32) = A @ B, 16-bit A and B row-major, medians of %d event timings, L2 flushed, "
      "FLOPs = 2MNK\n",
      prop.name, reps);
  std::printf("%-25s %-5s %16s %10s %10s %10s %9s %8s %10s\n", "kernel", "dtype", "M x N x K", "median", "min",
              "max", "TFLOP/s", "cuBLAS", "rel err");
  for (const Row& r : rows) {
    const Row* ref = cublasFor(rows, r);
    std::printf("%-25s %-5s %16s %7.3f ms %7.3f ms %7.3f ms %9.1f %7.1f%% %10.1e\n",
                (r.kernel + (r.bt && r.kernel == "cublasGemmEx" ? " (B^T)" : "")).c_str(), r.dtype.c_str(),
                r.shape.text().c_str(), r.stats.median(), r.stats.min(), r.stats.max(), r.tflops(),
                ref ? 100.0 * r.tflops() / ref->tflops() : 0.0,
                r.kernel == "cublasGemmEx" ? r.relErrSampled : r.relErrCublas);
  }
  std::printf(
      "(rel err: relative Frobenius error vs cuBLAS over every element; for cuBLAS, vs float64 at %d "
      "sampled elements)\n",
      kSamples);
  bool variants = false;
  for (const Row& r : rows)
    if (!r.what.empty() && r.dtype == rows.front().dtype) {  // each variant once
      if (!variants) std::printf("\nvariants (bench/CMakeLists.txt):\n");
      variants = true;
      std::printf("  %-25s %s\n", r.kernel.c_str(), r.what.c_str());
    }
  // One line per mma.sync kernel of the examples and dtype at the largest cube, one per shape for
  // the Hopper kernel (its targets: 100% at 4096^3, 95% at 8192^3), and the fastest of all at the
  // variants' size per dtype, for summaries (PERFORMANCE.md's targets).
  for (const Row& r : rows) {
    const Row* ref = cublasFor(rows, r);
    if (!ref) continue;
    if ((r.kernel == "gemm" || r.kernel == "gemm_prefetch" || r.kernel == "gemm_bt") && r.shape.cube() &&
        r.shape.n == largestCube)
      std::printf("%s_%s reaches %.1f%% of cuBLAS at %s (%.0f vs %.0f TFLOP/s; target: at least 60%%)\n",
                  r.kernel.c_str(), r.dtype.c_str(), 100.0 * r.tflops() / ref->tflops(), r.shape.text().c_str(),
                  r.tflops(), ref->tflops());
    if (r.kernel == "gemm_sm90" || r.kernel == "gemm_sm90_bt")
      std::printf("%s_%s reaches %.1f%% of cuBLAS at %s (%.0f vs %.0f TFLOP/s)\n", r.kernel.c_str(), r.dtype.c_str(),
                  100.0 * r.tflops() / ref->tflops(), r.shape.text().c_str(), r.tflops(), ref->tflops());
  }
  if (variants)
    for (const char* dtype : {"bf16", "f16"}) {
      const Row* best = nullptr;
      for (const Row& r : rows)
        if (r.kernel != "cublasGemmEx" && r.shape == Shape{plan.variantsSize, plan.variantsSize, plan.variantsSize} &&
            r.dtype == dtype &&
            (!best || r.tflops() > best->tflops()))
          best = &r;
      if (best)
        if (const Row* ref = cublasFor(rows, *best))
          std::printf("fastest at %s (%s): %s%s%s%s reaches %.1f%% of cuBLAS (%.0f TFLOP/s)\n",
                      best->shape.text().c_str(), dtype, best->kernel.c_str(), best->what.empty() ? "" : " (",
                      best->what.c_str(), best->what.empty() ? "" : ")", 100.0 * best->tflops() / ref->tflops(),
                      best->tflops());
    }
  return 0;
}
