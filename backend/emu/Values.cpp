#include "backend/emu/Values.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "backend/emu/Half.h"
#include "base/InternalError.h"

namespace tyl::emu {

using tir::BinOp;
using tir::Type;
using tir::UnOp;

uint64_t canonical(Type type, uint64_t bits) {
  switch (type) {
    case Type::Pred: return bits & 1;
    case Type::I32: return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(bits)));
    case Type::U32:
    case Type::F32: return bits & 0xffffffffu;
    case Type::I64: return bits;
    case Type::F16:
    case Type::BF16: return bits & 0xffffu;
  }
  TYL_UNREACHABLE("{}", "emulator: unknown type");
}

float toFloat(Type type, uint64_t bits) {
  switch (type) {
    case Type::F32: return std::bit_cast<float>(static_cast<uint32_t>(bits));
    case Type::F16: return f16ToF32(static_cast<uint16_t>(bits));
    case Type::BF16: return bf16ToF32(static_cast<uint16_t>(bits));
    default: TYL_UNREACHABLE("{}", std::string("emulator: not a float type: ") + tir::typeName(type));
  }
}

uint64_t fromFloat(Type type, float value) {
  switch (type) {
    case Type::F32: return std::bit_cast<uint32_t>(value);
    case Type::F16: return f32ToF16(value);
    case Type::BF16: return f32ToBf16(value);
    default: TYL_UNREACHABLE("{}", std::string("emulator: not a float type: ") + tir::typeName(type));
  }
}

double toDouble(Type type, uint64_t bits) {
  if (tir::isFloat(type)) return toFloat(type, bits);
  return static_cast<double>(static_cast<int64_t>(bits));
}

namespace {

// Truncates toward zero and saturates to [lo, hi]; NaN becomes 0 (cvt.rzi.sat).
int64_t truncSaturate(double value, double lo, double hi) {
  if (std::isnan(value)) return 0;
  if (value <= lo) return static_cast<int64_t>(lo);
  if (value >= hi) return static_cast<int64_t>(hi);
  return static_cast<int64_t>(std::trunc(value));
}

int64_t toIntSaturating(Type to, double value) {
  switch (to) {
    case Type::I32: return truncSaturate(value, -2147483648.0, 2147483647.0);
    case Type::U32: return truncSaturate(value, 0.0, 4294967295.0);
    default:
      // 2^63 is not representable as int64: clamp just below it.
      if (!std::isnan(value) && value >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
      return truncSaturate(value, -9223372036854775808.0, 9223372036854774784.0);
  }
}

}  // namespace

uint64_t fromDouble(Type type, double value) {
  if (type == Type::Pred) return value != 0;
  if (tir::isFloat(type)) return fromFloat(type, static_cast<float>(value));
  return canonical(type, static_cast<uint64_t>(toIntSaturating(type, value)));
}

uint64_t convert(Type to, Type from, uint64_t bits) {
  if (to == from) return bits;
  bool fromFloat_ = tir::isFloat(from);
  if (to == Type::Pred) return fromFloat_ ? toFloat(from, bits) != 0.0f : bits != 0;
  if (tir::isInt(to)) {
    if (!fromFloat_) return canonical(to, bits);  // Pred and integers: wrap (or sign-/zero-extend)
    return canonical(to, static_cast<uint64_t>(toIntSaturating(to, toFloat(from, bits))));
  }
  // To a float type, in one rounding. 16-bit sources widen to f32 exactly. An integer goes to
  // bfloat16 directly; to f16 through f32, which is exact below 2^24, while above it both
  // roads reach infinity.
  if (fromFloat_) return fromFloat(to, toFloat(from, bits));
  if (to == Type::BF16) return intToBf16(static_cast<int64_t>(bits));
  return fromFloat(to, static_cast<float>(static_cast<int64_t>(bits)));
}

Lanes convert(Type to, Type from, const Lanes& a) {
  Lanes r;
  for (int l = 0; l < kWarpSize; ++l) r[l] = convert(to, from, a[l]);
  return r;
}

namespace {

template <class F>
Lanes map2(const Lanes& a, const Lanes& b, F f) {
  Lanes r;
  for (int l = 0; l < kWarpSize; ++l) r[l] = f(a[l], b[l]);
  return r;
}

int64_t s(uint64_t v) { return static_cast<int64_t>(v); }

// min and max of floats: the other operand when one is NaN, and -0 ordered below +0 (IEEE
// 754-2019 minimumNumber, maximumNumber), as the generated code's min.f32 and max.f32 compute
// them (runtime/tylo/portable.cuh; tests/support/IntSemanticsCases.h, kMinMaxCases).
float floatMin(float x, float y) {
  if (std::isnan(x)) return y;
  if (std::isnan(y)) return x;
  if (x == y) return std::signbit(x) ? x : y;
  return y < x ? y : x;
}
float floatMax(float x, float y) {
  if (std::isnan(x)) return y;
  if (std::isnan(y)) return x;
  if (x == y) return std::signbit(x) ? y : x;
  return x < y ? y : x;
}

Lanes compare(BinOp op, const Lanes& a, const Lanes& b, bool isFloatType, Type type) {
  if (isFloatType) {
    // C comparison semantics: every ordered comparison with NaN is false, != is true.
    return map2(a, b, [&](uint64_t x, uint64_t y) -> uint64_t {
      float fx = toFloat(type, x), fy = toFloat(type, y);
      switch (op) {
        case BinOp::Lt: return fx < fy;
        case BinOp::Le: return fx <= fy;
        case BinOp::Gt: return fx > fy;
        case BinOp::Ge: return fx >= fy;
        case BinOp::Eq: return fx == fy;
        default: return fx != fy;
      }
    });
  }
  switch (op) {
    case BinOp::Lt: return map2(a, b, [](uint64_t x, uint64_t y) -> uint64_t { return s(x) < s(y); });
    case BinOp::Le: return map2(a, b, [](uint64_t x, uint64_t y) -> uint64_t { return s(x) <= s(y); });
    case BinOp::Gt: return map2(a, b, [](uint64_t x, uint64_t y) -> uint64_t { return s(x) > s(y); });
    case BinOp::Ge: return map2(a, b, [](uint64_t x, uint64_t y) -> uint64_t { return s(x) >= s(y); });
    case BinOp::Eq: return map2(a, b, [](uint64_t x, uint64_t y) -> uint64_t { return x == y; });
    default: return map2(a, b, [](uint64_t x, uint64_t y) -> uint64_t { return x != y; });
  }
}

Lanes floatBinary(BinOp op, Type type, const Lanes& a, const Lanes& b) {
  auto arith = [&](auto f) {
    return map2(
        a, b, [&](uint64_t x, uint64_t y) { return fromFloat(type, f(toFloat(type, x), toFloat(type, y))); });
  };
  switch (op) {
    case BinOp::Add: return arith([](float x, float y) { return x + y; });
    case BinOp::Sub: return arith([](float x, float y) { return x - y; });
    case BinOp::Mul: return arith([](float x, float y) { return x * y; });
    case BinOp::Div: return arith([](float x, float y) { return x / y; });
    case BinOp::Rem: return arith([](float x, float y) { return std::fmod(x, y); });
    case BinOp::Min: return arith(floatMin);
    case BinOp::Max: return arith(floatMax);
    default: TYL_UNREACHABLE("{}", std::string("emulator: operator not defined on ") + tir::typeName(type));
  }
}

// Shifts clamp their amount like PTX shl/shr: past the width, left shifts give 0 and right
// shifts fill with the sign (signed) or zeros (unsigned).
Lanes shift(BinOp op, Type type, const Lanes& a, const Lanes& b) {
  int64_t width = type == Type::I64 ? 64 : 32;
  bool isSigned = type != Type::U32;
  return map2(a, b, [&](uint64_t x, uint64_t y) -> uint64_t {
    int64_t amount = s(y);
    bool inRange = amount >= 0 && amount < width;
    if (op == BinOp::Shl) return inRange ? canonical(type, x << amount) : 0;
    if (!inRange) amount = isSigned ? width - 1 : 63;
    // Canonical values are sign- or zero-extended, so a 64-bit arithmetic shift is right for
    // every integer type.
    return canonical(type, static_cast<uint64_t>(s(x) >> amount));
  });
}

Lanes intDivide(BinOp op, Type type, const Lanes& a, const Lanes& b, Mask active, Mask* divByZero) {
  Lanes r;
  for (int l = 0; l < kWarpSize; ++l) {
    int64_t x = s(a[l]), y = s(b[l]);
    if (y == 0) {
      if (laneOn(active, l) && divByZero) *divByZero |= 1u << l;
      r[l] = 0;
    } else if (y == -1) {
      // Avoids INT64_MIN / -1; the quotient wraps like the hardware's.
      r[l] = op == BinOp::Div ? canonical(type, 0 - static_cast<uint64_t>(x)) : 0;
    } else {
      r[l] = canonical(type, static_cast<uint64_t>(op == BinOp::Div ? x / y : x % y));
    }
  }
  return r;
}

Lanes intBinary(BinOp op, Type type, Type bType, const Lanes& a, const Lanes& b, Mask active,
                Mask* divByZero) {
  auto wrap = [&](auto f) {
    return map2(a, b, [&](uint64_t x, uint64_t y) { return canonical(type, f(x, y)); });
  };
  switch (op) {
    case BinOp::Add: return wrap([](uint64_t x, uint64_t y) { return x + y; });
    case BinOp::Sub: return wrap([](uint64_t x, uint64_t y) { return x - y; });
    case BinOp::Mul: return wrap([](uint64_t x, uint64_t y) { return x * y; });
    case BinOp::Div:
    case BinOp::Rem: return intDivide(op, type, a, b, active, divByZero);
    case BinOp::Shl:
    case BinOp::Shr:
      if (!tir::isInt(bType)) TYL_UNREACHABLE("{}", "emulator: shift amount is not an integer");
      return shift(op, type, a, b);
    case BinOp::And: return wrap([](uint64_t x, uint64_t y) { return x & y; });
    case BinOp::Or: return wrap([](uint64_t x, uint64_t y) { return x | y; });
    case BinOp::Xor: return wrap([](uint64_t x, uint64_t y) { return x ^ y; });
    case BinOp::Min: return map2(a, b, [](uint64_t x, uint64_t y) { return s(x) < s(y) ? x : y; });
    case BinOp::Max: return map2(a, b, [](uint64_t x, uint64_t y) { return s(x) < s(y) ? y : x; });
    default: TYL_UNREACHABLE("{}", "emulator: unexpected integer operator");
  }
}

bool isComparison(BinOp op) { return op >= BinOp::Lt && op <= BinOp::Ne; }

}  // namespace

Lanes binaryOp(BinOp op, Type type, Type bType, const Lanes& a, const Lanes& b, Mask active,
               Mask* divByZero) {
  if (op == BinOp::LAnd || op == BinOp::LOr) {
    if (type != Type::Pred || bType != Type::Pred)
      TYL_UNREACHABLE("{}", "emulator: && or || on non-predicates");
    if (op == BinOp::LAnd) return map2(a, b, [](uint64_t x, uint64_t y) -> uint64_t { return x & y; });
    return map2(a, b, [](uint64_t x, uint64_t y) -> uint64_t { return x | y; });
  }
  if (isComparison(op)) return compare(op, a, b, tir::isFloat(type), type);
  if (tir::isFloat(type)) return floatBinary(op, type, a, b);
  return intBinary(op, type, bType, a, b, active, divByZero);
}

Lanes loopNext(Type type, const Lanes& var, const Lanes& step) {
  const __int128 most = type == Type::I32 ? std::numeric_limits<int32_t>::max()
                        : type == Type::U32 ? std::numeric_limits<uint32_t>::max()
                                            : std::numeric_limits<int64_t>::max();
  // Canonical values are sign- or zero-extended, so their 64-bit readings are exact (an I64
  // step is positive).
  return map2(var, step, [&](uint64_t x, uint64_t y) {
    const __int128 next = __int128{s(x)} + __int128{s(y)};
    return canonical(type, static_cast<uint64_t>(static_cast<int64_t>(std::min(next, most))));
  });
}

namespace {

// The math functions on f32, computed in double and rounded once: within half an ulp of the
// exact value for every input (so within the bounds CUDA states for its functions and PTX for its
// .approx instructions, which are the emulator's documented tolerance against a GPU). The fast
// exponentials are ex2.approx.ftz: a subnormal result is zero.
float math(UnOp op, float x) {
  const double d = x;
  auto flushed = [](float r) { return r != 0.0f && std::fabs(r) < 0x1p-126f ? 0.0f : r; };
  switch (op) {
    case UnOp::Abs: return std::fabs(x);
    case UnOp::Sqrt:
    case UnOp::FastSqrt: return std::sqrt(x);
    case UnOp::Rsqrt:
    case UnOp::FastRsqrt: return static_cast<float>(1.0 / std::sqrt(d));
    case UnOp::Exp2: return static_cast<float>(std::exp2(d));
    case UnOp::FastExp2: return flushed(static_cast<float>(std::exp2(d)));
    case UnOp::Exp: return static_cast<float>(std::exp(d));
    case UnOp::FastExp: return flushed(static_cast<float>(std::exp(d)));
    case UnOp::Log2:
    case UnOp::FastLog2: return static_cast<float>(std::log2(d));
    case UnOp::Log:
    case UnOp::FastLog: return static_cast<float>(std::log(d));
    default: break;
  }
  TYL_UNREACHABLE("math() of the operator {}", static_cast<int>(op));
}

}  // namespace

Lanes unaryOp(UnOp op, Type type, const Lanes& a) {
  Lanes r;
  bool isFloatType = tir::isFloat(type);
  for (int l = 0; l < kWarpSize; ++l) {
    uint64_t x = a[l];
    switch (op) {
      case UnOp::Neg:
        // Flipping the sign bit is exact for every float format, NaN included.
        if (isFloatType)
          r[l] = x ^ (type == Type::F32 ? 0x80000000u : 0x8000u);
        else
          r[l] = canonical(type, 0 - x);
        break;
      case UnOp::Not: r[l] = type == Type::Pred ? (x ^ 1) : canonical(type, ~x); break;
      case UnOp::Relu:
        // max(x, 0): NaN and -0 become +0.
        if (isFloatType)
          r[l] = fromFloat(type, floatMax(toFloat(type, x), 0.0f));
        else
          r[l] = s(x) < 0 ? 0 : x;
        break;
      default: r[l] = fromFloat(type, math(op, toFloat(type, x))); break;
    }
  }
  return r;
}

}  // namespace tyl::emu
