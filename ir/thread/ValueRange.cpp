#include "ir/thread/ValueRange.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "ir/thread/Builder.h"

namespace tyl::tir {

namespace {

using Wide = __int128;

Range fromWide(Wide lo, Wide hi, Type t) {
  Range all = typeRange(t);
  if (lo < all.lo || hi > all.hi) return all;  // may wrap: anything
  return Range{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

// The exact values of a sum, difference, product or shift by a constant of operands in a and
// b, in 128 bits (nullopt for other operations).
struct WideRange {
  Wide lo, hi;
};
std::optional<WideRange> exactRange(const Expr& e, Range a, Range b) {
  int64_t c = 0;
  switch (e.bin) {
    case BinOp::Add: return WideRange{Wide{a.lo} + b.lo, Wide{a.hi} + b.hi};
    case BinOp::Sub: return WideRange{Wide{a.lo} - b.hi, Wide{a.hi} - b.lo};
    case BinOp::Mul: {
      Wide p[] = {Wide{a.lo} * b.lo, Wide{a.lo} * b.hi, Wide{a.hi} * b.lo, Wide{a.hi} * b.hi};
      return WideRange{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
    }
    case BinOp::Shl:
      if (isIntConst(e.args[1], &c) && c >= 0 && c < 63)
        return WideRange{Wide{a.lo} * (Wide{1} << c), Wide{a.hi} * (Wide{1} << c)};
      return std::nullopt;
    default: return std::nullopt;
  }
}

// The smallest 2^n - 1 at least v (v >= 0): a bound on v | w and v ^ w for 0 <= w <= v.
int64_t lowMask(int64_t v) {
  int64_t m = 0;
  while (m < v) m = m * 2 + 1;
  return m;
}

Range binaryRange(const Expr& e, const AtomRange& atom) {
  Range a = valueRange(e.args[0], atom), b = valueRange(e.args[1], atom);
  const Type t = e.type;
  int64_t c = 0;
  const bool constB = isIntConst(e.args[1], &c);
  switch (e.bin) {
    case BinOp::Add:
    case BinOp::Sub:
    case BinOp::Mul:
    case BinOp::Shl:
      if (std::optional<WideRange> w = exactRange(e, a, b)) return fromWide(w->lo, w->hi, t);
      return typeRange(t);
    case BinOp::Div:
      // Truncating division by a positive constant is monotonic.
      if (constB && c > 0) return Range{a.lo / c, a.hi / c};
      return typeRange(t);
    case BinOp::Rem:
      if (constB && c > 0) {
        // The remainder has the sign of the dividend and a magnitude below both |x| and c.
        if (a.lo >= 0 && a.hi < c) return a;
        return Range{a.lo >= 0 ? 0 : std::max(-(c - 1), a.lo), a.hi <= 0 ? 0 : std::min(c - 1, a.hi)};
      }
      return typeRange(t);
    case BinOp::Shr:
      // An arithmetic (or, for U32, logical) right shift by a constant is monotonic.
      if (constB && c >= 0 && c < 64) return Range{a.lo >> c, a.hi >> c};
      return typeRange(t);
    case BinOp::And:
      if (a.lo >= 0 && b.lo >= 0) return Range{0, std::min(a.hi, b.hi)};
      if (a.lo >= 0) return Range{0, a.hi};
      if (b.lo >= 0) return Range{0, b.hi};
      return typeRange(t);
    case BinOp::Or:
    case BinOp::Xor:
      if (a.lo >= 0 && b.lo >= 0) return Range{0, lowMask(std::max(a.hi, b.hi))};
      return typeRange(t);
    case BinOp::Min: return Range{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    case BinOp::Max: return Range{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    case BinOp::Lt:
    case BinOp::Le:
    case BinOp::Gt:
    case BinOp::Ge:
    case BinOp::Eq:
    case BinOp::Ne:
    case BinOp::LAnd:
    case BinOp::LOr: return Range{0, 1};
  }
  return typeRange(t);
}

}  // namespace

Range specialRange(Special s, const std::array<int64_t, 3>& block, const std::array<int64_t, 3>& grid) {
  const auto axis = [&](Special first) { return static_cast<size_t>(static_cast<int>(s) - static_cast<int>(first)); };
  switch (s) {
    case Special::TidX:
    case Special::TidY:
    case Special::TidZ: return {0, block[axis(Special::TidX)] - 1};
    case Special::CtaidX:
    case Special::CtaidY:
    case Special::CtaidZ: return {0, grid[axis(Special::CtaidX)] - 1};
    case Special::NctaidX:
    case Special::NctaidY:
    case Special::NctaidZ: return {1, grid[axis(Special::NctaidX)]};
    case Special::LaneId: return {0, 31};
    case Special::WarpId: return {0, (block[0] * block[1] * block[2] + 31) / 32 - 1};
    case Special::SharedBase: return {0, (int64_t{1} << 18) - 1};  // a shared window is below 256 KiB
    case Special::ElectOne: return {0, 1};
    case Special::ClusterRank: return {0, 15};
    case Special::SmCount: return {1, 1024};
  }
  return {0, 0};
}

int64_t gridLimit(const ExprRef& grid, int axis, const AtomRange& atom) {
  const int64_t cuda = axis == 0 ? (int64_t{1} << 31) - 1 : 65535;
  const int64_t hi = grid ? valueRange(grid, atom).hi : cuda;
  return std::max<int64_t>(1, std::min(hi, cuda));
}

std::optional<int64_t> exactBinary(BinOp op, int64_t a, int64_t b, const char** why) {
  const auto fail = [&](const char* reason) -> std::optional<int64_t> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const char* const outside = "a result leaves 64 bits";
  int64_t r = 0;
  switch (op) {
    case BinOp::Add: return __builtin_add_overflow(a, b, &r) ? fail(outside) : std::optional(r);
    case BinOp::Sub: return __builtin_sub_overflow(a, b, &r) ? fail(outside) : std::optional(r);
    case BinOp::Mul: return __builtin_mul_overflow(a, b, &r) ? fail(outside) : std::optional(r);
    case BinOp::Div:
    case BinOp::Rem:
      if (b == 0) return fail("it divides by zero");
      if (b == -1 && a == INT64_MIN) return fail(outside);
      return op == BinOp::Div ? a / b : a % b;
    case BinOp::Min: return std::min(a, b);
    case BinOp::Max: return std::max(a, b);
    case BinOp::Shl:
      if (b < 0 || b > 62) return fail("it shifts by an amount outside 0..62");
      if (a < 0 || a > (INT64_MAX >> b)) return fail(outside);
      return a << b;
    case BinOp::Shr:
      if (b < 0 || b > 63) return fail("it shifts by an amount outside 0..63");
      return a >> b;
    case BinOp::And: return a & b;
    case BinOp::Or: return a | b;
    case BinOp::Xor: return a ^ b;
    case BinOp::Lt: return int64_t{a < b};
    case BinOp::Le: return int64_t{a <= b};
    case BinOp::Gt: return int64_t{a > b};
    case BinOp::Ge: return int64_t{a >= b};
    case BinOp::Eq: return int64_t{a == b};
    case BinOp::Ne: return int64_t{a != b};
    case BinOp::LAnd: return int64_t{a != 0 && b != 0};
    case BinOp::LOr: return int64_t{a != 0 || b != 0};
  }
  return fail("it uses an unknown operation");
}

Range typeRange(Type t) {
  switch (t) {
    case Type::Pred: return Range{0, 1};
    case Type::I32: return Range{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case Type::U32: return Range{0, std::numeric_limits<uint32_t>::max()};
    default: return Range{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
}

Range valueRange(const ExprRef& e, const AtomRange& atom) {
  const Range all = typeRange(e->type);
  if (!isInt(e->type) && e->type != Type::Pred) return all;
  switch (e->kind) {
    case ExprKind::IntConst: return Range{e->value, e->value};
    case ExprKind::VarRef:
    case ExprKind::ParamRef:
    case ExprKind::SpecialReg:
    case ExprKind::Elem:
      if (std::optional<Range> r = atom ? atom(*e) : std::nullopt)
        return Range{std::max(r->lo, all.lo), std::min(r->hi, all.hi)};
      return all;
    case ExprKind::Cast: {
      const Type from = e->args[0]->type;
      if (!isInt(from) && from != Type::Pred) return all;  // from a float: saturates
      Range r = valueRange(e->args[0], atom);
      return r.within(all) ? r : all;
    }
    case ExprKind::Binary: return binaryRange(*e, atom);
    case ExprKind::Unary:
      if (e->un == UnOp::Neg) {
        Range r = valueRange(e->args[0], atom);
        return fromWide(-Wide{r.hi}, -Wide{r.lo}, e->type);
      }
      return all;
    case ExprKind::Select: {
      Range a = valueRange(e->args[1], atom), b = valueRange(e->args[2], atom);
      return Range{std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::FloatConst: return all;
  }
  return all;
}

bool exactOperation(const Expr& e, const AtomRange& atom) {
  if (e.kind != ExprKind::Binary || !isInt(e.type)) return false;
  const Range all = typeRange(e.type);
  std::optional<WideRange> w = exactRange(e, valueRange(e.args[0], atom), valueRange(e.args[1], atom));
  return w && w->lo >= all.lo && w->hi <= all.hi;
}

bool exactArithmetic(const ExprRef& e, const AtomRange& atom) {
  const Range all = typeRange(e->type);
  switch (e->kind) {
    case ExprKind::Cast:
      if (!isInt(e->type) || !isInt(e->args[0]->type)) return true;
      return exactArithmetic(e->args[0], atom) && valueRange(e->args[0], atom).within(all);
    case ExprKind::Binary: {
      const BinOp op = e->bin;
      if (op != BinOp::Add && op != BinOp::Sub && op != BinOp::Mul && op != BinOp::Shl) return true;
      return exactArithmetic(e->args[0], atom) && exactArithmetic(e->args[1], atom) && exactOperation(*e, atom);
    }
    default: return true;
  }
}

}  // namespace tyl::tir
