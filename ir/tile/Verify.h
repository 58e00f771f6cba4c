// The tile IR's invariants, checked between analysis and lowering.
//
// Semantic analysis reports what is wrong with a program; what it hands to lowering must then
// be well formed: tensors whose shapes, layouts, buffers and register arrays agree, views of
// existing tensors with one origin per dimension, copies whose two sides have one shape (and,
// for copy_async, run from global to shared memory), MMAs on register fragments, scalar
// expressions as the thread IR verifier wants them. A violation is a bug of tyloc's, reported
// as an internal error (exit code 3) naming the stage that produced it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/tile/TileIR.h"

namespace tyl::tile {

// The invariants `k` breaks, at most `limit` of them, each as "where: what" (empty: none).
std::vector<std::string> verifyKernel(const Kernel& k, size_t limit = 8);

// Throws an InternalError saying where the IR comes from (`stage`: "after analysis") when a
// kernel of `m` breaks one.
void verify(const Module& m, std::string_view stage);

}  // namespace tyl::tile
