// 16-bit floating-point formats as the GPU stores them: IEEE binary16 (f16) and bfloat16.
// Narrowing rounds to nearest, ties to even (cvt.rn); widening to f32 is exact.
#pragma once

#include <cstdint>

namespace tyl::emu {

uint16_t f32ToF16(float value);
float f16ToF32(uint16_t bits);

uint16_t f32ToBf16(float value);
float bf16ToF32(uint16_t bits);
// An integer to the nearest bfloat16 in one rounding (cvt.rn.bf16.s64), where going through
// f32 would round integers above 2^24 twice.
uint16_t intToBf16(int64_t value);

}  // namespace tyl::emu
