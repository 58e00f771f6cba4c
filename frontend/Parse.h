// Parsing: source text -> AST, through the ANTLR4 parser generated from grammar/Tylo.g4.
// Syntax errors are reported as diagnostics; nothing is returned for broken input.
#pragma once

#include <optional>
#include <string>

#include "base/Diagnostics.h"
#include "frontend/Ast.h"

namespace tyl {

TYL_DIAG(kSyntax, Error, "syntax", "the input does not follow the grammar");

// How deeply blocks and expressions may nest: deeper input would exhaust the parser's stack.
inline constexpr int kMaxNesting = 128;

std::optional<ast::Module> parseModule(FileId file, DiagnosticEngine& diags);
// A standalone layout expression (the argument of `tyloc layout`).
ast::ExprPtr parseLayoutExpr(FileId file, DiagnosticEngine& diags);
// One line per token: `line:col KIND 'text'` (for --emit tokens).
std::string dumpTokens(FileId file, DiagnosticEngine& diags);

}  // namespace tyl
