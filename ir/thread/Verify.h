// The thread IR's invariants, checked in one place.
//
// The CUDA printer and the emulator take the thread IR as given: a cp.async of 12 bytes, an
// ldmatrix.x4 with two registers or an i32 value assigned to an f32 register would be printed
// as wrong code or executed as something else. The pipeline verifies the IR after lowering and
// after every pass over it, so a pass that breaks an invariant is caught where it did, as an
// internal error (a bug of tyloc's, exit code 3), never as wrong output.
//
// What is checked: every expression is typed as its operator requires and refers to variables,
// parameters, register elements and special registers that exist, with their types; every
// statement has the operands its instruction takes (access sizes of 1 to 16 bytes, cp.async of
// 4, 8 or 16 bytes from global to shared memory, ldmatrix/stmatrix .x1/.x2/.x4 on shared memory
// with one 32-bit register word per matrix, mma.sync's 4 + 2 + 4 + 4 registers of the right
// types, predicates of type pred); a variable marked `single` is assigned exactly once and read
// only where that assignment is in scope (the printer declares it const there); no
// `Cooperative` marker is left after lowering; buffers, parameters, the launch and the launch
// checks agree with each other.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/thread/ThreadIR.h"

namespace tyl::tir {

// The invariants `k` breaks, at most `limit` of them, each as "where: what" (empty: none).
std::vector<std::string> verifyKernel(const Kernel& k, size_t limit = 8);

// The problems of expressions over `k`'s entities (each paired with where it is, for the
// message), at most `limit` of them: what verifyKernel checks of the expressions of statements.
std::vector<std::string> verifyExprs(const Kernel& k, const std::vector<std::pair<ExprRef, std::string>>& exprs,
                                     size_t limit = 8);

// Throws an InternalError saying where the IR comes from (`stage`: "after lowering", "given to
// the emulator") and what the first broken invariants are, when `k` (or a kernel of `m`)
// breaks one.
void verify(const Kernel& k, std::string_view stage);
void verify(const Module& m, std::string_view stage);

}  // namespace tyl::tir
