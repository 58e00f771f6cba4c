#include "ir/thread/Verify.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <unordered_map>

#include "base/InternalError.h"

namespace tyl::tir {
namespace {

bool isComparison(BinOp op) { return op >= BinOp::Lt && op <= BinOp::Ne; }

const char* stmtName(const Stmt& s) {
  static constexpr const char* kNames[] = {"assign",   "load",     "store",       "if",           "for",
                                           "barrier",  "cp.async", "commit",      "wait",         "ldmatrix",
                                           "stmatrix", "shfl.sync", "mma.sync", "wgmma",       "wgmma.fence",  "wgmma.commit",
                                           "wgmma.wait", "setmaxnreg", "mbarrier.init", "mbarrier.arrive", "mbarrier.wait",
                                           "fence.mbarrier_init", "tma.load", "tma.store", "bulk.commit", "bulk.wait",
                                           "fence.proxy.async", "comment", "check", "cooperative"};
  static_assert(std::size(kNames) == std::variant_size_v<decltype(Stmt::node)>);
  return kNames[s.node.index()];
}

// Where a problem lies, formatted only when there is one: a part of the kernel ("launch
// check '...'"), or the path of a statement in the body ("body[3] for.body[0] ldmatrix").
struct Step {
  const char* block;  // "body", ".then", ".else"
  size_t index;
  const char* stmt;
};
struct Where {
  std::string part;
  const std::vector<Step>* path = nullptr;

  std::string text() const {
    if (!path) return part;
    std::string out;
    for (const Step& s : *path) out += fmt::format("{}[{}] {}", s.block, s.index, s.stmt);
    return out;
  }
};

class Verifier {
 public:
  Verifier(const Kernel& k, size_t limit) : k_(k), limit_(limit) {}

  std::vector<std::string> exprs(const std::vector<std::pair<ExprRef, std::string>>& list) {
    for (const auto& [e, where] : list) expr(e, Where{where});
    return std::move(problems_);
  }

  std::vector<std::string> run() {
    kernel();
    assignments_.assign(k_.vars.size(), 0);
    inScope_.assign(k_.vars.size(), 0);
    inBody_ = true;
    scopes_.emplace_back();
    block(k_.body, "body");
    for (size_t v = 0; v < k_.vars.size(); ++v)
      if (k_.vars[v].single && assignments_[v] != 1)
        fail(Where{"kernel"}, fmt::format("variable '{}' is marked single but is assigned {} times", k_.vars[v].name,
                                          assignments_[v]));
    return std::move(problems_);
  }

 private:
  void fail(const Where& where, const std::string& what) {
    if (problems_.size() < limit_) problems_.push_back(fmt::format("{}: {}", where.text(), what));
  }
  bool full() const { return problems_.size() >= limit_; }

  // ---- The kernel's entities and launch -----------------------------------------------

  void kernel() {
    for (int d = 0; d < 3; ++d)
      if (k_.block[d] < 1) fail(Where{"launch"}, fmt::format("block dimension {} is {}", d, k_.block[d]));
    if (k_.threadsPerBlock() > 1024) fail(Where{"launch"}, fmt::format("{} threads per block", k_.threadsPerBlock()));
    if (k_.sharedBytes < 0) fail(Where{"launch"}, fmt::format("{} bytes of shared memory", k_.sharedBytes));
    for (int d = 0; d < 3; ++d) {
      const Where where{fmt::format("grid dimension {}", d)};
      if (!k_.grid[d]) {
        fail(where, "missing");
        continue;
      }
      launchExpr(k_.grid[d], where);
      if (!isInt(k_.grid[d]->type)) fail(where, fmt::format("of type {}", typeName(k_.grid[d]->type)));
    }
    for (size_t a = 0; a < k_.arrays.size(); ++a)
      if (k_.arrays[a].count < 0) fail(Where{"kernel"}, fmt::format("register array '{}' has {} elements", k_.arrays[a].name, k_.arrays[a].count));
    for (size_t p = 0; p < k_.params.size(); ++p) {
      const Param& param = k_.params[p];
      const Where where{fmt::format("parameter '{}'", param.name)};
      if (!param.isPointer) continue;
      if (param.buffer < 0 || static_cast<size_t>(param.buffer) >= k_.buffers.size())
        fail(where, fmt::format("a pointer to buffer {} of {}", param.buffer, k_.buffers.size()));
      else if (k_.buffers[static_cast<size_t>(param.buffer)].param != static_cast<int>(p))
        fail(where, fmt::format("buffer '{}' names parameter {}", k_.buffers[static_cast<size_t>(param.buffer)].name,
                                k_.buffers[static_cast<size_t>(param.buffer)].param));
      if (param.shape.size() != param.strides.size())
        fail(where, fmt::format("{} extents but {} strides", param.shape.size(), param.strides.size()));
      for (const ExprRef& e : param.shape) launchExpr(e, Where{where.part + " (its shape)"});
      for (const ExprRef& e : param.strides) launchExpr(e, Where{where.part + " (its strides)"});
    }
    for (const Buffer& b : k_.buffers) {
      const Where where{fmt::format("buffer '{}'", b.name)};
      if (b.space == Space::Global) {
        if (b.param < 0 || static_cast<size_t>(b.param) >= k_.params.size() || !k_.params[static_cast<size_t>(b.param)].isPointer)
          fail(where, fmt::format("a global buffer without a pointer parameter ({})", b.param));
      } else if (b.sharedOffset < 0 || b.sharedBytes < 0 || b.sharedOffset > k_.sharedBytes - b.sharedBytes) {
        fail(where, fmt::format("shared bytes [{}, {}) outside the block's {}", b.sharedOffset,
                                b.sharedOffset + b.sharedBytes, k_.sharedBytes));
      }
      if (b.alignBytes < 0 || (b.alignBytes & (b.alignBytes - 1)) != 0)
        fail(where, fmt::format("an alignment of {} bytes", b.alignBytes));
    }
    for (const TensorMap& m : k_.tensorMaps) {
      const Where where{fmt::format("tensor map '{}'", m.name)};
      if (m.param < 0 || static_cast<size_t>(m.param) >= k_.params.size() || !k_.params[static_cast<size_t>(m.param)].isPointer)
        fail(where, fmt::format("parameter {} is not a pointer", m.param));
      if (m.dims.empty() || m.dims.size() > 5 || m.box.size() != m.dims.size() || m.strides.size() + 1 != m.dims.size())
        fail(where, fmt::format("{} dimensions, {} box extents and {} strides", m.dims.size(), m.box.size(),
                                m.strides.size()));
      for (int64_t b : m.box)
        if (b < 1 || b > 256) fail(where, fmt::format("a box extent of {}", b));
      if (m.swizzle != 0 && m.swizzle != 32 && m.swizzle != 64 && m.swizzle != 128)
        fail(where, fmt::format("a swizzle of {} bytes", m.swizzle));
      for (const ExprRef& e : m.dims) launchExpr(e, where);
      for (const ExprRef& e : m.strides) launchExpr(e, where);
    }
    for (const LaunchCheck& c : k_.checks) {
      const Where where{fmt::format("launch check '{}'", c.message)};
      auto pointer = [&](int p) {
        return p >= 0 && static_cast<size_t>(p) < k_.params.size() && k_.params[static_cast<size_t>(p)].isPointer;
      };
      switch (c.kind) {
        case LaunchCheck::Kind::Condition:
          if (!c.cond) {
            fail(where, "no condition");
            break;
          }
          launchExpr(c.cond, where);
          if (c.cond->type != Type::Pred) fail(where, fmt::format("a condition of type {}", typeName(c.cond->type)));
          break;
        case LaunchCheck::Kind::PointerAlignment:
          if (!pointer(c.param)) fail(where, fmt::format("parameter {} is not a pointer", c.param));
          if (c.alignBytes <= 0 || (c.alignBytes & (c.alignBytes - 1)) != 0)
            fail(where, fmt::format("an alignment of {} bytes", c.alignBytes));
          break;
        case LaunchCheck::Kind::Disjoint:
          if (!pointer(c.param) || !pointer(c.other) || c.param == c.other)
            fail(where, fmt::format("parameters {} and {} are not two pointers", c.param, c.other));
          break;
      }
    }
  }

  // An expression the host evaluates: over scalar parameters and constants only.
  void launchExpr(const ExprRef& e, const Where& where) {
    expr(e, where);
    if (!e) return;
    const Facts& f = node(e, where);
    if (f.registers || f.special) fail(where, "a launch-time expression reads a thread's registers or ids");
  }

  // ---- Expressions ----------------------------------------------------------------------

  // What an expression reads, worked out once per node (expressions are shared).
  struct Facts {
    bool registers = false;  // a variable or register element
    bool special = false;    // a special register
    bool smCount = false;    // Special::SmCount, which only the launcher reads
    std::shared_ptr<const std::vector<uint32_t>> singles;  // `single` variables, sorted; null: none
  };

  static void merge(Facts& into, const Facts& from) {
    into.registers |= from.registers;
    into.special |= from.special;
    into.smCount |= from.smCount;
    if (!from.singles || from.singles == into.singles) return;
    if (!into.singles) {
      into.singles = from.singles;
      return;
    }
    auto merged = std::make_shared<std::vector<uint32_t>>();
    std::set_union(into.singles->begin(), into.singles->end(), from.singles->begin(), from.singles->end(),
                   std::back_inserter(*merged));
    into.singles = std::move(merged);
  }

  // Checks `e` and what it reads; `where` names the statement.
  void expr(const ExprRef& e, const Where& where) {
    if (!e) {
      fail(where, "a missing expression");
      return;
    }
    const Facts& f = node(e, where);
    if (f.smCount && inBody_) fail(where, "a thread reads the SM count, which only the launcher knows");
    if (!f.singles || !inBody_) return;
    for (uint32_t v : *f.singles)
      if (inScope_[v] == 0)
        fail(where, fmt::format("reads the single variable '{}' where its assignment is not in scope", k_.vars[v].name));
  }

  // Checks the node and its operands, once per node, and returns what it reads.
  const Facts& node(const ExprRef& e, const Where& where) {
    if (auto it = facts_.find(e.get()); it != facts_.end()) return it->second;
    Facts f;
    if (e->kind == ExprKind::VarRef || e->kind == ExprKind::Elem) f.registers = true;
    if (e->kind == ExprKind::SpecialReg) (e->special == Special::SmCount ? f.smCount : f.special) = true;
    if (e->kind == ExprKind::VarRef && e->id < k_.vars.size() && k_.vars[e->id].single)
      f.singles = std::make_shared<const std::vector<uint32_t>>(1, e->id);
    auto arg = [&](int i) -> const Expr* {
      if (!e->args[i]) {
        fail(where, fmt::format("operand {} missing", i));
        return nullptr;
      }
      merge(f, node(e->args[i], where));
      return e->args[i].get();
    };
    auto bad = [&](const std::string& what) { fail(where, what); };
    switch (e->kind) {
      case ExprKind::IntConst: {
        const bool fits = e->type == Type::Pred   ? e->value == 0 || e->value == 1
                          : e->type == Type::I32 ? e->value == static_cast<int32_t>(e->value)
                          : e->type == Type::U32 ? e->value == static_cast<uint32_t>(e->value)
                                                 : e->type == Type::I64;
        if (!fits) bad(fmt::format("the constant {} is not a {}", e->value, typeName(e->type)));
        break;
      }
      case ExprKind::FloatConst:
        if (!isFloat(e->type)) bad(fmt::format("a float constant of type {}", typeName(e->type)));
        break;
      case ExprKind::VarRef:
        if (e->id >= k_.vars.size())
          bad(fmt::format("variable {} of {}", e->id, k_.vars.size()));
        else if (k_.vars[e->id].type != e->type)
          bad(fmt::format("'{}' read as {} but declared {}", k_.vars[e->id].name, typeName(e->type),
                          typeName(k_.vars[e->id].type)));
        break;
      case ExprKind::ParamRef:
        if (e->id >= k_.params.size())
          bad(fmt::format("parameter {} of {}", e->id, k_.params.size()));
        else if (k_.params[e->id].isPointer)
          bad(fmt::format("the pointer parameter '{}' read as a value", k_.params[e->id].name));
        else if (k_.params[e->id].type != e->type)
          bad(fmt::format("parameter '{}' read as {} but declared {}", k_.params[e->id].name, typeName(e->type),
                          typeName(k_.params[e->id].type)));
        break;
      case ExprKind::SpecialReg:
        if (static_cast<int>(e->special) >= kSpecialCount)
          bad(fmt::format("special register {}", static_cast<int>(e->special)));
        if (e->type != (e->special == Special::ElectOne ? Type::Pred : Type::I32))
          bad(fmt::format("a special register of type {}", typeName(e->type)));
        break;
      case ExprKind::Elem:
        if (e->id >= k_.arrays.size()) {
          bad(fmt::format("register array {} of {}", e->id, k_.arrays.size()));
        } else {
          const Array& a = k_.arrays[e->id];
          if (e->index < 0 || e->index >= a.count) bad(fmt::format("element {} of '{}' ({} elements)", e->index, a.name, a.count));
          if (a.elem != e->type)
            bad(fmt::format("'{}' read as {} but declared {}", a.name, typeName(e->type), typeName(a.elem)));
        }
        break;
      case ExprKind::Binary: {
        const Expr* a = arg(0);
        const Expr* b = arg(1);
        if (!a || !b) break;
        const BinOp op = e->bin;
        if (op == BinOp::LAnd || op == BinOp::LOr) {
          if (a->type != Type::Pred || b->type != Type::Pred || e->type != Type::Pred)
            bad(fmt::format("&& or || on {} and {}", typeName(a->type), typeName(b->type)));
        } else if (op == BinOp::Shl || op == BinOp::Shr) {
          if (!isInt(a->type) || !isInt(b->type) || e->type != a->type)
            bad(fmt::format("a shift of {} by {} typed {}", typeName(a->type), typeName(b->type), typeName(e->type)));
        } else if (a->type != b->type) {
          bad(fmt::format("a binary operator on {} and {}", typeName(a->type), typeName(b->type)));
        } else if (isComparison(op)) {
          if (e->type != Type::Pred) bad(fmt::format("a comparison typed {}", typeName(e->type)));
        } else if (e->type != a->type) {
          bad(fmt::format("an operator on {} typed {}", typeName(a->type), typeName(e->type)));
        } else if (op == BinOp::And || op == BinOp::Or || op == BinOp::Xor) {
          if (isFloat(a->type)) bad(fmt::format("a bitwise operator on {}", typeName(a->type)));
        } else if (a->type == Type::Pred) {
          bad("arithmetic on pred");
        }
        break;
      }
      case ExprKind::Unary: {
        const Expr* a = arg(0);
        if (!a) break;
        if (e->type != a->type) bad(fmt::format("a unary operator on {} typed {}", typeName(a->type), typeName(e->type)));
        if (e->un == UnOp::Not && isFloat(a->type)) bad(fmt::format("! or ~ on {}", typeName(a->type)));
        if (e->un != UnOp::Not && a->type == Type::Pred) bad("negation or relu of pred");
        if (unaryFunctionName(e->un) && a->type != Type::F32)
          bad(fmt::format("{} of {}", unaryFunctionName(e->un), typeName(a->type)));
        break;
      }
      case ExprKind::Select: {
        const Expr* c = arg(0);
        const Expr* a = arg(1);
        const Expr* b = arg(2);
        if (c && c->type != Type::Pred) bad(fmt::format("a select on {}", typeName(c->type)));
        if (a && b && (a->type != e->type || b->type != e->type))
          bad(fmt::format("a select of {} and {} typed {}", typeName(a->type), typeName(b->type), typeName(e->type)));
        break;
      }
      case ExprKind::Cast: arg(0); break;
    }
    return facts_.emplace(e.get(), std::move(f)).first->second;
  }

  void pred(const ExprRef& e, const Where& where, const char* what) {
    expr(e, where);
    if (e && e->type != Type::Pred) fail(where, fmt::format("{} of type {}", what, typeName(e->type)));
  }

  void integer(const ExprRef& e, const Where& where, const char* what) {
    expr(e, where);
    if (e && !isInt(e->type)) fail(where, fmt::format("{} of type {}", what, typeName(e->type)));
  }

  // ---- Registers and memory -------------------------------------------------------------

  // The register's type, or nullopt (reported) when it does not exist.
  std::optional<Type> reg(const Reg& r, const Where& where) {
    if (r.isVar) {
      if (r.id >= k_.vars.size()) {
        fail(where, fmt::format("variable {} of {}", r.id, k_.vars.size()));
        return std::nullopt;
      }
      return k_.vars[r.id].type;
    }
    if (r.id >= k_.arrays.size()) {
      fail(where, fmt::format("register array {} of {}", r.id, k_.arrays.size()));
      return std::nullopt;
    }
    const Array& a = k_.arrays[r.id];
    if (r.index < 0 || r.index >= a.count) {
      fail(where, fmt::format("element {} of '{}' ({} elements)", r.index, a.name, a.count));
      return std::nullopt;
    }
    return a.elem;
  }

  // A 32-bit instruction operand: a 4-byte register, or word `index` of a 16-bit array
  // (elements 2 * index and 2 * index + 1).
  std::optional<Type> word(const Reg& r, const Where& where) {
    if (!r.isVar && r.id < k_.arrays.size() && typeBytes(k_.arrays[r.id].elem) == 2) {
      const Array& a = k_.arrays[r.id];
      if (r.index < 0 || r.index >= (a.count + 1) / 2) {
        fail(where, fmt::format("word {} of '{}' ({} words)", r.index, a.name, (a.count + 1) / 2));
        return std::nullopt;
      }
      return a.elem;
    }
    std::optional<Type> t = reg(r, where);
    if (t && typeBytes(*t) != 4) {
      fail(where, fmt::format("a 32-bit operand in a {} register", typeName(*t)));
      return std::nullopt;
    }
    return t;
  }

  // The buffer's space, or nullopt (reported).
  std::optional<Space> mem(const MemRef& m, const Where& where) {
    integer(m.offset, where, "an offset");
    if (m.buffer >= k_.buffers.size()) {
      fail(where, fmt::format("buffer {} of {}", m.buffer, k_.buffers.size()));
      return std::nullopt;
    }
    return k_.buffers[m.buffer].space;
  }

  void access(Type type, const MemRef& m, const std::vector<Reg>& regs, const ExprRef& guard,
              const Where& where) {
    mem(m, where);
    if (guard) pred(guard, where, "a guard");
    if (regs.empty()) fail(where, "no registers");
    // The generated code addresses a buffer through a pointer of its element type: an access of
    // another type would convert the value.
    if (m.buffer < k_.buffers.size() && k_.buffers[m.buffer].elem != type)
      fail(where, fmt::format("a {} access to buffer '{}' of {}", typeName(type), k_.buffers[m.buffer].name,
                              typeName(k_.buffers[m.buffer].elem)));
    for (const Reg& r : regs)
      if (std::optional<Type> t = reg(r, where); t && typeBytes(*t) != typeBytes(type))
        fail(where, fmt::format("a {} access through a {} register", typeName(type), typeName(*t)));
    const int64_t bytes = static_cast<int64_t>(regs.size()) * typeBytes(type);
    if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8 && bytes != 16)
      fail(where, fmt::format("an access of {} bytes", bytes));
  }

  void matrix(int num, const std::vector<Reg>& regs, const MemRef& addr, const Where& where) {
    if (num != 1 && num != 2 && num != 4) fail(where, fmt::format(".x{}", num));
    if (regs.size() != static_cast<size_t>(num)) fail(where, fmt::format(".x{} with {} registers", num, regs.size()));
    for (const Reg& r : regs) word(r, where);
    if (std::optional<Space> s = mem(addr, where); s && *s != Space::Shared) fail(where, "an address outside shared memory");
  }

  // ---- Statements -----------------------------------------------------------------------

  void block(const Block& b, const char* name) {
    for (size_t i = 0; i < b.size() && !full(); ++i) {
      path_.push_back(Step{name, i, stmtName(b[i])});
      stmt(b[i], here_);
      path_.pop_back();
    }
  }

  void nested(const Block& b, const char* name) {
    scopes_.emplace_back();
    block(b, name);
    for (uint32_t v : scopes_.back()) --inScope_[v];
    scopes_.pop_back();
  }

  void stmt(const Stmt& s, const Where& where) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, Assign>) {
            expr(n.value, where);
            std::optional<Type> t = reg(n.dst, where);
            if (t && n.value && n.value->type != *t)
              fail(where, fmt::format("a value of type {} assigned to a register of type {}", typeName(n.value->type),
                                      typeName(*t)));
            if (n.dst.isVar && n.dst.id < k_.vars.size()) {
              ++assignments_[n.dst.id];
              if (k_.vars[n.dst.id].single) {
                ++inScope_[n.dst.id];
                scopes_.back().push_back(n.dst.id);
              }
            }
          } else if constexpr (std::is_same_v<T, Load>) {
            access(n.type, n.src, n.dst, n.pred, where);
          } else if constexpr (std::is_same_v<T, Store>) {
            access(n.type, n.dst, n.src, n.pred, where);
          } else if constexpr (std::is_same_v<T, If>) {
            pred(n.cond, where, "a condition");
            nested(n.then, ".then");
            nested(n.otherwise, ".else");
          } else if constexpr (std::is_same_v<T, For>) {
            std::optional<Type> t = reg(Reg::var(n.var), where);
            if (t && !isInt(*t)) fail(where, fmt::format("a loop variable of type {}", typeName(*t)));
            integer(n.begin, where, "a begin");
            integer(n.end, where, "an end");
            integer(n.step, where, "a step");
            nested(n.body, ".body");
          } else if constexpr (std::is_same_v<T, CpAsync>) {
            if (n.bytes != 4 && n.bytes != 8 && n.bytes != 16) fail(where, fmt::format("{} bytes", n.bytes));
            std::optional<Space> dst = mem(n.dst, where), src = mem(n.src, where);
            if ((dst && *dst != Space::Shared) || (src && *src != Space::Global))
              fail(where, "a copy that is not from global to shared memory");
            if (n.srcBytes) integer(n.srcBytes, where, "a source size");
          } else if constexpr (std::is_same_v<T, CpAsyncWait>) {
            if (n.n < 0) fail(where, fmt::format("waits for {} groups", n.n));
          } else if constexpr (std::is_same_v<T, Ldmatrix>) {
            matrix(n.num, n.dst, n.addr, where);
          } else if constexpr (std::is_same_v<T, Stmatrix>) {
            matrix(n.num, n.src, n.addr, where);
          } else if constexpr (std::is_same_v<T, Shfl>) {
            expr(n.value, where);
            std::optional<Type> t = reg(n.dst, where);
            if (n.value && n.value->type != Type::F32 && n.value->type != Type::I32)
              fail(where, fmt::format("a shuffle of a {} value (f32 or i32)", typeName(n.value->type)));
            if (t && n.value && n.value->type != *t)
              fail(where, fmt::format("a shuffled {} value into a register of type {}", typeName(n.value->type),
                                      typeName(*t)));
            if (n.laneMask < 1 || n.laneMask > 31) fail(where, fmt::format("a shuffle with lane mask {}", n.laneMask));
            if (n.dst.isVar && n.dst.id < k_.vars.size()) ++assignments_[n.dst.id];
          } else if constexpr (std::is_same_v<T, Mma>) {
            if (n.ab != Type::F16 && n.ab != Type::BF16) fail(where, fmt::format("{} inputs", typeName(n.ab)));
            if (n.a.size() != 4 || n.b.size() != 2 || n.c.size() != 4 || n.d.size() != 4)
              fail(where, fmt::format("{} A, {} B, {} C and {} D registers (4, 2, 4, 4)", n.a.size(), n.b.size(),
                                      n.c.size(), n.d.size()));
            for (const std::vector<Reg>* packed : {&n.a, &n.b})
              for (const Reg& r : *packed)
                if (std::optional<Type> t = word(r, where); t && *t != n.ab && *t != Type::U32 && *t != Type::I32)
                  fail(where, fmt::format("a {} operand in a {} register", typeName(n.ab), typeName(*t)));
            for (const std::vector<Reg>* acc : {&n.c, &n.d})
              for (const Reg& r : *acc)
                if (std::optional<Type> t = reg(r, where); t && *t != Type::F32)
                  fail(where, fmt::format("an accumulator in a {} register", typeName(*t)));
          } else if constexpr (std::is_same_v<T, Wgmma>) {
            if (n.ab != Type::F16 && n.ab != Type::BF16) fail(where, fmt::format("{} inputs", typeName(n.ab)));
            if (n.n < 8 || n.n > 256 || n.n % 8 != 0) fail(where, fmt::format("N = {} (8 to 256, in steps of 8)", n.n));
            if (n.d.size() != static_cast<size_t>(n.n / 2))
              fail(where, fmt::format("{} D registers for N = {} ({})", n.d.size(), n.n, n.n / 2));
            for (const Reg& r : n.d)
              if (std::optional<Type> t = reg(r, where); t && *t != Type::F32)
                fail(where, fmt::format("an accumulator in a {} register", typeName(*t)));
            for (const ExprRef* desc : {&n.descA, &n.descB}) {
              if (desc == &n.descA && !n.descA) continue;  // A from registers
              expr(*desc, where);
              if (*desc && (*desc)->type != Type::I64)
                fail(where, fmt::format("a descriptor of type {} (i64)", typeName((*desc)->type)));
            }
            if (!n.descB) fail(where, "no descriptor of B");
            if (n.a.empty() == !n.descA)
              fail(where, "A both from registers and through a descriptor, or from neither");
            if (!n.a.empty() && (n.a.size() != 4 || n.transA))
              fail(where, fmt::format("A from {} registers{} (4 words, K-major)", n.a.size(),
                                      n.transA ? " and transposed" : ""));
            for (const Reg& r : n.a)
              if (std::optional<Type> t = word(r, where); t && *t != n.ab && *t != Type::U32 && *t != Type::I32)
                fail(where, fmt::format("a {} operand in a {} register", typeName(n.ab), typeName(*t)));
            if (n.accumulate) pred(n.accumulate, where, "a scale-d predicate");
          } else if constexpr (std::is_same_v<T, MbarrierInit> || std::is_same_v<T, MbarrierArrive> ||
                               std::is_same_v<T, MbarrierWait>) {
            std::optional<Space> space = mem(n.bar, where);
            if (space && (*space != Space::Shared || k_.buffers[n.bar.buffer].elem != Type::I64))
              fail(where, "an mbarrier outside a shared buffer of 8-byte (i64) elements");
            if constexpr (std::is_same_v<T, MbarrierInit>) integer(n.count, where, "an arrival count");
            if constexpr (std::is_same_v<T, MbarrierArrive>)
              if (n.expectTx) integer(n.expectTx, where, "a transaction byte count");
            if constexpr (std::is_same_v<T, MbarrierWait>) integer(n.parity, where, "a parity");
          } else if constexpr (std::is_same_v<T, TmaLoad> || std::is_same_v<T, TmaStore>) {
            if (n.map >= k_.tensorMaps.size()) {
              fail(where, fmt::format("tensor map {} of {}", n.map, k_.tensorMaps.size()));
            } else if (n.coords.size() != k_.tensorMaps[n.map].dims.size()) {
              fail(where, fmt::format("{} coordinates for a tensor map of rank {}", n.coords.size(),
                                      k_.tensorMaps[n.map].dims.size()));
            }
            for (const ExprRef& c : n.coords) integer(c, where, "a coordinate");
            if constexpr (std::is_same_v<T, TmaLoad>) {
              if (std::optional<Space> s = mem(n.dst, where); s && *s != Space::Shared)
                fail(where, "a TMA destination outside shared memory");
              if (std::optional<Space> s = mem(n.bar, where);
                  s && (*s != Space::Shared || k_.buffers[n.bar.buffer].elem != Type::I64))
                fail(where, "a TMA completing on something that is not an mbarrier");
            } else {
              if (std::optional<Space> s = mem(n.src, where); s && *s != Space::Shared)
                fail(where, "a TMA store source outside shared memory");
            }
          } else if constexpr (std::is_same_v<T, WgmmaWait>) {
            if (n.n < 0 || n.n > 7) fail(where, fmt::format("waits for {} groups (0 to 7)", n.n));
          } else if constexpr (std::is_same_v<T, BulkWait>) {
            if (n.n < 0 || n.n > 8) fail(where, fmt::format("waits for {} bulk groups", n.n));
          } else if constexpr (std::is_same_v<T, SetMaxNReg>) {
            if (n.count < 24 || n.count > 256 || n.count % 8 != 0)
              fail(where, fmt::format("setmaxnreg to {} registers (a multiple of 8 in 24..256)", n.count));
          } else if constexpr (std::is_same_v<T, Check>) {
            pred(n.cond, where, "a condition");
            for (const ExprRef& v : n.values) expr(v, where);
          } else if constexpr (std::is_same_v<T, Cooperative>) {
            fail(where, "a cooperative marker left after lowering (only the convergence check reads them)");
          }
        },
        s.node);
  }

  const Kernel& k_;
  size_t limit_;
  std::vector<std::string> problems_;
  std::unordered_map<const Expr*, Facts> facts_;  // the nodes checked so far
  std::vector<int> assignments_;                  // per variable: the statements assigning it
  // Single variables: how many of their assignments are in scope, and which each open block made.
  std::vector<int> inScope_;
  std::vector<std::vector<uint32_t>> scopes_;
  bool inBody_ = false;
  std::vector<Step> path_;                   // the statement being checked
  const Where here_{{}, &path_};
};

}  // namespace

std::vector<std::string> verifyKernel(const Kernel& k, size_t limit) { return Verifier(k, limit).run(); }

std::vector<std::string> verifyExprs(const Kernel& k, const std::vector<std::pair<ExprRef, std::string>>& exprs,
                                     size_t limit) {
  return Verifier(k, limit).exprs(exprs);
}

void verify(const Kernel& k, std::string_view stage) {
  std::vector<std::string> problems = verifyKernel(k, 4);
  if (problems.empty()) return;
  TYL_UNREACHABLE("the thread IR of kernel '{}' {} breaks its invariants: {}", k.name, stage, fmt::join(problems, "; "));
}

void verify(const Module& m, std::string_view stage) {
  for (const Kernel& k : m.kernels) verify(k, stage);
}

}  // namespace tyl::tir
