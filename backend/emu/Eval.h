// Evaluates thread IR expressions for all lanes of a warp at once.
#pragma once

#include <array>
#include <optional>

#include "backend/emu/Launch.h"
#include "backend/emu/Registers.h"
#include "backend/emu/Values.h"

namespace tyl::emu {

// The special registers of one warp, per lane.
struct WarpIds {
  std::array<Lanes, 3> tid{};
  Lanes laneId{};
  Lanes warpId{};
};

// Which lanes' values were computed from registers never written (and the first such
// register), gathered while evaluating.
struct Taint {
  Mask undefined = 0;
  std::optional<tir::Reg> first;   // the first unwritten register read
  std::optional<tir::Reg> origin;  // the register never written that it was computed from
};

class Evaluator {
 public:
  // Without registers and ids (and block index), only constants and scalar parameters can be
  // evaluated: that is how grid sizes and launch checks are computed.
  Evaluator(const LaunchContext& ctx, const std::array<int64_t, 3>* blockIdx, const RegisterFile* regs,
            const WarpIds* ids, int clusterRank = 0)
      : ctx_(ctx), blockIdx_(blockIdx), regs_(regs), ids_(ids), clusterRank_(clusterRank) {}

  // Lanes outside `mask` get values too (they are harmless), but only lanes in `mask` can
  // report a division by zero, in `*divByZero`.
  // With `taint`, also which lanes of `mask` depend on registers never written (a select
  // only on the side each lane picks).
  Lanes eval(const tir::ExprRef& e, Mask mask, Mask* divByZero, Taint* taint = nullptr) const;

  // A launch-time value: `e` may use only constants and scalar parameters. Empty when it
  // divides by zero.
  std::optional<int64_t> scalar(const tir::ExprRef& e) const;

 private:
  Lanes special(tir::Special s) const;

  const LaunchContext& ctx_;
  const std::array<int64_t, 3>* blockIdx_;
  const RegisterFile* regs_;
  const WarpIds* ids_;
  int clusterRank_;
};

}  // namespace tyl::emu
