// Which run-time conditions and loop bounds around a barrier or a warp-wide instruction differ
// between threads (Convergence.h).
//
// Two steps. First, how far each register is the same across threads (its spread), from
// its writes, to a fixed point: a value computed from the same values in every thread is
// the same, a load from the same address reads the same, a write under a condition that
// differs makes the register differ. Values computed from thread ids and constants alone
// (through variables written once) are evaluated in every thread of the block, which
// gives their exact spread: `thread_id.x / 32` is the same in each warp of a 64-thread block.
//
// Second, a walk that keeps, at each statement, the set of threads known to reach it:
// the conditions around it computed from ids and constants alone are evaluated, the others
// that are the same in every thread are taken to hold, and the rest are unknown parts that
// may differ. Loops whose bounds are the same in every thread and computed from constants
// (and the variables of such loops around them) are walked once per value of their
// variable when a condition or bound inside depends on it, so that conditions mixing loop
// variables with thread ids are evaluated too, iteration by iteration.
#include "ir/lower/Convergence.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "ir/layout/Error.h"
#include "ir/lower/Affine.h"
#include "ir/thread/Builder.h"
#include "ir/thread/ValueRange.h"
#include "ir/thread/Walk.h"

namespace tyl::lower {

TYL_DIAG(kDivergentBarrier, Error, "divergent-barrier",
         "a barrier() that some threads of the block reach and others do not");
TYL_DIAG(kDivergentCollective, Error, "divergent-collective",
         "a warp-wide instruction (ldmatrix, stmatrix, mma.sync) that some lanes of a warp execute and others do not");
TYL_DIAG(kDivergentCopy, Error, "divergent-copy",
         "a copy the threads of the block share, which some of them reach and others do not");
TYL_DIAG(kMaybeDivergent, Warning, "maybe-divergent",
         "a barrier, warp-wide instruction or shared copy under a condition that may differ between threads");

namespace {

using tir::ExprKind;
using tir::ExprRef;

// How far a value is the same across threads: in every thread of the block, in the lanes of
// each warp, or possibly not even that. Ordered so that combining two takes the larger.
enum class Spread : uint8_t { Block, Warp, Lane };

Spread join(Spread a, Spread b) { return std::max(a, b); }

// The largest expression evaluated thread by thread (after variables are replaced by their
// definitions); a larger one is treated as unknown.
constexpr int64_t kMaxEvaluatedNodes = 4096;

// Walking loops value by value: at most this many iterations of one loop, this many visits of
// loop bodies in a kernel, and this many expression nodes evaluated (summed over threads) for
// conditions that involve loop variables. Past these, such conditions are unknown.
constexpr int64_t kMaxWalkedIterations = 256;
constexpr int64_t kMaxWalkedBodies = 4096;
constexpr int64_t kMaxLoopEvaluations = int64_t{1} << 26;

bool smallerThan(const ExprRef& e, int64_t& budget) {
  if (!e) return true;
  if (--budget < 0) return false;
  for (const ExprRef& a : e->args)
    if (!smallerThan(a, budget)) return false;
  return true;
}

// evalAtThread, with nullopt for a result past 64 bits.
std::optional<int64_t> evalInThread(const ExprRef& e, const ThreadPoint& p) {
  try {
    return evalAtThread(e, p);
  } catch (const layout::Error&) {
    return std::nullopt;
  }
}

// The conjuncts of `a && b && ...`.
void conjuncts(const ExprRef& e, std::vector<ExprRef>& out) {
  if (e->kind == ExprKind::Binary && e->bin == tir::BinOp::LAnd) {
    conjuncts(e->args[0], out);
    conjuncts(e->args[1], out);
  } else {
    out.push_back(e);
  }
}

// A condition or loop on the way to a statement, computed from thread ids alone, that
// leaves threads out or repeats the statement a different number of times in different threads.
struct Step {
  SourceRange loc;
  bool loop = false;
  bool taken = true;           // a condition: the branch the statement is in (then: true)
  std::vector<int64_t> trips;  // a loop: its iterations in each thread
  std::string when;            // the values of the walked loops' variables it depends on
};

// A condition or loop whose unknown part may differ between threads, with a note that says so.
struct Unknown {
  SourceRange loc;
  std::string note;
};

// Two threads of a group (the block or a warp) of which one reaches a statement and the
// other does not (or not as often), and the step that parts them.
struct Split {
  int64_t reached = 0, missed = 0;
  size_t step = 0;
};

// What is known at a statement of the threads that reach it.
struct Reach {
  // The threads that reach it (in the first iteration of each loop around it), when the
  // conditions that are the same in every thread hold and the unknown parts are left out;
  // for each thread left out, the step that left it out.
  std::vector<uint8_t> in;
  std::vector<size_t> cutBy;
  // Steps: the loops around it whose iteration counts differ between threads.
  std::vector<size_t> loops;
  // How far the unknown parts of the conditions and loop bounds around it may differ, and
  // the first whose unknown part may differ between warps, and between lanes.
  Spread unknown = Spread::Block;
  std::optional<Unknown> unknownWarps, unknownLanes;
  // The `if elect_one()` around it, if any: then one lane of each warp reaches it.
  std::optional<SourceRange> elected;
};

class Checker {
 public:
  Checker(const tir::Kernel& k, DiagnosticEngine& diags);
  void run();

 private:
  // What the atoms of an expression say: the largest spread among them, and whether they
  // are all thread ids, constants and thread-only variables.
  struct Info {
    Spread spread = Spread::Block;
    bool threadOnly = true;  // computed from thread ids and constants alone
    bool boundOnly = true;   // from thread ids, constants and the variables of walkable loops
  };

  // A Cooperative marker's threads: each one's group (-1: not a member), and whether it leads.
  struct Groups {
    std::vector<int64_t> id;
    std::vector<uint8_t> leads;
  };

  Info info(const ExprRef& e);
  bool varThreadOnly(uint32_t var);
  bool varBoundOnly(uint32_t var);
  ExprRef resolved(const ExprRef& e);
  ExprRef bound(const ExprRef& e, bool& unbound);
  bool mentions(const ExprRef& e, uint32_t var);
  bool dependsOnVar(const tir::Block& b, uint32_t var, bool& collective);
  std::optional<std::vector<int64_t>> walkedValues(const tir::For& loop);
  std::string when(std::initializer_list<ExprRef> es);
  Spread spread(const ExprRef& e);
  std::optional<std::vector<int64_t>> values(const ExprRef& e);
  std::optional<std::vector<int64_t>> trips(const tir::For& loop);
  Spread classify(const std::vector<int64_t>& v) const;
  Spread loopSpread(const tir::For& loop);

  void raise(const tir::Reg& r, Spread s);
  void propagate(const tir::Block& b, Spread context);

  void blockers(const ExprRef& e, std::vector<std::string>& out);
  std::string dependsOn(std::initializer_list<ExprRef> es, const char* subject = "it depends");
  std::string threadName(int64_t t) const;
  std::optional<Split> split(const Reach& r, int64_t lo, int64_t hi) const;
  std::optional<Split> warpSplit(const Reach& r) const;
  std::string note(const Split& s) const;
  void raiseUnknown(Reach& r, Spread s, SourceRange loc, const std::string& note) const;
  Reach enterIf(const Reach& outer, const tir::Stmt& s, const tir::If& n, bool taken);
  std::optional<Reach> enterLoop(const Reach& outer, const tir::Stmt& s, const tir::For& n);
  void check(const tir::Block& b, const Reach& r);
  void report(SourceRange loc, const Reach& r, const std::optional<Split>& split,
              const std::optional<Unknown>& unknown, const DiagKind& error,
              const std::function<std::string(const Split&)>& sure, const std::string& maybe);
  void barrier(SourceRange loc, const Reach& r, const tir::Barrier& b);
  bool reportElected(SourceRange loc, const Reach& r, const DiagKind& kind, const std::string& what);
  void collective(SourceRange loc, const char* instr, const Reach& r);
  const Groups* groups(const tir::Cooperative& c);
  std::optional<Split> groupSplit(const Reach& r, const tir::Cooperative& c);
  void cooperative(SourceRange loc, const tir::Cooperative& c, const Reach& r);

  const tir::Kernel& k_;
  DiagnosticEngine& diags_;
  int64_t threads_ = 1;
  std::vector<ThreadPoint> points_;
  std::array<Spread, tir::kSpecialCount> special_{};
  std::set<const tir::Stmt*> elects_;  // statements that evaluate elect_one: warp-wide, as elect.sync is
  std::vector<ExprRef> def_;       // per variable: its value, when one Assign is its only write
  std::vector<std::string> origin_;  // per variable: where a write other than an Assign takes its value from
  std::vector<uint8_t> defState_;  // per variable: 0 not looked at, 1 looking, 2 thread-only, 3 not
  std::vector<uint8_t> boundState_;  // the same, for bound-only
  std::vector<const tir::For*> loopOf_;  // per variable: the loop it is the variable of, when only that writes it
  std::vector<ExprRef> resolvedDef_;
  std::vector<std::optional<int64_t>> binding_;  // per variable: its value in the loop iteration walked
  std::vector<uint32_t> walking_;                // the variables bound, outermost first
  std::unordered_map<const tir::For*, bool> walkable_;  // loops worth walking value by value
  int64_t walkedBodies_ = 0, loopEvaluations_ = 0;
  std::vector<Spread> var_, array_;
  bool changed_ = false;
  std::unordered_map<const tir::Expr*, Info> info_;  // valid while var_ and array_ stay
  std::unordered_map<const tir::Expr*, Spread> exact_;  // thread-only expressions, by their values
  // Per Cooperative marker: its threads' groups, or nullopt when they cannot be computed.
  std::unordered_map<const tir::Cooperative*, std::optional<Groups>> groups_;
  std::vector<Step> steps_;
  // What was reported where: (file, offset) of the statement, the kind, and for maybe-divergent
  // the message (a reduce() may warn of its shuffles and of its block barrier at one place).
  std::set<std::tuple<uint64_t, const DiagKind*, std::string>> reported_;
};

Checker::Checker(const tir::Kernel& k, DiagnosticEngine& diags)
    : k_(k), diags_(diags), var_(k.vars.size(), Spread::Block), array_(k.arrays.size(), Spread::Block) {
  threads_ = std::max<int64_t>(1, k.threadsPerBlock());
  for (int64_t t = 0; t < threads_; ++t) {
    ThreadPoint p;
    for (int d = 0; d < 3; ++d) p.blockDim[d] = k.block[d];
    p.tid[0] = t % k.block[0];
    p.tid[1] = t / k.block[0] % k.block[1];
    p.tid[2] = t / (k.block[0] * k.block[1]);
    points_.push_back(p);
  }
  for (size_t s = 0; s < special_.size(); ++s) {
    ExprRef reg = tir::special(static_cast<tir::Special>(s));
    std::vector<int64_t> v;
    for (const ThreadPoint& p : points_) {
      std::optional<int64_t> x = evalAtThread(reg, p);
      if (!x) break;  // block ids and grid sizes: the same in the whole block
      v.push_back(*x);
    }
    special_[s] = v.size() == points_.size() ? classify(v) : Spread::Block;
  }
  special_[static_cast<size_t>(tir::Special::ElectOne)] = Spread::Lane;  // true in one lane of the warp
  tir::forEachExpr(k.body, [&](const ExprRef& e, const tir::Block& b, size_t i) {
    if (tir::mentionsSpecial(e, tir::Special::ElectOne)) elects_.insert(&b[i]);
  });
  std::vector<int> writes(k.vars.size(), 0);
  tir::forEachVarWrite(k.body, [&](uint32_t v) { ++writes.at(v); });
  def_.resize(k.vars.size());
  origin_.resize(k.vars.size());
  loopOf_.resize(k.vars.size());
  auto from = [&](const std::vector<tir::Reg>& regs, const std::string& what) {
    for (const tir::Reg& r : regs)
      if (r.isVar && origin_[r.id].empty()) origin_[r.id] = what;
  };
  std::function<void(const tir::Block&)> defs = [&](const tir::Block& b) {
    for (const tir::Stmt& s : b) {
      std::visit(
          [&](const auto& n) {
            using T = std::decay_t<decltype(n)>;
            if constexpr (std::is_same_v<T, tir::Assign>)
              if (n.dst.isVar && writes[n.dst.id] == 1) def_[n.dst.id] = n.value;
            if constexpr (std::is_same_v<T, tir::Load>)
              from(n.dst, fmt::format("a value read from '{}'", k.buffers.at(n.src.buffer).name));
            if constexpr (std::is_same_v<T, tir::Ldmatrix>) from(n.dst, "a value loaded by ldmatrix");
            if constexpr (std::is_same_v<T, tir::Shfl>) from({n.dst}, "a value shuffled from another lane");
            if constexpr (std::is_same_v<T, tir::Mma>) from(n.d, "a result of mma.sync");
            if constexpr (std::is_same_v<T, tir::Wgmma>) from(n.d, "a result of wgmma");
            if constexpr (std::is_same_v<T, tir::If>) {
              defs(n.then);
              defs(n.otherwise);
            }
            if constexpr (std::is_same_v<T, tir::For>) {
              if (origin_[n.var].empty())
                origin_[n.var] = fmt::format("the loop variable '{}'", tir::shownName(k.vars.at(n.var)));
              if (writes[n.var] == 1) loopOf_[n.var] = &n;
              defs(n.body);
            }
          },
          s.node);
    }
  };
  defs(k.body);
  defState_.assign(k.vars.size(), 0);
  boundState_.assign(k.vars.size(), 0);
  resolvedDef_.resize(k.vars.size());
  binding_.resize(k.vars.size());
}

Spread Checker::classify(const std::vector<int64_t>& v) const {
  if (std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == v[0]; })) return Spread::Block;
  for (size_t w = 0; w < v.size(); w += 32)
    for (size_t t = w; t < std::min(v.size(), w + 32); ++t)
      if (v[t] != v[w]) return Spread::Lane;
  return Spread::Warp;
}

bool Checker::varThreadOnly(uint32_t var) {
  if (defState_[var] == 0) {
    defState_[var] = 1;  // a definition that reads itself is not thread-only
    bool only = def_[var] && info(def_[var]).threadOnly;
    defState_[var] = only ? 2 : 3;
  }
  return defState_[var] == 2;
}

// A variable assigned once from thread ids, constants and loop variables of this kind, or the
// variable of a loop (written only by it) whose bounds are of this kind.
bool Checker::varBoundOnly(uint32_t var) {
  if (boundState_[var] == 0) {
    boundState_[var] = 1;
    bool only = false;
    if (const tir::For* loop = loopOf_[var])
      only = info(loop->begin).boundOnly && info(loop->end).boundOnly && info(loop->step).boundOnly;
    else
      only = def_[var] && info(def_[var]).boundOnly;
    boundState_[var] = only ? 2 : 3;
  }
  return boundState_[var] == 2;
}

Checker::Info Checker::info(const ExprRef& e) {
  if (auto it = info_.find(e.get()); it != info_.end()) return it->second;
  Info r;
  switch (e->kind) {
    case ExprKind::IntConst: break;
    case ExprKind::FloatConst:
    case ExprKind::ParamRef: r.threadOnly = r.boundOnly = false; break;
    case ExprKind::SpecialReg: {
      r.spread = special_.at(static_cast<size_t>(e->special));
      tir::Special s = e->special;
      r.threadOnly = r.boundOnly = s == tir::Special::TidX || s == tir::Special::TidY || s == tir::Special::TidZ ||
                                   s == tir::Special::LaneId || s == tir::Special::WarpId;
      break;
    }
    case ExprKind::Elem:
      r.spread = array_.at(static_cast<size_t>(e->id));
      r.threadOnly = r.boundOnly = false;
      break;
    case ExprKind::VarRef: {
      const auto v = static_cast<uint32_t>(e->id);
      r.spread = var_.at(v);
      r.threadOnly = defState_.at(v) != 1 && varThreadOnly(v);
      r.boundOnly = r.threadOnly || (boundState_.at(v) != 1 && varBoundOnly(v));
      break;
    }
    default:
      for (const ExprRef& a : e->args) {
        if (!a) continue;
        Info ai = info(a);
        r.spread = join(r.spread, ai.spread);
        r.threadOnly = r.threadOnly && ai.threadOnly;
        r.boundOnly = r.boundOnly && ai.boundOnly;
      }
  }
  info_[e.get()] = r;
  return r;
}

Spread Checker::spread(const ExprRef& e) {
  Info i = info(e);
  if (i.spread == Spread::Block || !i.threadOnly) return i.spread;
  if (auto it = exact_.find(e.get()); it != exact_.end()) return it->second;
  std::optional<std::vector<int64_t>> v = values(e);
  return exact_[e.get()] = v ? classify(*v) : i.spread;
}

// `e` with each variable assigned once that is bound-only (thread-only ones included)
// replaced by its definition; loop variables stay.
ExprRef Checker::resolved(const ExprRef& e) {
  return tir::substitute(e, [&](const tir::Expr& atom) -> ExprRef {
    if (atom.kind != ExprKind::VarRef) return nullptr;
    const auto v = static_cast<uint32_t>(atom.id);
    if (!def_[v] || !varBoundOnly(v)) return nullptr;
    ExprRef& d = resolvedDef_[v];
    if (!d) d = resolved(def_[v]);
    return d;
  });
}

// A resolved expression with the variables of the loops being walked replaced by their
// values; `unbound` is set when another variable is left.
ExprRef Checker::bound(const ExprRef& e, bool& unbound) {
  return tir::substitute(e, [&](const tir::Expr& atom) -> ExprRef {
    if (atom.kind != ExprKind::VarRef) return nullptr;
    const auto v = static_cast<size_t>(atom.id);
    if (!binding_[v]) {
      unbound = true;
      return nullptr;
    }
    return tir::intConst(*binding_[v], k_.vars[v].type);
  });
}

// The value of a bound-only expression in every thread of the block (for loop variables, in
// the iteration being walked), or nullopt when it cannot be computed at compile time.
std::optional<std::vector<int64_t>> Checker::values(const ExprRef& e) {
  ExprRef r = resolved(e);
  int64_t budget = kMaxEvaluatedNodes;
  if (!smallerThan(r, budget)) return std::nullopt;
  if (!info(e).threadOnly) {
    bool unbound = false;
    r = bound(r, unbound);
    loopEvaluations_ += (kMaxEvaluatedNodes - budget) * threads_;
    if (unbound || loopEvaluations_ > kMaxLoopEvaluations) return std::nullopt;
  }
  // The evaluation is exact; the IR's arithmetic wraps. They agree where nothing can wrap.
  tir::AtomRange ids = [&](const tir::Expr& atom) -> std::optional<tir::Range> {
    if (atom.kind != ExprKind::SpecialReg) return std::nullopt;
    return tir::specialRange(atom.special, k_.block, {1, 1, 1});
  };
  if (!tir::exactArithmetic(r, ids)) return std::nullopt;
  std::vector<int64_t> v;
  v.reserve(points_.size());
  for (const ThreadPoint& p : points_) {
    std::optional<int64_t> x = evalInThread(r, p);
    if (!x) return std::nullopt;
    v.push_back(*x);
  }
  return v;
}

// How many iterations the loop makes in each thread, when its bounds are bound-only.
std::optional<std::vector<int64_t>> Checker::trips(const tir::For& loop) {
  for (const ExprRef* e : {&loop.begin, &loop.end, &loop.step})
    if (!info(*e).boundOnly) return std::nullopt;
  std::optional<std::vector<int64_t>> b = values(loop.begin), e = values(loop.end), s = values(loop.step);
  if (!b || !e || !s) return std::nullopt;
  std::vector<int64_t> n(points_.size());
  for (size_t t = 0; t < n.size(); ++t) {
    if ((*s)[t] <= 0) return std::nullopt;
    __int128 span = static_cast<__int128>((*e)[t]) - (*b)[t];
    n[t] = span <= 0 ? 0 : static_cast<int64_t>((span + (*s)[t] - 1) / (*s)[t]);
  }
  return n;
}

// How far the loop's iteration count may differ between threads.
Spread Checker::loopSpread(const tir::For& loop) {
  Spread s = join(spread(loop.begin), join(spread(loop.end), spread(loop.step)));
  if (s == Spread::Block) return s;
  if (std::optional<std::vector<int64_t>> n = trips(loop)) return classify(*n);
  return s;
}

void Checker::raise(const tir::Reg& r, Spread s) {
  Spread& now = r.isVar ? var_.at(r.id) : array_.at(r.id);
  if (s > now) {
    now = s;
    changed_ = true;
  }
}

void Checker::propagate(const tir::Block& b, Spread context) {
  for (const tir::Stmt& s : b) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, tir::Assign>) raise(n.dst, join(context, spread(n.value)));
          if constexpr (std::is_same_v<T, tir::Load>) {
            Spread at = join(context, info(n.src.offset).spread);
            if (n.pred) at = join(at, info(n.pred).spread);
            for (const tir::Reg& r : n.dst) raise(r, at);
          }
          // Each lane receives its own part of the matrices.
          if constexpr (std::is_same_v<T, tir::Ldmatrix>)
            for (const tir::Reg& r : n.dst) raise(r, Spread::Lane);
          if constexpr (std::is_same_v<T, tir::Shfl>) raise(n.dst, Spread::Lane);
          if constexpr (std::is_same_v<T, tir::Mma> || std::is_same_v<T, tir::Wgmma>)
            for (const tir::Reg& r : n.d) raise(r, Spread::Lane);
          if constexpr (std::is_same_v<T, tir::If>) {
            Spread inner = join(context, spread(n.cond));
            propagate(n.then, inner);
            propagate(n.otherwise, inner);
          }
          if constexpr (std::is_same_v<T, tir::For>) {
            raise(tir::Reg::var(n.var), join(context, join(spread(n.begin), spread(n.step))));
            propagate(n.body, join(context, loopSpread(n)));
          }
        },
        s.node);
  }
}

// What keeps `e` from being computed from thread ids alone, for a note: its atoms that are
// not (up to three, each once).
void Checker::blockers(const ExprRef& e, std::vector<std::string>& out) {
  auto add = [&](std::string what) {
    if (out.size() < 3 && std::find(out.begin(), out.end(), what) == out.end()) out.push_back(std::move(what));
  };
  switch (e->kind) {
    case ExprKind::ParamRef: return add(fmt::format("the parameter '{}'", k_.params.at(static_cast<size_t>(e->id)).name));
    case ExprKind::SpecialReg: {
      tir::Special s = e->special;
      if (s == tir::Special::CtaidX || s == tir::Special::CtaidY || s == tir::Special::CtaidZ) add("block_id");
      if (s == tir::Special::NctaidX || s == tir::Special::NctaidY || s == tir::Special::NctaidZ)
        add("the grid's size");
      return;
    }
    case ExprKind::Elem: return add(fmt::format("the registers of '{}'", k_.arrays.at(static_cast<size_t>(e->id)).name));
    case ExprKind::VarRef: {
      size_t v = static_cast<size_t>(e->id);
      if (info(e).threadOnly) return;
      size_t before = out.size();
      if (def_[v] && defState_[v] != 1) {
        defState_[v] = 1;  // a definition that reads itself is named, not followed again
        blockers(def_[v], out);
        defState_[v] = 3;
      }
      if (out.size() > before) return;
      if (!origin_[v].empty()) return add(origin_[v]);
      return add(fmt::format("'{}', which is assigned more than once", tir::shownName(k_.vars.at(v))));
    }
    default:
      for (const ExprRef& a : e->args)
        if (a && !info(a).threadOnly) blockers(a, out);
  }
}

std::string Checker::dependsOn(std::initializer_list<ExprRef> es, const char* subject) {
  std::vector<std::string> what;
  for (const ExprRef& e : es)
    if (e && spread(e) != Spread::Block) blockers(e, what);
  if (what.empty()) return "";
  std::string list = what[0];
  for (size_t i = 1; i < what.size(); ++i) list += (i + 1 == what.size() ? " and " : ", ") + what[i];
  return fmt::format(": {} on {}", subject, list);
}

std::string Checker::threadName(int64_t t) const {
  const ThreadPoint& p = points_.at(static_cast<size_t>(t));
  if (k_.block[1] == 1 && k_.block[2] == 1) return fmt::format("thread {}", t);
  return fmt::format("thread ({}, {}, {})", p.tid[0], p.tid[1], p.tid[2]);
}

// Threads in [lo, hi) that part at `r`: one that reaches it and one that does not, or,
// when all do, one that goes round a loop more often than another.
std::optional<Split> Checker::split(const Reach& r, int64_t lo, int64_t hi) const {
  int64_t reached = -1, missed = -1;
  for (int64_t t = lo; t < hi && (reached < 0 || missed < 0); ++t)
    if (int64_t& first = r.in[t] ? reached : missed; first < 0) first = t;
  if (reached < 0) return std::nullopt;
  if (missed >= 0) return Split{reached, missed, r.cutBy[missed]};
  for (size_t l : r.loops) {
    const std::vector<int64_t>& n = steps_[l].trips;
    int64_t most = lo, least = lo;
    for (int64_t t = lo; t < hi; ++t) {
      if (n[t] > n[most]) most = t;
      if (n[t] < n[least]) least = t;
    }
    if (n[most] != n[least]) return Split{most, least, l};
  }
  return std::nullopt;
}

std::optional<Split> Checker::warpSplit(const Reach& r) const {
  for (int64_t w = 0; w < threads_; w += 32)
    if (std::optional<Split> s = split(r, w, std::min(threads_, w + 32))) return s;
  return std::nullopt;
}

std::string Checker::note(const Split& s) const {
  const Step& step = steps_.at(s.step);
  if (!step.loop)
    return fmt::format("this condition is {} in {} and {} in {}{}", step.taken ? "true" : "false",
                       threadName(s.reached), step.taken ? "false" : "true", threadName(s.missed), step.when);
  auto times = [](int64_t c) {
    return c == 0 ? std::string("not at all") : c == 1 ? std::string("once") : fmt::format("{} times", c);
  };
  return fmt::format("this loop runs {} in {} and {} in {}{}", times(step.trips[s.reached]), threadName(s.reached),
                     times(step.trips[s.missed]), threadName(s.missed), step.when);
}

void Checker::raiseUnknown(Reach& r, Spread s, SourceRange loc, const std::string& note) const {
  if (s >= Spread::Warp && !r.unknownWarps) r.unknownWarps = Unknown{loc, note};
  if (s == Spread::Lane && !r.unknownLanes) r.unknownLanes = Unknown{loc, note};
  r.unknown = join(r.unknown, s);
}

Reach Checker::enterIf(const Reach& outer, const tir::Stmt& s, const tir::If& n, bool taken) {
  Reach inner = outer;
  std::vector<ExprRef> parts;
  conjuncts(n.cond, parts);
  std::vector<uint8_t> holds(points_.size(), 1);
  Spread unknown = Spread::Block;
  ExprRef unknownPart;
  for (const ExprRef& c : parts) {
    if (taken && c->kind == tir::ExprKind::SpecialReg && c->special == tir::Special::ElectOne && !inner.elected)
      inner.elected = s.loc;
    Info i = info(c);
    if (i.boundOnly) {
      if (std::optional<std::vector<int64_t>> v = values(c)) {
        for (size_t t = 0; t < holds.size(); ++t) holds[t] &= (*v)[t] != 0;
        continue;
      }
    } else if (i.spread == Spread::Block) {
      continue;  // taken to hold
    }
    unknown = join(unknown, spread(c));
    if (!unknownPart) unknownPart = c;
  }
  // The else branch runs where some part fails: known only when every part is.
  if (taken || !unknownPart) {
    size_t step = steps_.size();
    steps_.push_back(Step{s.loc, false, taken, {}, when({n.cond})});
    for (size_t t = 0; t < holds.size(); ++t)
      if (inner.in[t] && holds[t] != taken) {
        inner.in[t] = 0;
        inner.cutBy[t] = step;
      }
  } else {
    unknown = spread(n.cond);
  }
  if (unknown != Spread::Block)
    raiseUnknown(inner, unknown, s.loc,
                 "this condition can differ between threads, and which threads take it is known only at run time" +
                     dependsOn({unknownPart ? unknownPart : n.cond}));
  return inner;
}

// The threads that reach the loop's body, or nullopt when they are those reaching the loop.
std::optional<Reach> Checker::enterLoop(const Reach& outer, const tir::Stmt& s, const tir::For& n) {
  Spread bounds = join(spread(n.begin), join(spread(n.end), spread(n.step)));
  std::optional<std::vector<int64_t>> count = trips(n);
  // The same iterations in every thread: the body is reached as the loop is, unless it
  // surely never runs.
  if (bounds == Spread::Block && (!count || (*count)[0] > 0)) return std::nullopt;
  Reach inner = outer;
  if (count) {
    size_t step = steps_.size();
    std::optional<int64_t> first;  // the count of the first thread that reaches the loop
    bool differ = false;
    for (size_t t = 0; t < count->size(); ++t) {
      if (!inner.in[t]) continue;
      if (!first) first = (*count)[t];
      differ = differ || (*count)[t] != *first;
      if ((*count)[t] == 0) {
        inner.in[t] = 0;
        inner.cutBy[t] = step;
      }
    }
    if (differ) inner.loops.push_back(step);
    steps_.push_back(Step{s.loc, true, true, std::move(*count), when({n.begin, n.end, n.step})});
    return inner;
  }
  raiseUnknown(inner, bounds, s.loc,
               "the bounds of this loop can differ between threads, and how is known only at run time" +
                   dependsOn({n.begin, n.end, n.step}, "they depend"));
  return inner;
}

// Whether `var` occurs in `e` once its variables assigned once are replaced by their definitions.
bool Checker::mentions(const ExprRef& e, uint32_t var) {
  std::function<bool(const tir::Expr&)> in = [&](const tir::Expr& x) {
    if (x.kind == ExprKind::VarRef) return static_cast<uint32_t>(x.id) == var;
    return std::any_of(x.args.begin(), x.args.end(), [&](const ExprRef& a) { return a && in(*a); });
  };
  return in(*resolved(e));
}

// Whether a condition or loop bound in `b` depends on `var`; `collective` is set when `b` holds
// a barrier or a warp-wide instruction.
bool Checker::dependsOnVar(const tir::Block& b, uint32_t var, bool& collective) {
  bool depends = false;
  for (const tir::Stmt& s : b) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, tir::If>) {
            depends = mentions(n.cond, var) || depends;
            depends = dependsOnVar(n.then, var, collective) || depends;
            depends = dependsOnVar(n.otherwise, var, collective) || depends;
          }
          if constexpr (std::is_same_v<T, tir::For>) {
            depends = mentions(n.begin, var) || mentions(n.end, var) || mentions(n.step, var) || depends;
            depends = dependsOnVar(n.body, var, collective) || depends;
          }
          if constexpr (std::is_same_v<T, tir::Barrier> || std::is_same_v<T, tir::Ldmatrix> ||
                        std::is_same_v<T, tir::Stmatrix> || std::is_same_v<T, tir::Shfl> || std::is_same_v<T, tir::Mma> ||
                        std::is_same_v<T, tir::Wgmma> || std::is_same_v<T, tir::WgmmaFence> ||
                        std::is_same_v<T, tir::WgmmaCommit> || std::is_same_v<T, tir::WgmmaWait> ||
                        std::is_same_v<T, tir::SetMaxNReg> ||
                        std::is_same_v<T, tir::Cooperative>)
            collective = true;
        },
        s.node);
  }
  return depends;
}

// The values the loop's variable takes, when the loop is worth walking value by value: its
// bounds are the same in every thread and known (in the iterations of the loops walked
// around it), something inside depends on its variable, and the budgets allow.
std::optional<std::vector<int64_t>> Checker::walkedValues(const tir::For& loop) {
  if (loopOf_[loop.var] != &loop || !varBoundOnly(loop.var)) return std::nullopt;
  auto [it, fresh] = walkable_.try_emplace(&loop, false);
  if (fresh) {
    bool collective = false;
    bool depends = dependsOnVar(loop.body, loop.var, collective);
    it->second = depends && collective;
  }
  if (!it->second) return std::nullopt;
  std::optional<std::vector<int64_t>> b = values(loop.begin), e = values(loop.end), st = values(loop.step);
  if (!b || !e || !st || classify(*b) != Spread::Block || classify(*e) != Spread::Block ||
      classify(*st) != Spread::Block || (*st)[0] <= 0)
    return std::nullopt;
  const __int128 span = static_cast<__int128>((*e)[0]) - (*b)[0];
  const __int128 count = span <= 0 ? 0 : (span + (*st)[0] - 1) / (*st)[0];
  if (count > kMaxWalkedIterations || walkedBodies_ + count > kMaxWalkedBodies) return std::nullopt;
  walkedBodies_ += static_cast<int64_t>(count);
  std::vector<int64_t> each;
  for (int64_t i = 0; i < count; ++i) each.push_back((*b)[0] + i * (*st)[0]);
  return each;
}

// " when k = 1 and j = 0": the values of the walked loops' variables that the expressions use.
std::string Checker::when(std::initializer_list<ExprRef> es) {
  std::string text;
  for (uint32_t v : walking_) {
    if (std::none_of(es.begin(), es.end(), [&](const ExprRef& e) { return e && mentions(e, v); })) continue;
    text += fmt::format("{} {} = {}", text.empty() ? " when" : " and", tir::shownName(k_.vars[v]), *binding_[v]);
  }
  return text;
}

void Checker::check(const tir::Block& b, const Reach& r) {
  for (const tir::Stmt& s : b) {
    if (elects_.count(&s)) collective(s.loc, "elect_one (elect.sync)", r);
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, tir::If>) {
            Info i = info(n.cond);
            std::optional<std::vector<int64_t>> v;
            if (i.spread == Spread::Block && i.boundOnly) v = values(n.cond);
            if (v) {
              // The same in every thread, and known: only the branch taken is reached.
              check((*v)[0] ? n.then : n.otherwise, r);
            } else if (i.spread == Spread::Block && !i.threadOnly) {
              // The same in every thread, whichever branch it takes.
              check(n.then, r);
              check(n.otherwise, r);
            } else {
              check(n.then, enterIf(r, s, n, true));
              check(n.otherwise, enterIf(r, s, n, false));
            }
          }
          if constexpr (std::is_same_v<T, tir::For>) {
            std::optional<Reach> inner = enterLoop(r, s, n);
            const Reach& body = inner ? *inner : r;
            if (std::optional<std::vector<int64_t>> each = walkedValues(n)) {
              walking_.push_back(n.var);
              for (int64_t value : *each) {
                binding_[n.var] = value;
                check(n.body, body);
              }
              binding_[n.var].reset();
              walking_.pop_back();
            } else {
              check(n.body, body);
            }
          }
          if constexpr (std::is_same_v<T, tir::Barrier>) barrier(s.loc, r, n);
          if constexpr (std::is_same_v<T, tir::Ldmatrix>) collective(s.loc, "ldmatrix", r);
          if constexpr (std::is_same_v<T, tir::Stmatrix>) collective(s.loc, "stmatrix", r);
          if constexpr (std::is_same_v<T, tir::Shfl>) collective(s.loc, "shfl.sync", r);
          if constexpr (std::is_same_v<T, tir::Mma>) collective(s.loc, "mma.sync", r);
          if constexpr (std::is_same_v<T, tir::Wgmma>) collective(s.loc, "wgmma.mma_async", r);
          if constexpr (std::is_same_v<T, tir::WgmmaFence>) collective(s.loc, "wgmma.fence", r);
          if constexpr (std::is_same_v<T, tir::WgmmaCommit>) collective(s.loc, "wgmma.commit_group", r);
          if constexpr (std::is_same_v<T, tir::WgmmaWait>) collective(s.loc, "wgmma.wait_group", r);
          if constexpr (std::is_same_v<T, tir::SetMaxNReg>) collective(s.loc, "setmaxnreg", r);
          if constexpr (std::is_same_v<T, tir::Cooperative>) cooperative(s.loc, n, r);
        },
        s.node);
  }
}

// Reports the barrier or warp-wide instruction at `loc`, when some thread reaches it: an error
// when `split` parts its group and nothing unknown is around it (then the split happens
// whenever the conditions that are the same in every thread hold), else a warning when
// `unknown` may part it. `sure` words the error for the split's two threads.
void Checker::report(SourceRange loc, const Reach& r, const std::optional<Split>& split,
                     const std::optional<Unknown>& unknown, const DiagKind& error,
                     const std::function<std::string(const Split&)>& sure, const std::string& maybe) {
  if (std::none_of(r.in.begin(), r.in.end(), [](uint8_t x) { return x != 0; })) return;
  const DiagKind* kind = split && r.unknown == Spread::Block ? &error : unknown ? &kMaybeDivergent : nullptr;
  if (!kind || !reported_
                    .insert({uint64_t{loc.begin.file} << 32 | loc.begin.offset, kind,
                             kind == &kMaybeDivergent ? maybe : std::string()})
                    .second)
    return;
  if (kind == &error) {
    diags_.report(error, loc, sure(*split)).note(steps_[split->step].loc, note(*split));
    return;
  }
  auto d = diags_.report(kMaybeDivergent, loc, maybe);
  if (split) d.note(steps_[split->step].loc, note(*split));
  d.note(unknown->loc, unknown->note);
}

// A barrier or warp-wide instruction under `if elect_one()` is reached by one lane of each warp.
bool Checker::reportElected(SourceRange loc, const Reach& r, const DiagKind& kind, const std::string& what) {
  if (!r.elected || threads_ < 2 || std::none_of(r.in.begin(), r.in.end(), [](uint8_t x) { return x != 0; }))
    return false;
  if (reported_.insert({uint64_t{loc.begin.file} << 32 | loc.begin.offset, &kind, std::string()}).second)
    diags_.report(kind, loc, what).note(*r.elected, "elect_one() is true in one lane of each warp");
  return true;
}

void Checker::barrier(SourceRange loc, const Reach& r, const tir::Barrier& b) {
  if (b.threads > 0) {
    // A named barrier: whole warps reach it (bar.sync is .aligned, a warp-wide instruction), and
    // as many threads as it counts.
    const std::string name = fmt::format("barrier(threads = {}, id = {})", b.threads, b.id);
    collective(loc, name.c_str(), r);
    if (r.elected || warpSplit(r) || r.unknownWarps || r.unknownLanes || r.unknown != Spread::Block) return;
    auto in = [](uint8_t x) { return x != 0; };
    // bar.sync counts each warp that reaches it as 32 threads (a partial last warp too).
    int64_t reached = 0;
    for (int64_t w = 0; w < threads_; w += 32) reached += std::any_of(r.in.begin() + w, r.in.begin() + std::min(threads_, w + 32), in) ? 32 : 0;
    if (reached == 0 || reached == b.threads ||
        !reported_.insert({uint64_t{loc.begin.file} << 32 | loc.begin.offset, &kDivergentBarrier, std::string()})
             .second)
      return;
    const int64_t first = std::find_if(r.in.begin(), r.in.end(), in) - r.in.begin();
    const int64_t last = r.in.rend() - std::find_if(r.in.rbegin(), r.in.rend(), in) - 1;
    diags_.report(kDivergentBarrier, loc,
                  fmt::format("{} is reached by {} threads (whole warps), from {} to {}: it releases them when {} "
                              "have arrived, so {}",
                              name, reached, threadName(first), threadName(last), b.threads,
                              reached < b.threads ? "they wait forever"
                                                  : "whichever arrive first leave together, with the wrong partners "
                                                    "or leaving the others waiting"));
    return;
  }
  // "barrier()", or what needs a block barrier that the source does not write.
  const std::string name =
      b.origin ? fmt::format("{}, which synchronizes the block with a barrier,", b.origin) : std::string("barrier()");
  if (reportElected(loc, r, kDivergentBarrier,
                    fmt::format("{} is reached only by the lane that elect_one() picks in each warp: every thread of "
                                "the block must reach a barrier, or none",
                                name)))
    return;
  report(
      loc, r, split(r, 0, threads_), r.unknownWarps, kDivergentBarrier,
      [&](const Split& s) {
        return fmt::format("{} is reached by {} but not by {}: every thread of the block must reach a barrier, or none",
                           name, threadName(s.reached), threadName(s.missed));
      },
      fmt::format("{} may be reached by some threads of the block and not by others (every thread must reach it, "
                  "or none)",
                  name));
}

void Checker::collective(SourceRange loc, const char* instr, const Reach& r) {
  if (reportElected(loc, r, kDivergentCollective,
                    fmt::format("{} is executed only by the lane that elect_one() picks in each warp: every lane of a "
                                "warp must execute this warp-wide instruction together, or none",
                                instr)))
    return;
  std::optional<Split> s = warpSplit(r);
  // Unknown parts that keep or drop whole warps may drop the split one.
  std::optional<Unknown> unknown = r.unknownLanes;
  if (!unknown && s) unknown = r.unknownWarps;
  report(
      loc, r, s, unknown, kDivergentCollective,
      [&](const Split& parted) {
        return fmt::format("{} is executed by {} but not by {} of the same warp: every lane of a warp must execute "
                           "this warp-wide instruction together, or none",
                           instr, threadName(parted.reached), threadName(parted.missed));
      },
      fmt::format("{} may be executed by some lanes of a warp and not by others (every lane must execute this "
                  "warp-wide instruction together, or none)",
                  instr));
}

// The groups of a marker's threads, from its expressions, which are made of thread ids.
const Checker::Groups* Checker::groups(const tir::Cooperative& c) {
  auto [it, fresh] = groups_.try_emplace(&c);
  if (!fresh) return it->second ? &*it->second : nullptr;
  std::vector<std::vector<int64_t>> keys;
  for (const ExprRef& e : c.group) {
    std::optional<std::vector<int64_t>> v = info(e).threadOnly ? values(e) : std::nullopt;
    if (!v) return nullptr;
    keys.push_back(std::move(*v));
  }
  std::vector<int64_t> ones(points_.size(), 1);
  std::optional<std::vector<int64_t>> member = ones, leader = ones;
  if (c.member) member = info(c.member).threadOnly ? values(c.member) : std::nullopt;
  if (c.leader) leader = info(c.leader).threadOnly ? values(c.leader) : std::nullopt;
  if (!member || !leader) return nullptr;
  Groups g;
  std::map<std::vector<int64_t>, int64_t> ids;
  for (size_t t = 0; t < points_.size(); ++t) {
    std::vector<int64_t> key;
    for (const std::vector<int64_t>& k : keys) key.push_back(k[t]);
    const bool in = (*member)[t] != 0;
    g.id.push_back(in ? ids.try_emplace(std::move(key), static_cast<int64_t>(ids.size())).first->second : -1);
    g.leads.push_back(in && (*leader)[t] != 0);
  }
  it->second = std::move(g);
  return &*it->second;
}

// Two threads of a marker's group of which one reaches it and the other, a leader, does not
// (or not as often).
std::optional<Split> Checker::groupSplit(const Reach& r, const tir::Cooperative& c) {
  if (c.group.empty() && !c.member && !c.leader) return split(r, 0, threads_);
  const Groups* g = groups(c);
  if (!g) return std::nullopt;
  std::map<int64_t, int64_t> reached;  // group -> its first thread that reaches the marker
  for (int64_t t = 0; t < threads_; ++t)
    if (g->id[t] >= 0 && r.in[t]) reached.try_emplace(g->id[t], t);
  for (int64_t t = 0; t < threads_; ++t)
    if (auto it = reached.find(g->id[t]); g->leads[t] && !r.in[t] && it != reached.end())
      return Split{it->second, t, r.cutBy[t]};
  for (size_t l : r.loops) {
    const std::vector<int64_t>& n = steps_[l].trips;
    std::map<int64_t, int64_t> most;  // group -> its thread that goes round the loop most often
    for (int64_t t = 0; t < threads_; ++t)
      if (g->id[t] >= 0 && r.in[t])
        if (auto [it, fresh] = most.try_emplace(g->id[t], t); !fresh && n[t] > n[it->second]) it->second = t;
    for (int64_t t = 0; t < threads_; ++t)
      if (auto it = most.find(g->id[t]); g->leads[t] && it != most.end() && n[t] < n[it->second])
        return Split{it->second, t, l};
  }
  return std::nullopt;
}

void Checker::cooperative(SourceRange loc, const tir::Cooperative& c, const Reach& r) {
  const bool block = c.group.empty() && !c.member && !c.leader;
  report(
      loc, r, groupSplit(r, c), r.unknownWarps, kDivergentCopy,
      [&](const Split& s) {
        if (block)
          return fmt::format("{} is reached by {} but not by {}: the threads of the block share its work, so every "
                             "thread must reach it, or none",
                             c.what, threadName(s.reached), threadName(s.missed));
        return fmt::format("{} is reached by {} but not by {}, which holds the same elements and is the one that "
                           "stores them: the first replica of an element must reach a store whenever another "
                           "replica does",
                           c.what, threadName(s.reached), threadName(s.missed));
      },
      block ? fmt::format("{} may be reached by some threads of the block and not by others (the threads of the "
                          "block share its work: every thread must reach it, or none)",
                          c.what)
            : fmt::format("{} may be reached by some threads holding the same elements and not by the one that "
                          "stores them",
                          c.what));
}

void Checker::run() {
  // Spreads only grow, so this ends: after at most two raises of each register.
  do {
    changed_ = false;
    info_.clear();
    propagate(k_.body, Spread::Block);
  } while (changed_);
  Reach all;
  all.in.assign(points_.size(), 1);
  all.cutBy.assign(points_.size(), 0);
  check(k_.body, all);
}

}  // namespace

void checkConvergence(const tir::Kernel& k, DiagnosticEngine& diags) { Checker(k, diags).run(); }

}  // namespace tyl::lower
