#include "ir/tile/Verify.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/InternalError.h"
#include "ir/thread/Builder.h"
#include "ir/thread/Verify.h"

namespace tyl::tile {
namespace {

class Verifier {
 public:
  Verifier(const Kernel& k, size_t limit) : k_(k), limit_(limit) {}

  std::vector<std::string> run() {
    // The skeleton's parameters, buffers, launch and launch checks, as the thread IR has them.
    for (std::string& p : tir::verifyKernel(k_.skeleton, limit_)) problems_.push_back("skeleton " + p);
    for (size_t t = 0; t < k_.tensors.size(); ++t) tensor(k_.tensors[t]);
    block(k_.body, "body");
    for (std::string& p : tir::verifyExprs(k_.skeleton, exprs_, limit_)) fail("", p);
    return std::move(problems_);
  }

 private:
  void fail(const std::string& where, const std::string& what) {
    if (problems_.size() < limit_) problems_.push_back(where.empty() ? what : fmt::format("{}: {}", where, what));
  }
  // Scalar expressions are checked together at the end (tir::verifyExprs), each shared node once.
  void scalar(const tir::ExprRef& e, const std::string& where) { exprs_.emplace_back(e, where); }

  void tensor(const Tensor& t) {
    const std::string where = fmt::format("tensor '{}'", t.name);
    if (t.shape.size() != t.staticShape.size())
      fail(where, fmt::format("{} extents but {} static extents", t.shape.size(), t.staticShape.size()));
    for (const tir::ExprRef& e : t.shape) scalar(e, where);
    for (const tir::ExprRef& e : t.strides) scalar(e, where);
    switch (t.space) {
      case MemSpace::Global:
        if (t.buffer >= k_.skeleton.buffers.size() || k_.skeleton.buffers[t.buffer].space != tir::Space::Global)
          fail(where, fmt::format("a global tensor on buffer {}", t.buffer));
        if (!t.layout && t.strides.size() != t.shape.size())
          fail(where, fmt::format("{} strides for {} dimensions", t.strides.size(), t.shape.size()));
        break;
      case MemSpace::Shared:
        if (t.buffer >= k_.skeleton.buffers.size() || k_.skeleton.buffers[t.buffer].space != tir::Space::Shared)
          fail(where, fmt::format("a shared tensor on buffer {}", t.buffer));
        if (!t.layout || !t.isStatic()) fail(where, "a shared tensor without a static shape and layout");
        break;
      case MemSpace::Local:
        if (t.array >= k_.skeleton.arrays.size()) fail(where, fmt::format("a register fragment in array {}", t.array));
        if (!t.layout || !t.isStatic()) fail(where, "a register fragment without a static shape and layout");
        if (t.slots < 0) fail(where, fmt::format("{} slots", t.slots));
        break;
    }
  }

  const Tensor* tensorOf(uint32_t id, const std::string& where) {
    if (id < k_.tensors.size()) return &k_.tensors[id];
    fail(where, fmt::format("tensor {} of {}", id, k_.tensors.size()));
    return nullptr;
  }

  void view(const View& v, const std::string& where) {
    const Tensor* t = tensorOf(v.tensor, where);
    if (!t) return;
    if (v.origin.size() != t->shape.size())
      fail(where, fmt::format("a view of '{}' with {} origins for {} dimensions", t->name, v.origin.size(), t->shape.size()));
    if (v.dims.size() != v.shape.size())
      fail(where, fmt::format("a view of '{}' keeping {} dimensions with {} extents", t->name, v.dims.size(), v.shape.size()));
    for (size_t i = 0; i < v.dims.size(); ++i)
      if (v.dims[i] < 0 || static_cast<size_t>(v.dims[i]) >= t->shape.size() ||
          std::count(v.dims.begin(), v.dims.begin() + static_cast<long>(i), v.dims[i]) != 0)
        fail(where, fmt::format("a view of '{}' keeping dimensions [{}]", t->name, fmt::join(v.dims, ", ")));
    for (int64_t e : v.shape)
      if (e < -1) fail(where, fmt::format("a view of '{}' with extent {}", t->name, e));  // -1: known at run time
    for (const tir::ExprRef& e : v.origin) scalar(e, where);
  }

  void local(uint32_t id, const std::string& where, const char* role) {
    if (const Tensor* t = tensorOf(id, where); t && t->space != MemSpace::Local)
      fail(where, fmt::format("{} '{}' is not a register fragment", role, t->name));
  }

  // Each broadcast leaf of `f` has the shape of `full` but for extents of 1.
  void broadcasts(const FragRef& f, const Tensor* full, const std::string& where) {
    if (!f || !full) return;
    if (f->kind == FragExpr::Kind::Tensor && f->broadcast && f->tensor < k_.tensors.size()) {
      const std::vector<int64_t>& s = k_.tensors[f->tensor].staticShape;
      bool ok = s.size() == full->staticShape.size() && !f->part;
      for (size_t d = 0; ok && d < s.size(); ++d) ok = s[d] == full->staticShape[d] || s[d] == 1;
      if (!ok) fail(where, fmt::format("'{}' broadcast to the shape of '{}'", k_.tensors[f->tensor].name, full->name));
    }
    broadcasts(f->cond, full, where);
    broadcasts(f->a, full, where);
    broadcasts(f->b, full, where);
  }

  void frag(const FragRef& f, const std::string& where) {
    if (!f) {
      fail(where, "a missing fragment expression");
      return;
    }
    if (const FragExpr* shaped = layoutLeaf(f); shaped && shaped->tensor < k_.tensors.size())
      broadcasts(f, &k_.tensors[shaped->tensor], where);
    switch (f->kind) {
      case FragExpr::Kind::Tensor:
        local(f->tensor, where, "the operand");
        if (f->part) {
          view(*f->part, where);
          if (f->part->tensor != f->tensor) fail(where, "a part of a fragment that is a view of another tensor");
          for (const tir::ExprRef& o : f->part->origin)
            if (!tir::isIntConst(o)) fail(where, "a part of a fragment at a run-time origin");
        }
        if (f->coord) {
          const Tensor* t = tensorOf(f->tensor, where);
          if (f->part || f->broadcast || f->dtype != DType::I32 || (t && *f->coord >= t->staticShape.size()))
            fail(where, "a fragment's coordinates that are not an i32 dimension of the whole fragment");
        }
        break;
      case FragExpr::Kind::Select:
        frag(f->cond, where);
        frag(f->a, where);
        frag(f->b, where);
        if (f->cond && f->cond->dtype != DType::Bool) fail(where, "a where(...) whose condition is not a comparison");
        break;
      case FragExpr::Kind::Memory:
        view(f->memory, where);
        if (const Tensor* t = tensorOf(f->memory.tensor, where); t && t->space == MemSpace::Local)
          fail(where, fmt::format("the memory operand '{}' is a register fragment", t->name));
        break;
      case FragExpr::Kind::Scalar:
        if (!f->scalar)
          fail(where, "a scalar operand without its value");
        else
          scalar(f->scalar, where);
        break;
      case FragExpr::Kind::Binary:
        frag(f->a, where);
        frag(f->b, where);
        if ((f->dtype == DType::Bool) != (f->bin >= tir::BinOp::Lt && f->bin <= tir::BinOp::Ne))
          fail(where, "a comparison of fragments that is not of type bool, or the reverse");
        break;
      case FragExpr::Kind::Unary:
      case FragExpr::Kind::Cast: frag(f->a, where); break;
    }
  }

  void block(const Block& b, const std::string& path) {
    for (size_t i = 0; i < b.size() && problems_.size() < limit_; ++i) stmt(b[i], fmt::format("{}[{}]", path, i));
  }

  void stmt(const Stmt& s, const std::string& where) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, ScalarSet>) {
            scalar(n.value, where);
            if (n.dst.isVar && (n.dst.id >= k_.skeleton.vars.size() ||
                                (n.value && n.value->type != k_.skeleton.vars[n.dst.id].type)))
              fail(where, fmt::format("a scalar set of variable {}", n.dst.id));
          } else if constexpr (std::is_same_v<T, ElemLoad> || std::is_same_v<T, ElemStore>) {
            view(n.view, where);
            if (n.index.size() != n.view.rank())
              fail(where, fmt::format("{} indices into a view of rank {}", n.index.size(), n.view.rank()));
            for (const tir::ExprRef& e : n.index) scalar(e, where);
            if constexpr (std::is_same_v<T, ElemStore>) scalar(n.value, where);
          } else if constexpr (std::is_same_v<T, Copy>) {
            view(n.dst, where);
            if (n.src.has_value() == (n.value != nullptr)) fail(where, "a copy needs either a source view or a value");
            if (n.src) {
              view(*n.src, where);
              if (n.src->shape != n.dst.shape)
                fail(where, fmt::format("a copy from shape [{}] to shape [{}]", fmt::join(n.src->shape, ", "),
                                        fmt::join(n.dst.shape, ", ")));
            }
            if (n.value) frag(n.value, where);
            if (n.value && readsPart(n.value))
              if (const Tensor* d = tensorOf(n.dst.tensor, where); d && d->space == MemSpace::Local)
                fail(where, "a part of a fragment assigned to registers");
            if (n.async) {
              const Tensor* d = tensorOf(n.dst.tensor, where);
              const Tensor* src = n.src ? tensorOf(n.src->tensor, where) : nullptr;
              if (n.tmaStore) {
                if (!d || !src || d->space != MemSpace::Global || src->space != MemSpace::Shared)
                  fail(where, "a store_async that is not from shared to global memory");
              } else if (!d || !src || d->space != MemSpace::Shared || src->space != MemSpace::Global) {
                fail(where, "a copy_async that is not from global to shared memory");
              }
            } else if (n.tmaStore) {
              fail(where, "a TMA store that is not asynchronous");
            }
            if (n.enable) {
              if (!n.async) fail(where, "an enable condition on a synchronous copy");
              scalar(n.enable, where);
            }
          } else if constexpr (std::is_same_v<T, FragAssign>) {
            local(n.dst, where, "the destination");
            frag(n.value, where);
            if (readsPart(n.value)) fail(where, "a part of a fragment assigned to registers");
          } else if constexpr (std::is_same_v<T, Reduce>) {
            local(n.dst, where, "the result");
            frag(n.src, where);
            if (readsPart(n.src)) fail(where, "a reduction of a part of a fragment");
            if (n.op != tir::BinOp::Add && n.op != tir::BinOp::Max && n.op != tir::BinOp::Min)
              fail(where, "a reduction that is not a sum, max or min");
            const FragExpr* shaped = layoutLeaf(n.src);
            const Tensor* src = shaped ? tensorOf(shaped->tensor, where) : nullptr;
            const Tensor* dst = tensorOf(n.dst, where);
            if (!src) fail(where, "a reduction without a register fragment to reduce");
            if (src && dst) {
              std::vector<int64_t> want = src->staticShape;
              for (size_t d : n.dims)
                if (d < want.size()) want[d] = 1; else fail(where, fmt::format("a reduction over dimension {}", d));
              if (dst->staticShape != want) fail(where, fmt::format("a reduction into '{}' of another shape", dst->name));
            }
          } else if constexpr (std::is_same_v<T, Mma>) {
            for (uint32_t t : {n.d, n.a, n.b, n.c}) local(t, where, "an MMA operand");
            if (n.mma.ab != DType::F16 && n.mma.ab != DType::BF16)
              fail(where, fmt::format("an MMA on {}", dtypeName(n.mma.ab)));
          } else if constexpr (std::is_same_v<T, WarpgroupMma>) {
            local(n.d, where, "the accumulator");
            local(n.c, where, "the accumulator");
            view(n.a, where);
            view(n.b, where);
            if (n.aFrag) {
              local(*n.aFrag, where, "the A operand");
              if (n.a.tensor != *n.aFrag) fail(where, "an A fragment that is not the A view's tensor");
            }
            for (const View* v : {&n.a, &n.b})
              if (const Tensor* t = tensorOf(v->tensor, where);
                  t && !(v == &n.a && n.aFrag) && (t->space != MemSpace::Shared || v->rank() != 2))
                fail(where, fmt::format("a wgmma operand '{}' that is not a 2-D view of shared memory", t->name));
            if (!n.mma.warpgroup() || (n.mma.ab != DType::F16 && n.mma.ab != DType::BF16))
              fail(where, "a wgmma without a warpgroup atom of f16 or bf16");
          } else if constexpr (std::is_same_v<T, MbarrierOp>) {
            view(n.bar, where);
            if (const Tensor* t = tensorOf(n.bar.tensor, where); t && !t->mbarriers)
              fail(where, fmt::format("an mbarrier operation on '{}', which holds no barriers", t->name));
            if (n.kind != MbarrierOp::Kind::Arrive && !n.value) fail(where, "an mbarrier init or wait without its value");
            if (n.value) scalar(n.value, where);
          } else if constexpr (std::is_same_v<T, WaitStores>) {
            if (n.pending < 0 || n.pending > 8) fail(where, fmt::format("waits for {} store groups", n.pending));
          } else if constexpr (std::is_same_v<T, WaitMmas>) {
            if (n.pending < 0 || n.pending > 7) fail(where, fmt::format("waits for {} MMA groups", n.pending));
          } else if constexpr (std::is_same_v<T, SetMaxNReg>) {
            if (n.count < 24 || n.count > 256 || n.count % 8 != 0)
              fail(where, fmt::format("setmaxnreg to {} registers (a multiple of 8 in 24..256)", n.count));
          } else if constexpr (std::is_same_v<T, WaitCopies>) {
            if (n.pending < 0) fail(where, fmt::format("waits for {} groups", n.pending));
          } else if constexpr (std::is_same_v<T, For>) {
            if (n.var >= k_.skeleton.vars.size()) fail(where, fmt::format("a loop over variable {}", n.var));
            for (const tir::ExprRef& e : {n.begin, n.end, n.step}) scalar(e, where);
            block(n.body, where + ".body");
          } else if constexpr (std::is_same_v<T, If>) {
            scalar(n.cond, where);
            if (n.cond && n.cond->type != tir::Type::Pred)
              fail(where, fmt::format("a condition of type {}", tir::typeName(n.cond->type)));
            block(n.then, where + ".then");
            block(n.otherwise, where + ".else");
          }
        },
        s.node);
  }

  const Kernel& k_;
  size_t limit_;
  std::vector<std::string> problems_;
  std::vector<std::pair<tir::ExprRef, std::string>> exprs_;
};

}  // namespace

std::vector<std::string> verifyKernel(const Kernel& k, size_t limit) { return Verifier(k, limit).run(); }

void verify(const Module& m, std::string_view stage) {
  for (const Kernel& k : m.kernels) {
    std::vector<std::string> problems = verifyKernel(k, 4);
    if (!problems.empty())
      TYL_UNREACHABLE("the tile IR of kernel '{}' {} breaks its invariants: {}", k.skeleton.name, stage,
                      fmt::join(problems, "; "));
  }
}

}  // namespace tyl::tile
