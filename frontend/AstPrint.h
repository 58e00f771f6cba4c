// A readable dump of the AST (for --emit ast and tests).
#pragma once

#include <string>

#include "frontend/Ast.h"
#include "frontend/Source.h"

namespace tyl {

std::string printAst(const ast::Module& module, const SourceManager& sources);
std::string printExpr(const ast::Expr& expr);

}  // namespace tyl
