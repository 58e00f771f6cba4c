// The passes over thread IR that run between lowering and the backends.
#pragma once

#include "ir/thread/ThreadIR.h"

namespace tyl::tir {

// Counts loop remainders (LoopRemainders.h), then names invariants (HoistInvariants.h),
// verifying the IR after each (Verify.h). Both backends, the CUDA printer and the emulator,
// see the result.
void optimize(Module& m);

}  // namespace tyl::tir
