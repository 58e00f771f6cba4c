#include "frontend/BuildAst.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

#include "base/CommonDiags.h"
#include "base/Diagnostics.h"
#include "frontend/Parse.h"

namespace tyl {

using grammar::TyloParser;

TYL_DIAG(kBadLiteral, Error, "bad-literal", "a numeric literal that cannot be represented");

// ---- OffsetMap -------------------------------------------------------------------

OffsetMap::OffsetMap(FileId file, const std::string& text) : file_(file), size_(text.size()) {
  bool ascii = true;
  for (unsigned char c : text) ascii &= c < 0x80;
  if (ascii) return;
  for (uint32_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) byteOffsets_.push_back(i);
  byteOffsets_.push_back(static_cast<uint32_t>(text.size()));
}

SourceLoc OffsetMap::loc(size_t index) const {
  if (byteOffsets_.empty()) return SourceLoc{file_, static_cast<uint32_t>(std::min(index, size_))};
  if (index >= byteOffsets_.size()) return SourceLoc{file_, byteOffsets_.back()};
  return SourceLoc{file_, byteOffsets_[index]};
}

SourceRange OffsetMap::range(const antlr4::Token* start, const antlr4::Token* stop) const {
  if (!start) return {};
  SourceLoc b = loc(start->getStartIndex());
  if (!stop || stop->getType() == antlr4::Token::EOF || stop->getStopIndex() + 1 < start->getStartIndex())
    return SourceRange{b, b};
  return SourceRange{b, loc(stop->getStopIndex() + 1)};
}

// ---- Helpers ---------------------------------------------------------------------

template <class T>
static T* as(antlr4::ParserRuleContext* ctx) {
  return dynamic_cast<T*>(ctx);
}

ast::ExprPtr AstBuilder::make(SourceRange range, auto node) {
  auto e = std::make_unique<ast::Expr>();
  e->range = range;
  e->node = std::move(node);
  return e;
}

ast::Ident AstBuilder::ident(antlr4::Token* token) { return ast::Ident{token->getText(), offsets_.range(token)}; }

ast::Ident AstBuilder::ident(antlr4::tree::TerminalNode* node) { return ident(node->getSymbol()); }

// ---- Declarations ----------------------------------------------------------------

ast::Module AstBuilder::module(TyloParser::FileContext* ctx, FileId file) {
  ast::Module m;
  m.file = file;
  for (TyloParser::ImportDeclContext* i : ctx->importDecl()) {
    std::string quoted = i->STRING()->getText();
    m.imports.push_back(
        ast::Import{offsets_.range(i), quoted.substr(1, quoted.size() - 2), offsets_.range(i->STRING()->getSymbol())});
  }
  for (TyloParser::TopDeclContext* d : ctx->topDecl()) m.decls.push_back(decl(d));
  return m;
}

ast::Decl AstBuilder::decl(TyloParser::TopDeclContext* ctx) {
  if (auto* c = as<TyloParser::ConstDeclContext>(ctx)) {
    ast::Ident name = ident(c->IDENT());
    return ast::ConstDecl{offsets_.range(ctx), name.name, name.range, expr(c->expr())};
  }
  if (auto* l = as<TyloParser::LayoutDeclContext>(ctx)) {
    ast::Ident name = ident(l->IDENT());
    return ast::LayoutDecl{offsets_.range(ctx), name.name, name.range, expr(l->expr())};
  }
  return kernel(as<TyloParser::KernelDeclContext>(ctx));
}

ast::KernelDecl AstBuilder::kernel(TyloParser::KernelDeclContext* ctx) {
  ast::KernelDecl k;
  k.range = offsets_.range(ctx);
  k.name = ident(ctx->IDENT());
  if (auto* tps = ctx->typeParams()) {
    for (TyloParser::TypeParamContext* tp : tps->typeParam()) {
      ast::TypeParam p;
      p.name = ident(tp->IDENT());
      for (TyloParser::GenericChoiceContext* c : tp->genericChoice()) {
        ast::GenericChoice choice{ident(c->getStart()), std::nullopt};
        if (c->INT()) choice.value = intLiteral(c->getText(), choice.spelling.range);
        p.choices.push_back(std::move(choice));
      }
      k.typeParams.push_back(std::move(p));
    }
  }
  if (auto* pl = ctx->paramList())
    for (TyloParser::ParamContext* p : pl->param()) k.params.push_back(param(p));
  k.launchRange = offsets_.range(ctx->launchClause());
  if (auto* args = ctx->launchClause()->argList()) k.launch = argList(args);
  k.body = block(ctx->block());
  return k;
}

ast::Param AstBuilder::param(TyloParser::ParamContext* ctx) {
  ast::Param p;
  p.range = offsets_.range(ctx);
  if (auto* s = as<TyloParser::ScalarParamContext>(ctx)) {
    p.name = ident(s->IDENT(0));
    p.dtype = ident(s->IDENT(1));
    return p;
  }
  auto* t = as<TyloParser::TensorParamContext>(ctx);
  p.isTensor = true;
  p.name = ident(t->IDENT(0));
  p.space = ident(t->space);
  p.dtype = ident(t->dtype);
  p.shape = exprList(t->exprList());
  if (t->layout) p.layout = expr(t->layout);
  if (t->align) p.align = expr(t->align);
  return p;
}

// ---- Statements ------------------------------------------------------------------

void AstBuilder::loopVars(const std::vector<antlr4::tree::TerminalNode*>& names, antlr4::Token* open,
                          antlr4::Token* close, ast::For& f) {
  f.varRange = offsets_.range(open ? open : names.front()->getSymbol(), close ? close : names.back()->getSymbol());
  if ((open != nullptr) != (close != nullptr) || (names.size() > 1 && !open))
    diags_.report(kSyntax, f.varRange,
                  "a loop names one variable, or a tuple of them in parentheses: for (m, n) in tiles(...)");
  if (names.size() == 1) {
    f.var = names[0]->getText();
    return;
  }
  for (antlr4::tree::TerminalNode* n : names) f.vars.push_back(ident(n));
}

ast::Block AstBuilder::block(TyloParser::BlockContext* ctx) {
  ast::Block b;
  b.range = offsets_.range(ctx);
  for (TyloParser::StmtContext* s : ctx->stmt()) b.stmts.push_back(stmt(s));
  return b;
}

ast::If AstBuilder::ifClause(TyloParser::IfClauseContext* ctx) {
  // if c0 {b0} else if c1 {b1} ... else {e}: build the innermost clause first.
  std::vector<TyloParser::ExprContext*> conds = ctx->expr();
  std::vector<TyloParser::BlockContext*> blocks = ctx->block();
  size_t clauses = conds.size();
  // Each `else if` nests one level deeper in the AST, which later stages walk recursively.
  if (clauses > static_cast<size_t>(kMaxExprDepth)) {
    diags_.report(kInputLimit, offsets_.range(ctx),
                  fmt::format("an if statement with {} else-if clauses; the limit is {}", clauses - 1, kMaxExprDepth));
    clauses = 1;
  }
  std::optional<ast::Block> otherwise;
  if (ctx->elseBlock && clauses == conds.size()) otherwise = block(ctx->elseBlock);
  ast::If node;
  for (size_t i = clauses; i-- > 0;) {
    ast::If clause;
    clause.cond = expr(conds[i]);
    clause.then = block(blocks[i]);
    clause.otherwise = std::move(otherwise);
    if (i == 0) {
      node = std::move(clause);
      break;
    }
    // Wrap this clause as the `else` block of the one before it.
    ast::Block b;
    b.range = SourceRange::cover(offsets_.range(conds[i]), clause.then.range);
    auto st = std::make_unique<ast::Stmt>();
    st->range = b.range;
    st->node = std::move(clause);
    b.stmts.push_back(std::move(st));
    otherwise = std::move(b);
  }
  return node;
}

ast::StmtPtr AstBuilder::stmt(TyloParser::StmtContext* ctx) {
  auto s = std::make_unique<ast::Stmt>();
  s->range = offsets_.range(ctx);
  if (auto* l = as<TyloParser::LetStmtContext>(ctx)) {
    ast::Ident name = ident(l->IDENT());
    s->node = ast::Let{name.name, name.range, expr(l->expr())};
  } else if (auto* a = as<TyloParser::AssignStmtContext>(ctx)) {
    ast::AssignOp op = ast::AssignOp::Set;
    std::string text = a->op->getText();
    if (text == "+=") op = ast::AssignOp::Add;
    if (text == "-=") op = ast::AssignOp::Sub;
    if (text == "*=") op = ast::AssignOp::Mul;
    s->node = ast::Assign{op, expr(a->target), expr(a->value)};
  } else if (auto* f = as<TyloParser::ForStmtContext>(ctx)) {
    ast::For node;
    loopVars(f->IDENT(), f->open, f->close, node);
    node.iterable = expr(f->expr());
    node.body = block(f->block());
    s->node = std::move(node);
  } else if (auto* p = as<TyloParser::PipelineStmtContext>(ctx)) {
    ast::For node;
    loopVars(p->IDENT(), p->open, p->close, node);
    node.iterable = expr(p->expr());
    node.body = block(p->block());
    node.pipeline = true;
    node.pipelineRange = offsets_.range(p->PIPELINE()->getSymbol());
    if (p->argList()) node.pipelineArgs = argList(p->argList());
    s->node = std::move(node);
  } else if (auto* i = as<TyloParser::IfStmtContext>(ctx)) {
    s->node = ifClause(i->ifClause());
  } else if (auto* e = as<TyloParser::ExprStmtContext>(ctx)) {
    s->node = ast::ExprStmt{expr(e->expr())};
  } else {
    s->node = block(as<TyloParser::BlockStmtContext>(ctx)->block());
  }
  return s;
}

// ---- Expressions -----------------------------------------------------------------

static ast::BinOp binOp(const std::string& text) {
  static const std::pair<const char*, ast::BinOp> table[] = {
      {"+", ast::BinOp::Add},    {"-", ast::BinOp::Sub},    {"*", ast::BinOp::Mul},     {"/", ast::BinOp::Div},
      {"%", ast::BinOp::Mod},    {"<<", ast::BinOp::Shl},   {">>", ast::BinOp::Shr},    {"<", ast::BinOp::Lt},
      {"<=", ast::BinOp::Le},    {">", ast::BinOp::Gt},     {">=", ast::BinOp::Ge},     {"==", ast::BinOp::Eq},
      {"!=", ast::BinOp::Ne},    {"&", ast::BinOp::BitAnd}, {"^", ast::BinOp::BitXor},  {"|", ast::BinOp::BitOr},
      {"&&", ast::BinOp::And},   {"||", ast::BinOp::Or},
  };
  for (const auto& [spelling, op] : table)
    if (text == spelling) return op;
  return ast::BinOp::Add;
}

ast::ExprPtr AstBuilder::expr(TyloParser::ExprContext* ctx) {
  // Long operator chains (a + a + ... or a.b.c...) parse iteratively but nest in the
  // tree; every later stage walks the tree recursively, so its depth is bounded here.
  struct Depth {
    int& d;
    explicit Depth(int& depth) : d(depth) { ++d; }
    ~Depth() { --d; }
  } depth(depth_);
  SourceRange range = offsets_.range(ctx);
  if (depth_ > kMaxExprDepth) {
    if (!depthReported_)
      diags_.report(kInputLimit, range,
                    fmt::format("expression nested more than {} levels deep (each operator of a chain such as "
                                "'a + b + c' is one level: split it with let)",
                                kMaxExprDepth));
    depthReported_ = true;
    return make(range, ast::IntLit{0});
  }
  if (auto* p = as<TyloParser::PrimaryExprContext>(ctx)) return primary(p->primary());
  if (auto* m = as<TyloParser::MemberExprContext>(ctx)) {
    ast::Ident name = ident(m->IDENT());
    return make(range, ast::Member{expr(m->expr()), name.name, name.range});
  }
  if (auto* c = as<TyloParser::CallExprContext>(ctx)) {
    ast::Call call;
    call.callee = expr(c->expr());
    if (c->argList()) call.args = argList(c->argList());
    return make(range, std::move(call));
  }
  if (auto* i = as<TyloParser::IndexExprContext>(ctx))
    return make(range, ast::Index{expr(i->expr()), exprList(i->exprList())});
  if (auto* u = as<TyloParser::UnaryExprContext>(ctx))
    return make(range, ast::Unary{u->op->getText() == "-" ? ast::UnOp::Neg : ast::UnOp::Not, expr(u->expr())});
  if (auto* a = as<TyloParser::UnitAxisExprContext>(ctx)) {
    ast::Ident axis = ident(a->IDENT());
    return make(range, ast::OnAxis{nullptr, axis.name, axis.range});
  }
  if (auto* a = as<TyloParser::AxisExprContext>(ctx)) {
    ast::Ident axis = ident(a->IDENT());
    return make(range, ast::OnAxis{expr(a->expr()), axis.name, axis.range});
  }
  auto* b = as<TyloParser::BinaryExprContext>(ctx);
  return make(range, ast::Binary{binOp(b->op->getText()), expr(b->expr(0)), expr(b->expr(1))});
}

static std::string withoutUnderscores(const std::string& text) {
  std::string out;
  for (char c : text)
    if (c != '_') out += c;
  return out;
}

int64_t AstBuilder::intLiteral(const std::string& spelling, SourceRange range) {
  std::string text = withoutUnderscores(spelling);
  errno = 0;
  char* end = nullptr;
  bool hex = text.size() > 1 && (text[1] == 'x' || text[1] == 'X');
  long long v = std::strtoll(text.c_str() + (hex ? 2 : 0), &end, hex ? 16 : 10);
  if (errno == ERANGE) {
    diags_.report(kBadLiteral, range, fmt::format("integer literal {} does not fit in 64 bits", spelling));
    v = 0;
  }
  return v;
}

ast::ExprPtr AstBuilder::primary(TyloParser::PrimaryContext* ctx) {
  SourceRange range = offsets_.range(ctx);
  if (auto* i = as<TyloParser::IntLitContext>(ctx)) return make(range, ast::IntLit{intLiteral(i->getText(), range)});
  if (auto* f = as<TyloParser::FloatLitContext>(ctx)) {
    std::string text = withoutUnderscores(f->getText());
    errno = 0;
    double v = std::strtod(text.c_str(), nullptr);
    if (errno == ERANGE && (v > 1.0 || v < -1.0)) {
      diags_.report(kBadLiteral, range, fmt::format("floating-point literal {} is out of range", f->getText()));
      v = 0;
    }
    return make(range, ast::FloatLit{v});
  }
  if (auto* n = as<TyloParser::NameRefContext>(ctx)) return make(range, ast::Name{n->IDENT()->getText()});
  if (as<TyloParser::EmptyTupleContext>(ctx)) return make(range, ast::Tuple{});
  if (auto* p = as<TyloParser::ParenExprContext>(ctx)) {
    ast::ExprPtr inner = expr(p->expr());
    inner->range = range;  // keep the parentheses in the range for carets
    return inner;
  }
  if (auto* t = as<TyloParser::TupleExprContext>(ctx)) {
    ast::Tuple tuple;
    for (TyloParser::ExprContext* e : t->expr()) tuple.elems.push_back(expr(e));
    return make(range, std::move(tuple));
  }
  auto* s = as<TyloParser::IterSpecContext>(ctx);
  ast::IterSpec spec;
  spec.replica = s->kind->getType() == TyloParser::REPLICA;
  spec.extents = exprList(s->extents);
  if (s->strides) {
    spec.hasStrides = true;
    spec.strides = exprList(s->strides);
  }
  return make(range, std::move(spec));
}

std::vector<ast::ExprPtr> AstBuilder::exprList(TyloParser::ExprListContext* ctx) {
  std::vector<ast::ExprPtr> list;
  for (TyloParser::ExprContext* e : ctx->expr()) list.push_back(expr(e));
  return list;
}

std::vector<ast::Arg> AstBuilder::argList(TyloParser::ArgListContext* ctx) {
  std::vector<ast::Arg> args;
  for (TyloParser::ArgContext* a : ctx->arg()) {
    ast::Arg arg;
    if (a->argName()) {
      ast::Ident name = ident(a->argName()->getStart());
      arg.name = name.name;
      arg.nameRange = name.range;
    }
    arg.value = expr(a->expr());
    args.push_back(std::move(arg));
  }
  return args;
}

}  // namespace tyl
