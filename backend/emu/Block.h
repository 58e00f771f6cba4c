// Runs one cluster of thread blocks (one block, without clusters): the warps of its blocks take
// turns, each running until it reaches a barrier or exits (block rank 0 first, warp 0 first, then
// 1, ...); a block's barrier releases once every warp of the block waits at it, a cluster barrier
// once every warp of the cluster does.
#pragma once

#include <array>
#include <cstdint>

#include "backend/emu/Launch.h"

namespace tyl::emu {

// `firstBlock` is the index of the cluster's block of rank 0.
void runCluster(LaunchContext& ctx, const std::array<int64_t, 3>& firstBlock);

}  // namespace tyl::emu
