// Semantic analysis: AST -> tile IR. Resolves names, evaluates constants and layouts,
// types scalar expressions, instantiates generic kernels once per element type, unrolls
// `unroll` loops, and turns tile operations into tile IR statements. Every problem is a
// diagnostic; nothing is returned when there are errors.
#pragma once

#include <optional>

#include "frontend/Ast.h"
#include "frontend/Diagnostics.h"
#include "ir/tile/TileIR.h"

namespace tyl {

// Bounds that keep hostile input from making the compiler run for minutes.
inline constexpr int64_t kMaxUnrollCount = 1024;
inline constexpr int64_t kMaxExpandedStmts = 200000;

std::optional<tile::Module> analyze(const ast::Module& module, DiagnosticEngine& diags);

}  // namespace tyl
