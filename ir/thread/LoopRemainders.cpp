#include "ir/thread/LoopRemainders.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "ir/thread/Builder.h"
#include "ir/thread/ValueRange.h"
#include "ir/thread/Walk.h"

namespace tyl::tir {
namespace {

// `(var + offset) % modulus`, as matched in an expression.
struct Remainder {
  int64_t offset = 0;
  int64_t modulus = 0;
  bool operator<(const Remainder& o) const { return std::pair(offset, modulus) < std::pair(o.offset, o.modulus); }
};

// Whether `e` is `(var + c) % S`, `(c + var) % S`, `(var - c) % S` or `var % S` with S > 1.
std::optional<Remainder> remainderOf(const Expr& e, uint32_t var) {
  int64_t s = 0, c = 0;
  if (e.kind != ExprKind::Binary || e.bin != BinOp::Rem || !isIntConst(e.args[1], &s) || s < 2) return std::nullopt;
  const Expr& x = *e.args[0];
  auto isVar = [&](const ExprRef& a) { return a->kind == ExprKind::VarRef && a->i == var; };
  if (isVar(e.args[0])) return Remainder{0, s};
  if (x.kind != ExprKind::Binary) return std::nullopt;
  if (x.bin == BinOp::Add && isVar(x.args[0]) && isIntConst(x.args[1], &c)) return Remainder{c, s};
  if (x.bin == BinOp::Add && isVar(x.args[1]) && isIntConst(x.args[0], &c)) return Remainder{c, s};
  if (x.bin == BinOp::Sub && isVar(x.args[0]) && isIntConst(x.args[1], &c) && c != INT64_MIN) return Remainder{-c, s};
  return std::nullopt;
}

// Rewritten nodes by address; each entry keeps its original alive, so no address is reused.
using Rewritten = std::unordered_map<const Expr*, std::pair<ExprRef, ExprRef>>;

class Counter {
 public:
  explicit Counter(Kernel& k) : k_(k) {}

  void block(Block& b) {
    for (size_t i = 0; i < b.size(); ++i) {
      if (auto* n = std::get_if<If>(&b[i].node)) {
        block(n->then);
        block(n->otherwise);
        continue;
      }
      auto* f = std::get_if<For>(&b[i].node);
      if (!f) continue;
      std::vector<Stmt> before = loop(*f, b[i].loc);
      block(f->body);
      b.insert(b.begin() + static_cast<std::ptrdiff_t>(i), before.begin(), before.end());
      i += before.size();
    }
  }

 private:
  // Counts the remainders of f's variable in its body; returns the counters' initial
  // assignments, to go before the loop.
  std::vector<Stmt> loop(For& f, SourceRange loc) {
    int64_t step = 0;
    if (f.unroll || !isIntConst(f.step, &step) || step <= 0) return {};
    std::vector<bool> written(k_.vars.size());
    markWrittenVars(f.body, written);
    if (written[f.var]) return {};
    std::map<Remainder, uint32_t> counters;
    forEachExpr(f.body, [&](ExprRef& e, Block&, size_t) { find(e, f, counters); });
    if (counters.empty()) return {};

    std::vector<Stmt> init;
    const Type t = k_.vars.at(f.var).type;
    for (const auto& [r, var] : counters) {
      const ExprRef c = varRef(k_, var);
      init.push_back(Stmt{loc, Assign{Reg::var(var), binary(BinOp::Rem, add(f.begin, intConst(r.offset, t)),
                                                             intConst(r.modulus, t))}});
      const int64_t d = step % r.modulus;
      if (d == 0) continue;
      // c + d, less the modulus when that reaches it (c < S, d < S: once at most).
      ExprRef advance =
          d == 1 ? select(binary(BinOp::Eq, c, intConst(r.modulus - 1, t)), intConst(0, t), add(c, intConst(1, t)))
                 : select(lt(c, intConst(r.modulus - d, t)), add(c, intConst(d, t)), sub(c, intConst(r.modulus - d, t)));
      f.body.push_back(Stmt{loc, Assign{Reg::var(var), advance}});
    }
    Rewritten done;
    forEachExpr(f.body, [&](ExprRef& e, Block&, size_t) { e = rewrite(e, f.var, counters, done); });
    return init;
  }

  // Records in `counters` every remainder of f's variable in `e` that can be counted.
  void find(const ExprRef& e, const For& f, std::map<Remainder, uint32_t>& counters) {
    if (std::optional<Remainder> r = remainderOf(*e, f.var)) {
      if (!counters.count(*r) && exact(f, *r, e->type)) {
        const std::string& name = k_.vars.at(f.var).name;
        std::string base = r->offset == 0 ? fmt::format("{}_mod{}", name, r->modulus)
                                          : fmt::format("{}_{}{}_mod{}", name, r->offset > 0 ? "plus" : "minus",
                                                        r->offset > 0 ? r->offset : -r->offset, r->modulus);
        counters.emplace(*r, addVar(k_, std::move(base), e->type));
      }
      return;
    }
    for (const ExprRef& a : e->args)
      if (a) find(a, f, counters);
  }

  // Whether `var + offset` stays within [0, the type's maximum] for every value the
  // variable takes in the loop, [begin, end - 1], and for begin itself (the counter's first
  // value is computed before the loop, whether it runs or not): then the remainder the
  // counter keeps is the one the expression computes.
  bool exact(const For& f, Remainder r, Type t) {
    if (k_.vars.at(f.var).type != t) return false;
    const Range all = typeRange(t);
    const Range begin = valueRange(f.begin, nullptr), end = valueRange(f.end, nullptr);
    const __int128 lo = __int128{begin.lo} + r.offset;
    const __int128 hi = std::max(__int128{end.hi} - 1, __int128{begin.hi}) + r.offset;
    return lo >= 0 && hi <= all.hi;
  }

  ExprRef rewrite(const ExprRef& e, uint32_t var, const std::map<Remainder, uint32_t>& counters,
                  Rewritten& done) {
    if (auto it = done.find(e.get()); it != done.end()) return it->second.second;
    ExprRef out = e;
    std::optional<Remainder> r = remainderOf(*e, var);
    auto c = r ? counters.find(*r) : counters.end();
    if (c != counters.end()) {
      out = varRef(k_, c->second);
    } else {
      Expr copy = *e;
      bool changed = false;
      for (ExprRef& a : copy.args) {
        if (!a) continue;
        ExprRef n = rewrite(a, var, counters, done);
        changed = changed || n != a;
        a = std::move(n);
      }
      if (changed) out = std::make_shared<const Expr>(std::move(copy));
    }
    done.emplace(e.get(), std::pair(e, out));
    return out;
  }

  Kernel& k_;
};

}  // namespace

void countLoopRemainders(Kernel& k) { Counter(k).block(k.body); }

}  // namespace tyl::tir
