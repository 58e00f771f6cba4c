// Host-side helpers for checking the GEMM kernels (examples/gemm/main.cu, tests/gpu/gemm_test.cu,
// bench/gemm_bench.cu): random 16-bit matrices, a float64 CPU reference, error measures, and
// cublasGemmEx on row-major matrices. Header-only; include it from a .cu file.
//
// Why the bounds below hold: a product of two f16 or bf16 values is exact in f32, so a correct
// kernel differs from the float64 reference only by the rounding of its f32 sums (and of the
// final scale). The tensor cores sum each m16n8k16 step's 16 products and the accumulator in
// one go, aligning to the largest and truncating; that costs at most a few units in the last
// place of the largest addend per step. So |error| <= ~K * 2^-23 * sum_k |a_ik * b_kj|, and
// the relative Frobenius error of random data is ~1e-7 * sqrt(K). A wrong, missing or
// misplaced element, an f16 accumulator, or an unwritten (poisoned: NaN) element is far
// outside both bounds.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace gemm_check {

// ---- element types ------------------------------------------------------------------------------

template <class T>
struct Dtype;
template <>
struct Dtype<__half> {
  static constexpr const char* name = "f16";
  static constexpr cudaDataType_t cuda = CUDA_R_16F;
  static constexpr double ulp = 1.0 / 1024;
  static __half fromFloat(float x) { return __float2half_rn(x); }
  static float toFloat(__half x) { return __half2float(x); }
};
template <>
struct Dtype<__nv_bfloat16> {
  static constexpr const char* name = "bf16";
  static constexpr cudaDataType_t cuda = CUDA_R_16BF;
  static constexpr double ulp = 1.0 / 128;
  static __nv_bfloat16 fromFloat(float x) { return __float2bfloat16_rn(x); }
  static float toFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
};

// The generated launchers all have this signature (gemm, gemm_one_stage, gemm_two_stage).
template <class T>
using GemmFn = cudaError_t (*)(int32_t M, int32_t N, int32_t K, const T* A, const T* B, float* C, float alpha,
                               bool apply_relu, cudaStream_t stream);

// ---- random inputs ------------------------------------------------------------------------------

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Element i of a random matrix: uniform in [-1, 1), rounded to T, never zero (a rounded zero
// becomes +-0.5), so a kernel that skips a product or reads zeros cannot pass.
template <class T>
T randomElement(uint64_t seed, size_t i) {
  const uint64_t h = splitmix64(seed * 0x2545f4914f6cdd1dull + i);
  const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1)
  T x = Dtype<T>::fromFloat(2.0f * u - 1.0f);
  if (Dtype<T>::toFloat(x) == 0.0f) x = Dtype<T>::fromFloat((h & 1) ? 0.5f : -0.5f);
  return x;
}

template <class T>
std::vector<T> randomMatrix(size_t count, uint64_t seed) {
  std::vector<T> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = randomElement<T>(seed, i);
  return v;
}

template <class T>
std::vector<double> toDouble(const std::vector<T>& v) {
  std::vector<double> d(v.size());
  for (size_t i = 0; i < v.size(); ++i) d[i] = Dtype<T>::toFloat(v[i]);
  return d;
}

// ---- the float64 reference ----------------------------------------------------------------------

// A @ B (M x K times K x N, row-major) in float64, and sum_k |a_ik * b_kj| for the elementwise
// bound. alpha and relu are applied later (epilogue()), so one product serves every epilogue.
struct Reference {
  int64_t M = 0, N = 0, K = 0;
  std::vector<double> product;  // A @ B
  std::vector<double> absSum;   // |A| @ |B|
};

inline Reference reference(int64_t M, int64_t N, int64_t K, const std::vector<double>& A,
                           const std::vector<double>& B) {
  Reference r;
  r.M = M;
  r.N = N;
  r.K = K;
  r.product.assign(static_cast<size_t>(M * N), 0.0);
  r.absSum.assign(static_cast<size_t>(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i) {
    double* p = &r.product[static_cast<size_t>(i * N)];
    double* s = &r.absSum[static_cast<size_t>(i * N)];
    for (int64_t k = 0; k < K; ++k) {
      const double a = A[static_cast<size_t>(i * K + k)];
      const double* b = &B[static_cast<size_t>(k * N)];
      for (int64_t j = 0; j < N; ++j) {
        p[j] += a * b[j];
        s[j] += std::abs(a * b[j]);
      }
    }
  }
  return r;
}

inline double epilogue(double product, double alpha, bool relu) {
  const double v = alpha * product;
  return relu ? std::max(v, 0.0) : v;
}

// ---- error measures -----------------------------------------------------------------------------

// The relative Frobenius error a correct kernel stays under for inner dimension K.
inline double frobeniusBound(int64_t K) { return 1e-5 + 1e-7 * static_cast<double>(K); }

// The bound on one element: the summation's (K + 32) * 2^-22 * |alpha| * sum_k |a b| and the
// final scale's rounding.
inline double elementBound(int64_t K, double alpha, double absSum, double expected) {
  return std::ldexp(static_cast<double>(K + 32) * std::abs(alpha) * absSum + std::abs(expected), -22);
}

struct Comparison {
  double relFrobenius = 0;  // ||got - expected||_F / ||expected||_F (0 when both are zero)
  size_t elements = 0;
  size_t outOfBound = 0;  // elements whose error exceeds their bound (NaN included)
  size_t first = 0;       // the first such element
  double firstGot = 0, firstExpected = 0, firstBound = 0;
  bool ok(double frobBound) const { return outOfBound == 0 && relFrobenius <= frobBound; }
};

// Compares got[0, M*N) with epilogue(ref) element by element and as a whole.
inline Comparison compareToReference(const float* got, const Reference& ref, double alpha, bool relu) {
  Comparison c;
  c.elements = ref.product.size();
  double errSq = 0, refSq = 0;
  for (size_t i = 0; i < c.elements; ++i) {
    const double expected = epilogue(ref.product[i], alpha, relu);
    const double g = got[i];
    const double err = std::abs(g - expected);
    const double bound = elementBound(ref.K, alpha, ref.absSum[i], expected);
    errSq += (g - expected) * (g - expected);
    refSq += expected * expected;
    if (!(err <= bound)) {  // NaN (an unwritten, poisoned element) fails too
      if (c.outOfBound++ == 0) {
        c.first = i;
        c.firstGot = g;
        c.firstExpected = expected;
        c.firstBound = bound;
      }
    }
  }
  c.relFrobenius = refSq > 0 ? std::sqrt(errSq / refSq) : (errSq == 0 ? 0.0 : std::sqrt(errSq));
  if (std::isnan(c.relFrobenius)) c.relFrobenius = INFINITY;
  return c;
}

// Relative Frobenius difference of two f32 results; `relu` applies max(0, .) to `expected`
// first (cuBLAS computes alpha * A @ B without the epilogue).
// gemm_beta: D (16-bit) = alpha * A @ B + beta * C. Each element of D is the exact result
// rounded once to T, plus the f32 summation error, so it lies within one unit in the last
// place of T (2^-10 relative for f16, 2^-7 for bf16) plus elementBound(). Returns how many
// elements do not; *first is the index of the first.
template <class T>
size_t countBetaErrors(const Reference& ref, const std::vector<T>& hostC, const T* D, double alpha, double beta,
                       size_t* first) {
  const double ulp = Dtype<T>::ulp;
  size_t bad = 0;
  for (size_t i = 0; i < ref.product.size(); ++i) {
    const double expected = alpha * ref.product[i] + beta * Dtype<T>::toFloat(hostC[i]);
    const double bound = ulp * std::abs(expected) + elementBound(ref.K, alpha, ref.absSum[i], expected) + 1e-6;
    if (!(std::abs(Dtype<T>::toFloat(D[i]) - expected) <= bound) && bad++ == 0 && first) *first = i;
  }
  return bad;
}

inline double relativeFrobenius(const float* got, const float* expected, size_t count, bool relu = false) {
  double errSq = 0, refSq = 0;
  for (size_t i = 0; i < count; ++i) {
    const double e = relu ? std::max(static_cast<double>(expected[i]), 0.0) : static_cast<double>(expected[i]);
    const double d = static_cast<double>(got[i]) - e;
    errSq += d * d;
    refSq += e * e;
  }
  const double r = refSq > 0 ? std::sqrt(errSq / refSq) : (errSq == 0 ? 0.0 : std::sqrt(errSq));
  return std::isnan(r) ? INFINITY : r;
}

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Bytes written before a run: an element a kernel does not write reads back as this NaN.
constexpr int kPoisonByte = 0xff;
constexpr uint32_t kPoisonBits = 0xffffffffu;

// How many of v[0, count) are not the poison.
inline size_t countWritten(const float* v, size_t count) {
  size_t n = 0;
  for (size_t i = 0; i < count; ++i) n += floatBits(v[i]) != kPoisonBits;
  return n;
}

// ---- cuBLAS -------------------------------------------------------------------------------------

// C = alpha * A @ B for row-major A (M x K), B (K x N) and C (M x N), f32 output and f32
// accumulation (CUBLAS_COMPUTE_32F). cuBLAS is column-major: a row-major M x N matrix is a
// column-major N x M one, so it computes C^T = B^T @ A^T, i.e. gemm(N, M, K, B, A).
template <class T>
cublasStatus_t cublasGemmRowMajor(cublasHandle_t handle, int M, int N, int K, float alpha, const T* A, const T* B,
                                  float* C) {
  const float beta = 0.0f;
  return cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, Dtype<T>::cuda, N, A, Dtype<T>::cuda, K,
                      &beta, C, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

// C = alpha * A @ B^T for row-major A (M x K), B (N x K) and C (M x N): column-major, that is
// C^T = B @ A^T, B read transposed.
template <class T>
cublasStatus_t cublasGemmBtRowMajor(cublasHandle_t handle, int M, int N, int K, float alpha, const T* A, const T* B,
                                    float* C) {
  const float beta = 0.0f;
  return cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, B, Dtype<T>::cuda, K, A, Dtype<T>::cuda, K,
                      &beta, C, CUDA_R_32F, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

inline const char* cublasStatusName(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "unknown cuBLAS status";
  }
}

}  // namespace gemm_check
