// A readable dump of the AST (for --emit ast and tests).
#pragma once

#include <string>

#include "base/Source.h"
#include "frontend/Ast.h"

namespace tyl {

std::string printAst(const ast::Module& module, const SourceManager& sources);
std::string printExpr(const ast::Expr& expr);

}  // namespace tyl
