// The part of the runtime that is plain C++ over the CUDA headers' types, the same on the host
// and the device: launch error reporting, arithmetic as the IR defines it, 16-bit register
// access and element addresses. runtime.cuh includes it, after the CUDA headers whose types it
// uses, beside the PTX wrappers; tests/hostrun compiles it as host C++.
#pragma once

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdint>
#include <initializer_list>

namespace tylo {

// ---- Launch errors ---------------------------------------------------------------

namespace detail {
inline thread_local const char* last_error = nullptr;
}

// Why the last launcher called on this host thread returned an error: the check that failed,
// or the CUDA call; null when it returned cudaSuccess (or none was called).
inline const char* last_launch_error() { return detail::last_error; }

// Called by a launcher first: its result is the one last_launch_error() describes.
inline void clear_launch_error() { detail::last_error = nullptr; }

// A failed launcher check: nothing is launched.
inline cudaError_t launch_error(const char* message) {
  detail::last_error = message;
  return cudaErrorInvalidValue;
}

// A failed launcher check whose message ends with the values the check read, formatted by
// printf from `format` and the arguments: launch_error_values("k: n must be even", " (n = %lld)",
// static_cast<long long>(n)) leaves "k: n must be even (n = 7)". Longer messages are cut at
// 1023 bytes.
inline cudaError_t launch_error_values(const char* message, const char* format, ...) {
  static thread_local char text[1024];
  int used = std::snprintf(text, sizeof text, "%s", message);
  if (used >= 0 && static_cast<size_t>(used) < sizeof text) {
    std::va_list values;
    va_start(values, format);
    std::vsnprintf(text + used, sizeof text - static_cast<size_t>(used), format, values);
    va_end(values);
  }
  detail::last_error = text;
  return cudaErrorInvalidValue;
}

// The result of a CUDA call the launcher makes, with `message` for last_launch_error() when it failed.
inline cudaError_t launch_result(cudaError_t err, const char* message) {
  if (err != cudaSuccess) detail::last_error = message;
  return err;
}

template <class T>
inline bool is_aligned(const T* p, uintptr_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

namespace detail {
struct Dim {
  int64_t extent, stride;  // in elements
};
// The bytes [first, last) that the elements of a tensor cover from its pointer; empty when it
// has no elements. In 128 bits, exact while the bytes stay within 2^100 of the pointer; past
// that a bound is held at 2^100 (beyond any address), which cannot overflow for up to 16
// dimensions and elements of up to 2^20 bytes.
inline void span(std::initializer_list<Dim> dims, int64_t elemBytes, __int128& first, __int128& last) {
  const __int128 far = static_cast<__int128>(1) << 100;
  auto held = [&](__int128 x) { return x > far ? far : x < -far ? -far : x; };
  first = last = 0;
  for (const Dim& d : dims) {
    if (d.extent <= 0) {
      last = first;
      return;
    }
    const __int128 reach = static_cast<__int128>(d.extent - 1) * d.stride;  // below 2^126 in magnitude
    (reach < 0 ? first : last) = held((reach < 0 ? first : last) + held(reach));
  }
  first = held(first * elemBytes);
  last = held((last + 1) * elemBytes);
}
}  // namespace detail

// Whether two tensors share a byte of memory, from their pointers, element sizes and dimensions.
template <class T, class U>
inline bool overlap(const T* a, int64_t aBytes, std::initializer_list<detail::Dim> aDims, const U* b, int64_t bBytes,
                    std::initializer_list<detail::Dim> bDims) {
  __int128 a0, a1, b0, b1;
  detail::span(aDims, aBytes, a0, a1);
  detail::span(bDims, bBytes, b0, b1);
  if (a0 == a1 || b0 == b1) return false;
  const __int128 pa = static_cast<__int128>(reinterpret_cast<uintptr_t>(a));
  const __int128 pb = static_cast<__int128>(reinterpret_cast<uintptr_t>(b));
  return pa + a0 < pb + b1 && pb + b0 < pa + a1;
}

// A condition the kernel should meet that tyloc could not prove (tyloc run reports where it
// fails). Compiled with TYLO_DEVICE_CHECKS defined, a thread where it fails traps (on the
// host: aborts), so the launch reports an error; otherwise it is not evaluated.
__host__ __device__ __forceinline__ void device_check(bool ok) {
#if defined(TYLO_DEVICE_CHECKS)
  if (!ok) {
#if defined(__CUDA_ARCH__)
    __trap();
#else
    __builtin_trap();
#endif
  }
#else
  (void)ok;
#endif
}

// ---- Arithmetic --------------------------------------------------------------------

// An f32 product rounded on its own. nvcc would otherwise fuse `a * b + c` into one FMA,
// rounded once, where the IR (and the emulator) rounds the product and then the sum; a
// product written with __fmul_rn is never fused. The host compiler does not fuse by default.
__host__ __device__ __forceinline__ float fmul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

// One overload per type the generated code uses, so that literals of another spelling of
// the same width (5ll for a long int64_t) still resolve.
__host__ __device__ __forceinline__ int32_t min(int32_t a, int32_t b) { return b < a ? b : a; }
__host__ __device__ __forceinline__ int32_t max(int32_t a, int32_t b) { return a < b ? b : a; }
__host__ __device__ __forceinline__ int64_t min(int64_t a, int64_t b) { return b < a ? b : a; }
__host__ __device__ __forceinline__ int64_t max(int64_t a, int64_t b) { return a < b ? b : a; }
// On floats: the other operand when one is NaN, and -0 below +0 (IEEE 754-2019 minimumNumber
// and maximumNumber), so that max(-0.0f, 0.0f) is +0.0f. On the GPU that is min.f32 and max.f32
// (tests/gpu/int_semantics_test.cu checks it there); C libraries differ on the sign of a zero,
// so the host spells it out.
__host__ __device__ __forceinline__ float min(float a, float b) {
#ifdef __CUDA_ARCH__
  return fminf(a, b);
#else
  if (a != a) return b;
  if (b != b) return a;
  if (a == b) return std::signbit(a) ? a : b;
  return b < a ? b : a;
#endif
}
__host__ __device__ __forceinline__ float max(float a, float b) {
#ifdef __CUDA_ARCH__
  return fmaxf(a, b);
#else
  if (a != a) return b;
  if (b != b) return a;
  if (a == b) return std::signbit(a) ? b : a;
  return a < b ? b : a;
#endif
}

// Math functions on f32 (abs, sqrt, ..., fast_log in .tyl). On the GPU the precise forms are
// CUDA's functions and the fast forms PTX's .approx instructions (fast_exp and fast_log scale
// ex2 and lg2 by log2(e) and ln(2)); the exponentials flush subnormals to zero (ex2.approx.ftz:
// one MUFU.EX2, where the form that keeps them scales around it). On the host, which runs the
// generated code only to check it, every form is computed in double and rounded once, as the
// emulator does (and the fast exponentials' subnormal results flushed): within the GPU's stated
// bounds of the exact value, though not always bit for bit the GPU's result.
#ifdef __CUDA_ARCH__
#define TYLO_MATH(name, device, exact)                                       \
  __host__ __device__ __forceinline__ float name(float x) { return device; }
#define TYLO_APPROX(name, instruction)                   \
  __device__ __forceinline__ float name(float x) {       \
    float r;                                             \
    asm(instruction " %0, %1;" : "=f"(r) : "f"(x));      \
    return r;                                            \
  }
TYLO_APPROX(approx_ex2, "ex2.approx.ftz.f32")
TYLO_APPROX(approx_lg2, "lg2.approx.f32")
TYLO_APPROX(approx_sqrt, "sqrt.approx.f32")
TYLO_APPROX(approx_rsqrt, "rsqrt.approx.f32")
#undef TYLO_APPROX
#else
#define TYLO_MATH(name, device, exact)                                       \
  __host__ __device__ __forceinline__ float name(float x) {                  \
    const double d = x;                                                      \
    return static_cast<float>(exact);                                        \
  }
// What ex2.approx.ftz does to a result below the smallest normal f32: zero.
inline double flush_subnormal(double v) {
  const float f = static_cast<float>(v);
  return f != 0.0f && std::fabs(f) < 0x1p-126f ? 0.0 : v;
}
#endif
TYLO_MATH(abs, fabsf(x), std::fabs(d))
TYLO_MATH(sqrt, sqrtf(x), std::sqrt(d))
TYLO_MATH(rsqrt, rsqrtf(x), 1.0 / std::sqrt(d))
TYLO_MATH(exp2, exp2f(x), std::exp2(d))
TYLO_MATH(exp, expf(x), std::exp(d))
TYLO_MATH(log2, log2f(x), std::log2(d))
TYLO_MATH(log, logf(x), std::log(d))
TYLO_MATH(fast_sqrt, approx_sqrt(x), std::sqrt(d))
TYLO_MATH(fast_rsqrt, approx_rsqrt(x), 1.0 / std::sqrt(d))
TYLO_MATH(fast_exp2, approx_ex2(x), flush_subnormal(std::exp2(d)))
TYLO_MATH(fast_exp, approx_ex2(x * 1.44269504088896340736f), flush_subnormal(std::exp(d)))
TYLO_MATH(fast_log2, approx_lg2(x), std::log2(d))
TYLO_MATH(fast_log, approx_lg2(x) * 0.69314718055994530942f, std::log(d))
#undef TYLO_MATH

// Integer arithmetic as the IR defines it, where C++ would leave it undefined: sums,
// differences, products and negations of signed integers wrap; shifts by an amount outside
// 0..width-1 give 0 (left) or fill with the sign (right), as PTX's shl and shr do; a division
// by 0 gives 0 and one of the smallest value by -1 wraps; a loop's step saturates. The generated code calls these only
// where the operands' ranges do not rule the case out, so that the emulator, the launchers
// and the kernel compute the same values. (The conversions back to a signed type are modulo
// 2^N: C++20 says so, and NVCC, GCC, Clang and MSVC do so before it.)
#define TYLO_INT_HD __host__ __device__ __forceinline__
TYLO_INT_HD int32_t wrap_add(int32_t a, int32_t b) { return static_cast<int32_t>(uint32_t(a) + uint32_t(b)); }
TYLO_INT_HD int32_t wrap_sub(int32_t a, int32_t b) { return static_cast<int32_t>(uint32_t(a) - uint32_t(b)); }
TYLO_INT_HD int32_t wrap_mul(int32_t a, int32_t b) { return static_cast<int32_t>(uint32_t(a) * uint32_t(b)); }
TYLO_INT_HD int32_t wrap_neg(int32_t a) { return static_cast<int32_t>(0u - uint32_t(a)); }
TYLO_INT_HD int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(uint64_t(a) + uint64_t(b)); }
TYLO_INT_HD int64_t wrap_sub(int64_t a, int64_t b) { return static_cast<int64_t>(uint64_t(a) - uint64_t(b)); }
TYLO_INT_HD int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(uint64_t(a) * uint64_t(b)); }
TYLO_INT_HD int64_t wrap_neg(int64_t a) { return static_cast<int64_t>(uint64_t{0} - uint64_t(a)); }

TYLO_INT_HD int32_t div(int32_t a, int32_t b) { return b == 0 ? 0 : b == -1 ? wrap_neg(a) : a / b; }
TYLO_INT_HD int64_t div(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? wrap_neg(a) : a / b; }
TYLO_INT_HD uint32_t div(uint32_t a, uint32_t b) { return b == 0 ? 0 : a / b; }
TYLO_INT_HD int32_t rem(int32_t a, int32_t b) { return b == 0 || b == -1 ? 0 : a % b; }
TYLO_INT_HD int64_t rem(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }
TYLO_INT_HD uint32_t rem(uint32_t a, uint32_t b) { return b == 0 ? 0 : a % b; }

TYLO_INT_HD int32_t shl(int32_t a, int64_t n) { return n < 0 || n >= 32 ? 0 : static_cast<int32_t>(uint32_t(a) << n); }
TYLO_INT_HD int64_t shl(int64_t a, int64_t n) { return n < 0 || n >= 64 ? 0 : static_cast<int64_t>(uint64_t(a) << n); }
TYLO_INT_HD uint32_t shl(uint32_t a, int64_t n) { return n < 0 || n >= 32 ? 0u : a << n; }
TYLO_INT_HD int32_t shr(int32_t a, int64_t n) { return a >> (n < 0 || n >= 32 ? 31 : n); }
TYLO_INT_HD int64_t shr(int64_t a, int64_t n) { return a >> (n < 0 || n >= 64 ? 63 : n); }
TYLO_INT_HD uint32_t shr(uint32_t a, int64_t n) { return n < 0 || n >= 32 ? 0u : a >> n; }

// A loop variable's next value: var + step (step > 0), or the type's largest value when
// that would pass it, so that a loop whose end lies near the largest value ends.
TYLO_INT_HD int32_t loop_next(int32_t v, int32_t step) { return v > INT32_MAX - step ? INT32_MAX : v + step; }
TYLO_INT_HD int64_t loop_next(int64_t v, int64_t step) { return v > INT64_MAX - step ? INT64_MAX : v + step; }
TYLO_INT_HD uint32_t loop_next(uint32_t v, uint32_t step) { return v > UINT32_MAX - step ? UINT32_MAX : v + step; }

// Float to integer: truncated toward zero and saturated, NaN giving 0 (PTX's cvt.rzi).
#ifdef __CUDA_ARCH__
TYLO_INT_HD int32_t float_to_i32(float x) { return __float2int_rz(x); }
// cvt.rzi.s64.f32 gives INT64_MIN for NaN on the H200 (the 32-bit conversions give 0).
TYLO_INT_HD int64_t float_to_i64(float x) { return x != x ? 0 : __float2ll_rz(x); }
TYLO_INT_HD uint32_t float_to_u32(float x) { return __float2uint_rz(x); }
#else
template <class T>
inline T float_to_int(float x, double lo, double hi) {
  if (x != x) return 0;
  if (x <= lo) return static_cast<T>(lo);
  if (x >= hi) return static_cast<T>(hi);
  return static_cast<T>(x);
}
inline int32_t float_to_i32(float x) { return float_to_int<int32_t>(x, -2147483648.0, 2147483647.0); }
inline int64_t float_to_i64(float x) {
  // 2^63 is not an int64_t: saturate just below it.
  return x >= 9223372036854775808.0f ? INT64_MAX : float_to_int<int64_t>(x, -9223372036854775808.0, 9223372036854774784.0);
}
inline uint32_t float_to_u32(float x) { return float_to_int<uint32_t>(x, 0.0, 4294967295.0); }
#endif
#undef TYLO_INT_HD

// ---- 16-bit registers ------------------------------------------------------------
// Fragments of 16-bit floats live in 32-bit words, two elements per word, so that the
// words can feed ldmatrix and mma.sync directly.

__host__ __device__ __forceinline__ __half get_f16(const uint32_t* words, int i) {
  return __ushort_as_half(static_cast<unsigned short>(words[i >> 1] >> ((i & 1) * 16)));
}
__host__ __device__ __forceinline__ void set_f16(uint32_t* words, int i, __half v) {
  const uint32_t shift = (i & 1) * 16;
  words[i >> 1] = (words[i >> 1] & ~(0xffffu << shift)) | (static_cast<uint32_t>(__half_as_ushort(v)) << shift);
}
__host__ __device__ __forceinline__ __nv_bfloat16 get_bf16(const uint32_t* words, int i) {
  return __ushort_as_bfloat16(static_cast<unsigned short>(words[i >> 1] >> ((i & 1) * 16)));
}
__host__ __device__ __forceinline__ void set_bf16(uint32_t* words, int i, __nv_bfloat16 v) {
  const uint32_t shift = (i & 1) * 16;
  words[i >> 1] = (words[i >> 1] & ~(0xffffu << shift)) | (static_cast<uint32_t>(__bfloat16_as_ushort(v)) << shift);
}

// The address `offset` elements past `base`, computed on integers: a cp.async that reads
// nothing (source size 0) may be handed an address past the end of its tensor, which as
// pointer arithmetic would be undefined in C++; the instruction never touches it.
template <class T>
__host__ __device__ __forceinline__ const void* element_address(const T* base, int64_t offset) {
  return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(base) +
                                       static_cast<uintptr_t>(offset) * sizeof(T));
}

// The same address with the offset in two parts: `fixed`, which a loop does not change,
// and `moving`, which it does. The address of the fixed part is one value for the loop.
template <class T>
__host__ __device__ __forceinline__ const void* element_address(const T* base, int64_t fixed, int64_t moving) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(base) + static_cast<uintptr_t>(fixed) * sizeof(T);
  return reinterpret_cast<const void*>(start + static_cast<uintptr_t>(moving) * sizeof(T));
}

}  // namespace tylo
