#include "ir/lower/Addressing.h"

#include <algorithm>

#include "ir/layout/CheckedMath.h"
#include "ir/layout/Transforms.h"
#include "ir/lower/Affine.h"
#include "ir/thread/Builder.h"
#include "ir/thread/ValueRange.h"

namespace tyl::lower {

using tir::ExprRef;
using tir::Type;

namespace {

bool isPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

ExprRef constOf(int64_t v, Type t) { return tir::intConst(v, t); }

}  // namespace

ExprRef divConst(ExprRef x, int64_t d) {
  if (d == 1) return x;
  if (isPow2(d)) return tir::binary(tir::BinOp::Shr, x, constOf(__builtin_ctzll(static_cast<uint64_t>(d)), x->type));
  return tir::binary(tir::BinOp::Div, x, constOf(d, x->type));
}

ExprRef modConst(ExprRef x, int64_t d) {
  if (d == 1) return constOf(0, x->type);
  if (isPow2(d)) return tir::binary(tir::BinOp::And, x, constOf(d - 1, x->type));
  return tir::binary(tir::BinOp::Rem, x, constOf(d, x->type));
}

std::vector<ExprRef> tensorCoord(const tile::View& v, const std::vector<ExprRef>& c) {
  std::vector<ExprRef> coord = v.origin;
  for (size_t i = 0; i < v.dims.size(); ++i) {
    int d = v.dims[i];
    coord[d] = tir::add(coord[d], tir::cast(coord[d]->type, c[i]));
  }
  return coord;
}

namespace {

// How dimension d of a grouped layout is split: the product of the extents of its inner
// shards, their all being powers of two, and the stride of its outermost shard (0: it has none).
struct DimSplit {
  int64_t inner = 1;
  bool innerPow2 = true;
  int64_t outerStride = 0;
};

DimSplit splitOf(const layout::Grouped& g, int d) {
  DimSplit s;
  const layout::TileLayout& t = g.layout.tile;
  for (size_t i = g.bounds[d] + 1; i < g.bounds[d + 1]; ++i) {
    s.inner *= t.shard[i].extent;
    s.innerPow2 &= isPow2(t.shard[i].extent);
  }
  if (g.bounds[d] < g.bounds[d + 1]) s.outerStride = t.shard[g.bounds[d]].stride;
  return s;
}

}  // namespace

int64_t translationShift(const layout::Layout& l, const layout::Shape& shape, int d, int64_t step) {
  const DimSplit s = splitOf(layout::group(l, shape), d);
  return layout::checkedMul(step / s.inner, s.outerStride);
}

bool translationInvariant(const layout::Layout& l, const layout::Shape& shape, int d, int64_t step) {
  if (step == 0) return true;
  const DimSplit s = splitOf(layout::group(l, shape), d);
  if (step % s.inner != 0) return false;
  return !l.swizzle || (step / s.inner) * s.outerStride % l.swizzle->period() == 0;
}

namespace {

// Whether `e` is non-negative whatever the run-time values: thread and block ids, and
// masks, shifts and sums of them.
bool nonNegativeValue(const ExprRef& e) {
  int64_t c = 0;
  if (tir::isIntConst(e, &c)) return c >= 0;
  switch (e->kind) {
    case tir::ExprKind::SpecialReg: return true;
    case tir::ExprKind::Cast: return tir::isInt(e->args[0]->type) && nonNegativeValue(e->args[0]);
    case tir::ExprKind::Binary:
      switch (e->bin) {
        case tir::BinOp::And: return nonNegativeValue(e->args[0]) || nonNegativeValue(e->args[1]);
        case tir::BinOp::Shr:
        case tir::BinOp::Div: return nonNegativeValue(e->args[0]) && tir::isIntConst(e->args[1], &c) && c > 0;
        case tir::BinOp::Add:
        case tir::BinOp::Mul: return nonNegativeValue(e->args[0]) && nonNegativeValue(e->args[1]);
        default: return false;
      }
    default: return false;
  }
}

// The part of a coordinate that moves every offset alike: run-time terms whose steps
// are translation-invariant, pulled out of the layout as plain offsets, so the swizzle
// and decomposition apply only to the rest (which stays loop-invariant when the pulled
// part is a stage or loop index).
ExprRef pullInvariant(const layout::Layout& l, const layout::Grouped& g, const layout::Shape& shape, int d,
                      ExprRef& coord, Type type, const AtomDivisor& divisors) {
  // The coordinate of an element of the tensor fits the offset's type: narrowing it to that
  // type (elementOffset does) keeps its value.
  const bool narrowed = coord->kind == tir::ExprKind::Cast && coord->type == type && tir::isInt(coord->args[0]->type) &&
                        tir::typeBytes(coord->args[0]->type) > tir::typeBytes(type);
  AffineForm f = linearize(narrowed ? coord->args[0] : coord);
  ExprRef pulled;
  ExprRef rest = tir::intConst(f.constant, type);
  const DimSplit split = splitOf(g, d);
  const int64_t inner = split.inner, firstStride = split.outerStride;
  // What each atom is known to be a multiple of: a term coeff * a then moves the coordinate in
  // steps of coeff * m (1 where that is not known, or leaves 64 bits).
  auto multiple = [&](const ExprRef& atom, int64_t coeff) -> int64_t {
    int64_t m = divisors ? divisors(*atom) : 1;
    if (m <= 1) return 1;
    // Narrowed to the offset's type, an atom keeps only the power of two of m (up to 2^30).
    if (tir::typeBytes(atom->type) > tir::typeBytes(type)) m = std::min(m & -m, int64_t{1} << 30);
    return fittingMultiple(coeff, m);
  };
  auto invariantTerm = [&](const ExprRef& atom, int64_t coeff) {
    return firstStride != 0 && translationInvariant(l, shape, d, coeff * multiple(atom, coeff));
  };
  // The constant part moves offsets alike too when its step is translation-invariant
  // (the rows a thread copies at tid, tid + 32, ...: one swizzle, constant offsets apart),
  // provided what remains cannot be negative (the decomposition below assumes so).
  bool restNonNegative = std::all_of(f.terms.begin(), f.terms.end(), [&](const auto& t) {
    return (t.second > 0 && nonNegativeValue(t.first)) || invariantTerm(t.first, t.second);
  });
  if (firstStride != 0 && f.constant > 0 && restNonNegative && translationInvariant(l, shape, d, f.constant)) {
    pulled = tir::intConst(f.constant / inner * firstStride, type);
    rest = tir::intConst(0, type);
  }
  bool restMayBeNegative = !pulled && f.constant < 0;
  for (const auto& [atom, coeff] : f.terms) {
    ExprRef a = tir::cast(type, atom);
    if (invariantTerm(atom, coeff)) {
      // Each step of coeff * m moves every offset by `shift`; a is a multiple of m.
      const int64_t m = multiple(atom, coeff);
      const int64_t shift = layout::checkedMul(coeff * m / inner, firstStride);
      ExprRef term = shift % m == 0 ? tir::mul(a, tir::intConst(shift / m, type))
                                    : tir::mul(divConst(a, m), tir::intConst(shift, type));
      pulled = pulled ? tir::add(pulled, term) : term;
    } else {
      rest = tir::add(rest, tir::mul(a, tir::intConst(coeff, type)));
      restMayBeNegative |= coeff < 0 || !nonNegativeValue(atom);
    }
  }
  // The decomposition below divides the rest by the extents inside dimension d: shifts and
  // masks where they are powers of two, which round toward -infinity as a layout does, but
  // C++'s / and % otherwise, which do not where the rest is negative (an origin k - 6 with the
  // multiple of 6 pulled out). Then the coordinate stays whole.
  if (pulled && restMayBeNegative && !split.innerPow2) return nullptr;
  if (pulled) coord = rest;
  return pulled;
}

// Whether `e` is the same in every iteration of every loop: built from constants, scalar
// parameters and thread and block ids alone.
bool loopInvariant(const ExprRef& e) {
  if (!e) return true;
  switch (e->kind) {
    case tir::ExprKind::IntConst:
    case tir::ExprKind::ParamRef:
    case tir::ExprKind::SpecialReg: return true;
    case tir::ExprKind::Cast:
    case tir::ExprKind::Unary:
    case tir::ExprKind::Binary:
    case tir::ExprKind::Select:
      return loopInvariant(e->args[0]) && loopInvariant(e->args[1]) && loopInvariant(e->args[2]);
    default: return false;
  }
}

// Splits the sum `e` into its loop-invariant terms, its other terms and its constant, adding
// each to `inv`, `var` and `c` as 64-bit values scaled by `scale`: the terms of linearize's
// affine form, without building it. Like linearize, it looks through widening casts and takes
// the 32-bit sums inside them as exact, which they are for any coordinate of an element of
// the tensor.
void splitSum(const ExprRef& e, int64_t scale, ExprRef& inv, ExprRef& var, int64_t& c) {
  int64_t k = 0;
  if (tir::isIntConst(e, &k)) {
    c += k * scale;
    return;
  }
  if (tir::isWidening(*e)) return splitSum(e->args[0], scale, inv, var, c);
  if (e->kind == tir::ExprKind::Binary) {
    switch (e->bin) {
      case tir::BinOp::Add:
      case tir::BinOp::Sub:
        splitSum(e->args[0], scale, inv, var, c);
        splitSum(e->args[1], e->bin == tir::BinOp::Add ? scale : -scale, inv, var, c);
        return;
      case tir::BinOp::Mul:
        if (tir::isIntConst(e->args[1], &k)) return splitSum(e->args[0], scale * k, inv, var, c);
        if (tir::isIntConst(e->args[0], &k)) return splitSum(e->args[1], scale * k, inv, var, c);
        break;
      case tir::BinOp::Shl:
        if (tir::isIntConst(e->args[1], &k) && k >= 0 && k < 62)
          return splitSum(e->args[0], scale * (int64_t{1} << k), inv, var, c);
        break;
      default: break;
    }
  }
  ExprRef term = tir::cast(Type::I64, e);
  if (scale != 1) term = tir::mul(term, constOf(scale, Type::I64));
  ExprRef& sum = loopInvariant(e) ? inv : var;
  sum = sum ? tir::add(sum, term) : term;
}

// The offset of a global tensor with strides: the sum of coordinate times stride over the
// dimensions, regrouped as (loop-invariant part) + (the rest) + (constants times strides).
// The accesses of one thread to one window, rows r, r + 32, ... apart, then share one
// invariant offset (named once by hoistInvariants) and differ by a value that is the same
// in every thread (32 K, 64 K, ...), which the hardware adds in its address arithmetic;
// each access otherwise holds a 64-bit offset of its own.
ExprRef stridedOffset(const tile::Tensor& t, const std::vector<ExprRef>& coord) {
  ExprRef invariant, rest, constants;
  auto accumulate = [](ExprRef& sum, ExprRef term) { sum = sum ? tir::add(sum, term) : term; };
  for (size_t d = 0; d < coord.size(); ++d) {
    ExprRef stride = tir::cast(Type::I64, t.strides[d]);
    ExprRef inv, var;
    int64_t c = 0;
    splitSum(coord[d], 1, inv, var, c);
    if (inv) accumulate(invariant, tir::mul(inv, stride));
    if (var) accumulate(rest, tir::mul(var, stride));
    if (c != 0) accumulate(constants, tir::mul(constOf(c, Type::I64), stride));
  }
  ExprRef off;
  for (ExprRef part : {invariant, rest, constants})
    if (part) accumulate(off, part);
  return off ? off : constOf(0, Type::I64);
}

}  // namespace

ExprRef elementOffset(const tile::Tensor& t, const std::vector<ExprRef>& coordIn, const AtomDivisor& divisors) {
  std::vector<ExprRef> coord = coordIn;
  if (t.space == tile::MemSpace::Global && !t.layout) return stridedOffset(t, coord);
  Type type = t.space == tile::MemSpace::Global ? Type::I64 : Type::I32;
  const layout::Layout& l = *t.layout;
  layout::Grouped g = layout::group(l, t.staticShape);
  const layout::TileLayout& tl = g.layout.tile;
  ExprRef pulled;
  for (size_t d = 0; d < coord.size(); ++d) {
    ExprRef x = tir::cast(type, coord[d]);
    if (ExprRef p = pullInvariant(l, g, t.staticShape, static_cast<int>(d), x, type, divisors)) {
      coord[d] = x;
      pulled = pulled ? tir::add(pulled, p) : p;
    }
  }
  ExprRef off = constOf(tl.offset[layout::Axis::m], type);
  for (size_t d = 0; d < coord.size(); ++d) {
    ExprRef x = tir::cast(type, coord[d]);
    int64_t weight = 1;
    for (size_t i = g.bounds[d + 1]; i-- > g.bounds[d];) {
      const layout::Iter& it = tl.shard[i];
      ExprRef c = divConst(x, weight);
      if (i > g.bounds[d]) c = modConst(c, it.extent);
      off = tir::add(off, tir::mul(c, constOf(it.stride, type)));
      weight *= it.extent;
    }
  }
  auto withPulled = [&](ExprRef o) { return pulled ? tir::add(o, pulled) : o; };
  if (!l.swizzle) return withPulled(off);
  // Swizzle<B, M, S>: y = m >> M; y ^= (y >> S) & (2^B - 1); m' = (y << M) | (m & (2^M - 1)).
  const layout::Swizzle& s = *l.swizzle;
  ExprRef y = tir::binary(tir::BinOp::Shr, off, constOf(s.perElement, type));
  ExprRef field = constOf((int64_t{1} << s.len) - 1, type);
  if (s.inner)
    y = tir::binary(tir::BinOp::Xor, y,
                    tir::binary(tir::BinOp::And, tir::binary(tir::BinOp::Shr, y, constOf(s.atom, type)), field));
  else
    y = tir::binary(tir::BinOp::Xor, y,
                    tir::binary(tir::BinOp::Shl, tir::binary(tir::BinOp::And, y, field), constOf(s.atom, type)));
  ExprRef low = tir::binary(tir::BinOp::And, off, constOf((int64_t{1} << s.perElement) - 1, type));
  return withPulled(tir::binary(tir::BinOp::Or, tir::binary(tir::BinOp::Shl, y, constOf(s.perElement, type)), low));
}

ExprRef inBounds(const tile::Tensor& t, const std::vector<ExprRef>& coord, const tir::AtomRange& atoms) {
  // Only global tensors have edges that windows may run past; a shared or register
  // access outside its tensor is a bug (caught statically by sema where the window is
  // static, and by the emulator otherwise), never silently skipped.
  if (t.space != tile::MemSpace::Global) return nullptr;
  ExprRef pred;
  for (size_t d = 0; d < coord.size(); ++d) {
    AffineForm f = linearize(coord[d]);
    bool maybeNegative = f.constant < 0;
    for (const auto& [atom, c] : f.terms) {
      bool nonNegativeAtom =
          atom->kind == tir::ExprKind::SpecialReg || (atoms && tir::valueRange(atom, atoms).lo >= 0);
      maybeNegative |= c < 0 || !nonNegativeAtom;
    }
    int64_t extent = t.staticShape[d];
    // A static coordinate inside a static extent needs no test.
    int64_t cv = 0;
    if (extent >= 0 && tir::isIntConst(coord[d], &cv) && cv >= 0 && cv < extent) continue;
    // A coordinate known to lie in [-2^31, 2^32) against an extent in [0, 2^31): one unsigned
    // 32-bit comparison tests both bounds, a negative coordinate becoming at least 2^31.
    if (atoms && tir::isInt(t.shape[d]->type) &&
        tir::valueRange(coord[d], atoms).within({-(int64_t{1} << 31), (int64_t{1} << 32) - 1}) &&
        tir::valueRange(t.shape[d], atoms).within({0, (int64_t{1} << 31) - 1})) {
      ExprRef test = tir::lt(tir::cast(Type::U32, coord[d]), tir::cast(Type::U32, t.shape[d]));
      pred = pred ? tir::land(pred, test) : test;
      continue;
    }
    ExprRef x = tir::cast(Type::I64, coord[d]);
    ExprRef upper = tir::lt(x, tir::cast(Type::I64, t.shape[d]));
    pred = pred ? tir::land(pred, upper) : upper;
    if (maybeNegative) pred = tir::land(pred, tir::binary(tir::BinOp::Ge, x, constOf(0, Type::I64)));
  }
  return pred;
}

namespace {

// `e` without the integer conversions that keep its value (widening ones).
ExprRef unwidened(ExprRef e) {
  while (tir::isWidening(*e)) e = e->args[0];
  return e;
}

// E and s when `e` is cdiv(E, s) as Sema builds it: E / s + (E % s > 0 ? 1 : 0).
std::optional<std::pair<ExprRef, int64_t>> matchCdiv(const ExprRef& e) {
  if (e->kind != tir::ExprKind::Binary || e->bin != tir::BinOp::Add) return std::nullopt;
  const ExprRef& q = e->args[0];
  const ExprRef& up = e->args[1];
  int64_t s = 0, zero = -1, one = 0, none = -1;
  if (q->kind != tir::ExprKind::Binary || q->bin != tir::BinOp::Div || !tir::isIntConst(q->args[1], &s) || s <= 0)
    return std::nullopt;
  if (up->kind != tir::ExprKind::Select || !tir::isIntConst(up->args[1], &one) || one != 1 ||
      !tir::isIntConst(up->args[2], &none) || none != 0)
    return std::nullopt;
  const ExprRef& gt = up->args[0];
  if (gt->kind != tir::ExprKind::Binary || gt->bin != tir::BinOp::Gt || !tir::isIntConst(gt->args[1], &zero) ||
      zero != 0)
    return std::nullopt;
  const ExprRef& rem = gt->args[0];
  int64_t s2 = 0;
  if (rem->kind != tir::ExprKind::Binary || rem->bin != tir::BinOp::Rem || !tir::isIntConst(rem->args[1], &s2) ||
      s2 != s || !tir::sameExpr(rem->args[0], q->args[0]))
    return std::nullopt;
  return std::make_pair(q->args[0], s);
}

}  // namespace

bool boundsImply(const ExprRef& test, const ExprRef& cond, const tir::AtomRange& atoms,
                 const std::function<ExprRef(const tir::Expr&)>& definition) {
  if (!test || !cond || cond->kind != tir::ExprKind::Binary || cond->bin != tir::BinOp::Lt) return false;
  const ExprRef& a = cond->args[0];
  ExprRef b = cond->args[1];
  if (b->kind == tir::ExprKind::VarRef && definition)
    if (ExprRef d = definition(*b)) b = d;
  std::optional<std::pair<ExprRef, int64_t>> cdiv = matchCdiv(b);
  if (!cdiv || !tir::isInt(a->type) || !tir::exactArithmetic(a, atoms)) return false;
  const auto& [extent, s] = *cdiv;
  const AffineForm fa = linearize(a);
  // The conjuncts of the test.
  std::vector<ExprRef> tests, todo{test};
  while (!todo.empty()) {
    ExprRef t = todo.back();
    todo.pop_back();
    if (t->kind == tir::ExprKind::Binary && t->bin == tir::BinOp::LAnd) {
      todo.push_back(t->args[0]);
      todo.push_back(t->args[1]);
    } else {
      tests.push_back(t);
    }
  }
  for (const ExprRef& t : tests) {
    if (t->kind != tir::ExprKind::Binary || t->bin != tir::BinOp::Lt) continue;
    // inBounds tests x < E in 64 bits, or as one unsigned 32-bit comparison where that is
    // exact (then it also says x >= 0).
    ExprRef x = t->args[0], e = t->args[1];
    if (x->type == Type::U32 && x->kind == tir::ExprKind::Cast) x = x->args[0];
    if (e->kind == tir::ExprKind::Cast && tir::isInt(e->args[0]->type)) e = e->args[0];
    if (!tir::sameExpr(unwidened(e), unwidened(extent)) || !tir::exactArithmetic(x, atoms)) continue;
    // r = x - s * a, whose smallest value must not be negative.
    AffineForm r = linearize(x);
    // In 128 bits, where no product of 64-bit values overflows.
    using Wide = __int128;
    bool matched = true;
    for (const auto& term : fa.terms) {
      auto it = std::find_if(r.terms.begin(), r.terms.end(),
                             [&](const auto& t2) { return tir::sameExpr(t2.first, term.first); });
      if (it == r.terms.end() || Wide{it->second} != Wide{s} * term.second) {
        matched = false;
        break;
      }
      r.terms.erase(it);
    }
    if (!matched) continue;
    Wide least = Wide{r.constant} - Wide{s} * fa.constant;
    for (const auto& [atom, coeff] : r.terms) {
      tir::Range ar = tir::valueRange(atom, atoms);
      least += Wide{coeff} * (coeff > 0 ? ar.lo : ar.hi);
    }
    if (least >= 0) return true;
  }
  return false;
}

}  // namespace tyl::lower
