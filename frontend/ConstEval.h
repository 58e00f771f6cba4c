// Compile-time evaluation of expressions: integer arithmetic, tuples, and the layout
// notation (S[...], R[...], offsets, ComposeLayout, Swizzle). Used for constants,
// `layout` declarations, the argument of `tyloc layout`, and static shapes.
//
// Every error is a diagnostic at the offending subexpression; evaluation then returns
// nullopt and the caller stops using the value.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "base/Diagnostics.h"
#include "frontend/Ast.h"
#include "ir/layout/Layout.h"

namespace tyl {

// `n@axis`: a stride or offset on a named axis.
struct AxisValue {
  layout::Axis axis;
  int64_t value;
};

// A layout being assembled from `+`-joined terms.
struct LayoutValue {
  std::optional<std::vector<layout::Iter>> shard;
  SourceRange shardRange;
  std::vector<layout::Iter> replica;
  layout::PhysCoord offset;
  std::optional<layout::Swizzle> swizzle;
};

struct SwizzleValue {
  layout::Swizzle swizzle;
};

struct ConstValue;
struct TupleValue {
  std::vector<ConstValue> elems;
};

struct ConstValue {
  std::variant<int64_t, double, AxisValue, LayoutValue, SwizzleValue, TupleValue> v;
};

std::string_view constKindName(const ConstValue& value);

class ConstEvaluator {
 public:
  // Looks up a named constant or layout; nullptr when the name is not a constant. A field
  // of a name is looked up as "name.field" (block_dim.x).
  using Lookup = std::function<const ConstValue*(std::string_view)>;
  // Whether a name was declared by a declaration that failed: its uses evaluate to
  // nothing without a further error (the declaration's error already stands).
  using Poisoned = std::function<bool(std::string_view)>;

  ConstEvaluator(DiagnosticEngine& diags, Lookup lookup, Poisoned poisoned = {})
      : diags_(diags), lookup_(std::move(lookup)), poisoned_(std::move(poisoned)) {}

  std::optional<ConstValue> eval(const ast::Expr& e);
  std::optional<int64_t> evalInt(const ast::Expr& e);
  // Evaluates a layout expression and checks it is complete (exactly one S[...]).
  std::optional<layout::Layout> evalLayout(const ast::Expr& e);
  // Turns an evaluated value into a layout (a lone S[...] or R[...] sum).
  std::optional<layout::Layout> toLayout(const ConstValue& value, SourceRange range);

 private:
  std::optional<ConstValue> evalBinary(const ast::Expr& e, const ast::Binary& b);
  std::optional<ConstValue> evalCall(const ast::Expr& e, const ast::Call& c);
  std::optional<ConstValue> evalMinMax(const ast::Call& c, bool isMax);
  std::optional<ConstValue> evalIterSpec(const ast::Expr& e, const ast::IterSpec& spec);
  std::optional<ConstValue> evalName(const ast::Expr& e, const ast::Name& n);
  std::optional<ConstValue> addLayoutTerms(const ast::Expr& e, ConstValue lhs, ConstValue rhs, bool subtract);
  std::optional<ConstValue> composeLayout(const ast::Expr& e, const ast::Call& c);
  std::optional<ConstValue> applySwizzle(SourceRange where, layout::Swizzle swizzle, const ast::Expr& tileExpr,
                                         const ConstValue& tile);
  std::optional<layout::Swizzle> makeSwizzle(SourceRange where, int64_t perElement, int64_t len, int64_t atom,
                                             bool inner);
  std::optional<int64_t> swizzleField(const ast::Expr& e);
  bool flattenInts(const ast::Expr& e, std::vector<int64_t>& out, std::vector<SourceRange>& ranges);
  bool flattenStrides(const ast::Expr& e, std::vector<AxisValue>& out);
  std::optional<layout::Axis> axis(const std::string& name, SourceRange range);

  DiagnosticEngine& diags_;
  Lookup lookup_;
  Poisoned poisoned_;
};

}  // namespace tyl
