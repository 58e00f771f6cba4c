// Names the values a thread computes from constants, scalar parameters and special
// registers (thread and block ids) alone. Lowering spells every address out in full, so
// the same lane and row arithmetic recurs in every access; each distinct such value
// becomes one variable, set once at the start of the innermost block that holds all its
// uses, and every use reads the variable. The generated code shrinks several-fold (nvcc
// parses it faster) and the emulator evaluates each value once.
#pragma once

#include "ir/thread/ThreadIR.h"

namespace tyl::tir {

// Rewrites `k` in place. A value is only moved ahead of the conditions that guarded a
// use when another use needs it there too, and only if it cannot fault: no division or
// remainder by a run-time value, no shift by a run-time amount. Memory, registers and
// variables are never read early.
void hoistInvariants(Kernel& k);
void hoistInvariants(Module& m);

}  // namespace tyl::tir
