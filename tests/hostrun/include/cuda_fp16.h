// Stand-in for cuda_fp16.h in the host-thread harness: __half as its 16 bits, with the
// conversions the generated code uses (round to nearest even, as the GPU's).
#pragma once

#include <cstdint>

#include "backend/emu/Half.h"

struct __half {
  uint16_t bits;
};
inline __half __ushort_as_half(unsigned short bits) { return __half{bits}; }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline __half __float2half_rn(float f) { return __half{tyl::emu::f32ToF16(f)}; }
inline float __half2float(__half h) { return tyl::emu::f16ToF32(h.bits); }
