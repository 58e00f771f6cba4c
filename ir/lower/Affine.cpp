#include "ir/lower/Affine.h"

#include <numeric>

#include "ir/layout/CheckedMath.h"
#include "ir/thread/Builder.h"
#include "ir/thread/ValueRange.h"

namespace tyl::lower {

int64_t gcd64(int64_t a, int64_t b) {
  return std::gcd(layout::checkedSub(0, a < 0 ? a : -a), layout::checkedSub(0, b < 0 ? b : -b));
}

// Compile-time arithmetic on coefficients and offsets is checked: a value outside 64 bits
// throws layout::OverflowError, which lowering reports as integer-overflow at the statement.
using layout::checkedAdd;
using layout::checkedMul;
using layout::checkedSub;

int64_t fittingMultiple(int64_t coeff, int64_t m) {
  const __int128 product = static_cast<__int128>(coeff) * m;
  return product >= -INT64_MAX && product <= INT64_MAX ? m : 1;
}

int64_t AffineForm::runtimeDivisor(const AtomDivisor& atom) const {
  int64_t g = 0;
  for (const auto& [a, coeff] : terms) g = gcd64(g, coeff * fittingMultiple(coeff, atom ? atom(*a) : 1));
  return g;
}

int64_t AffineForm::valueDivisor(const AtomDivisor& atom) const { return gcd64(constant, runtimeDivisor(atom)); }

namespace {

void addTerm(AffineForm& f, const tir::ExprRef& atom, int64_t coeff) {
  if (coeff == 0) return;
  for (auto& [a, c] : f.terms) {
    if (tir::sameExpr(a, atom)) {
      c = checkedAdd(c, coeff);
      return;
    }
  }
  f.terms.emplace_back(atom, coeff);
}

AffineForm scaled(AffineForm f, int64_t k) {
  f.constant = checkedMul(f.constant, k);
  for (auto& t : f.terms) t.second = checkedMul(t.second, k);
  std::erase_if(f.terms, [](const auto& t) { return t.second == 0; });
  return f;
}

AffineForm sum(AffineForm a, const AffineForm& b, int64_t sign) {
  a.constant = checkedAdd(a.constant, checkedMul(sign, b.constant));
  for (const auto& [atom, c] : b.terms) addTerm(a, atom, checkedMul(sign, c));
  std::erase_if(a.terms, [](const auto& t) { return t.second == 0; });
  return a;
}

}  // namespace

AffineForm linearize(const tir::ExprRef& e) {
  AffineForm f;
  int64_t c = 0;
  if (tir::isIntConst(e, &c)) {
    f.constant = c;
    return f;
  }
  // A widening keeps the value; a narrowing (an explicit i32(...)) or a change of signedness
  // may not, and is an atom.
  if (tir::isWidening(*e)) return linearize(e->args[0]);
  if (e->kind == tir::ExprKind::Binary) {
    const tir::ExprRef& a = e->args[0];
    const tir::ExprRef& b = e->args[1];
    switch (e->bin) {
      case tir::BinOp::Add: return sum(linearize(a), linearize(b), 1);
      case tir::BinOp::Sub: return sum(linearize(a), linearize(b), -1);
      case tir::BinOp::Mul:
        if (tir::isIntConst(b, &c)) return scaled(linearize(a), c);
        if (tir::isIntConst(a, &c)) return scaled(linearize(b), c);
        break;
      case tir::BinOp::Shl:
        if (tir::isIntConst(b, &c) && c >= 0 && c < 62) return scaled(linearize(a), int64_t{1} << c);
        break;
      default: break;
    }
  }
  addTerm(f, e, 1);
  return f;
}

namespace {

std::optional<int64_t> evalExactly(const tir::ExprRef& e, const ThreadPoint& p);

// The value of `e` at `p`, where it equals what the IR computes: nullopt when the exact value
// lies outside e's type, where the IR's arithmetic would have wrapped (or converted it).
std::optional<int64_t> evalInType(const tir::ExprRef& e, const ThreadPoint& p) {
  std::optional<int64_t> v = evalExactly(e, p);
  if (!v) return std::nullopt;
  const tir::Range r = tir::typeRange(e->type);
  if (*v < r.lo || *v > r.hi) return std::nullopt;
  return v;
}

std::optional<int64_t> evalExactly(const tir::ExprRef& e, const ThreadPoint& p) {
  if (!e) return std::nullopt;
  switch (e->kind) {
    case tir::ExprKind::IntConst: return e->value;
    case tir::ExprKind::SpecialReg: {
      int64_t linear = checkedAdd(checkedAdd(p.tid[0], checkedMul(p.tid[1], p.blockDim[0])),
                                  checkedMul(p.tid[2], checkedMul(p.blockDim[0], p.blockDim[1])));
      switch (e->special) {
        case tir::Special::TidX: return p.tid[0];
        case tir::Special::TidY: return p.tid[1];
        case tir::Special::TidZ: return p.tid[2];
        case tir::Special::LaneId: return linear % 32;
        case tir::Special::WarpId: return linear / 32;
        default: return std::nullopt;
      }
    }
    case tir::ExprKind::Cast:
      if (tir::isInt(e->type)) return evalInType(e->args[0], p);
      return std::nullopt;
    case tir::ExprKind::Binary: {
      std::optional<int64_t> a = evalInType(e->args[0], p);
      std::optional<int64_t> b = evalInType(e->args[1], p);
      if (!a || !b) return std::nullopt;
      // A shift by the type's width or more is defined differently in the IR.
      const bool shift = e->bin == tir::BinOp::Shl || e->bin == tir::BinOp::Shr;
      if (shift && *b >= 8 * tir::typeBytes(e->type)) return std::nullopt;
      return tir::exactBinary(e->bin, *a, *b);
    }
    case tir::ExprKind::Unary: {
      std::optional<int64_t> a = evalInType(e->args[0], p);
      if (!a) return std::nullopt;
      if (e->un == tir::UnOp::Neg) return tir::exactBinary(tir::BinOp::Sub, 0, *a);
      if (e->un == tir::UnOp::Not) return !*a;
      return std::nullopt;
    }
    case tir::ExprKind::Select: {
      std::optional<int64_t> c = evalInType(e->args[0], p);
      if (!c) return std::nullopt;
      return evalInType(*c ? e->args[1] : e->args[2], p);
    }
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<int64_t> evalAtThread(const tir::ExprRef& e, const ThreadPoint& p) { return evalInType(e, p); }

std::vector<ThreadPoint> threadPoints(const std::array<int64_t, 3>& block) {
  std::vector<ThreadPoint> threads;
  for (int64_t z = 0; z < block[2]; ++z)
    for (int64_t y = 0; y < block[1]; ++y)
      for (int64_t x = 0; x < block[0]; ++x) {
        ThreadPoint p;
        p.tid[0] = x, p.tid[1] = y, p.tid[2] = z;
        for (size_t i = 0; i < 3; ++i) p.blockDim[i] = block[i];
        threads.push_back(p);
      }
  return threads;
}

}  // namespace tyl::lower
