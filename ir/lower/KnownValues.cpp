// What lowering knows of the values a kernel computes: the range of each loop variable, thread
// and block id, and parameter the launcher checks; the divisors of variables set once and of
// parameters whose multiples the launch checks require; and, from them, the addresses of
// tensor elements and the bounds tests that cannot be proved at compile time.
#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

using tir::ExprRef;

tir::MemRef KernelLowering::memRef(const tile::Tensor& t, const std::vector<ExprRef>& coord) {
  return tir::MemRef{t.buffer, elementOffset(t, coord, atomDivisors())};
}

ExprRef KernelLowering::bounds(const tile::Tensor& t, const std::vector<ExprRef>& coord) {
  ExprRef pred = inBounds(t, coord, atomRanges());
  return pred && tir::isTrue(pred) ? nullptr : pred;  // null: no test needed
}

// What the kernel's structure and launch checks say about an atom's values: a loop
// variable lies between its loop's bounds, a dimension checked at launch is not negative,
// thread ids lie inside the block and block ids inside the grid (which the launcher keeps
// within CUDA's limits).
std::optional<tir::Range> KernelLowering::atomRange(const tir::Expr& atom) const {
  switch (atom.kind) {
    case tir::ExprKind::VarRef: {
      auto it = varRanges_.find(static_cast<uint32_t>(atom.id));
      if (it == varRanges_.end()) return std::nullopt;
      return it->second;
    }
    case tir::ExprKind::ParamRef:
      if (checkedDims_.count(atom.id)) return tir::Range{0, std::numeric_limits<int64_t>::max()};
      return std::nullopt;
    case tir::ExprKind::SpecialReg: {
      // Only block ids and grid sizes depend on the grid (which may itself read the SM count).
      const bool gridDependent = atom.special >= tir::Special::CtaidX && atom.special <= tir::Special::NctaidZ;
      return tir::specialRange(atom.special, k_.block,
                               gridDependent ? std::array<int64_t, 3>{gridLimit(0), gridLimit(1), gridLimit(2)}
                                             : std::array<int64_t, 3>{1, 1, 1});
    }
    default: return std::nullopt;
  }
}

// The most blocks the launcher can launch along `axis`: its grid expression's largest value,
// and never more than CUDA allows (the launcher refuses larger grids).
int64_t KernelLowering::gridLimit(int64_t axis) const {
  std::optional<int64_t>& limit = gridLimits_[axis];
  if (limit) return *limit;
  return *(limit = tir::gridLimit(k_.grid[axis], static_cast<int>(axis), atomRanges()));
}

int64_t KernelLowering::atomDivisor(const tir::Expr& atom) const {
  if (atom.kind != tir::ExprKind::VarRef) return 1;
  auto it = varDivisors_.find(static_cast<uint32_t>(atom.id));
  return it == varDivisors_.end() ? 1 : it->second;
}

int64_t KernelLowering::divisorOf(const ExprRef& e) const {
  int64_t g = 1;
  try {
    g = linearize(e).valueDivisor(atomDivisors());
  } catch (const layout::OverflowError&) {
    return 1;  // a coefficient past 64 bits: nothing is known
  }
  if (g == 0 || tir::exactArithmetic(e, atomRanges())) return g;
  // Where the IR's arithmetic may wrap (modulo 2^32 or 2^64), only the power of two in g is
  // sure to survive: block_id.x * 65537 * 65535 is -block_id.x in i32, no multiple of 65535.
  const int64_t cap = tir::typeBytes(e->type) >= 8 ? int64_t{1} << 62 : int64_t{1} << 32;
  return std::min(g & -g, cap);
}

int64_t KernelLowering::knownDivisor(const ExprRef& e) const {
  int64_t c = 0;
  if (tir::isIntConst(e, &c)) return c == 0 ? 0 : (c < 0 ? -c : c);
  if (e->kind == tir::ExprKind::Cast && tir::isInt(e->args[0]->type)) return knownDivisor(e->args[0]);
  if (e->kind == tir::ExprKind::ParamRef) {
    auto it = paramDivisor_.find(e->id);
    return it == paramDivisor_.end() ? 1 : it->second;
  }
  return 1;
}

}  // namespace tyl::lower
