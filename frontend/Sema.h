// Semantic analysis: AST -> tile IR. Resolves names, evaluates constants and layouts,
// types scalar expressions, instantiates generic kernels once per element type, unrolls
// `unroll` loops, and turns tile operations into tile IR statements. Every problem is a
// diagnostic; nothing is returned when there are errors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/Diagnostics.h"
#include "frontend/Ast.h"
#include "ir/tile/TileIR.h"

namespace tyl {

// Bounds that keep hostile input from making the compiler run for minutes.
inline constexpr int64_t kMaxUnrollCount = 1024;
inline constexpr int64_t kMaxExpandedStmts = 200000;
// Unrolled iterations in one kernel, counted also where they expand to nothing (nested
// unrolls of `let`s or of `if`s that are false).
inline constexpr int64_t kMaxUnrolledIterations = int64_t{1} << 18;
// The most instantiations one generic kernel may have (the product of its choices).
inline constexpr int64_t kMaxInstances = 64;

// Which instantiations of generic kernels to generate: "gemm:f16" selects gemm with its
// type parameter(s) bound to f16 (several types: "k:f16,bf16" for two parameters).
// Empty: every combination.
struct SemaOptions {
  std::vector<std::string> instantiate;
  // When set, only the kernel (or instantiation) of this name is analysed: `tyloc run` of one
  // kernel neither stops at another's error nor prints its warnings.
  std::string only;
};

// Every instantiation of the module's generic kernels as --instantiate names it ("gemm:f16"),
// in declaration order; the module's imports must be resolved.
std::vector<std::string> instantiationNames(const ast::Module& module);

std::optional<tile::Module> analyze(const ast::Module& module, DiagnosticEngine& diags,
                                    const SemaOptions& options = {});

}  // namespace tyl
