// Lowering: checked tile IR -> thread IR, through the layout algebra. Each tile
// operation becomes what every thread does; copies choose the widest vector accesses the
// layouts and alignments allow, and say why when they could not use a wider one.
#pragma once

#include <optional>

#include "base/Diagnostics.h"
#include "ir/thread/ThreadIR.h"
#include "ir/tile/TileIR.h"

namespace tyl::lower {

// The most thread-IR statements one kernel may lower to (copies of large fragments in
// unrolled loops multiply quickly); beyond it the kernel is reported as too large.
inline constexpr int64_t kMaxThreadStmts = 50000;

// The most elements one tile statement may touch in one tensor or view (lowering
// enumerates them one by one); beyond it the statement is reported as too large before any
// table of its elements is built.
inline constexpr int64_t kMaxStatementElements = int64_t{1} << 22;

// What the target offers beyond sm_80's instructions, which lowering may choose.
struct Options {
  bool stmatrix = false;  // stmatrix (sm_90): 16-bit fragments stored to shared memory by 8x8 matrices
};

std::optional<tir::Module> lower(const tile::Module& module, DiagnosticEngine& diags, const Options& options = {});

}  // namespace tyl::lower
