// Walks over the statements of thread IR blocks, for the passes that rewrite them.
#pragma once

#include <type_traits>
#include <variant>
#include <vector>

#include "ir/thread/ThreadIR.h"

namespace tyl::tir {

// Every expression slot of every statement in `b` and the blocks nested in it, in program
// order: fn(expr, block, index of the statement in the block). `B` is Block, to rewrite the
// slots, or const Block, to read them.
template <typename B, typename Fn>
void forEachExpr(B& b, Fn&& fn) {
  for (size_t i = 0; i < b.size(); ++i) {
    auto slot = [&](auto& e) {
      if (e) fn(e, b, i);
    };
    auto nested = [&](auto& inner) { forEachExpr(inner, fn); };
    std::visit(
        [&](auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Assign> || std::is_same_v<T, Shfl>) slot(n.value);
          if constexpr (std::is_same_v<T, Load>) {
            slot(n.src.offset);
            slot(n.pred);
          }
          if constexpr (std::is_same_v<T, Store>) {
            slot(n.dst.offset);
            slot(n.pred);
          }
          if constexpr (std::is_same_v<T, If>) {
            slot(n.cond);
            nested(n.then);
            nested(n.otherwise);
          }
          if constexpr (std::is_same_v<T, For>) {
            slot(n.begin);
            slot(n.end);
            slot(n.step);
            nested(n.body);
          }
          if constexpr (std::is_same_v<T, CpAsync>) {
            slot(n.dst.offset);
            slot(n.src.offset);
            slot(n.srcBytes);
          }
          if constexpr (std::is_same_v<T, Ldmatrix> || std::is_same_v<T, Stmatrix>) slot(n.addr.offset);
          if constexpr (std::is_same_v<T, TmaLoad>) {
            slot(n.dst.offset);
            for (auto& c : n.coords) slot(c);
            slot(n.bar.offset);
          }
          if constexpr (std::is_same_v<T, TmaStore>) {
            slot(n.src.offset);
            for (auto& c : n.coords) slot(c);
          }
          if constexpr (std::is_same_v<T, MbarrierInit>) {
            slot(n.bar.offset);
            slot(n.count);
          }
          if constexpr (std::is_same_v<T, MbarrierArrive>) {
            slot(n.bar.offset);
            slot(n.expectTx);
          }
          if constexpr (std::is_same_v<T, MbarrierWait>) {
            slot(n.bar.offset);
            slot(n.parity);
          }
          if constexpr (std::is_same_v<T, Wgmma>) {
            slot(n.descA);
            slot(n.descB);
            slot(n.accumulate);
          }
          if constexpr (std::is_same_v<T, Check>) {
            slot(n.cond);
            for (auto& v : n.values) slot(v);
          }
          if constexpr (std::is_same_v<T, Cooperative>) {
            for (auto& g : n.group) slot(g);
            slot(n.member);
            slot(n.leader);
          }
        },
        b[i].node);
  }
}

// Calls fn(statement) for every statement of `b` and those nested in it, in program order.
template <typename Fn>
void forEachStmt(const Block& b, Fn&& fn) {
  for (const Stmt& s : b) {
    fn(s);
    if (const auto* loop = std::get_if<For>(&s.node)) forEachStmt(loop->body, fn);
    if (const auto* branch = std::get_if<If>(&s.node)) {
      forEachStmt(branch->then, fn);
      forEachStmt(branch->otherwise, fn);
    }
  }
}

// Calls fn(variable id) for each write of a variable by a statement in `b`, or nested in it:
// assignments, loads, ldmatrix, mma and wgmma destinations, loop variables.
template <typename Fn>
void forEachVarWrite(const Block& b, Fn&& fn) {
  auto reg = [&](const Reg& r) {
    if (r.isVar) fn(r.id);
  };
  for (const Stmt& s : b) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Assign> || std::is_same_v<T, Shfl>) reg(n.dst);
          if constexpr (std::is_same_v<T, Load> || std::is_same_v<T, Ldmatrix>)
            for (const Reg& r : n.dst) reg(r);
          if constexpr (std::is_same_v<T, Mma> || std::is_same_v<T, Wgmma>)
            for (const Reg& r : n.d) reg(r);
          if constexpr (std::is_same_v<T, If>) {
            forEachVarWrite(n.then, fn);
            forEachVarWrite(n.otherwise, fn);
          }
          if constexpr (std::is_same_v<T, For>) {
            fn(n.var);
            forEachVarWrite(n.body, fn);
          }
        },
        s.node);
  }
}

// Marks in `written` (indexed by variable id, sized to the kernel's variables) every variable
// that a statement in `b`, or nested in it, assigns or loads into, loop variables included.
inline void markWrittenVars(const Block& b, std::vector<bool>& written) {
  forEachVarWrite(b, [&](uint32_t var) { written.at(var) = true; });
}

// Removes the Cooperative markers from `b` and the blocks nested in it.
inline void removeCooperative(Block& b) {
  std::erase_if(b, [](const Stmt& s) { return std::holds_alternative<Cooperative>(s.node); });
  for (Stmt& s : b) {
    if (auto* n = std::get_if<If>(&s.node)) {
      removeCooperative(n->then);
      removeCooperative(n->otherwise);
    } else if (auto* loop = std::get_if<For>(&s.node)) {
      removeCooperative(loop->body);
    }
  }
}

}  // namespace tyl::tir
