// Integer operations whose result C++ leaves undefined and the thread IR defines, with the
// IR's result. The emulator's arithmetic (tests/emu/values_test.cpp) and the helpers that
// generated CUDA code calls in their place (runtime/tylo/runtime.cuh, tests/gpu/
// int_semantics_test.cu, on the host and on a GPU) are both checked against this one table,
// so that all three compute the same values. Plain C++ with no includes beyond <cstdint>:
// nvcc and the host compiler both read it.
#pragma once

#include <cstdint>

namespace tyl::test {

// The operand and result type.
enum class IntType { I32, I64, U32 };

enum class IntOp { Add, Sub, Mul, Neg, Div, Rem, Shl, Shr, LoopNext };

struct IntCase {
  IntOp op;
  IntType type;
  int64_t a, b;  // b: ignored by Neg; the amount of a shift; the (positive) step of LoopNext
  int64_t expected;
};

inline constexpr int64_t kI32Min = INT32_MIN, kI32Max = INT32_MAX;
inline constexpr int64_t kI64Min = INT64_MIN, kI64Max = INT64_MAX;
inline constexpr int64_t kU32Max = UINT32_MAX;

inline constexpr IntCase kIntCases[] = {
    // Signed sums, differences, products and negations wrap.
    {IntOp::Add, IntType::I32, kI32Max, 1, kI32Min},
    {IntOp::Add, IntType::I32, kI32Min, -1, kI32Max},
    {IntOp::Add, IntType::I32, 5, -7, -2},
    {IntOp::Sub, IntType::I32, kI32Min, 1, kI32Max},
    {IntOp::Sub, IntType::I32, 0, kI32Min, kI32Min},
    {IntOp::Mul, IntType::I32, 65536, 65536, 0},
    {IntOp::Mul, IntType::I32, 1000000, 3000, -1294967296},
    {IntOp::Mul, IntType::I32, kI32Min, -1, kI32Min},
    {IntOp::Mul, IntType::I32, -46341, 46341, -2147488281 + 4294967296},
    {IntOp::Neg, IntType::I32, kI32Min, 0, kI32Min},
    {IntOp::Neg, IntType::I32, 7, 0, -7},
    {IntOp::Add, IntType::I64, kI64Max, 1, kI64Min},
    {IntOp::Sub, IntType::I64, kI64Min, 1, kI64Max},
    {IntOp::Mul, IntType::I64, int64_t{1} << 32, int64_t{1} << 32, 0},
    {IntOp::Mul, IntType::I64, kI64Min, -1, kI64Min},
    {IntOp::Neg, IntType::I64, kI64Min, 0, kI64Min},
    {IntOp::Add, IntType::U32, kU32Max, 1, 0},
    {IntOp::Sub, IntType::U32, 0, 1, kU32Max},
    {IntOp::Mul, IntType::U32, 65536, 65537, 65536},
    // Divisions truncate; by 0 they give 0, and the smallest value by -1 wraps to itself.
    {IntOp::Div, IntType::I32, -7, 2, -3},
    {IntOp::Rem, IntType::I32, -7, 2, -1},
    {IntOp::Div, IntType::I32, 7, -2, -3},
    {IntOp::Rem, IntType::I32, 7, -2, 1},
    {IntOp::Div, IntType::I32, kI32Min, -1, kI32Min},
    {IntOp::Rem, IntType::I32, kI32Min, -1, 0},
    {IntOp::Div, IntType::I32, 5, -1, -5},
    {IntOp::Rem, IntType::I32, 5, -1, 0},
    {IntOp::Div, IntType::I32, 42, 0, 0},
    {IntOp::Rem, IntType::I32, 42, 0, 0},
    {IntOp::Div, IntType::I64, kI64Min, -1, kI64Min},
    {IntOp::Rem, IntType::I64, kI64Min, -1, 0},
    {IntOp::Div, IntType::I64, -9, 0, 0},
    {IntOp::Rem, IntType::I64, kI64Min, 3, -2},
    {IntOp::Div, IntType::U32, kU32Max, 2, 2147483647},
    {IntOp::Div, IntType::U32, 9, 0, 0},
    {IntOp::Rem, IntType::U32, 9, 0, 0},
    // Shifts: a left shift moves bits out (and into the sign); amounts outside 0..width-1
    // give 0 (left) or fill with the sign (right), as PTX's shl and shr do.
    {IntOp::Shl, IntType::I32, 1, 31, kI32Min},
    {IntOp::Shl, IntType::I32, -1, 4, -16},
    {IntOp::Shl, IntType::I32, 0x40000001, 2, 4},
    {IntOp::Shl, IntType::I32, 1, 32, 0},
    {IntOp::Shl, IntType::I32, 1, -1, 0},
    {IntOp::Shl, IntType::I32, 5, 1000, 0},
    {IntOp::Shr, IntType::I32, -8, 1, -4},
    {IntOp::Shr, IntType::I32, -8, 40, -1},
    {IntOp::Shr, IntType::I32, 8, 32, 0},
    {IntOp::Shr, IntType::I32, -8, -3, -1},
    {IntOp::Shl, IntType::I64, 3, 63, kI64Min},
    {IntOp::Shl, IntType::I64, 3, 64, 0},
    {IntOp::Shr, IntType::I64, kI64Min, 64, -1},
    {IntOp::Shr, IntType::I64, kI64Max, 62, 1},
    {IntOp::Shl, IntType::U32, 3, 31, 2147483648},
    {IntOp::Shl, IntType::U32, 3, 32, 0},
    {IntOp::Shr, IntType::U32, kU32Max, 31, 1},
    {IntOp::Shr, IntType::U32, kU32Max, 32, 0},
    // A loop's step saturates at the largest value, so that the loop ends.
    {IntOp::LoopNext, IntType::I32, 5, 3, 8},
    {IntOp::LoopNext, IntType::I32, kI32Max - 1, 2, kI32Max},
    {IntOp::LoopNext, IntType::I32, kI32Max, 1, kI32Max},
    {IntOp::LoopNext, IntType::I32, kI32Min, 1, kI32Min + 1},
    {IntOp::LoopNext, IntType::I64, kI64Max - 3, 4, kI64Max},
    {IntOp::LoopNext, IntType::I64, -10, 4, -6},
    {IntOp::LoopNext, IntType::U32, kU32Max - 1, 5, kU32Max},
};

// Float to integer conversions: truncated toward zero and saturated, NaN giving 0 (PTX's
// cvt.rzi). `nan` marks the NaN case (a constexpr table cannot spell NaN portably).
struct FloatToIntCase {
  IntType to;
  float value;
  bool nan;
  int64_t expected;
};

inline constexpr FloatToIntCase kFloatToIntCases[] = {
    {IntType::I32, -1.7f, false, -1},
    {IntType::I32, 2.9f, false, 2},
    {IntType::I32, 3e9f, false, kI32Max},
    {IntType::I32, -3e9f, false, kI32Min},
    {IntType::I32, 0.0f, true, 0},
    {IntType::I64, 1e19f, false, kI64Max},
    {IntType::I64, -1e19f, false, kI64Min},
    {IntType::I64, -12345.5f, false, -12345},
    {IntType::I64, 0.0f, true, 0},
    {IntType::U32, -3.0f, false, 0},
    {IntType::U32, 5e9f, false, kU32Max},
    {IntType::U32, 4e9f, false, 4000000000},
    {IntType::U32, 0.0f, true, 0},
};

// min, max and relu of f32 (the kernel minmax of int_semantics.tyl: min(a, b), max(a, b),
// relu(a), relu(b)), as bit patterns: a NaN operand gives the other one, and -0 is below +0, so
// max(-0, +0) and relu(-0) are +0 (IEEE 754-2019 minimumNumber and maximumNumber).
inline constexpr uint32_t kPlusZero = 0x00000000u, kMinusZero = 0x80000000u, kQuietNaN = 0x7fc00000u;
inline constexpr uint32_t kOne = 0x3f800000u, kMinusTwo = 0xc0000000u, kThree = 0x40400000u;
struct MinMaxCase {
  uint32_t a, b;
  uint32_t min, max, reluA, reluB;
};
inline constexpr MinMaxCase kMinMaxCases[] = {
    {kMinusZero, kPlusZero, kMinusZero, kPlusZero, kPlusZero, kPlusZero},
    {kPlusZero, kMinusZero, kMinusZero, kPlusZero, kPlusZero, kPlusZero},
    {kMinusZero, kMinusZero, kMinusZero, kMinusZero, kPlusZero, kPlusZero},
    {kQuietNaN, kOne, kOne, kOne, kPlusZero, kOne},
    {kOne, kQuietNaN, kOne, kOne, kOne, kPlusZero},
    {kMinusTwo, kThree, kMinusTwo, kThree, kPlusZero, kThree},
};

}  // namespace tyl::test
