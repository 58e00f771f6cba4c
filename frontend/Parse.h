// Parsing: source text -> AST, through the ANTLR4 parser generated from grammar/Tylo.g4.
// Syntax errors are reported as diagnostics; nothing is returned for broken input.
#pragma once

#include <optional>
#include <string>

#include "frontend/Ast.h"
#include "frontend/Diagnostics.h"

namespace tyl {

// Bounds that keep hostile input from exhausting the parser's stack or memory.
inline constexpr size_t kMaxSourceBytes = size_t{8} << 20;
inline constexpr int kMaxNesting = 128;

std::optional<ast::Module> parseModule(FileId file, DiagnosticEngine& diags);
// A standalone layout expression (the argument of `tyloc layout`).
ast::ExprPtr parseLayoutExpr(FileId file, DiagnosticEngine& diags);
// One line per token: `line:col KIND 'text'` (for --emit tokens).
std::string dumpTokens(FileId file, DiagnosticEngine& diags);

}  // namespace tyl
