#include "backend/emu/Block.h"

#include <fmt/format.h>

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
  return b;
}

// Every warp still running waits at a barrier, but some warps have exited: on the GPU the
// waiting warps would hang (or, on some parts, be released early).
void reportDeadlock(LaunchContext& ctx, const BlockState& b) {
  std::string waiting, exited;
  const Warp* first = nullptr;
  for (const Warp& w : b.warps) {
    std::string& list = w.state == WarpState::AtBarrier ? waiting : exited;
    list += (list.empty() ? "" : ", ") + std::to_string(w.index);
    if (w.state == WarpState::AtBarrier && !first) first = &w;
  }
  Finding f = Finding::make(
      FindingKind::Deadlock,
      fmt::format("deadlock in block ({}, {}, {}): warps {} wait at a barrier that warps {} never reach",
                  b.idx[0], b.idx[1], b.idx[2], waiting, exited));
  f.loc = first->waitingAt->loc;
  f.thread = ThreadRef{b.idx, first->thread(0)};
  ctx.findings.add(std::move(f), first->waitingAt);
  ctx.findings.stop();
}

}  // namespace

void runBlock(LaunchContext& ctx, const std::array<int64_t, 3>& blockIdx) {
  BlockState b = makeBlock(ctx, blockIdx);
  ctx.shared.beginBlock();
  Interpreter interpreter(ctx, b);
  while (!ctx.findings.stopped()) {
    for (Warp& w : b.warps) {
      if (w.state == WarpState::Running) interpreter.run(w);
      if (ctx.findings.stopped()) return;
    }
    size_t waiting = 0, exited = 0;
    for (const Warp& w : b.warps) (w.state == WarpState::AtBarrier ? waiting : exited)++;
    if (waiting == 0) break;
    if (exited > 0) return reportDeadlock(ctx, b);
    ctx.shared.barrier();
    ++ctx.stats.barriers;
    for (Warp& w : b.warps) w.state = WarpState::Running;
  }
  ++ctx.stats.blocks;
}

}  // namespace tyl::emu
