// Runs the GEMM kernels of gemm.tyl (the four-stage `pipeline` construct with prefetched loads, and
// gemm_any for any sizes) and gemm_stages.tyl (pipelines written by hand with one, two and four
// stages) on the GPU, for f16 and bf16, at sizes that are and are not multiples of the 128 x 256 x 32 block tile,
// with and without the relu epilogue; gemm_any also where N and K are not multiples of 8. Every
// element of every result is checked against a float64 CPU reference and against cublasGemmEx on
// the same inputs; all the kernels must agree bit for bit;
// poisoned guards around C must stay untouched. gemm_beta (D = alpha * A @ B + beta * C, stored
// as f16/bf16) is checked against the CPU reference within 16-bit rounding. gemm_bt and gemm_at
// get the same products with B stored N x K and A stored K x M (transposed copies of the same
// inputs): they too must match the references and gemm bit for bit.
//
// Prints one line per kernel instantiation. Exit codes: 0 all correct, 1 a wrong element or a
// CUDA/cuBLAS error, 77 no CUDA device (the code ctest reports as skipped).
#include "gemm.cuh"
#include "gemm_driver.h"
#include "gemm_stages.cuh"

#include <tylo/runtime.cuh>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace gemm_check;

struct Shape {
  int M, N, K;
  // Rows of A and B are whole 16-byte vectors, which all kernels but gemm_any need.
  bool vectorRows() const { return N % 8 == 0 && K % 8 == 0; }
};

// Tile multiples and not: partial row, column and K tiles; M = 1; K below one K step; K = 0
// (C = 0); and ~1000^3, where K spans 32 steps. The last four have N or K not a multiple of 8,
// and run on gemm_any only (the other launchers refuse them: rows are copied in 16-byte vectors).
const Shape kShapes[] = {
    {64, 64, 32},   {128, 256, 64},  {200, 136, 72},     {1, 8, 8},   {1, 1000, 1000},
    {129, 120, 40}, {256, 384, 512}, {1000, 1000, 1000}, {40, 16, 0}, {70, 37, 45},
    {200, 137, 75}, {1, 1, 1},       {999, 1001, 1003},
};

// Two epilogues: alpha * A @ B, and relu(alpha * A @ B) with a negative alpha.
struct Epilogue {
  float alpha;
  bool relu;
};
const Epilogue kEpilogues[] = {{1.5f, false}, {-0.75f, true}};

// Floats of poisoned guard before and after C (the front one keeps C 16-byte aligned); the
// back one spans a whole row band of 128-row tiles, where a block's stray rows would land.
constexpr size_t kFrontGuard = 64;
size_t backGuard(const Shape& s) { return std::max<size_t>(4096, size_t(128) * s.N + 128); }

// How a kernel takes its operands: row-major, B stored N x K (gemm_bt), or A stored K x M (gemm_at).
enum class Stored { RowMajor, BNxK, AKxM };

// The rows x cols row-major matrix m stored the other way round (cols x rows).
template <class T>
std::vector<T> transposed(const std::vector<T>& m, size_t rows, size_t cols) {
  std::vector<T> t(m.size());
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < cols; ++j) t[j * rows + i] = m[i * cols + j];
  return t;
}

template <class T>
struct Variant {
  const char* name;  // the instantiation, e.g. "gemm_two_stage_f16"
  GemmFn<T> fn;
  bool anySize = false;  // takes shapes whose rows are not whole 16-byte vectors
  Stored stored = Stored::RowMajor;
  // Over every shape it takes and every epilogue:
  int shapes = 0;
  double maxErrCpu = 0;
  double maxErrCublas = 0;
  int failures = 0;
  bool identical = true;  // bit for bit the same as the first variant that ran each shape
};

template <class T>
bool runType(cublasHandle_t cublas, std::vector<Variant<T>> variants, uint64_t seed) {
  size_t maxC = 0, maxGuarded = 0;
  for (const Shape& s : kShapes) {
    maxC = std::max(maxC, size_t(s.M) * s.N);
    maxGuarded = std::max(maxGuarded, kFrontGuard + size_t(s.M) * s.N + backGuard(s));
  }
  float* C = nullptr;  // [front guard | M x N | back guard]
  float* Cublas = nullptr;
  CHECK_CUDA(cudaMalloc(&C, maxGuarded * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&Cublas, std::max<size_t>(maxC, 1) * sizeof(float)));
  std::vector<float> host(maxGuarded), hostCublas(maxC), first(maxC);

  int shapeIndex = 0;
  for (const Shape& s : kShapes) {
    ++shapeIndex;
    const size_t countA = size_t(s.M) * s.K, countB = size_t(s.K) * s.N, countC = size_t(s.M) * s.N;
    const std::vector<T> hostA = randomMatrix<T>(countA, seed + 2 * shapeIndex);
    const std::vector<T> hostB = randomMatrix<T>(countB, seed + 2 * shapeIndex + 1);
    const Reference ref = reference(s.M, s.N, s.K, toDouble(hostA), toDouble(hostB));
    T* A = nullptr;
    T* B = nullptr;
    T* At = nullptr;  // A stored K x M
    T* Bt = nullptr;  // B stored N x K
    CHECK_CUDA(cudaMalloc(&A, std::max<size_t>(countA, 1) * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&B, std::max<size_t>(countB, 1) * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&At, std::max<size_t>(countA, 1) * sizeof(T)));
    CHECK_CUDA(cudaMalloc(&Bt, std::max<size_t>(countB, 1) * sizeof(T)));
    if (countA) CHECK_CUDA(cudaMemcpy(A, hostA.data(), countA * sizeof(T), cudaMemcpyHostToDevice));
    if (countB) CHECK_CUDA(cudaMemcpy(B, hostB.data(), countB * sizeof(T), cudaMemcpyHostToDevice));
    if (countA)
      CHECK_CUDA(cudaMemcpy(At, transposed(hostA, s.M, s.K).data(), countA * sizeof(T), cudaMemcpyHostToDevice));
    if (countB)
      CHECK_CUDA(cudaMemcpy(Bt, transposed(hostB, s.K, s.N).data(), countB * sizeof(T), cudaMemcpyHostToDevice));
    const size_t guarded = kFrontGuard + countC + backGuard(s);

    for (const Epilogue& e : kEpilogues) {
      // cuBLAS on the same inputs (it has no relu: applied when comparing). With K = 0 the
      // product is exactly zero, which the CPU comparison checks on its own.
      const bool withCublas = s.K > 0;
      if (withCublas) {
        CHECK_CUDA(cudaMemset(Cublas, kPoisonByte, countC * sizeof(float)));
        CHECK_CUBLAS(cublasGemmRowMajor(cublas, s.M, s.N, s.K, e.alpha, A, B, Cublas));
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemcpy(hostCublas.data(), Cublas, countC * sizeof(float), cudaMemcpyDeviceToHost));
        // cuBLAS itself must match the reference, or the comparison below means nothing.
        const Comparison cc = compareToReference(hostCublas.data(), ref, e.alpha, false);
        if (!cc.ok(frobeniusBound(s.K))) {
          std::fprintf(stderr, "cublasGemmEx %s %dx%dx%d: differs from the CPU reference (rel err %.3g)\n",
                       Dtype<T>::name, s.M, s.N, s.K, cc.relFrobenius);
          std::exit(1);
        }
      }

      const Variant<T>* firstRun = nullptr;  // the variant whose result the others must equal
      for (size_t v = 0; v < variants.size(); ++v) {
        Variant<T>& var = variants[v];
        if (!var.anySize && !s.vectorRows()) continue;
        if (var.stored == Stored::AKxM && s.M % 8 != 0) continue;  // A's rows, M long, are 16-byte vectors too
        if (&e == kEpilogues) ++var.shapes;
        char label[128];
        std::snprintf(label, sizeof label, "%s %dx%dx%d alpha=%g%s", var.name, s.M, s.N, s.K, e.alpha,
                      e.relu ? " relu" : "");
        CHECK_CUDA(cudaMemset(C, kPoisonByte, guarded * sizeof(float)));
        CHECK_CUDA(var.fn(s.M, s.N, s.K, var.stored == Stored::AKxM ? At : A, var.stored == Stored::BNxK ? Bt : B,
                          C + kFrontGuard, e.alpha, e.relu, 0));
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemcpy(host.data(), C, guarded * sizeof(float), cudaMemcpyDeviceToHost));
        const float* out = host.data() + kFrontGuard;

        bool ok = true;
        const Comparison c = compareToReference(out, ref, e.alpha, e.relu);
        var.maxErrCpu = std::max(var.maxErrCpu, c.relFrobenius);
        if (!c.ok(frobeniusBound(s.K))) {
          std::fprintf(stderr,
                       "%s: vs CPU: relative error %.3g (bound %.3g), %zu of %zu elements beyond their bound; first "
                       "C[%zu][%zu] = %.9g, expected %.9g (bound %.3g)\n",
                       label, c.relFrobenius, frobeniusBound(s.K), c.outOfBound, c.elements, c.first / s.N,
                       c.first % s.N, c.firstGot, c.firstExpected, c.firstBound);
          ok = false;
        }
        if (withCublas) {
          const double err = relativeFrobenius(out, hostCublas.data(), countC, e.relu);
          var.maxErrCublas = std::max(var.maxErrCublas, err);
          if (!(err <= 2 * frobeniusBound(s.K))) {
            std::fprintf(stderr, "%s: vs cuBLAS: relative error %.3g (bound %.3g)\n", label, err,
                         2 * frobeniusBound(s.K));
            ok = false;
          }
        }
        const size_t frontWritten = countWritten(host.data(), kFrontGuard);
        const size_t backWritten = countWritten(out + countC, backGuard(s));
        if (frontWritten || backWritten) {
          std::fprintf(stderr, "%s: wrote outside C: %zu floats before it, %zu after it\n", label, frontWritten,
                       backWritten);
          ok = false;
        }
        // Every kernel sums the same products in the same order.
        if (!firstRun) {
          firstRun = &var;
          std::copy(out, out + countC, first.begin());
        } else if (countC && std::memcmp(out, first.data(), countC * sizeof(float)) != 0) {
          std::fprintf(stderr, "%s: differs bit for bit from %s\n", label, firstRun->name);
          var.identical = false;
          ok = false;
        }
        if (!ok) ++var.failures;
      }
    }
    CHECK_CUDA(cudaFree(A));
    CHECK_CUDA(cudaFree(B));
    CHECK_CUDA(cudaFree(At));
    CHECK_CUDA(cudaFree(Bt));
  }
  CHECK_CUDA(cudaFree(C));
  CHECK_CUDA(cudaFree(Cublas));

  bool allOk = true;
  for (size_t v = 0; v < variants.size(); ++v) {
    const Variant<T>& var = variants[v];
    std::string same = v == 0 ? "" : (var.identical ? std::string(", bit-identical to ") + variants[0].name : "");
    if (var.failures == 0)
      std::printf(
          "%s: %d shapes x %zu epilogues correct, max rel err %.1e vs CPU, %.1e vs cuBLAS%s, guards "
          "untouched\n",
          var.name, var.shapes, std::size(kEpilogues), var.maxErrCpu, var.maxErrCublas, same.c_str());
    else
      std::printf("%s: FAILED %d of %zu runs (max rel err %.1e vs CPU, %.1e vs cuBLAS)\n", var.name, var.failures,
                  var.shapes * std::size(kEpilogues), var.maxErrCpu, var.maxErrCublas);
    allOk = allOk && var.failures == 0;
  }
  return allOk;
}

// A size the layouts cannot handle is refused with a reason, and nothing is written.
bool checkRefusal() {
  float* C = nullptr;
  __half* A = nullptr;
  CHECK_CUDA(cudaMalloc(&A, 64 * 64 * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&C, 64 * 64 * sizeof(float)));
  CHECK_CUDA(cudaMemset(C, kPoisonByte, 64 * 64 * sizeof(float)));
  const cudaError_t err = gemm_f16(64, 60, 64, A, A, C, 1.0f, false, 0);
  const char* message = tylo::last_launch_error();
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> host(64 * 64);
  CHECK_CUDA(cudaMemcpy(host.data(), C, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(C));
  const size_t written = countWritten(host.data(), host.size());
  const bool ok = err == cudaErrorInvalidValue && message && written == 0;
  std::printf("gemm_f16 with N = 60: %s (%s)%s\n", ok ? "refused" : "NOT refused", message ? message : "no message",
              written ? ", but C was written" : "");
  return ok;
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    return 77;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);

  cublasHandle_t cublas;
  CHECK_CUBLAS(cublasCreate(&cublas));
  bool ok = runType<__half>(cublas,
                            {{"gemm_f16", gemm_f16},
                             {"gemm_two_stage_f16", gemm_two_stage_f16},
                             {"gemm_one_stage_f16", gemm_one_stage_f16},
                             {"gemm_prefetch_f16", gemm_prefetch_f16},
                             {"gemm_any_f16", gemm_any_f16, true},
                             {"gemm_bt_f16", gemm_bt_f16, false, Stored::BNxK},
                             {"gemm_at_f16", gemm_at_f16, false, Stored::AKxM}},
                            1000);
  ok = runType<__nv_bfloat16>(cublas,
                              {{"gemm_bf16", gemm_bf16},
                               {"gemm_two_stage_bf16", gemm_two_stage_bf16},
                               {"gemm_one_stage_bf16", gemm_one_stage_bf16},
                               {"gemm_prefetch_bf16", gemm_prefetch_bf16},
                               {"gemm_any_bf16", gemm_any_bf16, true},
                               {"gemm_bt_bf16", gemm_bt_bf16, false, Stored::BNxK},
                               {"gemm_at_bf16", gemm_at_bf16, false, Stored::AKxM}},
                              2000) &&
       ok;
  // gemm_beta on sizes that are not tile multiples.
  ok = runBeta<__half>(gemm_beta_f16, "gemm_beta_f16", 3000, 500, 520, 264, -2.0f) && ok;
  ok = runBeta<__nv_bfloat16>(gemm_beta_bf16, "gemm_beta_bf16", 4000, 500, 520, 264, -2.0f) && ok;
  ok = checkRefusal() && ok;
  CHECK_CUBLAS(cublasDestroy(cublas));
  return ok ? 0 : 1;
}
