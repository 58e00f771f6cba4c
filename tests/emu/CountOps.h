// Queries of thread IR for the tests of its rewrites.
#pragma once

#include <cstddef>
#include <variant>

#include "ir/thread/ThreadIR.h"
#include "ir/thread/Walk.h"

namespace tyl::emu::test {

// How many `op` nodes the expressions of `b` and of the blocks nested in it hold.
inline int countBinary(const tir::Block& b, tir::BinOp op) {
  struct Count {
    tir::BinOp op;
    int operator()(const tir::ExprRef& e) const {
      if (!e) return 0;
      int n = e->kind == tir::ExprKind::Binary && e->bin == op;
      for (const tir::ExprRef& a : e->args) n += (*this)(a);
      return n;
    }
  };
  int n = 0;
  tir::forEachExpr(b, [&](const tir::ExprRef& e, const tir::Block&, size_t) { n += Count{op}(e); });
  return n;
}

// How many statements of kind `T` (tir::Load, tir::If, ...) `b` and the blocks nested in it hold,
// of those for which `pred` holds.
template <class T, class Pred>
int countStmts(const tir::Block& b, const Pred& pred) {
  int n = 0;
  for (const tir::Stmt& s : b) {
    if (const auto* t = std::get_if<T>(&s.node)) n += pred(*t);
    if (const auto* i = std::get_if<tir::If>(&s.node)) n += countStmts<T>(i->then, pred) + countStmts<T>(i->otherwise, pred);
    if (const auto* f = std::get_if<tir::For>(&s.node)) n += countStmts<T>(f->body, pred);
  }
  return n;
}

template <class T>
int countStmts(const tir::Block& b) {
  return countStmts<T>(b, [](const T&) { return true; });
}

}  // namespace tyl::emu::test
