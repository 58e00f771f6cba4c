// What asynchronous instructions still use until the wait that retires their group.
//
// mma-in-flight: an async warpgroup MMA (`mma(acc, As, Bs, async = true)`) writes its accumulator
// (and reads an A fragment) some time before the wgmma.wait_group that retires its group. Until
// then neither may be read or written by anything but further MMAs, and the kernel may not end.
// Its shared tiles may not be written either.
// store-in-flight: a TMA store (`store_async(dst, s)`) reads its shared tile until a
// wait_stores retires its bulk group: until then the tile may not be written, and the kernel may
// not end (the block's shared memory would go to the next one). A store issued under a condition
// (one thread stores) is retired for the other threads only at the next barrier after that.
//
// Each path through the body is followed with, per register fragment an MMA uses and per shared
// tile an MMA or a store reads, how many groups were committed after the youngest one using it (its
// age): wait_mmas(n) retires the MMA groups of age n or more (a synchronous MMA all of them),
// wait_stores(n) the store groups likewise; a store not yet committed has no age and no wait
// retires it. Paths meet by keeping what is in flight on either, at the smaller age; a loop is
// followed until its state no longer changes. A shared tile is followed only where its place is a
// constant (a whole tensor, or a window or index at constant offsets): a stage chosen at run time
// (`As[k % S]`) is left to the emulator, which reports a write under an instruction in flight.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

TYL_DIAG(kMmaInFlight, Error, "mma-in-flight",
         "an accumulator, A fragment or shared tile used while an async wgmma that uses it may still be in flight, or "
         "the kernel ended then (before the wait_mmas that retires its group)");
TYL_DIAG(kStoreInFlight, Error, "store-in-flight",
         "a shared tile written while a TMA store that reads it may still be in flight, or the kernel ended then "
         "(before the wait_stores that retires its group)");

namespace {

// A group's age is capped here: the waits take at most 8, so an older group is retired by any.
constexpr int kOldest = 9;
constexpr int kOpen = -1;          // a TMA store not yet committed
constexpr int kUntilBarrier = -2;  // a TMA store its threads retired, not yet the others (no barrier since)

// What is in flight: a register fragment (whole), or a constant box of a shared tensor.
struct Use {
  uint32_t tensor = 0;
  std::vector<int64_t> lo, hi;  // shared: the box, [lo, hi) in every dimension
  bool store = false;           // read by a TMA store (else used by an MMA)

  bool operator<(const Use& o) const {
    return std::tie(tensor, lo, hi, store) < std::tie(o.tensor, o.lo, o.hi, o.store);
  }
};

struct InFlight {
  int age = 0;
  SourceRange issued;        // the async statement
  bool conditional = false;  // a TMA store issued under an `if` (by some threads)
  tir::ExprRef under;        // the condition of the `then` branch it was issued in, if it was
};
using State = std::map<Use, InFlight>;

State join(const State& a, const State& b) {
  State out = a;
  for (const auto& [u, f] : b) {
    auto [it, fresh] = out.emplace(u, f);
    if (!fresh && f.age < it->second.age) it->second = f;
  }
  return out;
}

bool sameState(const State& a, const State& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [u, f] : a) {
    auto it = b.find(u);
    if (it == b.end() || it->second.age != f.age) return false;
  }
  return true;
}

bool readsArray(const tir::ExprRef& e, uint32_t array) {
  if (!e) return false;
  if (e->kind == tir::ExprKind::Elem && e->id == array) return true;
  return std::any_of(e->args.begin(), e->args.end(), [&](const tir::ExprRef& a) { return readsArray(a, array); });
}

void fragLeaves(const tile::FragRef& f, const std::function<void(uint32_t)>& fn) {
  if (!f) return;
  if (f->kind == tile::FragExpr::Kind::Tensor) fn(f->tensor);
  fragLeaves(f->cond, fn);
  fragLeaves(f->a, fn);
  fragLeaves(f->b, fn);
}

class InFlightCheck {
 public:
  InFlightCheck(const tile::Kernel& k, DiagnosticEngine& diags) : k_(k), diags_(diags) {}

  void run() {
    const State end = block(k_.body, State{});
    for (const auto& [u, f] : end) {
      // A store its threads waited for is done before the block ends, whatever the others do.
      if (f.age == kUntilBarrier) continue;
      if (misused_.count(f.issued.begin.offset) || !ended_.insert(f.issued.begin.offset).second) continue;
      if (u.store)
        diags_.report(kStoreInFlight, f.issued,
                      fmt::format("the kernel can end while this TMA store may still read '{}': commit_stores() and "
                                  "wait_stores(0) must retire it first",
                                  k_.tensors[u.tensor].name));
      else
        diags_.report(kMmaInFlight, f.issued,
                      fmt::format("the kernel can end while this MMA's group is in flight: wait_mmas(0) must retire "
                                  "it first (it uses '{}')",
                                  k_.tensors[u.tensor].name));
    }
  }

 private:
  State block(const tile::Block& b, State in) {
    for (const tile::Stmt& s : b) in = stmt(s, std::move(in));
    return in;
  }

  // The box of shared tensor elements a view covers, when its place is a constant.
  std::optional<Use> box(const tile::View& v) const {
    Use u;
    u.tensor = v.tensor;
    const tile::Tensor& t = k_.tensors[v.tensor];
    for (size_t d = 0; d < v.origin.size(); ++d) {
      int64_t o = 0;
      if (!tir::isIntConst(v.origin[d], &o)) return std::nullopt;
      int64_t extent = 1;
      for (size_t i = 0; i < v.dims.size(); ++i)
        if (v.dims[i] == static_cast<int>(d)) extent = v.shape[i];
      u.lo.push_back(o);
      u.hi.push_back(o + extent);
    }
    if (u.lo.size() != t.staticShape.size()) return std::nullopt;
    return u;
  }

  static bool overlap(const Use& a, const Use& b) {
    if (a.tensor != b.tensor || a.lo.size() != b.lo.size()) return false;
    for (size_t d = 0; d < a.lo.size(); ++d)
      if (a.hi[d] <= b.lo[d] || b.hi[d] <= a.lo[d]) return false;
    return true;
  }

  State stmt(const tile::Stmt& s, State in) {
    // The fragments the statement reads and writes, the shared boxes it writes (where constant),
    // and the run-time values it computes.
    std::set<uint32_t> reads, writes;
    std::vector<Use> written;
    std::vector<tir::ExprRef> exprs;
    auto view = [&](const tile::View& v, bool write) {
      const tile::MemSpace space = k_.tensors[v.tensor].space;
      if (space == tile::MemSpace::Local) (write ? writes : reads).insert(v.tensor);
      if (space == tile::MemSpace::Shared && write)
        if (std::optional<Use> u = box(v)) written.push_back(*u);
      exprs.insert(exprs.end(), v.origin.begin(), v.origin.end());
    };
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, tile::ScalarSet>) {
            exprs.push_back(n.value);
          } else if constexpr (std::is_same_v<T, tile::ElemLoad>) {
            view(n.view, false);
            exprs.insert(exprs.end(), n.index.begin(), n.index.end());
          } else if constexpr (std::is_same_v<T, tile::ElemStore>) {
            if (k_.tensors[n.view.tensor].space != tile::MemSpace::Shared) view(n.view, true);
            // A shared element: its place, where the view's and the index are constants.
            else if (std::optional<Use> u = box(n.view)) {
              bool known = n.index.size() == n.view.dims.size();
              for (size_t i = 0; known && i < n.index.size(); ++i) {
                int64_t at = 0;
                known = tir::isIntConst(n.index[i], &at);
                const size_t d = static_cast<size_t>(n.view.dims[i]);
                u->lo[d] += at;
                u->hi[d] = u->lo[d] + 1;
              }
              if (known) written.push_back(*u);
            }
            exprs.insert(exprs.end(), n.index.begin(), n.index.end());
            exprs.push_back(n.value);
          } else if constexpr (std::is_same_v<T, tile::Copy>) {
            view(n.dst, true);
            if (n.src) view(*n.src, false);
            fragLeaves(n.value, [&](uint32_t t) { reads.insert(t); });
            exprs.push_back(n.enable);
            exprs.push_back(n.multicast);
          } else if constexpr (std::is_same_v<T, tile::FragAssign>) {
            writes.insert(n.dst);
            fragLeaves(n.value, [&](uint32_t t) { reads.insert(t); });
          } else if constexpr (std::is_same_v<T, tile::Reduce>) {
            writes.insert(n.dst);
            fragLeaves(n.src, [&](uint32_t t) { reads.insert(t); });
          } else if constexpr (std::is_same_v<T, tile::Mma>) {
            reads.insert({n.a, n.b, n.c});
            writes.insert(n.d);
          } else if constexpr (std::is_same_v<T, tile::WarpgroupMma>) {
            // Further MMAs into an accumulator in flight queue behind it: d = c reads nothing then;
            // and they may read an A fragment in flight, as the MMAs before them do.
            if (n.c != n.d) reads.insert(n.c);
            if (n.c != n.d) writes.insert(n.d);
            if (!n.aFrag) view(n.a, false);
            view(n.b, false);
          } else if constexpr (std::is_same_v<T, tile::MbarrierOp>) {
            exprs.push_back(n.value);
            exprs.push_back(n.cta);
            exprs.insert(exprs.end(), n.bar.origin.begin(), n.bar.origin.end());
          } else if constexpr (std::is_same_v<T, tile::For>) {
            exprs.insert(exprs.end(), {n.begin, n.end, n.step});
          } else if constexpr (std::is_same_v<T, tile::If>) {
            exprs.push_back(n.cond);
          }
        },
        s.node);
    for (const auto& [u, f] : in) {
      const std::string& name = k_.tensors[u.tensor].name;
      if (k_.tensors[u.tensor].space == tile::MemSpace::Shared) {
        // A shared box: only writing it is wrong.
        if (std::any_of(written.begin(), written.end(), [&, &u = u](const Use& w) { return overlap(u, w); }))
          report(s.loc, u, f,
                 f.age == kUntilBarrier
                     ? fmt::format("'{}' is written while a TMA store that reads it may still be in flight for "
                                   "other threads: the threads that issued it waited for it, but no barrier() "
                                   "since orders this write after their wait",
                                   name)
                     : fmt::format("'{}' is written while {} that reads it may still be in flight", name,
                                   u.store ? "a TMA store" : "an async MMA"));
        continue;
      }
      const uint32_t array = k_.tensors[u.tensor].array;
      const bool read = reads.count(u.tensor) || std::any_of(exprs.begin(), exprs.end(), [&](const tir::ExprRef& e) {
                          return readsArray(e, array);
                        });
      if (read)
        report(s.loc, u, f, fmt::format("'{}' is read while an async MMA that uses it may still be in flight", name));
      else if (writes.count(u.tensor))
        report(s.loc, u, f, fmt::format("'{}' is written while an async MMA that uses it may still be in flight", name));
    }
    return after(s, std::move(in));
  }

  // The state after `s`, given the one before.
  State after(const tile::Stmt& s, State in) {
    auto age = [&](bool stores) {
      for (auto& [u, f] : in)
        if (u.store == stores && f.age >= 0) f.age = std::min(f.age + 1, kOldest);
    };
    auto retire = [&](bool stores, int pending) {
      std::erase_if(in, [&](const auto& e) { return e.first.store == stores && e.second.age >= pending; });
    };
    if (const auto* m = std::get_if<tile::WarpgroupMma>(&s.node)) {
      if (!m->async) {
        retire(false, 0);  // its wait_group 0 retires every group
        return in;
      }
      age(false);
      auto use = [&](Use u) { in[u] = InFlight{0, s.loc}; };
      use(Use{m->d, {}, {}, false});
      if (m->aFrag) use(Use{*m->aFrag, {}, {}, false});
      for (const tile::View* v : {m->aFrag ? nullptr : &m->a, &m->b})
        if (v)
          if (std::optional<Use> u = box(*v)) use(*u);
      return in;
    }
    if (const auto* c = std::get_if<tile::Copy>(&s.node); c && c->tmaStore && c->src) {
      if (std::optional<Use> u = box(*c->src)) {
        u->store = true;
        in[*u] = InFlight{kOpen, s.loc, ifDepth_ > 0, conds_.empty() ? nullptr : conds_.back()};
      }
      return in;
    }
    if (std::holds_alternative<tile::CommitStores>(s.node)) {
      age(true);
      for (auto& [u, f] : in)
        if (u.store && f.age == kOpen) f.age = 0;
      return in;
    }
    if (const auto* w = std::get_if<tile::WaitMmas>(&s.node)) {
      retire(false, w->pending);
      return in;
    }
    if (const auto* w = std::get_if<tile::WaitStores>(&s.node)) {
      retire(true, w->pending);
      return in;
    }
    if (const auto* loop = std::get_if<tile::For>(&s.node)) {
      // The state at the head of the loop: what enters it, joined with what each pass leaves.
      State head = in;
      for (;;) {
        const State next = join(in, block(loop->body, head));
        if (sameState(next, head)) return head;
        head = next;
      }
    }
    if (const auto* branch = std::get_if<tile::If>(&s.node)) {
      // A condition every thread finds the same (`thread_id.x < 128` in a 128-thread block) takes
      // one branch only.
      if (std::optional<bool> same = uniform(branch->cond)) return block(*same ? branch->then : branch->otherwise, in);
      ++ifDepth_;
      conds_.push_back(branch->cond);
      const State taken = block(branch->then, in);
      conds_.back() = nullptr;
      const State other = block(branch->otherwise, in);
      conds_.pop_back();
      --ifDepth_;
      State joined = join(taken, other);
      // A store that some threads issued and waited for in one branch (`if thread_index() == 0 {
      // wait_stores(0); }`) is retired for them; the others, which never issued it, are ordered
      // after their wait by the next barrier.
      for (auto& [u, f] : joined)
        if (u.store && f.conditional && f.age >= 0 && in.count(u) && (!taken.count(u) || !other.count(u)))
          f.age = kUntilBarrier;
      // A store issued under this same condition (`if thread_index() == 0` again) is the business
      // of the threads that take the branch, which issued it: the others neither commit nor wait for
      // it, and once the issuers have retired it a barrier orders them after.
      for (const auto& [u, f] : in) {
        if (!u.store || !f.under || !tir::sameExpr(f.under, branch->cond) || !byThread(branch->cond)) continue;
        const auto t = taken.find(u);
        joined[u] = t != taken.end() ? t->second : InFlight{kUntilBarrier, f.issued, true, f.under};
      }
      // A store issued in a branch and retired there is retired for the threads that took the
      // branch: the others have not waited for it, and until a barrier it may still read its tile.
      for (const tile::Block* b : {&branch->then, &branch->otherwise})
        storesIn(*b, [&](Use u, SourceRange issued) {
          if (!joined.count(u)) joined[u] = InFlight{kUntilBarrier, issued};
        });
      return joined;
    }
    if (std::holds_alternative<tile::Barrier>(s.node))
      std::erase_if(in, [](const auto& e) { return e.second.age == kUntilBarrier; });
    return in;
  }

  // The value of a condition made of thread ids and constants when every thread of the block finds
  // it the same, else none (remembered per condition: loops are followed several times).
  std::optional<bool> uniform(const tir::ExprRef& cond) {
    auto [it, fresh] = uniform_.try_emplace(cond.get());
    if (!fresh) return it->second;
    std::optional<bool> all;
    for (const ThreadPoint& p : threadPoints(k_.skeleton.block)) {
      const std::optional<int64_t> v = evalAtThread(cond, p);
      if (!v || (all && *all != (*v != 0))) return it->second = std::nullopt;
      all = *v != 0;
    }
    return it->second = all;
  }

  // Whether every thread finds a value for the condition from its ids and constants alone (so
  // that the same condition, met twice, holds for the same threads).
  bool byThread(const tir::ExprRef& cond) {
    auto [it, fresh] = byThread_.try_emplace(cond.get(), true);
    if (fresh)
      for (const ThreadPoint& p : threadPoints(k_.skeleton.block))
        if (!evalAtThread(cond, p)) {
          it->second = false;
          break;
        }
    return it->second;
  }

  // Calls fn(box, statement) for each TMA store in `b` and its nested blocks whose tile is at a
  // constant place, unless a wait_stores and then a barrier() follow it in `b`: every thread that
  // took the branch is ordered after those.
  void storesIn(const tile::Block& b, const std::function<void(Use, SourceRange)>& fn) const {
    std::vector<Issued> issued;
    collectStores(b, issued);
    for (const Issued& i : issued) fn(i.use, i.loc);
  }
  struct Issued {
    Use use;
    SourceRange loc;
    bool waited = false;
  };
  void collectStores(const tile::Block& b, std::vector<Issued>& issued) const {
    for (const tile::Stmt& s : b) {
      if (const auto* c = std::get_if<tile::Copy>(&s.node); c && c->tmaStore && c->src)
        if (std::optional<Use> u = box(*c->src)) {
          u->store = true;
          issued.push_back(Issued{*u, s.loc});
        }
      if (std::holds_alternative<tile::WaitStores>(s.node))
        for (Issued& i : issued) i.waited = true;
      if (std::holds_alternative<tile::Barrier>(s.node)) std::erase_if(issued, [](const Issued& i) { return i.waited; });
      if (const auto* f = std::get_if<tile::For>(&s.node)) collectStores(f->body, issued);
      if (const auto* i = std::get_if<tile::If>(&s.node)) {
        collectStores(i->then, issued);
        collectStores(i->otherwise, issued);
      }
    }
  }

  // Once per statement and tensor, however often the loops around it are followed.
  void report(SourceRange at, const Use& u, const InFlight& f, const std::string& what) {
    if (!reported_.insert({at.begin.offset, u.tensor}).second) return;
    misused_.insert(f.issued.begin.offset);
    const std::string& name = k_.tensors[u.tensor].name;
    if (u.store) {
      diags_.report(kStoreInFlight, at, what)
          .note(f.issued, f.age == kUntilBarrier
                              ? fmt::format("this TMA store reads '{}'; a barrier() after its wait_stores orders the "
                                            "other threads after it",
                                            name)
                          : f.age == kOpen
                              ? fmt::format("this TMA store reads '{}'; commit_stores() and wait_stores(0) retire it",
                                            name)
                              : fmt::format("this TMA store reads '{}'; wait_stores({}) retires its group{}", name,
                                            std::min(f.age, 8), f.age > 0 ? " (or a smaller count)" : ""));
      return;
    }
    const int retire = std::min(f.age, 7);
    diags_.report(kMmaInFlight, at, what)
        .note(f.issued, fmt::format("this MMA is async (async = true, or in a warp-specialized pipeline's "
                                    "consumers) and uses '{}'; wait_mmas({}) retires its group{}",
                                    name, retire, retire > 0 ? " (or a smaller count)" : ""));
  }

  const tile::Kernel& k_;
  DiagnosticEngine& diags_;
  int ifDepth_ = 0;  // how many `if`s the statement followed is in
  std::vector<tir::ExprRef> conds_;  // their conditions, null for an `else`
  std::map<const tir::Expr*, std::optional<bool>> uniform_;
  std::map<const tir::Expr*, bool> byThread_;
  std::set<std::pair<uint32_t, uint32_t>> reported_;
  std::set<uint32_t> misused_;  // async statements whose use was reported before the kernel's end
  std::set<uint32_t> ended_;    // those reported at the kernel's end
};

}  // namespace

void KernelLowering::checkInFlight() { InFlightCheck(tk_, diags_).run(); }

}  // namespace tyl::lower
