// GPU test of the GEMM kernels generated from examples/gemm/gemm.tyl (pipeline construct, four
// stages, prefetched loads; gemm_any) and examples/gemm/gemm_stages.tyl (one, two and four stages by hand), against
// cublasGemmEx and a float64 CPU reference: random shapes, a long K, a 2048^3 product, sub-matrix
// pointers (16-byte but not 256-byte aligned) on a non-default stream, empty products, and the
// launchers' refusals; gemm_any also at any N and K with pointers only 2-byte aligned. Every run
// poisons C and a guard after it; every element is checked.
//
// Exit codes: 0 all checks passed, 1 a check failed, 77 no CUDA device (ctest: skipped).
#include "gemm.cuh"
#include "gemm_check.h"
#include "gemm_stages.cuh"

#include <tylo/runtime.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using namespace gemm_check;

int failures = 0;
int runs = 0;

void fail(const std::string& what) {
  std::printf("FAILED: %s\n", what.c_str());
  ++failures;
}

#define CHECK_CUDA(call) checkCuda((call), #call, __LINE__)
#define CHECK_CUBLAS(call) checkCublas((call), #call, __LINE__)

void checkCuda(cudaError_t err, const char* what, int line) {
  if (err == cudaSuccess) return;
  std::printf("line %d: %s failed: %s (%s)\n", line, what, cudaGetErrorString(err),
              tylo::last_launch_error() ? tylo::last_launch_error() : "no launcher message");
  std::exit(1);
}

void checkCublas(cublasStatus_t status, const char* what, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::printf("line %d: %s failed: %s\n", line, what, cublasStatusName(status));
  std::exit(1);
}

cublasHandle_t cublas;
cudaStream_t stream;

// The last kernel, gemm_any, also takes N and K that are not multiples of 8 and pointers that
// are not 16-byte aligned.
template <class T>
struct Kernels {
  static constexpr int kCount = 5;
  static constexpr int kAny = kCount - 1;
  const char* names[kCount];
  GemmFn<T> fns[kCount];
};
const Kernels<__half> kF16{{"gemm_f16", "gemm_two_stage_f16", "gemm_one_stage_f16", "gemm_prefetch_f16", "gemm_any_f16"},
                           {gemm_f16, gemm_two_stage_f16, gemm_one_stage_f16, gemm_prefetch_f16, gemm_any_f16}};
const Kernels<__nv_bfloat16> kBF16{
    {"gemm_bf16", "gemm_two_stage_bf16", "gemm_one_stage_bf16", "gemm_prefetch_bf16", "gemm_any_bf16"},
    {gemm_bf16, gemm_two_stage_bf16, gemm_one_stage_bf16, gemm_prefetch_bf16, gemm_any_bf16}};

// Runs the kernels from index `from` on one problem and checks each: against the CPU reference
// when `withCpu` (else only cuBLAS), against cuBLAS, the guard after C, and bit-identity with the
// first kernel run. `offset` elements shift A, B and C inside their buffers (a multiple of 8
// keeps the 16-byte alignment the launchers but gemm_any's require).
template <class T>
void checkProblem(const Kernels<T>& kernels, int M, int N, int K, float alpha, bool relu, bool withCpu, size_t offset,
                  cudaStream_t s, uint64_t seed, int from = 0) {
  char label[160];
  std::snprintf(label, sizeof label, "%s %dx%dx%d alpha=%g%s offset=%zu", Dtype<T>::name, M, N, K, alpha,
                relu ? " relu" : "", offset);
  const size_t countA = size_t(M) * K, countB = size_t(K) * N, countC = size_t(M) * N;
  const size_t guard = size_t(128) * N + 1024;
  const std::vector<T> hostA = randomMatrix<T>(countA, seed);
  const std::vector<T> hostB = randomMatrix<T>(countB, seed + 1);
  T* A = nullptr;
  T* B = nullptr;
  float* C = nullptr;
  float* Ref = nullptr;
  CHECK_CUDA(cudaMalloc(&A, (offset + countA + 8) * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&B, (offset + countB + 8) * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&C, (offset + countC + guard) * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&Ref, (countC + 1) * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(A + offset, hostA.data(), countA * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(B + offset, hostB.data(), countB * sizeof(T), cudaMemcpyHostToDevice));

  CHECK_CUBLAS(cublasSetStream(cublas, s));
  CHECK_CUBLAS(cublasGemmRowMajor(cublas, M, N, K, alpha, A + offset, B + offset, Ref));
  std::vector<float> hostRef(countC), out(offset + countC + guard), first(countC);
  CHECK_CUDA(cudaStreamSynchronize(s));
  CHECK_CUDA(cudaMemcpy(hostRef.data(), Ref, countC * sizeof(float), cudaMemcpyDeviceToHost));

  Reference ref;
  if (withCpu) ref = reference(M, N, K, toDouble(hostA), toDouble(hostB));
  for (int v = from; v < Kernels<T>::kCount; ++v) {
    ++runs;
    const std::string what = std::string(kernels.names[v]) + " " + label;
    CHECK_CUDA(cudaMemsetAsync(C, kPoisonByte, (offset + countC + guard) * sizeof(float), s));
    CHECK_CUDA(kernels.fns[v](M, N, K, A + offset, B + offset, C + offset, alpha, relu, s));
    CHECK_CUDA(cudaStreamSynchronize(s));
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpy(out.data(), C, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const float* got = out.data() + offset;
    if (withCpu) {
      const Comparison c = compareToReference(got, ref, alpha, relu);
      if (!c.ok(frobeniusBound(K))) {
        char msg[256];
        std::snprintf(msg, sizeof msg,
                      ": vs CPU: rel err %.3g (bound %.3g), %zu elements beyond their bound, first C[%zu][%zu] = "
                      "%.9g, expected %.9g",
                      c.relFrobenius, frobeniusBound(K), c.outOfBound, c.first / N, c.first % N, c.firstGot,
                      c.firstExpected);
        fail(what + msg);
      }
    }
    const double err = relativeFrobenius(got, hostRef.data(), countC, relu);
    if (!(err <= 2 * frobeniusBound(K))) fail(what + ": vs cuBLAS: rel err " + std::to_string(err));
    if (const size_t n = countWritten(out.data(), offset) + countWritten(got + countC, guard))
      fail(what + ": " + std::to_string(n) + " floats written outside C");
    if (v == from)
      std::copy(got, got + countC, first.begin());
    else if (std::memcmp(got, first.data(), countC * sizeof(float)) != 0)
      fail(what + ": differs bit for bit from " + kernels.names[from]);
  }
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));
  CHECK_CUDA(cudaFree(C));
  CHECK_CUDA(cudaFree(Ref));
}

template <class T>
void testShapes(const Kernels<T>& k, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_int_distribution<int> m(1, 300), n8(1, 40);
  // Random shapes (N and K multiples of 8), half of them shifted inside their buffers on a
  // non-default stream.
  for (int i = 0; i < 12; ++i) {
    const int M = m(rng), N = 8 * n8(rng), K = 8 * n8(rng);
    const bool shifted = i % 2 == 1;
    checkProblem(k, M, N, K, i % 3 == 0 ? -0.75f : 1.25f, i % 3 == 0, true, shifted ? 8 : 0,
                 shifted ? stream : cudaStream_t(0), seed + 10 * i);
  }
  checkProblem(k, 128, 128, 8192, 1.0f, false, true, 0, stream, seed + 500);     // a long K
  checkProblem(k, 257, 264, 2056, 0.5f, true, true, 24, stream, seed + 600);     // nothing a multiple
  checkProblem(k, 2048, 2048, 2048, 1.0f, false, false, 0, stream, seed + 700);  // vs cuBLAS only
}

// gemm_any alone: any N and K, and A, B and C shifted by an odd number of elements (2- and
// 4-byte aligned only).
template <class T>
void testAnyShapes(const Kernels<T>& k, uint64_t seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::uniform_int_distribution<int> size(1, 300);
  for (int i = 0; i < 12; ++i) {
    const int M = size(rng), N = size(rng), K = size(rng);
    checkProblem(k, M, N, K, i % 3 == 0 ? -0.75f : 1.25f, i % 3 == 0, true, i % 2 == 1 ? 3 : 0,
                 i % 2 == 1 ? stream : cudaStream_t(0), seed + 10 * i, Kernels<T>::kAny);
  }
  checkProblem(k, 1001, 999, 1003, 1.0f, false, true, 1, stream, seed + 500, Kernels<T>::kAny);
  checkProblem(k, 2047, 2049, 2051, 1.0f, false, false, 0, stream, seed + 600, Kernels<T>::kAny);  // vs cuBLAS
}

// gemm_beta: D (16-bit) = alpha * A @ B + beta * C, each element within countBetaErrors()'s
// bound, and nothing written outside D.
template <class T, class Fn>
void checkBeta(Fn fn, const char* name, int M, int N, int K, float alpha, float beta, uint64_t seed) {
  char what[160];
  std::snprintf(what, sizeof what, "%s %dx%dx%d alpha=%g beta=%g", name, M, N, K, alpha, beta);
  ++runs;
  const size_t countA = size_t(M) * K, countB = size_t(K) * N, countC = size_t(M) * N, guard = 4096;
  const std::vector<T> hostA = randomMatrix<T>(countA, seed), hostB = randomMatrix<T>(countB, seed + 1),
                       hostC = randomMatrix<T>(countC, seed + 2);
  T *A = nullptr, *B = nullptr, *C = nullptr, *D = nullptr;
  CHECK_CUDA(cudaMalloc(&A, (countA + 8) * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&B, (countB + 8) * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&C, (countC + 8) * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&D, (countC + guard) * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(A, hostA.data(), countA * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(B, hostB.data(), countB * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(C, hostC.data(), countC * sizeof(T), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(D, kPoisonByte, (countC + guard) * sizeof(T)));
  CHECK_CUDA(fn(M, N, K, A, B, C, D, alpha, beta, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<T> out(countC + guard);
  CHECK_CUDA(cudaMemcpy(out.data(), D, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  const Reference ref = reference(M, N, K, toDouble(hostA), toDouble(hostB));
  size_t first = 0;
  const size_t bad = countBetaErrors(ref, hostC, out.data(), alpha, beta, &first);
  if (bad) {
    char msg[200];
    std::snprintf(msg, sizeof msg, ": %zu elements beyond their bound, first D[%zu][%zu] = %.6g, expected %.6g", bad,
                  first / N, first % N, double(Dtype<T>::toFloat(out[first])),
                  alpha * ref.product[first] + beta * Dtype<T>::toFloat(hostC[first]));
    fail(what + std::string(msg));
  }
  for (size_t i = countC; i < out.size(); ++i) {
    uint16_t bits;
    std::memcpy(&bits, &out[i], sizeof bits);
    if (bits != uint16_t(kPoisonByte * 0x0101u)) {
      fail(what + std::string(": wrote past the end of D"));
      break;
    }
  }
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));
  CHECK_CUDA(cudaFree(C));
  CHECK_CUDA(cudaFree(D));
}

void testBeta() {
  checkBeta<__half>(gemm_beta_f16, "gemm_beta_f16", 200, 136, 72, 0.75f, -2.0f, 900);
  checkBeta<__half>(gemm_beta_f16, "gemm_beta_f16", 257, 264, 1032, 0.5f, 1.0f, 910);
  checkBeta<__nv_bfloat16>(gemm_beta_bf16, "gemm_beta_bf16", 200, 136, 72, 0.75f, -2.0f, 920);
  checkBeta<__nv_bfloat16>(gemm_beta_bf16, "gemm_beta_bf16", 1024, 1024, 1024, 1.0f, 0.5f, 930);
}

// Empty products launch nothing and write nothing; K = 0 writes alpha * 0.
void testEmpty() {
  float* C = nullptr;
  __half* A = nullptr;
  CHECK_CUDA(cudaMalloc(&A, 4096 * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&C, 4096 * sizeof(float)));
  CHECK_CUDA(cudaMemset(C, kPoisonByte, 4096 * sizeof(float)));
  for (int v = 0; v < Kernels<__half>::kCount; ++v) {
    CHECK_CUDA(kF16.fns[v](0, 64, 64, A, A, C, 1.0f, false, 0));
    CHECK_CUDA(kF16.fns[v](64, 0, 64, A, A, C, 1.0f, false, 0));
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> out(4096);
  CHECK_CUDA(cudaMemcpy(out.data(), C, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  if (countWritten(out.data(), out.size()) != 0) fail("an empty product (M = 0 or N = 0) wrote to C");

  for (int v = 0; v < Kernels<__half>::kCount; ++v) {
    CHECK_CUDA(cudaMemset(C, kPoisonByte, 4096 * sizeof(float)));
    CHECK_CUDA(kF16.fns[v](24, 32, 0, A, A, C, 2.0f, true, 0));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(out.data(), C, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (size_t i = 0; i < out.size(); ++i) wrong += i < 24 * 32 ? out[i] != 0.0f : floatBits(out[i]) != kPoisonBits;
    if (wrong) fail(std::string(kF16.names[v]) + " with K = 0: " + std::to_string(wrong) + " wrong elements");
  }
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(C));
}

// What the layouts cannot handle is refused, with a reason, and launches nothing.
void testLauncherChecks() {
  __half* A = nullptr;
  float* C = nullptr;
  CHECK_CUDA(cudaMalloc(&A, 8192 * sizeof(__half)));
  CHECK_CUDA(cudaMalloc(&C, 8192 * sizeof(float)));
  CHECK_CUDA(cudaMemset(C, kPoisonByte, 8192 * sizeof(float)));
  const struct {
    const char* what;
    int M, N, K;
    size_t aOffset, cOffset;
    const char* message;
    bool anyRefuses;  // gemm_any refuses it too
  } cases[] = {
      {"N = 60", 64, 60, 64, 0, 0, "multiple of 8", false},
      {"K = 36", 64, 64, 36, 0, 0, "multiple of 8", false},
      {"M = -1", -1, 64, 64, 0, 0, "must not be negative", true},
      {"A misaligned by 2 bytes", 64, 64, 64, 1, 0, "A must be aligned to 16 bytes", false},
      {"C misaligned by 8 bytes", 64, 64, 64, 0, 2, "C must be aligned to 16 bytes", false},
  };
  for (int v = 0; v < Kernels<__half>::kCount; ++v) {
    for (const auto& c : cases) {
      if (v == Kernels<__half>::kAny && !c.anyRefuses) continue;
      const std::string what = std::string(kF16.names[v]) + " with " + c.what;
      const cudaError_t err = kF16.fns[v](c.M, c.N, c.K, A + c.aOffset, A, C + c.cOffset, 1.0f, false, 0);
      const char* message = tylo::last_launch_error();
      if (err != cudaErrorInvalidValue)
        fail(what + ": expected cudaErrorInvalidValue, got " + cudaGetErrorString(err));
      else if (!message || !std::strstr(message, c.message))
        fail(what + ": message '" + (message ? message : "(none)") + "' does not say '" + c.message + "'");
      if (cudaGetLastError() != cudaSuccess) fail(what + ": left a sticky CUDA error");
    }
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> out(8192);
  CHECK_CUDA(cudaMemcpy(out.data(), C, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  if (countWritten(out.data(), out.size()) != 0) fail("a refused launch wrote to C");
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(C));
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    return 77;
  }
  CHECK_CUBLAS(cublasCreate(&cublas));
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  testShapes(kF16, 31);
  testShapes(kBF16, 47);
  testAnyShapes(kF16, 61);
  testAnyShapes(kBF16, 67);
  testBeta();
  testEmpty();
  testLauncherChecks();
  CHECK_CUDA(cudaStreamDestroy(stream));
  CHECK_CUBLAS(cublasDestroy(cublas));
  if (failures != 0) {
    std::printf("%d checks failed\n", failures);
    return 1;
  }
  std::printf(
      "gemm, gemm_two_stage, gemm_one_stage, gemm_prefetch, gemm_any, gemm_beta (f16 and bf16, %d runs): all elements "
      "within bounds of the CPU reference and cuBLAS, bit-identical across kernels, guards untouched; launcher checks "
      "pass\n",
      runs);
  return 0;
}
