// Barriers and warp-wide instructions need whole groups of threads: bar.sync must be reached
// by every thread of the block or by none, and ldmatrix, stmatrix and mma.sync (all
// `.sync.aligned`) by every lane of a warp or by none. This check finds the run-time `if`s
// and loops around them whose outcome differs between threads.
#pragma once

#include "base/Diagnostics.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::lower {

// Reports, for a lowered kernel, each barrier and warp-wide instruction that
//  - `divergent-barrier` / `divergent-collective` (errors): some thread of the block (lane
//    of a warp) reaches and another does not, for sure: the conditions and loop bounds around
//    it that differ between threads are computed from thread ids and constants only, and
//    the conditions that are the same in every thread hold;
//  - `maybe-divergent` (a warning): may be reached that way, because a condition or loop
//    bound around it differs between threads and also depends on values known only at run
//    time (parameters, block ids, memory, registers that change).
// Conditions the same in every thread of the block (or warp) are fine, whatever they
// depend on; values loaded from the same address are taken to be the same in every thread.
void checkConvergence(const tir::Kernel& k, DiagnosticEngine& diags);

}  // namespace tyl::lower
