// One warp of a block as the interpreter runs it: registers, special registers, and an
// explicit stack of frames (the statements still to run, under which lanes), so that a warp
// can stop at a barrier and resume later exactly where it was.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "backend/emu/Eval.h"
#include "backend/emu/Registers.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::emu {

// Statements of `block` from `pc` on, run by the lanes of `mask`.
struct Frame {
  const tir::Block* block = nullptr;
  size_t pc = 0;
  Mask mask = 0;
  // When the block ends: a loop body steps its variable and runs again for the lanes still
  // in range; an if's then-branch hands over to its else-branch for `otherwiseMask`.
  const tir::For* loop = nullptr;
  const tir::Stmt* loopStmt = nullptr;  // the loop's statement, for findings in its step and test
  const tir::Block* otherwise = nullptr;
  Mask otherwiseMask = 0;
};

// AtMbarrier: some lane waits for an mbarrier phase that has not completed; the warp retries the
// wait once a barrier changes. AtClusterBarrier: at barrier.cluster, which every warp of the
// cluster must reach.
enum class WarpState : uint8_t { Running, AtBarrier, AtClusterBarrier, AtMbarrier, Exited };
// Warp::waitingFor of a warp at setmaxnreg.inc, waiting for the pool to have its registers
// (waitingParity then holds the count it asks for).
inline constexpr int64_t kWaitingForRegisters = -2;

// A wgmma issued and not yet performed: the hardware may read its operands and write D at any
// time before the wait_group that retires its group, so the emulator performs it then, reading
// shared memory as it is at that moment (a tile refilled too early gives wrong numbers and a race).
struct IssuedWgmma {
  const tir::Stmt* stmt = nullptr;
  uint64_t descA = 0, descB = 0;
  bool accumulate = true;
  Mask mask = 0;
  std::array<std::array<uint32_t, kWarpSize>, 4> aWords{};  // A from registers: read when issued
};

// A register of D that wgmmas in flight write: what it held before the first of them, and how
// many write it. Meanwhile it reads as unwritten (emu-wgmma-in-flight).
struct HeldRegister {
  Lanes value{};
  Mask defined = 0;
  int writers = 0;
};

struct Warp {
  // Warp `index` of a block of `kernel`, about to run the kernel body.
  Warp(int index, const tir::Kernel& kernel, const RegisterLayout& layout);

  int index;
  Mask live;  // lanes that are threads of the block (the last warp may be partial)
  RegisterFile regs;
  WarpIds ids;
  std::vector<Frame> frames;
  WarpState state = WarpState::Running;
  const tir::Stmt* waitingAt = nullptr;  // the barrier or mbarrier wait it waits at
  int64_t waitingFor = -1;                // AtMbarrier: the shared byte of the barrier a lane waits on,
                                          // or kWaitingForRegisters
  int waitingParity = 0;
  // wgmma: the open group, the committed groups (oldest first), the registers they hold.
  std::vector<IssuedWgmma> wgmmaOpen;
  std::deque<std::vector<IssuedWgmma>> wgmmaGroups;
  std::map<std::pair<uint32_t, int64_t>, HeldRegister> wgmmaHeld;  // by (array, element)

  int64_t thread(int lane) const { return int64_t{index} * kWarpSize + lane; }
};

}  // namespace tyl::emu
