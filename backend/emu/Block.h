// Runs one thread block: its warps take turns, each running until it reaches a barrier or
// exits (warp 0 first, then 1, ...), and a barrier releases once every warp waits at it.
#pragma once

#include <array>
#include <cstdint>

#include "backend/emu/Launch.h"

namespace tyl::emu {

void runBlock(LaunchContext& ctx, const std::array<int64_t, 3>& blockIdx);

}  // namespace tyl::emu
