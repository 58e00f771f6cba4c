#include "ir/thread/Print.h"

#include "ir/thread/Builder.h"

#include <fmt/format.h>

namespace tyl::tir {
namespace {

const char* specialName(Special s) {
  switch (s) {
    case Special::TidX: return "tid.x";
    case Special::TidY: return "tid.y";
    case Special::TidZ: return "tid.z";
    case Special::CtaidX: return "ctaid.x";
    case Special::CtaidY: return "ctaid.y";
    case Special::CtaidZ: return "ctaid.z";
    case Special::NctaidX: return "nctaid.x";
    case Special::NctaidY: return "nctaid.y";
    case Special::NctaidZ: return "nctaid.z";
    case Special::LaneId: return "laneid";
    case Special::WarpId: return "warpid";
    case Special::SharedBase: return "smem_base";
    case Special::ElectOne: return "elect_one";
    case Special::ClusterRank: return "cluster_ctarank";
    case Special::SmCount: return "sm_count";
  }
  return "?";
}

const char* binName(BinOp op) {
  static const char* names[] = {"+",  "-",  "*",  "/",  "%",  "<<", ">>", "&",  "|",  "^",  "min",
                                "max", "<", "<=", ">",  ">=", "==", "!=", "&&", "||"};
  return names[static_cast<int>(op)];
}

class Printer {
 public:
  explicit Printer(const Kernel& k) : k_(k) {}

  std::string expr(const ExprRef& e) const {
    if (!e) return "<null>";
    switch (e->kind) {
      case ExprKind::IntConst:
        if (e->type == Type::Pred) return e->value ? "true" : "false";
        return fmt::format("{}", e->value);
      case ExprKind::FloatConst: return fmt::format("{}f", e->real);
      case ExprKind::VarRef: return "%" + k_.vars.at(e->id).name;
      case ExprKind::ParamRef: return "$" + k_.params.at(e->id).name;
      case ExprKind::SpecialReg: return specialName(e->special);
      case ExprKind::Elem: return fmt::format("{}[{}]", k_.arrays.at(e->id).name, e->index);
      case ExprKind::Binary:
        if (e->bin == BinOp::Min || e->bin == BinOp::Max)
          return fmt::format("{}({}, {})", binName(e->bin), expr(e->args[0]), expr(e->args[1]));
        return fmt::format("({} {} {})", expr(e->args[0]), binName(e->bin), expr(e->args[1]));
      case ExprKind::Unary:
        if (const char* fn = unaryFunctionName(e->un)) return fmt::format("{}({})", fn, expr(e->args[0]));
        return fmt::format("{}{}", e->un == UnOp::Neg ? "-" : "!", expr(e->args[0]));
      case ExprKind::Select:
        return fmt::format("select({}, {}, {})", expr(e->args[0]), expr(e->args[1]), expr(e->args[2]));
      case ExprKind::Cast: return fmt::format("{}({})", typeName(e->type), expr(e->args[0]));
    }
    return "?";
  }

  std::string reg(const Reg& r) const {
    if (r.isVar) return "%" + k_.vars.at(r.id).name;
    return fmt::format("{}[{}]", k_.arrays.at(r.id).name, r.index);
  }

  std::string regs(const std::vector<Reg>& rs) const {
    std::string s = "{";
    for (size_t i = 0; i < rs.size(); ++i) s += (i ? ", " : "") + reg(rs[i]);
    return s + "}";
  }

  std::string mem(const MemRef& m) const {
    return fmt::format("{}[{}]", k_.buffers.at(m.buffer).name, expr(m.offset));
  }

  static std::string pred(const ExprRef& p, const Printer& self) {
    return isTrue(p) ? "" : " if " + self.expr(p);
  }

  void block(const Block& b, int depth) {
    for (const Stmt& s : b) stmt(s, depth);
  }

  void line(int depth, const std::string& text) { out += std::string(depth * 2, ' ') + text + "\n"; }

  void stmt(const Stmt& s, int depth) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Assign>) {
            line(depth, fmt::format("{} = {}", reg(n.dst), expr(n.value)));
          } else if constexpr (std::is_same_v<T, Load>) {
            line(depth, fmt::format("ld.{}.{}x{} {}, {}{}", spaceName(n.src.buffer), typeName(n.type), n.dst.size(),
                                    regs(n.dst), mem(n.src), pred(n.pred, *this)));
          } else if constexpr (std::is_same_v<T, Store>) {
            line(depth, fmt::format("st.{}.{}x{} {}, {}{}", spaceName(n.dst.buffer), typeName(n.type), n.src.size(),
                                    mem(n.dst), regs(n.src), pred(n.pred, *this)));
          } else if constexpr (std::is_same_v<T, If>) {
            line(depth, fmt::format("if {} {{", expr(n.cond)));
            block(n.then, depth + 1);
            if (!n.otherwise.empty()) {
              line(depth, "} else {");
              block(n.otherwise, depth + 1);
            }
            line(depth, "}");
          } else if constexpr (std::is_same_v<T, For>) {
            line(depth, fmt::format("for{} %{} = {}; < {}; += {} {{", n.unroll ? ".unroll" : "", k_.vars.at(n.var).name,
                                    expr(n.begin), expr(n.end), expr(n.step)));
            block(n.body, depth + 1);
            line(depth, "}");
          } else if constexpr (std::is_same_v<T, Barrier>) {
            line(depth, n.cluster        ? std::string("barrier.cluster")
                          : n.threads > 0 ? fmt::format("bar.sync {}, {}", n.id, n.threads)
                                          : std::string("bar.sync 0"));
          } else if constexpr (std::is_same_v<T, CpAsync>) {
            std::string src = n.srcBytes ? fmt::format(", src_bytes {}", expr(n.srcBytes)) : "";
            line(depth, fmt::format("cp.async.{} {}, {}{}", n.bytes, mem(n.dst), mem(n.src), src));
          } else if constexpr (std::is_same_v<T, CpAsyncCommit>) {
            line(depth, "cp.async.commit_group");
          } else if constexpr (std::is_same_v<T, CpAsyncWait>) {
            line(depth, fmt::format("cp.async.wait_group {}", n.n));
          } else if constexpr (std::is_same_v<T, Ldmatrix>) {
            line(depth, fmt::format("ldmatrix.x{}{} {}, {}", n.num, n.trans ? ".trans" : "", regs(n.dst), mem(n.addr)));
          } else if constexpr (std::is_same_v<T, Stmatrix>) {
            line(depth, fmt::format("stmatrix.x{}{} {}, {}", n.num, n.trans ? ".trans" : "", mem(n.addr), regs(n.src)));
          } else if constexpr (std::is_same_v<T, Shfl>) {
            line(depth, fmt::format("{} = shfl.bfly {}, {}", reg(n.dst), expr(n.value), n.laneMask));
          } else if constexpr (std::is_same_v<T, Mma>) {
            line(depth, fmt::format("mma.m16n8k16.{} {}, {}, {}, {}", typeName(n.ab), regs(n.d), regs(n.a), regs(n.b),
                                    regs(n.c)));
          } else if constexpr (std::is_same_v<T, Wgmma>) {
            line(depth, fmt::format("wgmma.m64n{}k16.{} {}, {}, desc {}{}, scale-d {}", n.n, typeName(n.ab),
                                    regs(n.d),
                                    n.a.empty() ? fmt::format("desc {}{}", expr(n.descA), n.transA ? " (MN-major)" : "")
                                                : regs(n.a),
                                    expr(n.descB), n.transB ? " (MN-major)" : "",
                                    n.accumulate ? expr(n.accumulate) : "true"));
          } else if constexpr (std::is_same_v<T, WgmmaFence>) {
            line(depth, "wgmma.fence");
          } else if constexpr (std::is_same_v<T, WgmmaCommit>) {
            line(depth, "wgmma.commit_group");
          } else if constexpr (std::is_same_v<T, WgmmaWait>) {
            line(depth, fmt::format("wgmma.wait_group {}", n.n));
          } else if constexpr (std::is_same_v<T, SetMaxNReg>) {
            line(depth, fmt::format("setmaxnreg.{} {}", n.increase ? "inc" : "dec", n.count));
          } else if constexpr (std::is_same_v<T, MbarrierInit>) {
            line(depth, fmt::format("mbarrier.init {}, {}", mem(n.bar), expr(n.count)));
          } else if constexpr (std::is_same_v<T, MbarrierArrive>) {
            line(depth, n.expectTx ? fmt::format("mbarrier.arrive.expect_tx {}, {}", mem(n.bar), expr(n.expectTx))
                                   : fmt::format("mbarrier.arrive {}", mem(n.bar)));
          } else if constexpr (std::is_same_v<T, MbarrierWait>) {
            line(depth, fmt::format("mbarrier.wait.parity {}, {}", mem(n.bar), expr(n.parity)));
          } else if constexpr (std::is_same_v<T, TmaLoad>) {
            std::string coords;
            for (const ExprRef& c : n.coords) coords += (coords.empty() ? "" : ", ") + expr(c);
            line(depth, fmt::format("tma.load {}, [{}, {{{}}}], {}", mem(n.dst), k_.tensorMaps.at(n.map).name, coords,
                                    mem(n.bar)));
          } else if constexpr (std::is_same_v<T, TmaStore>) {
            std::string coords;
            for (const ExprRef& c : n.coords) coords += (coords.empty() ? "" : ", ") + expr(c);
            line(depth, fmt::format("tma.store [{}, {{{}}}], {}", k_.tensorMaps.at(n.map).name, coords, mem(n.src)));
          } else if constexpr (std::is_same_v<T, BulkCommit>) {
            line(depth, "cp.async.bulk.commit_group");
          } else if constexpr (std::is_same_v<T, BulkWait>) {
            line(depth, fmt::format("cp.async.bulk.wait_group.read {}", n.n));
          } else if constexpr (std::is_same_v<T, FenceProxyAsync>) {
            line(depth, "fence.proxy.async.shared::cta");
          } else if constexpr (std::is_same_v<T, FenceMbarrierInit>) {
            line(depth, "fence.mbarrier_init");
          } else if constexpr (std::is_same_v<T, Check>) {
            std::string values;
            for (const ExprRef& v : n.values) values += ", " + expr(v);
            line(depth, fmt::format("check {}{}  // {}", expr(n.cond), values, n.message));
          } else if constexpr (std::is_same_v<T, Cooperative>) {
            std::string group;
            for (const ExprRef& g : n.group) group += (group.empty() ? "" : ", ") + expr(g);
            line(depth, fmt::format("cooperative ({}){}{}  // {}", group,
                                    n.member ? fmt::format(" member {}", expr(n.member)) : "",
                                    n.leader ? fmt::format(" leader {}", expr(n.leader)) : "", n.what));
          } else {
            line(depth, "// " + n.text);
          }
        },
        s.node);
  }

  std::string spaceName(uint32_t buffer) const {
    return k_.buffers.at(buffer).space == Space::Global ? "global" : "shared";
  }

  std::string out;

 private:
  const Kernel& k_;
};

}  // namespace

std::string print(const Kernel& k, const ExprRef& e) { return Printer(k).expr(e); }

std::string print(const Kernel& k) {
  Printer p(k);
  std::string params;
  for (const Param& prm : k.params)
    params += fmt::format("{}{}: {}{}", params.empty() ? "" : ", ", prm.name, prm.isPointer ? "ptr " : "",
                          typeName(prm.type));
  p.out += fmt::format("kernel {}({}) grid({}, {}, {}) block({}, {}, {}) shared {} bytes\n", k.name, params,
                       p.expr(k.grid[0]), p.expr(k.grid[1]), p.expr(k.grid[2]), k.block[0], k.block[1], k.block[2],
                       k.sharedBytes);
  for (const LaunchCheck& c : k.checks) {
    if (c.kind == LaunchCheck::Kind::PointerAlignment)
      p.out += fmt::format("  check align({}, {})  // {}\n", k.params.at(c.param).name, c.alignBytes, c.message);
    else if (c.kind == LaunchCheck::Kind::Disjoint)
      p.out += fmt::format("  check disjoint({}, {})  // {}\n", k.params.at(c.param).name,
                           k.params.at(c.other).name, c.message);
    else
      p.out += fmt::format("  check {}  // {}\n", p.expr(c.cond), c.message);
  }
  for (const Buffer& b : k.buffers) {
    if (b.space == Space::Shared)
      p.out += fmt::format("  shared {}: {} bytes at {}\n", b.name, b.sharedBytes, b.sharedOffset);
  }
  for (const TensorMap& m : k.tensorMaps) {
    std::string dims, strides, box;
    for (const ExprRef& d : m.dims) dims += (dims.empty() ? "" : ", ") + p.expr(d);
    for (const ExprRef& s : m.strides) strides += (strides.empty() ? "" : ", ") + p.expr(s);
    for (int64_t b : m.box) box += fmt::format("{}{}", box.empty() ? "" : ", ", b);
    p.out += fmt::format("  tensor map {}: {} dims ({}) strides ({}) bytes box ({}) swizzle {}\n", m.name,
                         k.params.at(static_cast<size_t>(m.param)).name, dims, strides, box, m.swizzle);
  }
  for (const Array& a : k.arrays) p.out += fmt::format("  regs {}: {}[{}]\n", a.name, typeName(a.elem), a.count);
  p.block(k.body, 1);
  return p.out;
}

std::string print(const Module& m) {
  std::string out;
  for (const Kernel& k : m.kernels) out += print(k) + "\n";
  return out;
}

}  // namespace tyl::tir
