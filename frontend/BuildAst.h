// Converts ANTLR parse trees into the AST (frontend/Ast.h).
#pragma once

#include <vector>

#include <fmt/format.h>

#include "TyloParser.h"
#include "base/Diagnostics.h"
#include "frontend/Ast.h"

namespace tyl {

// Maps ANTLR character indices (code points) to byte offsets in the source buffer.
class OffsetMap {
 public:
  OffsetMap(FileId file, const std::string& text);
  SourceLoc loc(size_t codePointIndex) const;
  SourceRange range(const antlr4::Token* start, const antlr4::Token* stop) const;
  SourceRange range(const antlr4::Token* token) const { return range(token, token); }
  SourceRange range(antlr4::ParserRuleContext* ctx) const { return range(ctx->getStart(), ctx->getStop()); }

 private:
  FileId file_;
  std::vector<uint32_t> byteOffsets_;  // empty when the text is ASCII
  size_t size_;
};

class AstBuilder {
 public:
  AstBuilder(const OffsetMap& offsets, DiagnosticEngine& diags) : offsets_(offsets), diags_(diags) {}

  ast::Module module(grammar::TyloParser::FileContext* ctx, FileId file);
  ast::ExprPtr expr(grammar::TyloParser::ExprContext* ctx);

 private:
  ast::Decl decl(grammar::TyloParser::TopDeclContext* ctx);
  ast::KernelDecl kernel(grammar::TyloParser::KernelDeclContext* ctx);
  ast::Param param(grammar::TyloParser::ParamContext* ctx);
  ast::Block block(grammar::TyloParser::BlockContext* ctx);
  ast::StmtPtr stmt(grammar::TyloParser::StmtContext* ctx);
  // The loop's name, or its tuple of names (`open` and `close` its parentheses), into `f`.
  void loopVars(const std::vector<antlr4::tree::TerminalNode*>& names, antlr4::Token* open, antlr4::Token* close,
                ast::For& f);
  ast::If ifClause(grammar::TyloParser::IfClauseContext* ctx);
  ast::ExprPtr primary(grammar::TyloParser::PrimaryContext* ctx);
  int64_t intLiteral(const std::string& spelling, SourceRange range);
  std::vector<ast::ExprPtr> exprList(grammar::TyloParser::ExprListContext* ctx);
  std::vector<ast::Arg> argList(grammar::TyloParser::ArgListContext* ctx);
  ast::Ident ident(antlr4::tree::TerminalNode* node);
  ast::Ident ident(antlr4::Token* token);
  ast::ExprPtr make(SourceRange range, auto node);

  const OffsetMap& offsets_;
  DiagnosticEngine& diags_;
  int depth_ = 0;
  bool depthReported_ = false;
};

// The deepest expression tree accepted (operator chains nest one level per operator).
inline constexpr int kMaxExprDepth = 512;

}  // namespace tyl
