#include "ir/tile/Print.h"

#include <fmt/format.h>

#include "ir/thread/Print.h"

namespace tyl::tile {
namespace {

class Printer {
 public:
  explicit Printer(const Kernel& k) : k_(k) {}

  std::string e(const tir::ExprRef& x) const { return tir::print(k_.skeleton, x); }

  std::string view(const View& v) const {
    const Tensor& t = k_.tensors[v.tensor];
    std::string origin, shape;
    for (size_t d = 0; d < v.origin.size(); ++d) origin += (d ? ", " : "") + e(v.origin[d]);
    for (size_t d = 0; d < v.shape.size(); ++d) shape += fmt::format("{}{}", d ? ", " : "", v.shape[d]);
    return fmt::format("{}[origin ({}) shape ({})]", t.name, origin, shape);
  }

  std::string frag(const FragRef& f) const {
    switch (f->kind) {
      case FragExpr::Kind::Tensor:
        if (f->coord) return fmt::format("{}.coord({})", k_.tensors[f->tensor].name, *f->coord);
        return f->part ? view(*f->part) : k_.tensors[f->tensor].name + (f->broadcast ? "[broadcast]" : "");
      case FragExpr::Kind::Select: return fmt::format("where({}, {}, {})", frag(f->cond), frag(f->a), frag(f->b));
      case FragExpr::Kind::Memory: return view(f->memory);
      case FragExpr::Kind::Scalar: return e(f->scalar);
      case FragExpr::Kind::Binary: {
        static const char* ops[] = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "min", "max"};
        int i = static_cast<int>(f->bin);
        static const char* cmps[] = {"<", "<=", ">", ">=", "==", "!="};
        if (f->bin >= tir::BinOp::Lt && f->bin <= tir::BinOp::Ne)
          return fmt::format("({} {} {})", frag(f->a), cmps[i - static_cast<int>(tir::BinOp::Lt)], frag(f->b));
        if (f->bin == tir::BinOp::Min || f->bin == tir::BinOp::Max)
          return fmt::format("{}({}, {})", ops[i], frag(f->a), frag(f->b));
        return fmt::format("({} {} {})", frag(f->a), i < 12 ? ops[i] : "?", frag(f->b));
      }
      case FragExpr::Kind::Unary:
        return fmt::format("{}({})", tir::unaryFunctionName(f->un) ? tir::unaryFunctionName(f->un) : "neg", frag(f->a));
      case FragExpr::Kind::Cast: return fmt::format("{}({})", dtypeName(f->dtype), frag(f->a));
    }
    return "?";
  }

  void line(int depth, const std::string& s) { out += std::string(depth * 2, ' ') + s + "\n"; }

  void block(const Block& b, int depth) {
    for (const Stmt& s : b) {
      std::visit(
          [&](const auto& n) {
            using T = std::decay_t<decltype(n)>;
            if constexpr (std::is_same_v<T, ScalarSet>) {
              line(depth, fmt::format("{} = {}", reg(n.dst), e(n.value)));
            } else if constexpr (std::is_same_v<T, ElemLoad>) {
              line(depth, fmt::format("{} = {}[{}]", reg(n.dst), view(n.view), list(n.index)));
            } else if constexpr (std::is_same_v<T, ElemStore>) {
              line(depth, fmt::format("{}[{}] = {}", view(n.view), list(n.index), e(n.value)));
            } else if constexpr (std::is_same_v<T, Copy>) {
              line(depth, fmt::format("{}({}, {}){}", n.async ? "copy_async" : "copy", view(n.dst),
                                      n.src ? view(*n.src) : frag(n.value),
                                      n.enable ? fmt::format(" if {}", e(n.enable)) : "") +
                              (n.multicast ? fmt::format(" multicast {}", e(n.multicast)) : ""));
            } else if constexpr (std::is_same_v<T, FragAssign>) {
              line(depth, fmt::format("{} = {}", k_.tensors[n.dst].name, frag(n.value)));
            } else if constexpr (std::is_same_v<T, Reduce>) {
              std::string dims;
              for (size_t d : n.dims) dims += fmt::format("{}{}", dims.empty() ? "" : ", ", d);
              const char* op = n.op == tir::BinOp::Add ? "sum" : n.op == tir::BinOp::Max ? "max" : "min";
              line(depth, fmt::format("{} = reduce({}, ({}), {})", k_.tensors[n.dst].name, frag(n.src), dims, op));
            } else if constexpr (std::is_same_v<T, Mma>) {
              const layout::TiledMmaShape& m = n.mma.shape;
              line(depth, fmt::format("{} = mma_m16n8k16.{}[warps ({}, {}) repeat ({}, {})]({}, {}, {})",
                                      k_.tensors[n.d].name, dtypeName(n.mma.ab), m.warpsM, m.warpsN, m.repeatM,
                                      m.repeatN, k_.tensors[n.a].name, k_.tensors[n.b].name, k_.tensors[n.c].name));
            } else if constexpr (std::is_same_v<T, WarpgroupMma>) {
              line(depth, fmt::format("{} = wgmma_m64n{}k16.{}[warpgroups ({}, {})]({}, {}, {}){}", k_.tensors[n.d].name,
                                      n.mma.wgmmaN, dtypeName(n.mma.ab), n.mma.groupsM, n.mma.groupsN,
                                      n.aFrag ? k_.tensors[*n.aFrag].name : view(n.a),
                                      view(n.b), k_.tensors[n.c].name, n.async ? " async" : ""));
            } else if constexpr (std::is_same_v<T, MbarrierOp>) {
              const char* name = n.kind == MbarrierOp::Kind::Init     ? "init_barriers"
                                 : n.kind == MbarrierOp::Kind::Arrive ? "arrive"
                                                                      : "wait_barrier";
              line(depth, fmt::format("{}({}{}{})", name, view(n.bar), n.value ? ", " + e(n.value) : "",
                                      n.cta ? ", cta = " + e(n.cta) : ""));
            } else if constexpr (std::is_same_v<T, CommitCopies>) {
              line(depth, "commit_copies()");
            } else if constexpr (std::is_same_v<T, WaitCopies>) {
              line(depth, fmt::format("wait_copies({})", n.pending));
            } else if constexpr (std::is_same_v<T, Barrier>) {
              line(depth, n.cluster        ? std::string("cluster_barrier()")
                          : n.threads > 0 ? fmt::format("barrier(threads = {}, id = {})", n.threads, n.id)
                                          : std::string("barrier()"));
            } else if constexpr (std::is_same_v<T, CommitStores>) {
              line(depth, "commit_stores()");
            } else if constexpr (std::is_same_v<T, WaitStores>) {
              line(depth, fmt::format("wait_stores({})", n.pending));
            } else if constexpr (std::is_same_v<T, WaitMmas>) {
              line(depth, fmt::format("wait_mmas({})", n.pending));
            } else if constexpr (std::is_same_v<T, SetMaxNReg>) {
              line(depth, fmt::format("{}_registers({})", n.increase ? "increase" : "decrease", n.count));
            } else if constexpr (std::is_same_v<T, For>) {
              line(depth, fmt::format("for %{} in range({}, {}, {}) {{", k_.skeleton.vars[n.var].name, e(n.begin),
                                      e(n.end), e(n.step)));
              block(n.body, depth + 1);
              line(depth, "}");
            } else {
              line(depth, fmt::format("if {} {{", e(n.cond)));
              block(n.then, depth + 1);
              if (!n.otherwise.empty()) {
                line(depth, "} else {");
                block(n.otherwise, depth + 1);
              }
              line(depth, "}");
            }
          },
          s.node);
    }
  }

  std::string reg(const tir::Reg& r) const {
    if (r.isVar) return "%" + k_.skeleton.vars[r.id].name;
    return fmt::format("{}[{}]", k_.skeleton.arrays[r.id].name, r.index);
  }

  std::string list(const std::vector<tir::ExprRef>& xs) const {
    std::string s;
    for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + e(xs[i]);
    return s;
  }

  void kernel() {
    const tir::Kernel& sk = k_.skeleton;
    out += fmt::format("kernel {} grid({}, {}, {}) block({}, {}, {})\n", sk.name, e(sk.grid[0]), e(sk.grid[1]),
                       e(sk.grid[2]), sk.block[0], sk.block[1], sk.block[2]);
    for (const Tensor& t : k_.tensors) {
      std::string shape;
      for (size_t d = 0; d < t.shape.size(); ++d) shape += (d ? ", " : "") + e(t.shape[d]);
      std::string l = t.layout ? layout::toString(*t.layout) : "";
      if (!t.layout) {
        for (size_t d = 0; d < t.strides.size(); ++d) l += (d ? ", " : "strides (") + e(t.strides[d]);
        l += ")";
      }
      out += fmt::format("  tensor {}: {} {}[{}] layout {}{}\n", t.name, spaceName(t.space), dtypeName(t.dtype), shape,
                         l, t.space == MemSpace::Local ? fmt::format(" ({} slots per thread)", t.slots) : "");
    }
    block(k_.body, 1);
  }

  std::string out;

 private:
  const Kernel& k_;
};

}  // namespace

std::string print(const Module& module) {
  std::string out;
  for (const Kernel& k : module.kernels) {
    Printer p(k);
    p.kernel();
    out += p.out + "\n";
  }
  return out;
}

}  // namespace tyl::tile
