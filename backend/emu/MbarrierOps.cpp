// mbarrier init, arrive and wait, for each lane that executes them, on the barrier states of
// the block (Mbarrier.h), with what each arrival releases and each completed wait acquires
// (SharedMemory::release, ::acquire).
#include <fmt/format.h>

#include <bit>

#include "backend/emu/Interpreter.h"

namespace tyl::emu {

std::optional<int64_t> Interpreter::mbarrierByte(const Warp& w, const tir::MemRef& bar, uint64_t offset, int lane) {
  Place p;
  if (!place(w, bar, static_cast<int64_t>(offset), 8, 8, lane, "mbarrier", &p)) return std::nullopt;
  return p.byte;
}

void Interpreter::execMbarrierInit(Warp& w, const tir::MbarrierInit& op, Mask mask) {
  const Lanes offset = eval(w, op.bar.offset, mask), count = eval(w, op.count, mask);
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(mask, l)) continue;
    std::optional<int64_t> byte = mbarrierByte(w, op.bar, offset[l], l);
    if (!byte) continue;
    MbarrierState& s = block_.mbarriers[*byte];
    s = MbarrierState{};
    if (Mbarrier::Problem p = s.barrier.init(static_cast<int64_t>(count[l])); !p.empty())
      report(FindingKind::InvalidOperand, w, l, fmt::format("{} (by {})", p, describe(threadRef(w, l))));
    ++cluster_.mbarrierChanges;
  }
}

void Interpreter::signalMbarrier(const Warp& w, int l, BlockState& target, int64_t byte, Signal signal,
                                 int64_t amount) {
  MbarrierState& s = target.mbarriers[byte];
  if (signal == Signal::CompleteTx && !s.barrier.initialized()) {
    report(FindingKind::InvalidOperand, w, l,
           fmt::format("a TMA completes on an mbarrier that was never initialized (by {})", describe(threadRef(w, l))));
    return;
  }
  const int64_t phase = s.barrier.phase();
  ctx_.clocks.release(clusterThread(w, l), s.current);
  Mbarrier::Problem p = signal == Signal::Arrive           ? s.barrier.arrive()
                        : signal == Signal::ArriveExpectTx ? s.barrier.arriveExpectTx(amount)
                                                           : s.barrier.completeTx(amount);
  if (!p.empty()) report(FindingKind::InvalidOperand, w, l, fmt::format("{} (by {})", p, describe(threadRef(w, l))));
  if (s.barrier.phase() != phase) {
    s.completed = std::move(s.current);
    s.current.clear();
  }
  ++cluster_.mbarrierChanges;
}

// With a cluster rank, the arrive is on the barrier at the same offset in that block's shared
// memory (mapa + mbarrier.arrive.shared::cluster).
void Interpreter::execMbarrierArrive(Warp& w, const tir::MbarrierArrive& op, Mask mask) {
  const Lanes offset = eval(w, op.bar.offset, mask);
  Lanes bytes{}, cta{};
  if (op.expectTx) bytes = eval(w, op.expectTx, mask);
  if (op.cta) cta = eval(w, op.cta, mask);
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(mask, l)) continue;
    std::optional<int64_t> byte = mbarrierByte(w, op.bar, offset[l], l);
    if (!byte) continue;
    BlockState* target = op.cta ? clusterBlock(w, l, static_cast<uint32_t>(cta[l]), "a remote mbarrier arrive") : &block_;
    if (!target) continue;
    signalMbarrier(w, l, *target, *byte, op.expectTx ? Signal::ArriveExpectTx : Signal::Arrive,
                   static_cast<int64_t>(bytes[l]));
  }
}

bool Interpreter::execMbarrierWait(Warp& w, const tir::MbarrierWait& op, Mask mask) {
  const Lanes offset = eval(w, op.bar.offset, mask), parity = eval(w, op.parity, mask);
  std::vector<std::pair<int, const MbarrierState*>> done;
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(mask, l)) continue;
    std::optional<int64_t> byte = mbarrierByte(w, op.bar, offset[l], l);
    if (!byte) continue;
    auto it = block_.mbarriers.find(*byte);
    if (it == block_.mbarriers.end() || !it->second.barrier.initialized()) {
      report(FindingKind::InvalidOperand, w, l,
             fmt::format("a wait on an mbarrier that was never initialized: {} (by {})",
                         where(op.bar, Place{true, -1, *byte}), describe(threadRef(w, l))));
      continue;
    }
    if (parity[l] > 1)
      report(FindingKind::InvalidOperand, w, l,
             fmt::format("an mbarrier wait on parity {} (0 or 1) (by {})", parity[l], describe(threadRef(w, l))));
    if (!it->second.barrier.phaseComplete(static_cast<int>(parity[l] & 1))) {
      // Not yet: the warp waits here, and tries the wait again once a barrier changes.
      w.frames.back().pc--;
      w.state = WarpState::AtMbarrier;
      w.waitingAt = stmt_;
      w.waitingFor = *byte;
      w.waitingParity = static_cast<int>(parity[l] & 1);
      return true;
    }
    done.emplace_back(l, &it->second);
  }
  for (const auto& [l, s] : done) ctx_.clocks.acquire(clusterThread(w, l), s->completed);
  return false;
}

bool Interpreter::execSetMaxNReg(Warp& w, const tir::SetMaxNReg& op, Mask mask) {
  if (mask != w.live) {
    report(FindingKind::PartialCollective, w, std::countr_zero(mask),
           fmt::format("setmaxnreg executed by only part of warp {} (by {})", w.index,
                       describe(threadRef(w, std::countr_zero(mask)))));
    return false;
  }
  int& mine = block_.registers.at(static_cast<size_t>(w.index));
  if (op.increase ? op.count < mine : op.count > mine) {
    report(FindingKind::InvalidOperand, w, 0,
           fmt::format("setmaxnreg.{} to {} registers per thread, but warp {} holds {}: an {} must {} them",
                       op.increase ? "inc" : "dec", op.count, w.index, mine, op.increase ? "increase" : "decrease",
                       op.increase ? "raise" : "lower"));
    return false;
  }
  if (op.increase) {
    int64_t held = 0;
    for (int r : block_.registers) held += int64_t{r} * kWarpSize;
    if (held + int64_t{op.count - mine} * kWarpSize > block_.registerPool) {
      // Not yet: the warp waits until others return registers.
      w.frames.back().pc--;
      w.state = WarpState::AtMbarrier;
      w.waitingAt = stmt_;
      w.waitingFor = kWaitingForRegisters;
      w.waitingParity = op.count;
      return true;
    }
  } else {
    ++cluster_.mbarrierChanges;
  }
  mine = op.count;
  return false;
}

}  // namespace tyl::emu
