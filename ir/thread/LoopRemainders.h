// Counts remainders of loop variables instead of dividing them out. In
// `for (k = a; k < b; k += s)`, every `(k + c) % S` (c and S > 1 constants) becomes a variable
// set to `(a + c) % S` before the loop and advanced by `s % S`, wrapping at S, at the end of
// each iteration: a compare and a select per iteration where the remainder cost a
// multiply-high, a shift and a multiply-subtract at every use. `((k + c) / d) % S` with d
// dividing s is counted the same way, advanced by s / d. A pipeline's stage index is such a
// remainder, and once it is a plain variable every shared address of a stage is an address
// the loop does not change plus the stage's offset.
#pragma once

#include "ir/thread/ThreadIR.h"

namespace tyl::tir {

// Rewrites `k` in place. A remainder is only counted where the value ranges show that
// `k + c` is never negative and never wraps, so the counter always equals it; the
// loop variable must not be assigned in the body, and unrolled loops are left alone
// (there the remainders are constants).
void countLoopRemainders(Kernel& k);

}  // namespace tyl::tir
