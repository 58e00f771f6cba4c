// Stand-in for cuda_bf16.h in the host-thread harness: __nv_bfloat16 as its 16 bits, with
// the conversions the generated code uses (round to nearest even, as the GPU's).
#pragma once

#include <cstdint>

#include "backend/emu/Half.h"

struct __nv_bfloat16 {
  uint16_t bits;
};
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) { return __nv_bfloat16{bits}; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.bits; }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16{tyl::emu::f32ToBf16(f)}; }
inline __nv_bfloat16 __int2bfloat16_rn(int i) { return __nv_bfloat16{tyl::emu::intToBf16(i)}; }
inline __nv_bfloat16 __uint2bfloat16_rn(unsigned int i) { return __nv_bfloat16{tyl::emu::intToBf16(i)}; }
inline __nv_bfloat16 __ll2bfloat16_rn(long long i) { return __nv_bfloat16{tyl::emu::intToBf16(i)}; }
inline float __bfloat162float(__nv_bfloat16 h) { return tyl::emu::bf16ToF32(h.bits); }
