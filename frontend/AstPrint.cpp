#include "frontend/AstPrint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tyl {

const char* ast::binOpSpelling(BinOp op) {
  switch (op) {
    case BinOp::Add: return "+";
    case BinOp::Sub: return "-";
    case BinOp::Mul: return "*";
    case BinOp::Div: return "/";
    case BinOp::Mod: return "%";
    case BinOp::Shl: return "<<";
    case BinOp::Shr: return ">>";
    case BinOp::Lt: return "<";
    case BinOp::Le: return "<=";
    case BinOp::Gt: return ">";
    case BinOp::Ge: return ">=";
    case BinOp::Eq: return "==";
    case BinOp::Ne: return "!=";
    case BinOp::BitAnd: return "&";
    case BinOp::BitXor: return "^";
    case BinOp::BitOr: return "|";
    case BinOp::And: return "&&";
    case BinOp::Or: return "||";
  }
  return "?";
}

namespace {

std::string join(const std::vector<ast::ExprPtr>& list) {
  std::string out;
  for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + printExpr(*list[i]);
  return out;
}

std::string args(const std::vector<ast::Arg>& list) {
  std::string out;
  for (size_t i = 0; i < list.size(); ++i) {
    out += i ? ", " : "";
    if (!list[i].name.empty()) out += list[i].name + "=";
    out += printExpr(*list[i].value);
  }
  return out;
}

// Prints statements as an indented tree, one node per line, with line numbers.
class Printer {
 public:
  explicit Printer(const SourceManager& sources) : sources_(sources) {}

  void line(int depth, SourceRange range, const std::string& text) {
    std::string where = range.valid() ? fmt::format("{}", sources_.lineCol(range.begin).line) : "?";
    out += fmt::format("{:>4}  {}{}\n", where, std::string(depth * 2, ' '), text);
  }

  void block(int depth, const ast::Block& b) {
    for (const ast::StmtPtr& s : b.stmts) stmt(depth, *s);
  }

  void stmt(int depth, const ast::Stmt& s) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, ast::Let>) {
            line(depth, s.range, fmt::format("let {} = {}", n.name, printExpr(*n.value)));
          } else if constexpr (std::is_same_v<T, ast::Assign>) {
            const char* op[] = {"=", "+=", "-=", "*="};
            line(depth, s.range,
                 fmt::format("assign {} {} {}", printExpr(*n.target), op[static_cast<int>(n.op)],
                             printExpr(*n.value)));
          } else if constexpr (std::is_same_v<T, ast::For>) {
            std::string head = n.pipeline ? fmt::format("pipeline({}) ", args(n.pipelineArgs)) : "";
            std::string vars = n.var;
            if (!n.vars.empty()) {
              std::vector<std::string> names;
              for (const ast::Ident& v : n.vars) names.push_back(v.name);
              vars = fmt::format("({})", fmt::join(names, ", "));
            }
            line(depth, s.range, fmt::format("{}for {} in {}", head, vars, printExpr(*n.iterable)));
            block(depth + 1, n.body);
          } else if constexpr (std::is_same_v<T, ast::If>) {
            line(depth, s.range, fmt::format("if {}", printExpr(*n.cond)));
            block(depth + 1, n.then);
            if (n.otherwise) {
              line(depth, n.otherwise->range, "else");
              block(depth + 1, *n.otherwise);
            }
          } else if constexpr (std::is_same_v<T, ast::ExprStmt>) {
            line(depth, s.range, fmt::format("expr {}", printExpr(*n.expr)));
          } else {
            line(depth, s.range, "block");
            block(depth + 1, n);
          }
        },
        s.node);
  }

  std::string out;

 private:
  const SourceManager& sources_;
};

}  // namespace

std::string printExpr(const ast::Expr& e) {
  return std::visit(
      [&](const auto& n) -> std::string {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ast::IntLit>) return fmt::format("{}", n.value);
        else if constexpr (std::is_same_v<T, ast::FloatLit>) return fmt::format("{}", n.value);
        else if constexpr (std::is_same_v<T, ast::Name>) return n.name;
        else if constexpr (std::is_same_v<T, ast::Tuple>)
          return n.elems.size() == 1 ? fmt::format("({},)", printExpr(*n.elems[0])) : "(" + join(n.elems) + ")";
        else if constexpr (std::is_same_v<T, ast::Member>) return printExpr(*n.base) + "." + n.name;
        else if constexpr (std::is_same_v<T, ast::Call>) return printExpr(*n.callee) + "(" + args(n.args) + ")";
        else if constexpr (std::is_same_v<T, ast::Index>) return printExpr(*n.base) + "[" + join(n.indices) + "]";
        else if constexpr (std::is_same_v<T, ast::Unary>)
          return std::string(n.op == ast::UnOp::Neg ? "-" : "!") + printExpr(*n.operand);
        else if constexpr (std::is_same_v<T, ast::Binary>)
          return fmt::format("({} {} {})", printExpr(*n.lhs), ast::binOpSpelling(n.op), printExpr(*n.rhs));
        else if constexpr (std::is_same_v<T, ast::OnAxis>)
          return (n.value ? printExpr(*n.value) : "") + "@" + n.axis;
        else {
          std::string text = std::string(n.replica ? "R" : "S") + "[" + join(n.extents);
          if (n.hasStrides) text += " : " + join(n.strides);
          return text + "]";
        }
      },
      e.node);
}

std::string printAst(const ast::Module& module, const SourceManager& sources) {
  Printer p(sources);
  for (const ast::Import& i : module.imports) p.line(0, i.range, fmt::format("import \"{}\"", i.path));
  for (const ast::Decl& d : module.decls) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, ast::ConstDecl>) {
            p.line(0, n.range, fmt::format("const {} = {}", n.name, printExpr(*n.value)));
          } else if constexpr (std::is_same_v<T, ast::LayoutDecl>) {
            p.line(0, n.range, fmt::format("layout {} = {}", n.name, printExpr(*n.value)));
          } else {
            std::string tparams;
            for (const ast::TypeParam& tp : n.typeParams) {
              std::string choices;
              for (const ast::GenericChoice& c : tp.choices) choices += (choices.empty() ? "" : ", ") + c.spelling.name;
              tparams += fmt::format("{}{} in ({})", tparams.empty() ? "<" : ", ", tp.name.name, choices);
            }
            if (!tparams.empty()) tparams += ">";
            p.line(0, n.range, fmt::format("kernel {}{} launch({})", n.name.name, tparams, args(n.launch)));
            for (const ast::Param& prm : n.params) {
              if (!prm.isTensor) {
                p.line(1, prm.range, fmt::format("param {}: {}", prm.name.name, prm.dtype.name));
                continue;
              }
              std::string text = fmt::format("param {}: {} {}[{}]", prm.name.name, prm.space.name, prm.dtype.name,
                                             join(prm.shape));
              if (prm.layout) text += " : " + printExpr(*prm.layout);
              if (prm.align) text += " align " + printExpr(*prm.align);
              p.line(1, prm.range, text);
            }
            p.block(1, n.body);
          }
        },
        d);
  }
  return p.out;
}

}  // namespace tyl
