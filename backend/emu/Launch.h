// The state of one emulated kernel launch, shared by all its blocks.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "backend/emu/Emulator.h"
#include "backend/emu/Findings.h"
#include "backend/emu/Memory.h"
#include "backend/emu/Registers.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::emu {

// Where a pointer parameter points: `offset` bytes into host buffer `buffer`.
struct PointerBinding {
  int buffer = -1;
  int64_t offset = 0;
};

// The shared-window byte address the emulator gives the block's dynamic shared memory (what
// Special::SharedBase reads): not 0, as on a GPU, where the window starts with 1 KiB reserved for
// the system, but on every swizzle period (1024 bytes), as the generated code aligns it.
inline constexpr int64_t kSharedWindowBase = 1024;

struct LaunchContext {
  LaunchContext(const tir::Kernel& kernel, const Options& options, std::vector<Buffer>& buffers);

  const tir::Kernel& kernel;
  const Options& options;
  RegisterLayout layout;
  std::vector<uint64_t> params;          // canonical scalar arguments (0 for pointers)
  std::vector<PointerBinding> pointers;  // per parameter (buffer -1 for scalars)
  std::array<int64_t, 3> grid{1, 1, 1};
  GlobalMemory global;
  std::vector<SharedMemory> shared;  // one per block of a cluster, reused by every cluster
  ThreadClocks clocks;               // of the cluster's threads
  FindingLog findings;
  Stats stats;
  uint64_t nextCopyId = 1;  // cp.async identities, unique in the launch
};

}  // namespace tyl::emu
