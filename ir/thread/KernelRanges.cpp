#include "ir/thread/KernelRanges.h"

#include <algorithm>
#include <functional>
#include <type_traits>
#include <variant>

#include "ir/thread/Builder.h"
#include "ir/thread/Walk.h"

namespace tyl::tir {

namespace {

using Wide = __int128;

bool fits(Wide lo, Wide hi, Type t) {
  const Range all = typeRange(t);
  return lo >= all.lo && hi <= all.hi;
}

std::optional<Range> intersect(std::optional<Range> a, const std::optional<Range>& b) {
  if (!a) return b;
  if (!b) return a;
  return Range{std::max(a->lo, b->lo), std::min(a->hi, b->hi)};
}

// Adds to reads[v] the references to each variable v in the expressions of `b` (and of the
// blocks nested in it).
void countReads(const Block& b, std::vector<int>& reads) {
  std::function<void(const ExprRef&)> count = [&](const ExprRef& e) {
    if (e->kind == ExprKind::VarRef) ++reads.at(static_cast<size_t>(e->id));
    for (const ExprRef& a : e->args)
      if (a) count(a);
  };
  forEachExpr(b, [&](const ExprRef& e, const Block&, size_t) { count(e); });
}

}  // namespace

KernelRanges::KernelRanges(const Kernel& k) : k_(k), writes_(k.vars.size()), vars_(k.vars.size()) {
  atoms_ = [this](const Expr& atom) -> std::optional<Range> {
    switch (atom.kind) {
      case ExprKind::VarRef: {
        const auto id = static_cast<size_t>(atom.id);
        return vars_.at(id) ? vars_[id] : k_.vars.at(id).known;
      }
      case ExprKind::SpecialReg: return specialRange(atom.special, k_.block, grid_);
      default: return std::nullopt;  // parameters, fragment elements: anything
    }
  };
  // The grid's expressions are over parameters only.
  for (int axis = 0; axis < 3; ++axis) grid_[static_cast<size_t>(axis)] = gridLimit(k.grid[static_cast<size_t>(axis)], axis, atoms_);
  forEachVarWrite(k.body, [&](uint32_t var) { ++writes_.at(var); });
  reads_.assign(k.vars.size(), 0);
  countReads(k.body, reads_);
  block(k.body);
}

// In program order, so that a definition's operands are known when they were defined before
// it. An operand not yet known (defined later, or by the definition itself in a loop) counts
// as any value, which keeps every range sound.
void KernelRanges::block(const Block& b) {
  for (const Stmt& s : b) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Assign>) {
            if (n.dst.isVar && writes_[n.dst.id] == 1 && isInt(n.value->type))
              vars_[n.dst.id] = intersect(valueRange(n.value, atoms_), k_.vars[n.dst.id].known);
          } else if constexpr (std::is_same_v<T, If>) {
            block(n.then);
            block(n.otherwise);
          } else if constexpr (std::is_same_v<T, For>) {
            // In the body the variable lies in [begin, end - 1]. After the last iteration it is
            // below end + step, or the type's largest value (the step saturates), and if the
            // loop did not run it is begin: that range counts when the variable is read
            // outside the body (the loop's own end included).
            const Type t = k_.vars[n.var].type;
            int64_t step = 0;
            if (writes_[n.var] == 1 && isInt(t) && isIntConst(n.step, &step) && step > 0) {
              const Range begin = valueRange(n.begin, atoms_), end = valueRange(n.end, atoms_);
              std::vector<int> inside(k_.vars.size());
              countReads(n.body, inside);
              const Wide last = reads_[n.var] == inside[n.var]
                                    ? std::max(Wide{begin.lo}, Wide{end.hi} - 1)
                                    : std::max(Wide{begin.hi}, Wide{end.hi} - 1 + step);
              const Wide hi = std::min(last, Wide{typeRange(t).hi});
              if (fits(begin.lo, begin.hi, t))
                vars_[n.var] = intersect(Range{begin.lo, static_cast<int64_t>(hi)}, k_.vars[n.var].known);
            }
            block(n.body);
          }
        },
        s.node);
  }
}

bool KernelRanges::stepMayOverflow(const For& loop) const {
  int64_t step = 0;
  if (!isIntConst(loop.step, &step) || step <= 0) return true;
  return !fits(0, Wide{valueRange(loop.end, atoms_).hi} - 1 + step, k_.vars.at(loop.var).type);
}

bool KernelRanges::plainInCpp(const Expr& e) const {
  const Type t = e.type;
  if (!isInt(t)) return true;
  const bool isSigned = t != Type::U32;
  if (e.kind == ExprKind::Unary) {
    if (e.un != UnOp::Neg || !isSigned) return true;
    const Range a = valueRange(e.args[0], atoms_);
    return fits(-Wide{a.hi}, -Wide{a.lo}, t);
  }
  if (e.kind != ExprKind::Binary) return true;
  if (e.bin == BinOp::Add || e.bin == BinOp::Sub || e.bin == BinOp::Mul) return !isSigned || exactOperation(e, atoms_);
  const Range a = valueRange(e.args[0], atoms_), b = valueRange(e.args[1], atoms_);
  const int64_t width = t == Type::I64 ? 64 : 32;
  switch (e.bin) {
    case BinOp::Shl:
      if (b.lo < 0 || b.hi >= width) return false;
      // C++17 leaves shifting a negative value, or a one into the sign bit, undefined.
      return !isSigned || (a.lo >= 0 && fits(0, Wide{a.hi} << b.hi, t));
    case BinOp::Shr: return b.lo >= 0 && b.hi < width;
    case BinOp::Div:
    case BinOp::Rem: {
      if (b.lo <= 0 && b.hi >= 0) return false;
      return !isSigned || b.lo > -1 || b.hi < -1 || a.lo > typeRange(t).lo;
    }
    default: return true;
  }
}

}  // namespace tyl::tir
