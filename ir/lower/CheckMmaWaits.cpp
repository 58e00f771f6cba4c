// mma-in-flight: an async warpgroup MMA (`mma(acc, As, Bs, async = true)`) writes its accumulator
// (and reads an A fragment) some time before the wgmma.wait_group that retires its group. Until
// then neither may be read or written by anything but further MMAs, and the kernel may not end. Each path
// through the body is followed with, per accumulator in flight, how many groups were committed
// after the one writing it (its age): wait_mmas(n) retires the groups of age n or more, a
// synchronous MMA retires all. Paths meet by keeping what is in flight on either, at the smaller
// age; a loop is followed until its state no longer changes. Which shared tiles the groups still
// read is left to the emulator (the stage is known at run time).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

TYL_DIAG(kMmaInFlight, Error, "mma-in-flight",
         "an accumulator read or written, or the kernel ended, while an async wgmma that writes it may still be in "
         "flight (before the wait_mmas that retires its group)");

namespace {

// A group's age is capped here: wait_mmas takes at most 7, so an older group is retired by any.
constexpr int kOldest = 8;

struct InFlight {
  int age = 0;
  SourceRange issued;  // the async MMA statement
};
using State = std::map<uint32_t, InFlight>;  // accumulator tensor -> its youngest group in flight

State join(const State& a, const State& b) {
  State out = a;
  for (const auto& [t, f] : b) {
    auto [it, fresh] = out.emplace(t, f);
    if (!fresh && f.age < it->second.age) it->second = f;
  }
  return out;
}

bool sameState(const State& a, const State& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [t, f] : a) {
    auto it = b.find(t);
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
  fragLeaves(f->a, fn);
  fragLeaves(f->b, fn);
}

class MmaWaits {
 public:
  MmaWaits(const tile::Kernel& k, DiagnosticEngine& diags) : k_(k), diags_(diags) {}

  void run() {
    const State end = block(k_.body, State{});
    for (const auto& [t, f] : end)
      if (!misused_.count(f.issued.begin.offset))
        diags_.report(kMmaInFlight, f.issued,
                      fmt::format("the kernel can end while this MMA's group is in flight: wait_mmas(0) must retire "
                                  "it first (it uses '{}')",
                                  k_.tensors[t].name));
  }

 private:
  State block(const tile::Block& b, State in) {
    for (const tile::Stmt& s : b) in = stmt(s, std::move(in));
    return in;
  }

  State stmt(const tile::Stmt& s, State in) {
    // The accumulators the statement reads and writes, and the run-time values it computes.
    std::set<uint32_t> reads, writes;
    std::vector<tir::ExprRef> exprs;
    auto view = [&](const tile::View& v, bool written) {
      if (k_.tensors[v.tensor].space == tile::MemSpace::Local) (written ? writes : reads).insert(v.tensor);
      exprs.insert(exprs.end(), v.origin.begin(), v.origin.end());
    };
    State out = in;
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, tile::ScalarSet>) {
            exprs.push_back(n.value);
          } else if constexpr (std::is_same_v<T, tile::ElemLoad>) {
            view(n.view, false);
            exprs.insert(exprs.end(), n.index.begin(), n.index.end());
          } else if constexpr (std::is_same_v<T, tile::ElemStore>) {
            view(n.view, true);
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
    for (const auto& [t, f] : in) {
      const bool read = reads.count(t) || std::any_of(exprs.begin(), exprs.end(), [&, t = t](const tir::ExprRef& e) {
                          return readsArray(e, k_.tensors[t].array);
                        });
      if (read)
        report(s.loc, t, f, fmt::format("'{}' is read while an async MMA that uses it may still be in flight",
                                        k_.tensors[t].name));
      else if (writes.count(t))
        report(s.loc, t, f, fmt::format("'{}' is written while an async MMA that uses it may still be in flight",
                                        k_.tensors[t].name));
    }
    if (const auto* m = std::get_if<tile::WarpgroupMma>(&s.node)) {
      if (!m->async) return State{};  // its wait_group 0 retires every group
      for (auto& [t, f] : out) f.age = std::min(f.age + 1, kOldest);
      out[m->d] = InFlight{0, s.loc};
      if (m->aFrag) out[*m->aFrag] = InFlight{0, s.loc};
      return out;
    }
    if (const auto* w = std::get_if<tile::WaitMmas>(&s.node)) {
      std::erase_if(out, [&](const auto& e) { return e.second.age >= w->pending; });
      return out;
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
    if (const auto* branch = std::get_if<tile::If>(&s.node))
      return join(block(branch->then, in), block(branch->otherwise, in));
    return out;
  }

  // Once per statement and accumulator, however often the loops around it are followed.
  void report(SourceRange at, uint32_t tensor, const InFlight& f, const std::string& what) {
    if (!reported_.insert({at.begin.offset, tensor}).second) return;
    misused_.insert(f.issued.begin.offset);
    const int retire = std::min(f.age, 7);
    diags_.report(kMmaInFlight, at, what)
        .note(f.issued, fmt::format("this async MMA uses '{}'; wait_mmas({}) retires its group{}",
                                    k_.tensors[tensor].name, retire, retire > 0 ? " (or a smaller count)" : ""));
  }

  const tile::Kernel& k_;
  DiagnosticEngine& diags_;
  std::set<std::pair<uint32_t, uint32_t>> reported_;
  std::set<uint32_t> misused_;  // MMAs whose accumulator was reported read or written in flight
};

}  // namespace

void KernelLowering::checkMmaWaits() { MmaWaits(tk_, diags_).run(); }

}  // namespace tyl::lower
