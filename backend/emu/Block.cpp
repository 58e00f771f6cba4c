#include "backend/emu/Block.h"

#include <fmt/format.h>

#include <algorithm>

#include "backend/emu/Interpreter.h"

namespace tyl::emu {
namespace {

BlockState makeBlock(LaunchContext& ctx, const std::array<int64_t, 3>& blockIdx, int rank) {
  BlockState b;
  b.idx = blockIdx;
  b.rank = rank;
  int64_t threads = ctx.kernel.threadsPerBlock();
  b.threadBase = rank * threads;
  b.shared = &ctx.shared.at(static_cast<size_t>(rank));
  b.shared->beginBlock(threads * ctx.kernel.clusterSize(), ctx.clocks);
  int warps = static_cast<int>((threads + kWarpSize - 1) / kWarpSize);
  b.warps.reserve(warps);
  for (int i = 0; i < warps; ++i) b.warps.emplace_back(i, ctx.kernel, ctx.layout);
  b.async.resize(static_cast<size_t>(threads));
  b.bulk.resize(static_cast<size_t>(threads));
  const int perThread = tir::launchRegistersPerThread(threads);
  b.registers.assign(static_cast<size_t>(warps), perThread);
  b.registerPool = int64_t{perThread} * warps * kWarpSize;
  return b;
}

// The named barrier a warp at bar.sync waits at (null: the block's barrier 0).
const tir::Barrier* namedBarrier(const Warp& w) {
  const auto* b = w.state == WarpState::AtBarrier && w.waitingAt ? std::get_if<tir::Barrier>(&w.waitingAt->node) : nullptr;
  return b && b->threads > 0 ? b : nullptr;
}

// What a waiting warp waits for, in a deadlock finding.
std::string waitDescription(const BlockState& b, const Warp& w) {
  if (const tir::Barrier* named = namedBarrier(w))
    return fmt::format("at named barrier {} (bar.sync {}, {})", named->id, named->id, named->threads);
  if (w.state == WarpState::AtBarrier) return "at a barrier";
  if (w.state == WarpState::AtClusterBarrier) return "at a cluster barrier";
  if (w.waitingFor == kWaitingForRegisters) {
    int64_t held = 0;
    for (int r : b.registers) held += int64_t{r} * kWarpSize;
    return fmt::format("at setmaxnreg.inc to {} registers per thread, while the warps hold {} of the {} registers "
                       "the launch allocated",
                       w.waitingParity, held, b.registerPool);
  }
  const Mbarrier& m = b.mbarriers.find(w.waitingFor)->second.barrier;
  return fmt::format("on the mbarrier at shared byte {} for its phase of parity {}, while it is in phase {} with "
                     "{} arrivals and {} transaction bytes pending",
                     w.waitingFor, w.waitingParity, m.phase(), m.pending(), m.txCount());
}

// No warp can go on: each waits at a barrier that some other warp never reaches (it exited, or
// waits elsewhere), or for an mbarrier phase nothing left can complete. On the GPU the block
// would hang. The finding names every waiting warp and what it waits for.
void reportDeadlock(LaunchContext& ctx, const ClusterState& c) {
  const bool clustered = c.blocks.size() > 1;
  std::string parts;
  const Warp* first = nullptr;
  const BlockState* firstBlock = nullptr;
  for (const BlockState& b : c.blocks) {
    std::string atBarrier, waiting, exited;
    bool onlyBarrier = true;
    for (const Warp& w : b.warps) {
      if (w.state == WarpState::Exited) {
        exited += (exited.empty() ? "" : ", ") + std::to_string(w.index);
        continue;
      }
      if (!first) {
        first = &w;
        firstBlock = &b;
      }
      if (w.state == WarpState::AtBarrier) atBarrier += (atBarrier.empty() ? "" : ", ") + std::to_string(w.index);
      onlyBarrier = onlyBarrier && w.state == WarpState::AtBarrier && !namedBarrier(w);
      waiting += fmt::format("{}warp {} waits {}", waiting.empty() ? "" : "; ", w.index, waitDescription(b, w));
    }
    if (waiting.empty()) continue;
    // Only bar.sync waits: the warps that never reach it have exited.
    std::string what = onlyBarrier && !exited.empty()
                           ? fmt::format("warps {} wait at a barrier that warps {} never reach", atBarrier, exited)
                           : fmt::format("{}{}", waiting, exited.empty() ? "" : fmt::format("; warps {} have exited", exited));
    parts += fmt::format("{}{}", parts.empty() ? "" : " | ",
                         clustered ? fmt::format("block ({}, {}, {}): {}", b.idx[0], b.idx[1], b.idx[2], what) : what);
  }
  const BlockState& b0 = c.blocks.front();
  Finding f = Finding::make(
      FindingKind::Deadlock,
      clustered ? fmt::format("deadlock in the cluster of block ({}, {}, {}): {}", b0.idx[0], b0.idx[1], b0.idx[2], parts)
                : fmt::format("deadlock in block ({}, {}, {}): {}", b0.idx[0], b0.idx[1], b0.idx[2], parts));
  f.loc = first->waitingAt->loc;
  f.thread = ThreadRef{firstBlock->idx, first->thread(0)};
  ctx.findings.add(std::move(f), first->waitingAt);
  ctx.findings.stop();
}

// Releases the warps of `b` at a named barrier once it has as many threads as it counts; true if
// some were. More threads than it counts, or warps that count differently, is a finding.
bool releaseNamedBarriers(LaunchContext& ctx, BlockState& b) {
  bool released = false;
  for (int id = 1; id <= 15; ++id) {
    std::vector<Warp*> at;
    int64_t arrived = 0;
    for (Warp& w : b.warps)
      if (const tir::Barrier* named = namedBarrier(w); named && named->id == id) {
        at.push_back(&w);
        arrived += kWarpSize;  // bar.sync counts a warp as 32 threads, a partial one too
      }
    if (at.empty()) continue;
    const tir::Barrier& first = *namedBarrier(*at[0]);
    const bool mixed = std::any_of(at.begin(), at.end(), [&](const Warp* w) { return namedBarrier(*w)->threads != first.threads; });
    if (arrived < first.threads && !mixed) continue;
    // A barrier of one warp releases each warp that reaches it on its own.
    if ((arrived > first.threads && first.threads > kWarpSize) || mixed) {
      Finding f = Finding::make(
          FindingKind::DivergentBarrier,
          mixed ? fmt::format("warps wait at named barrier {} with different thread counts", id)
                : fmt::format("{} threads reach named barrier {}, which counts {} (bar.sync {}, {}): the barrier "
                              "releases some of them with the wrong partners",
                              arrived, id, first.threads, id, first.threads));
      f.loc = at[0]->waitingAt->loc;
      f.thread = ThreadRef{b.idx, at[0]->thread(0)};
      ctx.findings.add(std::move(f), at[0]->waitingAt);
      ctx.findings.stop();
      return false;
    }
    std::vector<int32_t> threads;
    for (Warp* w : at) {
      for (int lane = 0; lane < kWarpSize; ++lane)
        if (w->live >> lane & 1) threads.push_back(static_cast<int32_t>(b.threadBase + w->thread(lane)));
      w->state = WarpState::Running;
    }
    ctx.clocks.barrier(threads);
    ++ctx.stats.barriers;
    released = true;
  }
  return released;
}

}  // namespace

void runCluster(LaunchContext& ctx, const std::array<int64_t, 3>& firstBlock) {
  const auto& dims = ctx.kernel.cluster;
  const int64_t threads = ctx.kernel.threadsPerBlock();
  ClusterState c;
  ctx.clocks.reset(threads * ctx.kernel.clusterSize());
  // Ranks as %cluster_ctarank numbers them: x fastest.
  for (int64_t z = 0; z < dims[2]; ++z)
    for (int64_t y = 0; y < dims[1]; ++y)
      for (int64_t x = 0; x < dims[0]; ++x)
        c.blocks.push_back(makeBlock(ctx, {firstBlock[0] + x, firstBlock[1] + y, firstBlock[2] + z},
                                     static_cast<int>(c.blocks.size())));
  std::vector<Interpreter> interpreters;
  interpreters.reserve(c.blocks.size());
  for (BlockState& b : c.blocks) interpreters.emplace_back(ctx, c, b);
  uint64_t seenChanges = 0;
  while (!ctx.findings.stopped()) {
    for (size_t r = 0; r < c.blocks.size(); ++r)
      for (Warp& w : c.blocks[r].warps) {
        if (w.state == WarpState::Running) interpreters[r].run(w);
        if (ctx.findings.stopped()) return;
      }
    size_t waiting = 0, atMbarrier = 0, atCluster = 0, live = 0;
    for (const BlockState& b : c.blocks)
      for (const Warp& w : b.warps) {
        waiting += w.state != WarpState::Exited;
        atMbarrier += w.state == WarpState::AtMbarrier;
        atCluster += w.state == WarpState::AtClusterBarrier;
      }
    if (waiting == 0) break;
    // A barrier changed since the waits were tried: try them again.
    if (atMbarrier > 0 && c.mbarrierChanges != seenChanges) {
      seenChanges = c.mbarrierChanges;
      for (BlockState& b : c.blocks)
        for (Warp& w : b.warps)
          if (w.state == WarpState::AtMbarrier) w.state = WarpState::Running;
      continue;
    }
    // A named barrier with all its threads, or a block whose warps all wait at bar.sync 0, passes.
    bool released = false;
    for (BlockState& b : c.blocks) {
      released = releaseNamedBarriers(ctx, b) || released;
      if (ctx.findings.stopped()) return;
      if (b.exited() || !std::all_of(b.warps.begin(), b.warps.end(), [](const Warp& w) {
            return w.state == WarpState::AtBarrier && !namedBarrier(w);
          }))
        continue;
      b.shared->barrier();
      ctx.clocks.barrier(b.threadBase, threads);
      ++ctx.stats.barriers;
      for (Warp& w : b.warps) w.state = WarpState::Running;
      released = true;
    }
    if (released) continue;
    // Every warp of the cluster at barrier.cluster: all pass it.
    for (const BlockState& b : c.blocks)
      for (const Warp& w : b.warps) live += w.state != WarpState::Exited;
    if (atCluster > 0 && atCluster == live && std::none_of(c.blocks.begin(), c.blocks.end(), [](const BlockState& b) {
          return std::any_of(b.warps.begin(), b.warps.end(), [](const Warp& w) { return w.state == WarpState::Exited; });
        })) {
      for (BlockState& b : c.blocks) {
        b.shared->barrier();
        for (Warp& w : b.warps) w.state = WarpState::Running;
      }
      ctx.clocks.barrier(0, threads * static_cast<int64_t>(c.blocks.size()));
      ++ctx.stats.barriers;
      continue;
    }
    return reportDeadlock(ctx, c);
  }
  ctx.stats.blocks += static_cast<int64_t>(c.blocks.size());
}

}  // namespace tyl::emu
