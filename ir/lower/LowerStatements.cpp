// The kernel body, statement by statement: scalar statements and control flow lower one to
// one; tile operations go to the file that lowers each (LowerFragmentCopy.cpp, LowerMma.cpp,
// LowerFragment.cpp). Each statement is bounded in size, and a statement whose offsets
// overflow 64 bits is reported instead of lowered.
#include <fmt/format.h>

#include <functional>

#include "base/CommonDiags.h"
#include "base/InternalError.h"
#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

using tir::ExprRef;
using tir::Type;

void KernelLowering::lowerBody() {
  std::function<void(const tile::Block&)> countSets = [&](const tile::Block& b) {
    for (const tile::Stmt& st : b) {
      if (const auto* set = std::get_if<tile::ScalarSet>(&st.node); set && set->dst.isVar) ++scalarSets_[set->dst.id];
      if (const auto* loop = std::get_if<tile::For>(&st.node)) countSets(loop->body);
      if (const auto* branch = std::get_if<tile::If>(&st.node)) {
        countSets(branch->then);
        countSets(branch->otherwise);
      }
    }
  };
  countSets(tk_.body);
  out_.push_back(&k_.body);
  block(tk_.body);
  out_.pop_back();
}

void KernelLowering::block(const tile::Block& b) {
  for (const tile::Stmt& s : b) {
    if (tooLarge_) return;
    stmt(s);
    if (emitted_ > kMaxThreadStmts && !tooLarge_) {
      diags_.report(kTooLarge, s.loc,
                    fmt::format("the kernel lowers to more than {} thread statements here", kMaxThreadStmts));
      tooLarge_ = true;
    }
  }
}

int64_t KernelLowering::largestOperand(const tile::Stmt& s) const {
  int64_t most = 0;
  auto view = [&](const tile::View& v) {
    // Views of register fragments enumerate the whole fragment (its owners and slots).
    const tile::Tensor& t = tk_.tensors[v.tensor];
    most = std::max(most, t.space == tile::MemSpace::Local ? t.staticSize() : v.size());
  };
  auto fragment = [&](uint32_t tensor) { most = std::max(most, tk_.tensors[tensor].staticSize()); };
  auto expr = [&](auto& self, const tile::FragRef& f) -> void {
    if (!f) return;
    if (f->kind == tile::FragExpr::Kind::Tensor) fragment(f->tensor);
    if (f->kind == tile::FragExpr::Kind::Memory) view(f->memory);
    self(self, f->cond);
    self(self, f->a);
    self(self, f->b);
  };
  std::visit(
      [&](const auto& n) {
        using N = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<N, tile::Copy>) {
          view(n.dst);
          if (n.src) view(*n.src);
          expr(expr, n.value);
        } else if constexpr (std::is_same_v<N, tile::FragAssign>) {
          fragment(n.dst);
          expr(expr, n.value);
        } else if constexpr (std::is_same_v<N, tile::Reduce>) {
          fragment(n.dst);
          expr(expr, n.src);
        } else if constexpr (std::is_same_v<N, tile::Mma>) {
          for (uint32_t t : {n.d, n.a, n.b, n.c}) fragment(t);
        } else if constexpr (std::is_same_v<N, tile::WarpgroupMma>) {
          for (uint32_t t : {n.d, n.c}) fragment(t);
          if (n.aFrag) fragment(*n.aFrag);
          view(n.a);
          view(n.b);
        } else if constexpr (std::is_same_v<N, tile::ElemLoad> || std::is_same_v<N, tile::ElemStore>) {
          if (tk_.tensors[n.view.tensor].space == tile::MemSpace::Local) fragment(n.view.tensor);
        }
      },
      s.node);
  return most;
}

void KernelLowering::stmt(const tile::Stmt& s) {
  if (int64_t n = largestOperand(s); n > kMaxStatementElements) {
    diags_.report(kTooLarge, s.loc,
                  fmt::format("this statement touches {} elements of one tensor; tyloc lowers at most {} per statement",
                              n, kMaxStatementElements));
    return;
  }
  // Layout arithmetic for the statement's tensors may leave 64 bits: the statement is then
  // reported. The blocks being filled are those of before it: the ones it opened went with the
  // exception. Any other refusal of the algebra is a bug: the checks before lowering have
  // reported every layout the algebra cannot take.
  const size_t depth = out_.size();
  try {
    stmtNode(s);
  } catch (const layout::OverflowError&) {
    out_.resize(depth);
    diags_.report(kIntegerOverflow, s.loc, "the offsets this statement computes overflow 64-bit integers");
  } catch (const layout::Error& e) {
    TYL_UNREACHABLE("the layout algebra refused a statement whose layouts passed the checks: {}", e.what());
  }
}

void KernelLowering::stmtNode(const tile::Stmt& s) {
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, tile::ScalarSet>) {
          // A scalar set once (a `let` never assigned again) holds values of its expression.
          if (n.dst.isVar && scalarSets_[n.dst.id] == 1) {
            varRanges_[n.dst.id] = tir::valueRange(n.value, atomRanges());
            varDefs_[n.dst.id] = n.value;
            if (tir::isInt(n.value->type)) varDivisors_[n.dst.id] = divisorOf(n.value);
          }
          emit(s.loc, tir::Assign{n.dst, n.value});
        } else if constexpr (std::is_same_v<T, tile::ElemLoad>) {
          const tile::Tensor& t = tk_.tensors[n.view.tensor];
          checkElementBanks(s.loc, "ld.shared", n.view, n.index);
          emit(s.loc, tir::Load{tile::toTir(t.dtype), memRef(t, tensorCoord(n.view, n.index)), {n.dst}, nullptr});
        } else if constexpr (std::is_same_v<T, tile::ElemStore>) {
          const tile::Tensor& t = tk_.tensors[n.view.tensor];
          checkElementBanks(s.loc, "st.shared", n.view, n.index);
          Type type = tile::toTir(t.dtype);
          ExprRef value = tir::cast(type, n.value);
          // Store straight from a register when the value already is one.
          tir::Reg src;
          if (value->kind == tir::ExprKind::VarRef) {
            src = tir::Reg::var(static_cast<uint32_t>(value->id));
          } else if (value->kind == tir::ExprKind::Elem) {
            src = tir::Reg::elem(static_cast<uint32_t>(value->id), value->index);
          } else {
            src = tir::Reg::var(tir::addVar(k_, fmt::format("st{}", temps_++), type));
            emit(s.loc, tir::Assign{src, value});
          }
          emit(s.loc, tir::Store{type, memRef(t, tensorCoord(n.view, n.index)), {src}, nullptr});
        } else if constexpr (std::is_same_v<T, tile::Copy>) {
          copy(s.loc, n);
        } else if constexpr (std::is_same_v<T, tile::FragAssign>) {
          fragAssign(s.loc, n.dst, n.value);
        } else if constexpr (std::is_same_v<T, tile::Reduce>) {
          reduce(s.loc, n);
        } else if constexpr (std::is_same_v<T, tile::Mma>) {
          mma(s.loc, n);
        } else if constexpr (std::is_same_v<T, tile::WarpgroupMma>) {
          warpgroupMma(s.loc, n);
        } else if constexpr (std::is_same_v<T, tile::MbarrierOp>) {
          mbarrierOp(s.loc, n);
        } else if constexpr (std::is_same_v<T, tile::CommitCopies>) {
          emit(s.loc, tir::CpAsyncCommit{});
        } else if constexpr (std::is_same_v<T, tile::WaitCopies>) {
          emit(s.loc, tir::CpAsyncWait{n.pending});
        } else if constexpr (std::is_same_v<T, tile::Barrier>) {
          // Before a barrier that a TMA store may follow, each thread makes its shared writes
          // visible to the async proxy (PTX requires the fence; tyloc inserts it).
          if (hasTmaStores_) emit(s.loc, tir::FenceProxyAsync{});
          emit(s.loc, tir::Barrier{n.cluster, n.id, n.threads, n.origin});
        } else if constexpr (std::is_same_v<T, tile::CommitStores>) {
          emit(s.loc, tir::BulkCommit{});
        } else if constexpr (std::is_same_v<T, tile::WaitStores>) {
          emit(s.loc, tir::BulkWait{n.pending});
        } else if constexpr (std::is_same_v<T, tile::WaitMmas>) {
          emit(s.loc, tir::WgmmaWait{n.pending});
        } else if constexpr (std::is_same_v<T, tile::SetMaxNReg>) {
          emit(s.loc, tir::SetMaxNReg{n.increase, n.count});
        } else if constexpr (std::is_same_v<T, tile::For>) {
          int64_t step = 0;
          if (tir::isIntConst(n.step, &step) && step > 0) {
            // In the body, begin <= var < end.
            int64_t lo = tir::valueRange(n.begin, atomRanges()).lo, hi = tir::valueRange(n.end, atomRanges()).hi;
            varRanges_[n.var] = tir::Range{lo, hi > lo ? hi - 1 : lo};
            // The variable takes begin + i * step.
            varDivisors_[n.var] = gcd64(divisorOf(n.begin), step);
          }
          tir::For loop{n.var, n.begin, n.end, n.step, false, {}};
          int64_t begin = 0, end = 0;
          const bool constant = tir::isIntConst(n.begin, &begin) && tir::isIntConst(n.end, &end) && step > 0;
          if (constant) constLoops_.push_back({n.var, begin, end, step});
          out_.push_back(&loop.body);
          block(n.body);
          out_.pop_back();
          if (constant) constLoops_.pop_back();
          emit(s.loc, std::move(loop));
        } else {
          tir::If node{n.cond, {}, {}};
          out_.push_back(&node.then);
          block(n.then);
          out_.pop_back();
          out_.push_back(&node.otherwise);
          block(n.otherwise);
          out_.pop_back();
          emit(s.loc, std::move(node));
        }
      },
      s.node);
}

}  // namespace tyl::lower
