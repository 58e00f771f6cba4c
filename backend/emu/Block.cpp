#include "backend/emu/Block.h"

#include <fmt/format.h>

#include <algorithm>

#include "backend/emu/Interpreter.h"

namespace tyl::emu {
namespace {

BlockState makeBlock(const LaunchContext& ctx, const std::array<int64_t, 3>& blockIdx) {
  BlockState b;
  b.idx = blockIdx;
  int64_t threads = ctx.kernel.threadsPerBlock();
  int warps = static_cast<int>((threads + kWarpSize - 1) / kWarpSize);
  b.warps.reserve(warps);
  for (int i = 0; i < warps; ++i) b.warps.emplace_back(i, ctx.kernel, ctx.layout);
  b.async.resize(static_cast<size_t>(threads));
  b.bulk.resize(static_cast<size_t>(threads));
  // The registers per thread the launch gives a block that is alone on its SM (tyloc emits
  // __launch_bounds__(threads, 1) for kernels that use setmaxnreg): 64K over its warps' threads,
  // in steps of 8, at most 248.
  const int perThread = std::min<int>(248, static_cast<int>(65536 / (int64_t{warps} * kWarpSize) / 8 * 8));
  b.registers.assign(static_cast<size_t>(warps), perThread);
  b.registerPool = int64_t{perThread} * warps * kWarpSize;
  return b;
}

// No warp can go on: each waits at a barrier that some other warp never reaches (it exited, or
// waits elsewhere), or for an mbarrier phase nothing left can complete. On the GPU the block
// would hang. The finding names every waiting warp and what it waits for.
void reportDeadlock(LaunchContext& ctx, const BlockState& b) {
  std::string atBarrier, waiting, exited;
  bool onMbarrier = false;
  const Warp* first = nullptr;
  for (const Warp& w : b.warps) {
    if (w.state == WarpState::Exited) {
      exited += (exited.empty() ? "" : ", ") + std::to_string(w.index);
      continue;
    }
    if (!first) first = &w;
    std::string what;
    if (w.state == WarpState::AtBarrier) {
      what = "at a barrier";
      atBarrier += (atBarrier.empty() ? "" : ", ") + std::to_string(w.index);
    } else if (w.waitingFor == kWaitingForRegisters) {
      onMbarrier = true;
      int64_t held = 0;
      for (int r : b.registers) held += int64_t{r} * kWarpSize;
      what = fmt::format("at setmaxnreg.inc to {} registers per thread, while the warps hold {} of the {} registers "
                         "the launch allocated",
                         w.waitingParity, held, b.registerPool);
    } else {
      onMbarrier = true;
      const auto it = b.mbarriers.find(w.waitingFor);
      const Mbarrier& m = it->second.barrier;
      what = fmt::format("on the mbarrier at shared byte {} for its phase of parity {}, while it is in phase {} with "
                         "{} arrivals and {} transaction bytes pending",
                         w.waitingFor, w.waitingParity, m.phase(), m.pending(), m.txCount());
    }
    waiting += fmt::format("{}warp {} waits {}", waiting.empty() ? "" : "; ", w.index, what);
  }
  // Only bar.sync waits: the warps that never reach it have exited.
  const std::string what =
      onMbarrier ? fmt::format("{}{}", waiting, exited.empty() ? "" : fmt::format("; warps {} have exited", exited))
                 : fmt::format("warps {} wait at a barrier that warps {} never reach", atBarrier, exited);
  Finding f = Finding::make(FindingKind::Deadlock,
                            fmt::format("deadlock in block ({}, {}, {}): {}", b.idx[0], b.idx[1], b.idx[2], what));
  f.loc = first->waitingAt->loc;
  f.thread = ThreadRef{b.idx, first->thread(0)};
  ctx.findings.add(std::move(f), first->waitingAt);
  ctx.findings.stop();
}

}  // namespace

void runBlock(LaunchContext& ctx, const std::array<int64_t, 3>& blockIdx) {
  BlockState b = makeBlock(ctx, blockIdx);
  ctx.shared.beginBlock(ctx.kernel.threadsPerBlock());
  Interpreter interpreter(ctx, b);
  uint64_t seenChanges = 0;
  while (!ctx.findings.stopped()) {
    for (Warp& w : b.warps) {
      if (w.state == WarpState::Running) interpreter.run(w);
      if (ctx.findings.stopped()) return;
    }
    size_t atBarrier = 0, atMbarrier = 0, exited = 0;
    for (const Warp& w : b.warps) {
      atBarrier += w.state == WarpState::AtBarrier;
      atMbarrier += w.state == WarpState::AtMbarrier;
      exited += w.state == WarpState::Exited;
    }
    if (atBarrier == 0 && atMbarrier == 0) break;
    // A barrier changed since the waits were tried: try them again.
    if (atMbarrier > 0 && b.mbarrierChanges != seenChanges) {
      seenChanges = b.mbarrierChanges;
      for (Warp& w : b.warps)
        if (w.state == WarpState::AtMbarrier) w.state = WarpState::Running;
      continue;
    }
    if (atMbarrier > 0 || exited > 0) return reportDeadlock(ctx, b);
    ctx.shared.barrier();
    ++ctx.stats.barriers;
    for (Warp& w : b.warps) w.state = WarpState::Running;
  }
  ++ctx.stats.blocks;
}

}  // namespace tyl::emu
