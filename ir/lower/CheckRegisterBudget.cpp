// register-budget for setmaxnreg written by hand: the registers each warp holds once it has run
// its setmaxnreg statements, summed over the block, against what the launch allocates (a block
// alone on its SM: 65536 over its threads, in steps of 8, at most 248 per thread). More than that
// and the last increase waits forever. Followed where the answer depends on thread ids only: each
// warp's path through the ifs around the setmaxnreg statements is decided at its first thread.
// A setmaxnreg inside a loop, or under a condition on anything else, leaves the kernel to the
// emulator, which models the pool as it runs (emu-deadlock).
#include <fmt/format.h>

#include <functional>
#include <map>

#include "base/CommonDiags.h"
#include "ir/lower/LowerImpl.h"
#include "ir/thread/Builder.h"
#include "ir/thread/ValueRange.h"
#include "ir/thread/Walk.h"

namespace tyl::lower {

namespace {

bool setsRegisters(const tir::Block& b) {
  bool found = false;
  tir::forEachStmt(b, [&](const tir::Stmt& s) { found |= std::holds_alternative<tir::SetMaxNReg>(s.node); });
  return found;
}

// Follows the path of the warp whose first thread is `thread` through `b`, setting `regs` at each
// setmaxnreg and `last` at each increase; `known` holds the variables whose values on the path
// are known (conditions are computed into variables first). False when the path cannot be
// decided.
bool follow(const tir::Block& b, int64_t thread, const std::array<int64_t, 3>& block, int& regs,
            const tir::Stmt*& last, std::map<uint32_t, int64_t>& known) {
  // The value at `thread`, when it depends on its ids and known variables only.
  std::function<std::optional<int64_t>(const tir::ExprRef&)> value = [&](const tir::ExprRef& e) -> std::optional<int64_t> {
    switch (e->kind) {
      case tir::ExprKind::IntConst: return e->value;
      case tir::ExprKind::VarRef: {
        auto it = known.find(e->id);
        if (it == known.end()) return std::nullopt;
        return it->second;
      }
      case tir::ExprKind::SpecialReg:
        switch (e->special) {
          case tir::Special::TidX: return thread % block[0];
          case tir::Special::TidY: return thread / block[0] % block[1];
          case tir::Special::TidZ: return thread / (block[0] * block[1]);
          case tir::Special::LaneId: return thread % 32;
          case tir::Special::WarpId: return thread / 32;
          default: return std::nullopt;
        }
      case tir::ExprKind::Cast:
        if (!tir::isInt(e->args[0]->type) && e->args[0]->type != tir::Type::Pred) return std::nullopt;
        return value(e->args[0]);
      case tir::ExprKind::Binary: {
        std::optional<int64_t> a = value(e->args[0]), c = value(e->args[1]);
        if (!a || !c) return std::nullopt;
        return tir::exactBinary(e->bin, *a, *c);
      }
      default: return std::nullopt;
    }
  };
  for (const tir::Stmt& s : b) {
    if (const auto* assign = std::get_if<tir::Assign>(&s.node); assign && assign->dst.isVar) {
      if (std::optional<int64_t> v = value(assign->value))
        known[assign->dst.id] = *v;
      else
        known.erase(assign->dst.id);
    } else if (const auto* set = std::get_if<tir::SetMaxNReg>(&s.node)) {
      regs = set->count;
      if (set->increase) last = &s;
    } else if (const auto* branch = std::get_if<tir::If>(&s.node)) {
      if (!setsRegisters(branch->then) && !setsRegisters(branch->otherwise)) continue;
      const std::optional<int64_t> taken = value(branch->cond);
      if (!taken) return false;
      if (!follow(*taken ? branch->then : branch->otherwise, thread, block, regs, last, known)) return false;
    } else if (const auto* loop = std::get_if<tir::For>(&s.node)) {
      if (setsRegisters(loop->body)) return false;
      known.erase(loop->var);
    }
    // Variables set where the path is not followed are no longer known.
    if (std::holds_alternative<tir::If>(s.node) || std::holds_alternative<tir::For>(s.node))
      tir::forEachStmt(tir::Block{s}, [&](const tir::Stmt& inner) {
        if (const auto* a = std::get_if<tir::Assign>(&inner.node); a && a->dst.isVar) known.erase(a->dst.id);
      });
  }
  return true;
}

}  // namespace

void KernelLowering::checkRegisterBudget() {
  if (!setsRegisters(k_.body)) return;
  const int64_t threads = k_.threadsPerBlock();
  const int64_t warps = (threads + 31) / 32;
  const int perThread = tir::launchRegistersPerThread(threads);
  const int64_t pool = int64_t{perThread} * warps * 32;
  std::vector<int> regs(static_cast<size_t>(warps), perThread);
  const tir::Stmt* last = nullptr;
  for (int64_t w = 0; w < warps; ++w) {
    std::map<uint32_t, int64_t> known;
    if (!follow(k_.body, w * 32, k_.block, regs[static_cast<size_t>(w)], last, known)) return;
  }
  int64_t held = 0;
  for (int r : regs) held += int64_t{r} * 32;
  if (held <= pool || !last) return;
  // Per warpgroup when its warps agree, else per warp.
  std::string counts;
  bool byGroup = true;
  for (int64_t w = 0; w < warps; ++w)
    byGroup = byGroup && regs[static_cast<size_t>(w)] == regs[static_cast<size_t>(w / 4 * 4)];
  for (int64_t w = 0; w < warps; w += byGroup ? 4 : 1)
    counts += fmt::format("{}{}", counts.empty() ? "" : ", ", regs[static_cast<size_t>(w)]);
  diags_.report(kRegisterBudget, last->loc,
                fmt::format("after their setmaxnreg the {} of the block hold ({}) registers per thread, {} in all, but "
                            "the launch gives the block {} ({} per thread for {} threads): an increase would wait "
                            "forever",
                            byGroup ? "warpgroups" : "warps", counts, held, pool, perThread, threads));
}

}  // namespace tyl::lower
