// Scalar semantics: f16/bf16 conversions and CUDA integer/float arithmetic on lanes.
#include "backend/emu/Values.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "backend/emu/Half.h"
#include "tests/support/IntSemanticsCases.h"

using namespace tyl;
using namespace tyl::emu;
using tir::BinOp;
using tir::Type;

namespace {

// Round-to-nearest-even to bf16 by comparing the two neighbours in double: an independent
// statement of the rule, not the bit trick the library uses.
uint16_t referenceBf16(float x) {
  uint32_t bits = std::bit_cast<uint32_t>(x);
  uint32_t down = bits & 0xffff0000u, up = down + 0x10000u;
  double dDown = std::fabs(static_cast<double>(std::bit_cast<float>(down)) - x);
  double dUp = std::fabs(static_cast<double>(std::bit_cast<float>(up)) - x);
  if ((up & 0x7f800000u) == 0x7f800000u) dUp = std::fabs(std::ldexp(1.0, 128) * (x < 0 ? -1 : 1) - x);
  if (dDown < dUp) return static_cast<uint16_t>(down >> 16);
  if (dUp < dDown) return static_cast<uint16_t>(up >> 16);
  return static_cast<uint16_t>(((down >> 16) & 1) ? up >> 16 : down >> 16);
}

Lanes splat(uint64_t v) {
  Lanes r;
  r.fill(v);
  return r;
}

uint64_t op(BinOp o, Type t, uint64_t a, uint64_t b) {
  Mask dz = 0;
  return binaryOp(o, t, t, splat(a), splat(b), kFullMask, &dz)[0];
}

uint64_t i32(int64_t v) { return canonical(Type::I32, static_cast<uint64_t>(v)); }
int64_t s(uint64_t v) { return static_cast<int64_t>(v); }

}  // namespace

TEST_CASE("f16 widening is exact and narrowing round trips every half", "[half]") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = f16ToF32(static_cast<uint16_t>(h));
    bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (nan) {
      REQUIRE(std::isnan(f));
      REQUIRE(std::isnan(f16ToF32(f32ToF16(f))));
    } else {
      REQUIRE(f32ToF16(f) == h);
    }
  }
  CHECK(f16ToF32(0x3c00) == 1.0f);
  CHECK(f16ToF32(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(f16ToF32(0x7bff) == 65504.0f);
}

TEST_CASE("f16 narrowing rounds to nearest even at every midpoint", "[half]") {
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    float lo = f16ToF32(static_cast<uint16_t>(h)), hi = f16ToF32(static_cast<uint16_t>(h + 1));
    float mid = (lo + hi) / 2;  // exact in f32
    uint16_t even = (h % 2 == 0) ? h : h + 1;
    REQUIRE(f32ToF16(mid) == even);
    REQUIRE(f32ToF16(std::nextafter(mid, 0.0f)) == h);
    REQUIRE(f32ToF16(std::nextafter(mid, 1e9f)) == h + 1);
    REQUIRE(f32ToF16(-mid) == (even | 0x8000));
  }
  CHECK(f32ToF16(65519.99f) == 0x7bff);
  CHECK(f32ToF16(65520.0f) == 0x7c00);  // rounds to infinity
  CHECK(f32ToF16(1e30f) == 0x7c00);
  CHECK(f32ToF16(-1e30f) == 0xfc00);
  CHECK(f32ToF16(std::ldexp(1.0f, -25)) == 0);  // tie between 0 and the smallest subnormal
  CHECK(f32ToF16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 1);
  CHECK(f32ToF16(-0.0f) == 0x8000);
}

#ifdef __FLT16_MAX__
TEST_CASE("f16 narrowing agrees with the compiler's _Float16 on random floats", "[half]") {
  std::mt19937 rng(1234);
  for (int i = 0; i < 200000; ++i) {
    float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    _Float16 h = static_cast<_Float16>(f);
    REQUIRE(f32ToF16(f) == std::bit_cast<uint16_t>(h));
  }
}
#endif

TEST_CASE("bf16 narrowing rounds to nearest even", "[half]") {
  std::mt19937 rng(99);
  for (int i = 0; i < 200000; ++i) {
    float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) {
      REQUIRE(std::isnan(bf16ToF32(f32ToBf16(f))));
      continue;
    }
    REQUIRE(f32ToBf16(f) == referenceBf16(f));
  }
  CHECK(f32ToBf16(1.0f) == 0x3f80);
  CHECK(bf16ToF32(0x3f80) == 1.0f);
  CHECK(f32ToBf16(std::bit_cast<float>(0x3f808000u)) == 0x3f80);  // tie: stays even
  CHECK(f32ToBf16(std::bit_cast<float>(0x3f818000u)) == 0x3f82);  // tie: rounds up to even
  CHECK(f32ToBf16(std::numeric_limits<float>::max()) == 0x7f80);  // overflows to infinity
}

namespace {

// The bfloat16 nearest an integer, ties to even, worked out on integers: the two multiples of
// the spacing at v's magnitude around it.
uint16_t referenceIntToBf16(int64_t v) {
  using U = unsigned __int128;
  const U magnitude = v < 0 ? U(0) - U(static_cast<__int128>(v)) : U(v);
  int width = 0;
  while ((magnitude >> width) != 0) ++width;
  const int drop = width > 8 ? width - 8 : 0;  // 8 significant bits
  const U lo = (magnitude >> drop) << drop, hi = lo + (U(1) << drop);
  const U below = magnitude - lo, above = hi - magnitude;
  const bool up = above < below || (above == below && ((magnitude >> drop) & 1) != 0);
  const float f = static_cast<float>(up ? hi : lo);  // 8 significant bits: exact
  return f32ToBf16(v < 0 ? -f : f);
}

}  // namespace

TEST_CASE("integers round to bf16 once", "[half]") {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200000; ++i) {
    const int64_t v = static_cast<int64_t>(rng()) >> (rng() % 64);
    INFO(v);
    REQUIRE(intToBf16(v) == referenceIntToBf16(v));
  }
  // 2^24 + 2^16 + 1 lies just above the midpoint of 2^24 and 2^24 + 2^17; through f32 it would
  // become the midpoint itself, and then 2^24.
  CHECK(intToBf16(16842753) == 0x4b81);
  CHECK(bf16ToF32(0x4b81) == 16908288.0f);
  CHECK(intToBf16(16842752) == 0x4b80);  // the midpoint: even
  CHECK(intToBf16(INT64_MIN) == 0xdf00);
  CHECK(intToBf16(INT64_MAX) == 0x5f00);
  CHECK(intToBf16(0) == 0);
  CHECK(convert(Type::BF16, Type::I32, i32(16842753)) == 0x4b81);
  CHECK(convert(Type::BF16, Type::I64, static_cast<uint64_t>(int64_t{-16842753})) == 0xcb81);
  CHECK(convert(Type::BF16, Type::U32, 0xffffffffu) == 0x4f80);  // 2^32
}

TEST_CASE("i32 arithmetic wraps and divides like CUDA", "[values]") {
  CHECK(s(op(BinOp::Add, Type::I32, i32(INT32_MAX), i32(1))) == INT32_MIN);
  CHECK(s(op(BinOp::Mul, Type::I32, i32(65536), i32(65536))) == 0);
  CHECK(s(op(BinOp::Sub, Type::I32, i32(INT32_MIN), i32(1))) == INT32_MAX);
  CHECK(s(op(BinOp::Div, Type::I32, i32(-7), i32(2))) == -3);
  CHECK(s(op(BinOp::Rem, Type::I32, i32(-7), i32(2))) == -1);
  CHECK(s(op(BinOp::Div, Type::I32, i32(INT32_MIN), i32(-1))) == INT32_MIN);
  CHECK(s(op(BinOp::Shr, Type::I32, i32(-8), i32(1))) == -4);
  CHECK(s(op(BinOp::Shl, Type::I32, i32(1), i32(31))) == INT32_MIN);
  CHECK(s(op(BinOp::Shl, Type::I32, i32(1), i32(32))) == 0);  // PTX clamps the amount
  CHECK(s(op(BinOp::Shr, Type::I32, i32(-8), i32(40))) == -1);
  CHECK(op(BinOp::Lt, Type::I32, i32(-1), i32(0)) == 1);
  CHECK(s(op(BinOp::Min, Type::I32, i32(-3), i32(2))) == -3);
}

TEST_CASE("u32 arithmetic is unsigned", "[values]") {
  uint64_t big = canonical(Type::U32, 0xfffffff8u);
  CHECK(op(BinOp::Shr, Type::U32, big, 1) == 0x7ffffffcu);
  CHECK(op(BinOp::Add, Type::U32, big, 16) == 8);
  CHECK(op(BinOp::Lt, Type::U32, 1, big) == 1);
  CHECK(op(BinOp::Div, Type::U32, big, 2) == 0x7ffffffcu);
  CHECK(op(BinOp::Sub, Type::U32, 0, 1) == 0xffffffffu);
}

TEST_CASE("integer operations C++ leaves undefined give the shared table's results", "[values]") {
  // tests/support/IntSemanticsCases.h: the generated code's helpers are checked against the
  // same table (tests/gpu/int_semantics_test.cu).
  auto typeOf = [](test::IntType t) {
    return t == test::IntType::I32 ? Type::I32 : t == test::IntType::I64 ? Type::I64 : Type::U32;
  };
  for (const test::IntCase& c : test::kIntCases) {
    const Type t = typeOf(c.type);
    const uint64_t a = canonical(t, static_cast<uint64_t>(c.a)), b = canonical(t, static_cast<uint64_t>(c.b));
    uint64_t got = 0;
    switch (c.op) {
      case test::IntOp::Add: got = op(BinOp::Add, t, a, b); break;
      case test::IntOp::Sub: got = op(BinOp::Sub, t, a, b); break;
      case test::IntOp::Mul: got = op(BinOp::Mul, t, a, b); break;
      case test::IntOp::Div: got = op(BinOp::Div, t, a, b); break;
      case test::IntOp::Rem: got = op(BinOp::Rem, t, a, b); break;
      case test::IntOp::Shl: got = op(BinOp::Shl, t, a, b); break;
      case test::IntOp::Shr: got = op(BinOp::Shr, t, a, b); break;
      case test::IntOp::Neg: got = unaryOp(tir::UnOp::Neg, t, splat(a))[0]; break;
      case test::IntOp::LoopNext: got = loopNext(t, splat(a), splat(b))[0]; break;
    }
    INFO("case " << (&c - test::kIntCases) << ": a = " << c.a << ", b = " << c.b);
    CHECK(got == canonical(t, static_cast<uint64_t>(c.expected)));
  }
  for (const test::FloatToIntCase& c : test::kFloatToIntCases) {
    const Type t = typeOf(c.to);
    const float x = c.nan ? NAN : c.value;
    INFO("float " << x);
    CHECK(convert(t, Type::F32, fromFloat(Type::F32, x)) == canonical(t, static_cast<uint64_t>(c.expected)));
  }
}

TEST_CASE("integer division by zero is reported for active lanes only", "[values]") {
  Lanes a = splat(i32(10)), b = splat(i32(1));
  b[3] = 0;
  b[7] = 0;
  Mask dz = 0;
  Lanes q = binaryOp(BinOp::Div, Type::I32, Type::I32, a, b, ~(1u << 7), &dz);
  CHECK(dz == (1u << 3));
  CHECK(q[3] == 0);
  CHECK(s(q[0]) == 10);
}

TEST_CASE("conversions follow cvt rules", "[values]") {
  auto f = [](float x) { return fromFloat(Type::F32, x); };
  CHECK(s(convert(Type::I32, Type::F32, f(-1.7f))) == -1);
  CHECK(s(convert(Type::I32, Type::F32, f(1e10f))) == INT32_MAX);
  CHECK(s(convert(Type::I32, Type::F32, f(NAN))) == 0);
  CHECK(convert(Type::U32, Type::F32, f(-5.0f)) == 0);
  CHECK(s(convert(Type::I64, Type::I32, i32(-5))) == -5);
  CHECK(convert(Type::U32, Type::I32, i32(-1)) == 0xffffffffu);
  CHECK(s(convert(Type::I32, Type::I64, static_cast<uint64_t>(int64_t{1} << 32 | 7))) == 7);
  CHECK(convert(Type::F16, Type::F32, f(1.0f)) == 0x3c00);
  CHECK(convert(Type::BF16, Type::F16, 0x3c00) == 0x3f80);
  CHECK(toFloat(Type::F32, convert(Type::F32, Type::I32, i32(-3))) == -3.0f);
  CHECK(convert(Type::Pred, Type::F32, f(0.5f)) == 1);
  CHECK(convert(Type::F16, Type::I32, i32(2049)) == f32ToF16(2048.0f));  // ties to even
}

TEST_CASE("f16 arithmetic rounds each result to f16", "[values]") {
  uint64_t one = 0x3c00, tiny = f32ToF16(std::ldexp(1.0f, -11));  // half an ulp of 1
  CHECK(op(BinOp::Add, Type::F16, one, tiny) == one);             // tie: stays even
  uint64_t three = f32ToF16(std::ldexp(3.0f, -11));
  CHECK(op(BinOp::Add, Type::F16, one, three) == 0x3c02);  // 1 + 1.5 ulp: ties up to even
  CHECK(op(BinOp::Lt, Type::F16, one, three) == 0);
  CHECK(unaryOp(tir::UnOp::Neg, Type::F16, splat(one))[0] == 0xbc00);
  CHECK(unaryOp(tir::UnOp::Relu, Type::F32, splat(fromFloat(Type::F32, -2.0f)))[0] ==
        fromFloat(Type::F32, 0.0f));
}

TEST_CASE("the fast exponentials flush subnormal results to zero, as ex2.approx.ftz does; exp2 keeps them",
          "[values]") {
  auto at = [](tir::UnOp op, float x) {
    return toDouble(Type::F32, unaryOp(op, Type::F32, splat(fromFloat(Type::F32, x)))[0]);
  };
  CHECK(at(tir::UnOp::Exp2, -130.0f) == 0x1p-130);
  CHECK(at(tir::UnOp::FastExp2, -130.0f) == 0.0);
  CHECK(at(tir::UnOp::FastExp2, -126.0f) == 0x1p-126);  // the smallest normal stays
  CHECK(at(tir::UnOp::FastExp2, -150.0f) == 0.0);
  CHECK(at(tir::UnOp::Exp, -88.0f) > 0.0);                // e^-88 is normal
  CHECK(at(tir::UnOp::FastExp, -88.0f) == at(tir::UnOp::Exp, -88.0f));
  CHECK(at(tir::UnOp::FastExp, -100.0f) == 0.0);          // e^-100 ~ 2^-144
  CHECK(at(tir::UnOp::Exp, -100.0f) > 0.0);
  CHECK(at(tir::UnOp::FastExp2, 0x1p-140f) == 1.0);       // a subnormal input: 2^0
}
