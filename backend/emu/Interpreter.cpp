#include "backend/emu/Interpreter.h"

#include <fmt/format.h>

#include <type_traits>

#include "base/InternalError.h"

namespace tyl::emu {

// Outside the unnamed namespace: used only in a discarded branch, it would count as unused there.
template <class>
inline constexpr bool kAlwaysFalse = false;

namespace {

int firstLane(Mask mask) {
  for (int l = 0; l < kWarpSize; ++l)
    if (laneOn(mask, l)) return l;
  return 0;
}

}  // namespace

void Interpreter::run(Warp& w) {
  while (!w.frames.empty()) {
    if (ctx_.findings.stopped()) return;
    Frame& f = w.frames.back();
    if (f.pc == f.block->size()) {
      endFrame(w);
      continue;
    }
    const tir::Stmt& s = (*f.block)[f.pc++];
    Mask mask = f.mask;  // `f` may move when exec pushes frames
    stmt_ = &s;
    if (!spend(w, mask) || exec(w, s, mask)) return;
  }
  exitWarp(w);
}

// Counts one warp instruction against the budget; false when it is exhausted.
bool Interpreter::spend(const Warp& w, Mask mask) {
  if (++ctx_.stats.warpInstructions + ctx_.stats.blocks <= ctx_.options.maxWarpInstructions) return true;
  report(FindingKind::StepLimit, w, firstLane(mask),
         fmt::format("the run exceeded {} steps (warp instructions, and one per block): an endless loop?",
                     ctx_.options.maxWarpInstructions));
  ctx_.findings.stop();
  return false;
}

bool Interpreter::exec(Warp& w, const tir::Stmt& s, Mask mask) {
  return std::visit(
      [&](const auto& n) -> bool {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, tir::Assign>) {
          execAssign(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::Load>) {
          execLoad(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::Store>) {
          execStore(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::If>) {
          Lanes c = eval(w, n.cond, mask);
          Mask taken = 0;
          for (int l = 0; l < kWarpSize; ++l)
            if (c[l]) taken |= 1u << l;
          Mask thenMask = mask & taken, elseMask = n.otherwise.empty() ? 0 : mask & ~taken;
          if (thenMask)
            w.frames.push_back(
                Frame{&n.then, 0, thenMask, nullptr, nullptr, elseMask ? &n.otherwise : nullptr, elseMask});
          else if (elseMask)
            w.frames.push_back(Frame{&n.otherwise, 0, elseMask});
        } else if constexpr (std::is_same_v<T, tir::For>) {
          Lanes begin = eval(w, n.begin, mask);
          w.regs.write(tir::Reg::var(n.var), convert(w.regs.type(tir::Reg::var(n.var)), n.begin->type, begin),
                       mask);
          if (Mask active = loopTest(w, n, mask)) w.frames.push_back(Frame{&n.body, 0, active, &n, &s});
        } else if constexpr (std::is_same_v<T, tir::Barrier>) {
          return execBarrier(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::CpAsync>) {
          execCpAsync(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::CpAsyncCommit>) {
          execCommit(w, mask);
        } else if constexpr (std::is_same_v<T, tir::CpAsyncWait>) {
          execWait(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::Ldmatrix>) {
          execLdmatrix(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::Stmatrix>) {
          execStmatrix(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::Shfl>) {
          execShfl(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::Mma>) {
          execMma(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::Wgmma>) {
          execWgmma(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::MbarrierInit>) {
          execMbarrierInit(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::MbarrierArrive>) {
          execMbarrierArrive(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::MbarrierWait>) {
          return execMbarrierWait(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::TmaLoad>) {
          execTmaLoad(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::TmaStore>) {
          execTmaStore(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::FenceProxyAsync>) {
          for (int l = 0; l < kWarpSize; ++l)
            if (laneOn(mask, l)) shared().fenceProxyAsync(clusterThread(w, l));
        } else if constexpr (std::is_same_v<T, tir::BulkCommit>) {
          execBulkGroup(w, true, 0, mask);
        } else if constexpr (std::is_same_v<T, tir::BulkWait>) {
          execBulkGroup(w, false, n.n, mask);
        } else if constexpr (std::is_same_v<T, tir::SetMaxNReg>) {
          return execSetMaxNReg(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::FenceMbarrierInit>) {
          // The emulator has one proxy: the inits are visible at once.
        } else if constexpr (std::is_same_v<T, tir::WgmmaFence>) {
          // The emulator's wgmmas read their D registers when they are performed: nothing to order.
          checkCollective(w, mask, "wgmma.fence");
        } else if constexpr (std::is_same_v<T, tir::WgmmaCommit>) {
          execWgmmaCommit(w, mask);
        } else if constexpr (std::is_same_v<T, tir::WgmmaWait>) {
          execWgmmaWait(w, n.n, mask);
        } else if constexpr (std::is_same_v<T, tir::Check>) {
          execCheck(w, n, mask);
        } else if constexpr (std::is_same_v<T, tir::Comment> || std::is_same_v<T, tir::Cooperative>) {
          // Nothing to run.
        } else {
          static_assert(kAlwaysFalse<T>, "the emulator does not handle this statement kind");
        }
        return false;
      },
      s.node);
}

void Interpreter::endFrame(Warp& w) {
  Frame& f = w.frames.back();
  if (f.loop) {
    const tir::For& loop = *f.loop;
    stmt_ = f.loopStmt;
    if (!spend(w, f.mask)) return;
    tir::Reg var = tir::Reg::var(loop.var);
    tir::Type type = w.regs.type(var);
    Lanes step = eval(w, loop.step, f.mask);
    Lanes next = loopNext(type, w.regs.read(var), convert(type, loop.step->type, step));
    w.regs.write(var, next, f.mask);
    if (Mask active = loopTest(w, loop, f.mask)) {
      f.pc = 0;
      f.mask = active;
      return;
    }
  } else if (f.otherwise) {
    f.block = f.otherwise;
    f.pc = 0;
    f.mask = f.otherwiseMask;
    f.otherwise = nullptr;
    return;
  }
  w.frames.pop_back();
}

// The lanes of `mask` for which `var < end` holds (the end is re-evaluated every trip, as in C).
Mask Interpreter::loopTest(Warp& w, const tir::For& loop, Mask mask) {
  tir::Reg var = tir::Reg::var(loop.var);
  tir::Type type = w.regs.type(var);
  Lanes end = convert(type, loop.end->type, eval(w, loop.end, mask));
  Lanes less = binaryOp(tir::BinOp::Lt, type, type, w.regs.read(var), end, mask, nullptr);
  Mask active = 0;
  for (int l = 0; l < kWarpSize; ++l)
    if (laneOn(mask, l) && less[l]) active |= 1u << l;
  return active;
}

// A thread that exits with copies or wgmmas in flight still gets them done (the hardware does not
// cancel them); nobody can wait for them, so they are done now.
void Interpreter::exitWarp(Warp& w) {
  w.state = WarpState::Exited;
  w.wgmmaGroups.push_back(std::move(w.wgmmaOpen));
  w.wgmmaOpen.clear();
  retireWgmmas(w, 0);
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(w.live, l)) continue;
    AsyncGroups& g = block_.async[w.thread(l)];
    while (!g.committed.empty()) {
      landGroup(w.thread(l), g.committed.front());
      g.committed.pop_front();
    }
    landGroup(w.thread(l), g.open);
  }
}

Evaluator Interpreter::evaluator(const Warp& w) const {
  return Evaluator(ctx_, &block_.idx, &w.regs, &w.ids, block_.rank);
}

bool Interpreter::heldByWgmma(const Warp& w, const tir::Reg& reg) {
  return !reg.isVar && w.wgmmaHeld.count({reg.id, reg.index}) != 0;
}

Lanes Interpreter::evalValue(const Warp& w, const tir::ExprRef& e, Mask mask, Taint& taint) {
  Mask divByZero = 0;
  Lanes v = evaluator(w).eval(e, mask, &divByZero, &taint);
  // Any use of a register a wgmma in flight writes is a finding, not only a stored one.
  if (taint.undefined && heldByWgmma(w, *taint.first)) reportUnwritten(w, taint.undefined, *taint.first, "a value");
  if (divByZero) {
    int lane = firstLane(divByZero);
    report(FindingKind::DivisionByZero, w, lane,
           fmt::format("integer division by zero in {} (the result is taken as 0)",
                       describe(threadRef(w, lane))));
  }
  return v;
}

Lanes Interpreter::eval(const Warp& w, const tir::ExprRef& e, Mask mask) {
  Taint taint;
  Lanes v = evalValue(w, e, mask, taint);
  if (taint.undefined && !heldByWgmma(w, *taint.first))
    reportUnwritten(w, taint.undefined, *taint.first, "a value used as an address, a condition or a loop bound");
  return v;
}

Mask Interpreter::predicate(const Warp& w, const tir::ExprRef& pred, Mask mask) {
  if (!pred) return mask;
  Lanes p = eval(w, pred, mask);
  Mask on = 0;
  for (int l = 0; l < kWarpSize; ++l)
    if (p[l]) on |= 1u << l;
  return mask & on;
}

void Interpreter::execAssign(Warp& w, const tir::Assign& a, Mask mask) {
  tir::Type dst = w.regs.type(a.dst);
  if (!a.value) TYL_UNREACHABLE("{}", "emulator: assignment without a value");
  if (a.value->type != dst)
    TYL_UNREACHABLE("{}", fmt::format("emulator: assigning a {} value to a {} register",
                                       tir::typeName(a.value->type), tir::typeName(dst)));
  // Arithmetic on unwritten registers is harmless until its result is stored or steers
  // control: the result is only marked unwritten too.
  Taint taint;
  Lanes v = evalValue(w, a.value, mask, taint);
  w.regs.write(a.dst, v, mask);
  w.regs.undefine(a.dst, taint.undefined, taint.origin);
}

// The first thread of the warp where the condition fails is reported, with its values.
void Interpreter::execCheck(const Warp& w, const tir::Check& c, Mask mask) {
  const Mask failed = mask & ~predicate(w, c.cond, mask);
  if (!failed) return;
  const int lane = firstLane(failed);
  std::string values;
  for (const tir::ExprRef& v : c.values) {
    const Lanes x = convert(tir::Type::I64, v->type, eval(w, v, failed));
    values += fmt::format("{}{}", values.empty() ? "" : ", ", static_cast<int64_t>(x[lane]));
  }
  report(FindingKind::OutOfBounds, w, lane,
         fmt::format("{}{}, by {}", c.message, values.empty() ? "" : " (" + values + ")", describe(threadRef(w, lane))));
}

void Interpreter::reportUnwritten(const Warp& w, Mask lanes, const tir::Reg& reg, const char* use) {
  auto nameOf = [&](const tir::Reg& r) {
    return r.isVar ? tir::shownName(ctx_.kernel.vars.at(r.id))
                   : fmt::format("{}[{}]", ctx_.kernel.arrays.at(r.id).name, r.index);
  };
  const tir::Reg origin = w.regs.origin(reg);
  // A register computed from one never written names that one, where the mistake is.
  const bool same = origin.isVar == reg.isVar && origin.id == reg.id && origin.index == reg.index;
  const std::string name = same ? nameOf(reg)
                                         : fmt::format("{}', computed from register '{}", nameOf(reg), nameOf(origin));
  int lane = firstLane(lanes);
  if (heldByWgmma(w, reg)) {
    report(FindingKind::WgmmaInFlight, w, lane,
           fmt::format("{} is computed from register '{}', which a wgmma in flight still writes: no "
                       "wgmma.wait_group has retired its group (by {})",
                       use, name, describe(threadRef(w, lane))));
    return;
  }
  report(FindingKind::UninitializedRegister, w, lane,
         fmt::format("{} is computed from register '{}', which {} never wrote (on a GPU it holds garbage)", use, name,
                     describe(threadRef(w, lane))));
}

// bar.sync must be reached by every thread of the warp together (.aligned); a warp that
// arrives split would hang or misbehave on the GPU, and the run cannot go on meaningfully.
// So must barrier.cluster (.aligned), which every thread of the cluster reaches.
bool Interpreter::execBarrier(Warp& w, const tir::Barrier& b, Mask mask) {
  if (mask != w.live) {
    int lane = firstLane(w.live & ~mask);
    report(
        FindingKind::DivergentBarrier, w, firstLane(mask),
        fmt::format("{} reached by only part of warp {} (lanes {:#010x} of {:#010x}); {} is elsewhere",
                    b.cluster ? "barrier.cluster" : "bar.sync", w.index, mask, w.live, describe(threadRef(w, lane))));
    ctx_.findings.stop();
    return true;
  }
  w.state = b.cluster ? WarpState::AtClusterBarrier : WarpState::AtBarrier;
  w.waitingAt = stmt_;
  return true;
}

void Interpreter::report(FindingKind kind, const Warp& w, int lane, std::string message) {
  Finding f = Finding::make(kind, std::move(message));
  if (stmt_) f.loc = stmt_->loc;
  f.thread = threadRef(w, lane);
  ctx_.findings.add(std::move(f), stmt_);
}

ThreadRef Interpreter::threadRef(int64_t clusterThread) const {
  const int64_t threads = ctx_.kernel.threadsPerBlock();
  return ThreadRef{cluster_.blocks.at(static_cast<size_t>(clusterThread / threads)).idx, clusterThread % threads};
}

std::string Interpreter::describeInBlock(int64_t clusterThread) const {
  const int64_t threads = ctx_.kernel.threadsPerBlock();
  const int64_t thread = clusterThread % threads;
  std::string s = fmt::format("thread {} (warp {}, lane {})", thread, thread / kWarpSize, thread % kWarpSize);
  if (clusterThread / threads != block_.rank) {
    const auto& idx = cluster_.blocks.at(static_cast<size_t>(clusterThread / threads)).idx;
    s += fmt::format(" of block ({}, {}, {})", idx[0], idx[1], idx[2]);
  }
  return s;
}

BlockState* Interpreter::clusterBlock(const Warp& w, int lane, uint64_t rank, const char* what) {
  if (rank >= cluster_.blocks.size()) {
    report(FindingKind::InvalidOperand, w, lane,
           fmt::format("{} addresses cluster rank {}, but the cluster has {} blocks (by {})", what, rank,
                       cluster_.blocks.size(), describe(threadRef(w, lane))));
    return nullptr;
  }
  BlockState& b = cluster_.blocks[rank];
  if (b.exited()) {
    report(FindingKind::ClusterExited, w, lane,
           fmt::format("{} addresses the shared memory of block ({}, {}, {}) (cluster rank {}), whose threads have all "
                       "exited: a block must not exit while the others of its cluster may still use its shared memory "
                       "(end the kernel with cluster_barrier()) (by {})",
                       what, b.idx[0], b.idx[1], b.idx[2], rank, describe(threadRef(w, lane))));
    return nullptr;
  }
  return &b;
}

}  // namespace tyl::emu
