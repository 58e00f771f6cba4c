// Stand-in for the CUDA runtime header when the CUDA that tyloc generates is compiled as
// host C++ and run by the host-thread harness (tests/hostrun/README.md): the qualifiers,
// built-in variables, vector types, bit casts and the few runtime calls a launcher makes.
// Only what the generated code uses; a kernel that needs more fails to compile here.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "tests/hostrun/HostThreads.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __grid_constant__

// The driver's opaque tensor map (cuda.h), 128 bytes; the harness keeps the encode's arguments in
// it (tylo_host::encode_tensor_map).
struct alignas(64) CUtensorMap_st {
  uint64_t opaque[16];
};
using CUtensorMap = CUtensorMap_st;

// The built-in variables of the thread the harness is running.
#define threadIdx (::tylo_host::thread_idx())
#define blockIdx (::tylo_host::block_idx())
#define blockDim (::tylo_host::block_dim())
#define gridDim (::tylo_host::grid_dim())
#define __syncthreads() ::tylo_host::syncthreads()

struct uint2 {
  uint32_t x, y;
};
struct uint4 {
  uint32_t x, y, z, w;
};
struct float4 {
  float x, y, z, w;
};
inline uint2 make_uint2(uint32_t x, uint32_t y) { return {x, y}; }
inline uint4 make_uint4(uint32_t x, uint32_t y, uint32_t z, uint32_t w) { return {x, y, z, w}; }

inline uint32_t __float_as_uint(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float __uint_as_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline float __int_as_float(int32_t i) { return __uint_as_float(static_cast<uint32_t>(i)); }

enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

template <class... P>
cudaError_t cudaFuncSetAttribute(void (*kernel)(P...), cudaFuncAttribute attribute, int value) {
  return ::tylo_host::set_kernel_attribute(reinterpret_cast<const void*>(kernel), attribute, value);
}
inline cudaError_t cudaGetLastError() { return ::tylo_host::take_last_error(); }
