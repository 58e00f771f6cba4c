#include "backend/emu/Half.h"

#include <bit>
#include <cmath>

namespace tyl::emu {
namespace {

// Drops the low `shift` bits of `value`, rounding to nearest with ties to even.
uint32_t shiftRoundEven(uint32_t value, int shift) {
  uint32_t kept = value >> shift;
  uint32_t rest = value & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (kept & 1))) ++kept;
  return kept;
}

}  // namespace

uint16_t f32ToF16(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t mag = x & 0x7fffffff;
  if (mag > 0x7f800000) return sign | 0x7e00;  // NaN stays a (quiet) NaN
  // 65520 is halfway between the largest half (65504) and the next power of two: it and
  // everything above round to infinity.
  if (mag >= 0x477ff000) return sign | 0x7c00;
  int exponent = static_cast<int>(mag >> 23);
  if (exponent >= 113) {
    // A normal half: rebias the exponent and round the 23-bit mantissa to 10 bits. A carry
    // out of the mantissa correctly bumps the exponent.
    uint32_t rebased = mag - (112u << 23);
    return sign | static_cast<uint16_t>(shiftRoundEven(rebased, 13));
  }
  // Subnormal half (or zero): the value in units of 2^-24, rounded.
  if (exponent < 102) return sign;  // below 2^-25: rounds to zero
  uint32_t mantissa = (mag & 0x7fffff) | 0x800000;
  return sign | static_cast<uint16_t>(shiftRoundEven(mantissa, 126 - exponent));
}

float f16ToF32(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x3ff;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000 | (mantissa << 13));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  float magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal or zero: exact
  return sign ? -magnitude : magnitude;
}

uint16_t f32ToBf16(float value) {
  uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  // Adding 0x7fff plus the lowest kept bit rounds to nearest even; overflow carries into
  // the exponent and reaches infinity exactly when it should.
  return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

uint16_t intToBf16(int64_t value) {
  const bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  // Keep the top 24 bits and fold the rest into the lowest kept one (round to odd): the f32
  // that results is exact and rounds to bfloat16's 8 bits as the integer itself would.
  const int width = 64 - std::countl_zero(magnitude);
  int shift = 0;
  if (width > 24) {
    shift = width - 24;
    const bool sticky = (magnitude & ((uint64_t{1} << shift) - 1)) != 0;
    magnitude = (magnitude >> shift) | static_cast<uint64_t>(sticky);
  }
  const float f = std::ldexp(static_cast<float>(magnitude), shift);
  return f32ToBf16(negative ? -f : f);
}

float bf16ToF32(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

}  // namespace tyl::emu
