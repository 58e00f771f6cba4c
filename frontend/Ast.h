// The abstract syntax tree of a .tyl file: plain structs with source ranges.
//
// The AST keeps the user's spelling; meaning comes later. `f32[32, 4]` is an Index of
// the name `f32`, `S[(8, 4) : (4, 1)]` an IterSpec, `5@warpid` an OnAxis. Semantic
// analysis decides which names are types, layouts, constants or tensors.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/Source.h"

namespace tyl::ast {

enum class BinOp { Add, Sub, Mul, Div, Mod, Shl, Shr, Lt, Le, Gt, Ge, Eq, Ne, BitAnd, BitXor, BitOr, And, Or };
enum class UnOp { Neg, Not };
enum class AssignOp { Set, Add, Sub, Mul };

const char* binOpSpelling(BinOp op);

struct Ident {
  std::string name;
  SourceRange range;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct IntLit {
  int64_t value = 0;
};
struct FloatLit {
  double value = 0;
};
struct Name {
  std::string name;
};
struct Tuple {
  std::vector<ExprPtr> elems;
};
struct Member {
  ExprPtr base;
  std::string name;
  SourceRange nameRange;
};
struct Arg {
  std::string name;  // empty for a positional argument
  SourceRange nameRange;
  ExprPtr value;
};
struct Call {
  ExprPtr callee;
  std::vector<Arg> args;
};
struct Index {
  ExprPtr base;
  std::vector<ExprPtr> indices;
};
struct Unary {
  UnOp op;
  ExprPtr operand;
};
struct Binary {
  BinOp op;
  ExprPtr lhs;
  ExprPtr rhs;
};
// `value@axis`, or `@axis` (value null: stride 1).
struct OnAxis {
  ExprPtr value;
  std::string axis;
  SourceRange axisRange;
};
// `S[extents : strides]` or `R[...]`; strides empty when not written.
struct IterSpec {
  bool replica = false;
  std::vector<ExprPtr> extents;
  std::vector<ExprPtr> strides;
  bool hasStrides = false;
};

struct Expr {
  SourceRange range;
  std::variant<IntLit, FloatLit, Name, Tuple, Member, Call, Index, Unary, Binary, OnAxis, IterSpec> node;

  template <class T>
  const T* as() const {
    return std::get_if<T>(&node);
  }
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

struct Block {
  SourceRange range;
  std::vector<StmtPtr> stmts;
};
struct Let {
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};
struct Assign {
  AssignOp op = AssignOp::Set;
  ExprPtr target;
  ExprPtr value;
};
// `for var in iterable { body }`; a `pipeline(args) for ...` carries its arguments. With a
// tuple of names, `for (m, n) in tiles(...)`, `var` is empty, `vars` holds the names and
// `varRange` covers the tuple.
struct For {
  std::string var;
  SourceRange varRange;
  std::vector<Ident> vars;
  ExprPtr iterable;
  Block body;
  bool pipeline = false;
  SourceRange pipelineRange;
  std::vector<Arg> pipelineArgs;
};
struct If {
  ExprPtr cond;
  Block then;
  std::optional<Block> otherwise;  // `else if` is a block holding one If
};
struct ExprStmt {
  ExprPtr expr;
};

struct Stmt {
  SourceRange range;
  std::variant<Let, Assign, For, If, ExprStmt, Block> node;
};

struct ConstDecl {
  SourceRange range;
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};

struct LayoutDecl {
  SourceRange range;
  std::string name;
  SourceRange nameRange;
  ExprPtr value;
};

// One choice of a generic parameter: an element type (`f16`) or an integer constant (`128`).
struct GenericChoice {
  Ident spelling;                // as written
  std::optional<int64_t> value;  // an integer choice's value
};

// `T in (f16, bf16)` or `D in (64, 128)`.
struct TypeParam {
  Ident name;
  std::vector<GenericChoice> choices;
};

struct Param {
  SourceRange range;
  Ident name;
  bool isTensor = false;
  Ident space;  // tensors: `global`
  Ident dtype;
  std::vector<ExprPtr> shape;
  ExprPtr layout;  // may be null
  ExprPtr align;   // may be null
};

struct KernelDecl {
  SourceRange range;
  Ident name;
  std::vector<TypeParam> typeParams;
  std::vector<Param> params;
  SourceRange launchRange;
  std::vector<Arg> launch;
  Block body;
};

using Decl = std::variant<ConstDecl, LayoutDecl, KernelDecl>;

// `import "path";`: the constants and layouts of another file (frontend/Imports.h).
struct Import {
  SourceRange range;
  std::string path;  // as written, without the quotes
  SourceRange pathRange;
};

struct Module {
  FileId file = kNoFile;
  std::vector<Import> imports;  // emptied once resolved: their declarations lead `decls`
  std::vector<Decl> decls;
};

}  // namespace tyl::ast
