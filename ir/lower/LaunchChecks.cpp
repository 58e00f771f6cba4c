// The conditions the host launcher checks before a launch (tir::LaunchCheck), in the order
// docs/language.md gives them: the pointers' declared alignment; run-time dimensions that
// must not be negative and grids that must not divide by zero (before the grid is computed);
// pointers the kernel writes, which must not overlap another; the conditions of the vector
// accesses the body needs (added while lowering it); and last the checks of shared indices
// that semantic analysis made.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

using tir::ExprRef;
using tir::Type;

void KernelLowering::addLaunchCheck(tir::LaunchCheck check) {
  for (const tir::LaunchCheck& c : k_.checks) {
    if (c.kind == check.kind && c.param == check.param && c.other == check.other && c.alignBytes == check.alignBytes &&
        tir::sameExpr(c.cond, check.cond))
      return;
  }
  k_.checks.push_back(std::move(check));
}

std::vector<tir::LaunchCheck> KernelLowering::takeAnalysisChecks() {
  std::vector<tir::LaunchCheck> checks = std::move(k_.checks);
  k_.checks.clear();
  return checks;
}

void KernelLowering::addAlignmentChecks() {
  // Global pointers must have the alignment their declarations promise.
  for (const tile::Tensor& t : tk_.tensors) {
    if (t.space != tile::MemSpace::Global || t.alignBytes <= tile::dtypeBytes(t.dtype)) continue;
    tir::LaunchCheck c;
    c.kind = tir::LaunchCheck::Kind::PointerAlignment;
    c.param = k_.buffers[t.buffer].param;
    c.alignBytes = t.alignBytes;
    c.message = fmt::format("{} must be aligned to {} bytes (declared 'align {}')", t.name, t.alignBytes, t.alignBytes);
    c.loc = t.loc;
    addLaunchCheck(std::move(c));
  }
}

void KernelLowering::addDimensionChecks() {
  // Run-time dimensions must not be negative.
  for (const tile::Tensor& t : tk_.tensors) {
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.staticShape[d] >= 0) continue;
      tir::LaunchCheck c;
      c.cond = tir::binary(tir::BinOp::Ge, t.shape[d], tir::intConst(0, t.shape[d]->type));
      c.message = fmt::format("dimension {} of {} must not be negative", d, t.name);
      ExprRef dim = t.shape[d];
      while (dim->kind == tir::ExprKind::Cast && tir::isInt(dim->args[0]->type) &&
             tir::typeBytes(dim->args[0]->type) <= tir::typeBytes(dim->type))
        dim = dim->args[0];
      if (dim->kind == tir::ExprKind::ParamRef && dim->type != Type::U32) checkedDims_.insert(dim->id);
      c.loc = t.loc;
      c.beforeGrid = true;
      addLaunchCheck(std::move(c));
    }
  }
}

void KernelLowering::addGridDivisorChecks() {
  // A grid computed by dividing by 0 would be empty (the IR's n / 0 is 0), and the launch would
  // succeed without running anything: refused instead, before the grid is computed.
  for (int d = 0; d < 3; ++d) {
    std::vector<ExprRef> divisors;
    std::function<void(const ExprRef&)> walk = [&](const ExprRef& e) {
      for (const ExprRef& a : e->args)
        if (a) walk(a);
      if (e->kind != tir::ExprKind::Binary || (e->bin != tir::BinOp::Div && e->bin != tir::BinOp::Rem) ||
          !tir::isInt(e->type))
        return;
      const tir::Range r = tir::valueRange(e->args[1], atomRanges());
      if (r.lo <= 0 && r.hi >= 0 &&
          std::none_of(divisors.begin(), divisors.end(), [&](const ExprRef& x) { return tir::sameExpr(x, e->args[1]); }))
        divisors.push_back(e->args[1]);
    };
    if (k_.grid[d]) walk(k_.grid[d]);
    for (const ExprRef& divisor : divisors) {
      tir::LaunchCheck c;
      c.cond = tir::binary(tir::BinOp::Ne, divisor, tir::intConst(0, divisor->type));
      c.message = fmt::format("grid dimension {} divides by zero", "xyz"[d]);
      c.loc = k_.loc;
      c.beforeGrid = true;
      addLaunchCheck(std::move(c));
    }
    // A grid of whole clusters (a constant grid sema has checked; a product with a multiple of the
    // cluster needs no check).
    const ExprRef& grid = k_.grid[static_cast<size_t>(d)];
    const int64_t size = k_.cluster[static_cast<size_t>(d)];
    std::function<bool(const ExprRef&)> whole = [&](const ExprRef& e) {
      int64_t c = 0;
      // A power of two divides a product that wraps, too.
      if (tir::isIntConst(e, &c)) return c % size == 0 && (size & (size - 1)) == 0;
      if (e->kind == tir::ExprKind::Cast && tir::isInt(e->args[0]->type)) return whole(e->args[0]);
      return e->kind == tir::ExprKind::Binary && e->bin == tir::BinOp::Mul && (whole(e->args[0]) || whole(e->args[1]));
    };
    if (size > 1 && grid && !tir::isIntConst(grid) && !whole(grid)) {
      tir::LaunchCheck c;
      c.cond = tir::binary(tir::BinOp::Eq, tir::binary(tir::BinOp::Rem, grid, tir::intConst(size, grid->type)),
                           tir::intConst(0, grid->type));
      c.message = fmt::format("grid dimension {} must be a multiple of the cluster's {}", "xyz"[d], size);
      c.loc = k_.loc;
      addLaunchCheck(std::move(c));
    }
  }
}

namespace {

// The kernel's pointers are __restrict__: one check per pair of pointer parameters of which
// the kernel writes one, that they share no memory.
std::vector<tir::LaunchCheck> disjointChecks(const tir::Kernel& k) {
  std::vector<tir::LaunchCheck> out;
  for (size_t i = 0; i < k.params.size(); ++i) {
    for (size_t j = i + 1; j < k.params.size(); ++j) {
      const tir::Param& a = k.params[i];
      const tir::Param& b = k.params[j];
      if (!a.isPointer || !b.isPointer) continue;
      bool writesA = !k.buffers.at(a.buffer).readOnly, writesB = !k.buffers.at(b.buffer).readOnly;
      if (!writesA && !writesB) continue;
      tir::LaunchCheck c;
      c.kind = tir::LaunchCheck::Kind::Disjoint;
      c.param = static_cast<int>(i);
      c.other = static_cast<int>(j);
      c.message = fmt::format("{} and {} must not overlap (the kernel writes {})", a.name, b.name,
                              writesA && writesB ? "both" : writesA ? a.name : b.name);
      c.loc = k.loc;
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace

void KernelLowering::addDisjointChecks(size_t at) {
  // After the alignment, before the conditions of the accesses (docs/language.md).
  std::vector<tir::LaunchCheck> disjoint = disjointChecks(k_);
  k_.checks.insert(k_.checks.begin() + static_cast<std::ptrdiff_t>(at), std::make_move_iterator(disjoint.begin()),
                   std::make_move_iterator(disjoint.end()));
}

void KernelLowering::appendAnalysisChecks(std::vector<tir::LaunchCheck> checks) {
  for (tir::LaunchCheck& c : checks) addLaunchCheck(std::move(c));
}

}  // namespace tyl::lower
