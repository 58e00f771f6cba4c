#include "ir/thread/LoopRemainders.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "ir/thread/Builder.h"
#include "ir/thread/ValueRange.h"
#include "ir/thread/Walk.h"

namespace tyl::tir {
namespace {

// `((var + offset) / divisor) % modulus`, as matched in an expression (divisor 1: no
// division). `low` and `high` bound the partial sums of the constants added on the way to
// `offset` ((k + 4) - 1 passes through k + 4), which must not overflow either.
struct Remainder {
  int64_t offset = 0, divisor = 1, modulus = 0;
  int64_t low = 0, high = 0;
};

// Remainders with the same value share a counter, however their constants were grouped.
using Key = std::tuple<int64_t, int64_t, int64_t>;  // offset, divisor, modulus
Key keyOf(const Remainder& r) { return {r.offset, r.divisor, r.modulus}; }

// Constants beyond this are not followed (their sums could overflow the analysis).
constexpr int64_t kMaxOffset = int64_t{1} << 40;

// Whether `x` is `var` plus or minus constants, in any grouping the builder leaves: sets
// r.offset to their sum and r.low, r.high to the extremes of the partial sums.
bool affineInVar(const Expr& x, uint32_t var, Remainder& r) {
  if (x.kind == ExprKind::VarRef && x.id == var) {
    r.offset = r.low = r.high = 0;
    return true;
  }
  // A widening keeps the value (an index computes `(k + 1) % 2` as `(i64(k) + 1) % 2`).
  if (isWidening(x)) return affineInVar(*x.args[0], var, r);
  int64_t c = 0;
  if (x.kind != ExprKind::Binary || (x.bin != BinOp::Add && x.bin != BinOp::Sub)) return false;
  const ExprRef* inner = nullptr;
  if (isIntConst(x.args[1], &c))
    inner = &x.args[0];
  else if (x.bin == BinOp::Add && isIntConst(x.args[0], &c))
    inner = &x.args[1];
  if (!inner || c > kMaxOffset || c < -kMaxOffset || !affineInVar(**inner, var, r)) return false;
  r.offset += x.bin == BinOp::Sub ? -c : c;
  if (r.offset > kMaxOffset || r.offset < -kMaxOffset) return false;
  r.low = std::min(r.low, r.offset);
  r.high = std::max(r.high, r.offset);
  return true;
}

// Whether `e` is `(var + c) % S` or `((var + c) / d) % S` with S > 1 and d > 0 constants.
std::optional<Remainder> remainderOf(const Expr& e, uint32_t var) {
  Remainder r;
  if (e.kind != ExprKind::Binary || e.bin != BinOp::Rem || !isIntConst(e.args[1], &r.modulus) || r.modulus < 2)
    return std::nullopt;
  const Expr* x = e.args[0].get();
  if (x->kind == ExprKind::Binary && x->bin == BinOp::Div) {
    if (!isIntConst(x->args[1], &r.divisor) || r.divisor < 1) return std::nullopt;
    x = x->args[0].get();
  }
  if (!affineInVar(*x, var, r)) return std::nullopt;
  return r;
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
    // Every remainder of the variable, and whether each of its occurrences can be counted.
    std::map<Key, bool> seen;
    forEachExpr(f.body, [&](ExprRef& e, Block&, size_t) { find(e, f, step, seen); });
    const Type t = k_.vars.at(f.var).type;
    std::map<Key, uint32_t> counters;
    for (const auto& [key, ok] : seen) {
      if (!ok) continue;
      const auto [offset, divisor, modulus] = key;
      std::string name = k_.vars.at(f.var).name;
      if (offset != 0) name += fmt::format("_{}{}", offset > 0 ? "plus" : "minus", std::abs(offset));
      if (divisor != 1) name += fmt::format("_div{}", divisor);
      const uint32_t counter = addVar(k_, name + fmt::format("_mod{}", modulus), t);
      k_.vars[counter].known = Range{0, modulus - 1};
      counters.emplace(key, counter);
    }
    if (counters.empty()) return {};

    std::vector<Stmt> init;
    for (const auto& [key, var] : counters) {
      const auto [offset, divisor, modulus] = key;
      const ExprRef c = varRef(k_, var);
      ExprRef first = binary(BinOp::Div, add(f.begin, intConst(offset, t)), intConst(divisor, t));
      init.push_back(Stmt{loc, Assign{Reg::var(var), binary(BinOp::Rem, first, intConst(modulus, t))}});
      // Each iteration adds step to var + offset, so step / divisor to the quotient.
      const int64_t d = step / divisor % modulus;
      if (d == 0) continue;
      // c + d, less the modulus when that reaches it (c < S, d < S: once at most).
      ExprRef advance =
          d == 1 ? select(binary(BinOp::Eq, c, intConst(modulus - 1, t)), intConst(0, t), add(c, intConst(1, t)))
                 : select(lt(c, intConst(modulus - d, t)), add(c, intConst(d, t)), sub(c, intConst(modulus - d, t)));
      f.body.push_back(Stmt{loc, Assign{Reg::var(var), advance}});
    }
    Rewritten done;
    forEachExpr(f.body, [&](ExprRef& e, Block&, size_t) { e = rewrite(e, f.var, counters, done); });
    return init;
  }

  // Records in `seen` every remainder of f's variable in `e`, and whether it can be counted.
  void find(const ExprRef& e, const For& f, int64_t step, std::map<Key, bool>& seen) {
    if (std::optional<Remainder> r = remainderOf(*e, f.var)) {
      bool& ok = seen.try_emplace(keyOf(*r), true).first->second;
      ok = ok && step % r->divisor == 0 && exact(f, *r, e->type);
      return;
    }
    for (const ExprRef& a : e->args)
      if (a) find(a, f, step, seen);
  }

  // Whether `var + offset` is never negative, and neither it nor a partial sum on the way
  // to it overflows the variable's type (so neither the counter's first value, computed in
  // that type, nor the expression, computed in it or a wider one), for every value the
  // variable takes in the loop, [begin, end - 1], and for begin itself (the counter's first
  // value is computed before the loop, whether it runs or not). Then the counter keeps what
  // the expression computes: with var = begin + i·step, (var + offset) / d = (begin + offset)
  // / d + i·step / d for non-negative values when d divides step.
  bool exact(const For& f, const Remainder& r, Type t) {
    const Type vt = k_.vars.at(f.var).type;
    if (typeBytes(vt) > typeBytes(t)) return false;
    const Range all = typeRange(vt);
    const Range begin = valueRange(f.begin, nullptr), end = valueRange(f.end, nullptr);
    const __int128 lo = __int128{begin.lo}, hi = std::max(__int128{end.hi} - 1, __int128{begin.hi});
    return lo + r.offset >= 0 && lo + r.low >= all.lo && hi + r.high <= all.hi;
  }

  ExprRef rewrite(const ExprRef& e, uint32_t var, const std::map<Key, uint32_t>& counters, Rewritten& done) {
    if (auto it = done.find(e.get()); it != done.end()) return it->second.second;
    ExprRef out = e;
    std::optional<Remainder> r = remainderOf(*e, var);
    auto c = r ? counters.find(keyOf(*r)) : counters.end();
    if (c != counters.end()) {
      out = cast(e->type, varRef(k_, c->second));
    } else {
      Expr copy = *e;
      bool changed = false;
      for (ExprRef& a : copy.args) {
        if (!a) continue;
        ExprRef n = rewrite(a, var, counters, done);
        changed = changed || n != a;
        a = std::move(n);
      }
      // Through the builder for a conversion, so that narrowing a widened counter is the counter.
      if (changed && copy.kind == ExprKind::Cast) out = cast(copy.type, copy.args[0]);
      else if (changed) out = std::make_shared<const Expr>(std::move(copy));
    }
    done.emplace(e.get(), std::pair(e, out));
    return out;
  }

  Kernel& k_;
};

}  // namespace

void countLoopRemainders(Kernel& k) { Counter(k).block(k.body); }

}  // namespace tyl::tir
