#include "frontend/ConstEval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/CommonDiags.h"
#include "ir/layout/CheckedMath.h"

namespace tyl {

TYL_DIAG(kUnknownAxis, Error, "unknown-axis", "an axis name that is not in the axis registry");
TYL_DIAG(kLayoutArity, Error, "layout-arity", "a layout's extents and strides differ in number");
TYL_DIAG(kLayoutExtent, Error, "layout-extent", "a layout extent that is not positive");
TYL_DIAG(kLayoutShards, Error, "layout-shards", "a layout without exactly one S[...] term");
TYL_DIAG(kLayoutTerm, Error, "layout-term", "a term that cannot be combined into a layout");
TYL_DIAG(kSwizzleOverlap, Error, "swizzle-overlap", "swizzle fields that overlap (atom_len < swizzle_len)");
TYL_DIAG(kSwizzleInvalid, Error, "swizzle-invalid", "a swizzle field that is negative or too wide");
TYL_DIAG(kSwizzleAxis, Error, "swizzle-axis", "a swizzled tile layout that maps onto an axis other than m");
TYL_DIAG(kSwizzleOrder, Warning, "swizzle-order",
         "positional swizzle fields whose order ComposeLayout and Swizzle read differently");

using layout::Axis;

std::string_view constKindName(const ConstValue& value) {
  switch (value.v.index()) {
    case 0: return "an integer";
    case 1: return "a floating-point number";
    case 2: return "an axis offset";
    case 3: return "a layout";
    case 4: return "a swizzle";
    default: return "a tuple";
  }
}

namespace {

LayoutValue asLayoutTerm(const ConstValue& v) {
  if (const auto* l = std::get_if<LayoutValue>(&v.v)) return *l;
  LayoutValue term;
  if (const auto* i = std::get_if<int64_t>(&v.v)) term.offset.add(Axis::m, *i);
  if (const auto* a = std::get_if<AxisValue>(&v.v)) term.offset.add(a->axis, a->value);
  return term;
}

bool isLayoutTerm(const ConstValue& v) {
  return std::holds_alternative<LayoutValue>(v.v) || std::holds_alternative<AxisValue>(v.v);
}

std::string knownAxes() {
  std::string list;
  for (Axis a : layout::allAxes()) list += fmt::format("{}{}", list.empty() ? "" : ", ", layout::axisName(a));
  return list;
}

// Binds call arguments to parameter names: positional first, then keywords.
struct BoundArgs {
  std::vector<const ast::Expr*> values;
  bool ok = true;
};

BoundArgs bindArgs(DiagnosticEngine& diags, const ast::Expr& call, const ast::Call& c, std::string_view fn,
                   std::initializer_list<std::string_view> names, size_t required) {
  std::vector<std::string_view> params(names);
  BoundArgs bound;
  bound.values.assign(params.size(), nullptr);
  size_t positional = 0;
  for (const ast::Arg& arg : c.args) {
    size_t slot;
    if (arg.name.empty()) {
      slot = positional++;
      if (slot >= params.size()) {
        diags.report(kBadArgument, arg.value->range,
                     fmt::format("{} takes at most {} arguments", fn, params.size()));
        bound.ok = false;
        continue;
      }
    } else {
      auto it = std::find(params.begin(), params.end(), arg.name);
      if (it == params.end()) {
        diags.report(kBadArgument, arg.nameRange, fmt::format("{} has no parameter '{}'", fn, arg.name));
        bound.ok = false;
        continue;
      }
      slot = static_cast<size_t>(it - params.begin());
    }
    if (bound.values[slot]) {
      diags.report(kBadArgument, arg.value->range, fmt::format("{} is given '{}' twice", fn, params[slot]));
      bound.ok = false;
      continue;
    }
    bound.values[slot] = arg.value.get();
  }
  for (size_t i = 0; i < required && bound.ok; ++i) {
    if (!bound.values[i]) {
      diags.report(kBadArgument, call.range, fmt::format("{} is missing its '{}' argument", fn, params[i]));
      bound.ok = false;
    }
  }
  return bound;
}

}  // namespace

std::optional<Axis> ConstEvaluator::axis(const std::string& name, SourceRange range) {
  if (auto a = layout::axisFromName(name)) return a;
  diags_.report(kUnknownAxis, range, fmt::format("unknown axis '{}' (known axes: {})", name, knownAxes()));
  return std::nullopt;
}

std::optional<int64_t> ConstEvaluator::evalInt(const ast::Expr& e) {
  std::optional<ConstValue> v = eval(e);
  if (!v) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(&v->v)) return *i;
  diags_.report(kTypeMismatch, e.range, fmt::format("expected an integer, found {}", constKindName(*v)));
  return std::nullopt;
}

std::optional<layout::Layout> ConstEvaluator::evalLayout(const ast::Expr& e) {
  std::optional<ConstValue> v = eval(e);
  if (!v) return std::nullopt;
  return toLayout(*v, e.range);
}

std::optional<layout::Layout> ConstEvaluator::toLayout(const ConstValue& value, SourceRange range) {
  if (!isLayoutTerm(value)) {
    diags_.report(kTypeMismatch, range, fmt::format("expected a layout, found {}", constKindName(value)));
    return std::nullopt;
  }
  LayoutValue l = asLayoutTerm(value);
  if (!l.shard) {
    diags_.report(kLayoutShards, range, "a layout needs one S[...] term saying where each element goes");
    return std::nullopt;
  }
  layout::TileLayout tile{*l.shard, l.replica, l.offset};
  layout::Layout result = l.swizzle ? layout::Layout::compose(*l.swizzle, tile) : layout::Layout(tile);
  // Every later use needs the size and the extent of each axis: they must fit 64 bits.
  try {
    (void)result.size();
    (void)tile.replicaCount();
    for (layout::Axis a : layout::allAxes()) {
      (void)layout::cosize(result, a);
      (void)layout::minValue(tile, a);
    }
  } catch (const layout::OverflowError&) {
    diags_.report(kIntegerOverflow, range,
                  "the layout's size, or the extent of one of its axes (its largest offset + 1), overflows 64-bit "
                  "integers");
    return std::nullopt;
  }
  return result;
}

std::optional<ConstValue> ConstEvaluator::eval(const ast::Expr& e) {
  try {
    return std::visit(
        [&](const auto& node) -> std::optional<ConstValue> {
          using T = std::decay_t<decltype(node)>;
          if constexpr (std::is_same_v<T, ast::IntLit>) {
            return ConstValue{node.value};
          } else if constexpr (std::is_same_v<T, ast::FloatLit>) {
            return ConstValue{node.value};
          } else if constexpr (std::is_same_v<T, ast::Name>) {
            return evalName(e, node);
          } else if constexpr (std::is_same_v<T, ast::Tuple>) {
            TupleValue t;
            for (const ast::ExprPtr& el : node.elems) {
              std::optional<ConstValue> v = eval(*el);
              if (!v) return std::nullopt;
              t.elems.push_back(std::move(*v));
            }
            return ConstValue{std::move(t)};
          } else if constexpr (std::is_same_v<T, ast::Unary>) {
            std::optional<ConstValue> v = eval(*node.operand);
            if (!v) return std::nullopt;
            if (node.op == ast::UnOp::Not) {
              if (const auto* i = std::get_if<int64_t>(&v->v)) return ConstValue{int64_t{*i == 0}};
            } else {
              if (const auto* i = std::get_if<int64_t>(&v->v)) return ConstValue{layout::checkedSub(0, *i)};
              if (const auto* d = std::get_if<double>(&v->v)) return ConstValue{-*d};
              if (const auto* a = std::get_if<AxisValue>(&v->v))
                return ConstValue{AxisValue{a->axis, layout::checkedSub(0, a->value)}};
            }
            diags_.report(kTypeMismatch, e.range,
                          fmt::format("cannot apply '{}' to {}", node.op == ast::UnOp::Not ? "!" : "-",
                                      constKindName(*v)));
            return std::nullopt;
          } else if constexpr (std::is_same_v<T, ast::Binary>) {
            return evalBinary(e, node);
          } else if constexpr (std::is_same_v<T, ast::OnAxis>) {
            std::optional<Axis> a = axis(node.axis, node.axisRange);
            if (!a) return std::nullopt;
            if (!node.value) return ConstValue{AxisValue{*a, 1}};
            std::optional<int64_t> v = evalInt(*node.value);
            if (!v) return std::nullopt;
            return ConstValue{AxisValue{*a, *v}};
          } else if constexpr (std::is_same_v<T, ast::IterSpec>) {
            return evalIterSpec(e, node);
          } else if constexpr (std::is_same_v<T, ast::Call>) {
            return evalCall(e, node);
          } else if constexpr (std::is_same_v<T, ast::Member>) {
            // A field of a name the lookup knows as a constant, such as block_dim.x in a kernel.
            const auto* base = node.base->template as<ast::Name>();
            if (base && lookup_)
              if (const ConstValue* v = lookup_(base->name + "." + node.name)) return *v;
            diags_.report(kNotConstant, e.range, "this expression is not a compile-time constant");
            return std::nullopt;
          } else {
            diags_.report(kNotConstant, e.range, "this expression is not a compile-time constant");
            return std::nullopt;
          }
        },
        e.node);
  } catch (const layout::OverflowError&) {
    diags_.report(kIntegerOverflow, e.range, "integer arithmetic overflows 64 bits");
    return std::nullopt;
  } catch (const layout::Error& err) {
    diags_.report(kIntegerOverflow, e.range, err.what());
    return std::nullopt;
  }
}

std::optional<ConstValue> ConstEvaluator::evalName(const ast::Expr& e, const ast::Name& n) {
  if (lookup_)
    if (const ConstValue* v = lookup_(n.name)) return *v;
  if (poisoned_ && poisoned_(n.name)) return std::nullopt;
  if (n.name == "True" || n.name == "true") return ConstValue{int64_t{1}};
  if (n.name == "False" || n.name == "false") return ConstValue{int64_t{0}};
  // A bare axis name is a stride of one on that axis (`S[32 : laneid]`).
  if (auto a = layout::axisFromName(n.name)) return ConstValue{AxisValue{*a, 1}};
  diags_.report(kUnknownName, e.range, fmt::format("unknown name '{}'", n.name));
  return std::nullopt;
}

std::optional<ConstValue> ConstEvaluator::evalBinary(const ast::Expr& e, const ast::Binary& b) {
  std::optional<ConstValue> lhs = eval(*b.lhs);
  if (!lhs) return std::nullopt;
  std::optional<ConstValue> rhs = eval(*b.rhs);
  if (!rhs) return std::nullopt;

  if ((b.op == ast::BinOp::Add || b.op == ast::BinOp::Sub) && (isLayoutTerm(*lhs) || isLayoutTerm(*rhs)))
    return addLayoutTerms(e, std::move(*lhs), std::move(*rhs), b.op == ast::BinOp::Sub);

  const auto* li = std::get_if<int64_t>(&lhs->v);
  const auto* ri = std::get_if<int64_t>(&rhs->v);
  if (b.op == ast::BinOp::Mul) {
    const auto* la = std::get_if<AxisValue>(&lhs->v);
    const auto* ra = std::get_if<AxisValue>(&rhs->v);
    if (la && ri) return ConstValue{AxisValue{la->axis, layout::checkedMul(la->value, *ri)}};
    if (ra && li) return ConstValue{AxisValue{ra->axis, layout::checkedMul(ra->value, *li)}};
  }
  if (li && ri) {
    int64_t x = *li, y = *ri;
    switch (b.op) {
      case ast::BinOp::Add: return ConstValue{layout::checkedAdd(x, y)};
      case ast::BinOp::Sub: return ConstValue{layout::checkedSub(x, y)};
      case ast::BinOp::Mul: return ConstValue{layout::checkedMul(x, y)};
      case ast::BinOp::Div:
      case ast::BinOp::Mod:
        if (y == 0) {
          diags_.report(kDivisionByZero, b.rhs->range, "division by zero");
          return std::nullopt;
        }
        // Truncating division, as in the generated C++; the smallest value over -1 has no
        // quotient in 64 bits, but its remainder is 0.
        if (y == -1) {
          if (b.op == ast::BinOp::Mod) return ConstValue{int64_t{0}};
          return ConstValue{layout::checkedSub(0, x)};
        }
        return ConstValue{b.op == ast::BinOp::Div ? x / y : x % y};
      case ast::BinOp::Shl:
      case ast::BinOp::Shr:
        if (y < 0 || y > 62) {
          diags_.report(kIntegerOverflow, b.rhs->range, fmt::format("shift by {} is outside 0..62", y));
          return std::nullopt;
        }
        if (b.op == ast::BinOp::Shr) return ConstValue{x >> y};
        {
          // x * 2^y, negative values included, when it fits in 64 bits.
          const __int128 r = static_cast<__int128>(x) * (__int128{1} << y);
          if (r < INT64_MIN || r > INT64_MAX) throw layout::OverflowError("overflow");
          return ConstValue{static_cast<int64_t>(r)};
        }
      case ast::BinOp::Lt: return ConstValue{int64_t{x < y}};
      case ast::BinOp::Le: return ConstValue{int64_t{x <= y}};
      case ast::BinOp::Gt: return ConstValue{int64_t{x > y}};
      case ast::BinOp::Ge: return ConstValue{int64_t{x >= y}};
      case ast::BinOp::Eq: return ConstValue{int64_t{x == y}};
      case ast::BinOp::Ne: return ConstValue{int64_t{x != y}};
      case ast::BinOp::BitAnd: return ConstValue{x & y};
      case ast::BinOp::BitXor: return ConstValue{x ^ y};
      case ast::BinOp::BitOr: return ConstValue{x | y};
      case ast::BinOp::And: return ConstValue{int64_t{x != 0 && y != 0}};
      case ast::BinOp::Or: return ConstValue{int64_t{x != 0 || y != 0}};
    }
  }
  auto asDouble = [](const ConstValue& v) -> std::optional<double> {
    if (const auto* i = std::get_if<int64_t>(&v.v)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&v.v)) return *d;
    return std::nullopt;
  };
  std::optional<double> ld = asDouble(*lhs), rd = asDouble(*rhs);
  if (ld && rd) {
    switch (b.op) {
      case ast::BinOp::Add: return ConstValue{*ld + *rd};
      case ast::BinOp::Sub: return ConstValue{*ld - *rd};
      case ast::BinOp::Mul: return ConstValue{*ld * *rd};
      case ast::BinOp::Div: return ConstValue{*ld / *rd};
      case ast::BinOp::Lt: return ConstValue{int64_t{*ld < *rd}};
      case ast::BinOp::Le: return ConstValue{int64_t{*ld <= *rd}};
      case ast::BinOp::Gt: return ConstValue{int64_t{*ld > *rd}};
      case ast::BinOp::Ge: return ConstValue{int64_t{*ld >= *rd}};
      case ast::BinOp::Eq: return ConstValue{int64_t{*ld == *rd}};
      case ast::BinOp::Ne: return ConstValue{int64_t{*ld != *rd}};
      default: break;
    }
  }
  diags_.report(kTypeMismatch, e.range,
                fmt::format("cannot apply '{}' to {} and {}", ast::binOpSpelling(b.op), constKindName(*lhs),
                            constKindName(*rhs)));
  return std::nullopt;
}

// min or max of two integers, or of two numbers of which one is a float (computed on
// doubles: a NaN gives the other operand, and -0 counts as below +0).
std::optional<ConstValue> ConstEvaluator::evalMinMax(const ast::Call& c, bool isMax) {
  ConstValue v[2];
  for (int i = 0; i < 2; ++i) {
    std::optional<ConstValue> x = eval(*c.args[i].value);
    if (!x) return std::nullopt;
    if (!std::holds_alternative<int64_t>(x->v) && !std::holds_alternative<double>(x->v)) {
      diags_.report(kTypeMismatch, c.args[i].value->range,
                    fmt::format("{} takes numbers, found {}", isMax ? "max" : "min", constKindName(*x)));
      return std::nullopt;
    }
    v[i] = std::move(*x);
  }
  const auto* i0 = std::get_if<int64_t>(&v[0].v);
  const auto* i1 = std::get_if<int64_t>(&v[1].v);
  if (i0 && i1) return ConstValue{isMax ? std::max(*i0, *i1) : std::min(*i0, *i1)};
  const double a = i0 ? static_cast<double>(*i0) : std::get<double>(v[0].v);
  const double b = i1 ? static_cast<double>(*i1) : std::get<double>(v[1].v);
  if (std::isnan(a)) return ConstValue{b};
  if (std::isnan(b)) return ConstValue{a};
  if (a == b) return ConstValue{std::signbit(a) == isMax ? b : a};  // only -0 and +0 differ here
  return ConstValue{isMax ? std::max(a, b) : std::min(a, b)};
}

std::optional<ConstValue> ConstEvaluator::addLayoutTerms(const ast::Expr& e, ConstValue lhs, ConstValue rhs,
                                                         bool subtract) {
  const ast::Binary& b = std::get<ast::Binary>(e.node);
  for (const auto& [value, expr] : {std::pair{&lhs, b.lhs.get()}, std::pair{&rhs, b.rhs.get()}}) {
    if (!isLayoutTerm(*value) && !std::holds_alternative<int64_t>(value->v)) {
      diags_.report(kLayoutTerm, expr->range,
                    fmt::format("{} cannot be part of a layout; terms are S[...], R[...] and offsets",
                                constKindName(*value)));
      return std::nullopt;
    }
  }
  if (subtract && std::holds_alternative<LayoutValue>(rhs.v)) {
    diags_.report(kLayoutTerm, b.rhs->range, "only offsets can be subtracted from a layout");
    return std::nullopt;
  }
  LayoutValue l = asLayoutTerm(lhs);
  LayoutValue r = asLayoutTerm(rhs);
  if (subtract) {
    layout::PhysCoord negated;
    r.offset.forEach([&](Axis a, int64_t v) { negated.add(a, layout::checkedSub(0, v)); });
    r.offset = negated;
  }
  if ((l.swizzle && (r.shard || !r.replica.empty() || !r.offset.empty())) ||
      (r.swizzle && (l.shard || !l.replica.empty() || !l.offset.empty()))) {
    diags_.report(kLayoutTerm, e.range,
                  "a ComposeLayout cannot be combined with other terms; put them inside its tile layout");
    return std::nullopt;
  }
  if (l.shard && r.shard) {
    diags_.report(kLayoutShards, r.shardRange, "a layout has exactly one S[...] term, and this is a second")
        .note(l.shardRange, "the first S[...] term is here");
    return std::nullopt;
  }
  LayoutValue out = std::move(l);
  if (r.shard) {
    out.shard = std::move(r.shard);
    out.shardRange = r.shardRange;
  }
  out.replica.insert(out.replica.end(), r.replica.begin(), r.replica.end());
  out.offset.addAll(r.offset);
  if (r.swizzle) out.swizzle = r.swizzle;
  return ConstValue{std::move(out)};
}

bool ConstEvaluator::flattenInts(const ast::Expr& e, std::vector<int64_t>& out, std::vector<SourceRange>& ranges) {
  if (const auto* t = e.as<ast::Tuple>()) {
    for (const ast::ExprPtr& el : t->elems)
      if (!flattenInts(*el, out, ranges)) return false;
    return true;
  }
  std::optional<ConstValue> v = eval(e);
  if (!v) return false;
  // A named tuple constant flattens like a written one.
  std::function<bool(const ConstValue&)> push = [&](const ConstValue& c) {
    if (const auto* i = std::get_if<int64_t>(&c.v)) {
      out.push_back(*i);
      ranges.push_back(e.range);
      return true;
    }
    if (const auto* t = std::get_if<TupleValue>(&c.v)) {
      for (const ConstValue& el : t->elems)
        if (!push(el)) return false;
      return true;
    }
    diags_.report(kTypeMismatch, e.range, fmt::format("expected an integer extent, found {}", constKindName(c)));
    return false;
  };
  return push(*v);
}

bool ConstEvaluator::flattenStrides(const ast::Expr& e, std::vector<AxisValue>& out) {
  if (const auto* t = e.as<ast::Tuple>()) {
    for (const ast::ExprPtr& el : t->elems)
      if (!flattenStrides(*el, out)) return false;
    return true;
  }
  std::optional<ConstValue> v = eval(e);
  if (!v) return false;
  std::function<bool(const ConstValue&)> push = [&](const ConstValue& c) {
    if (const auto* i = std::get_if<int64_t>(&c.v)) {
      out.push_back(AxisValue{Axis::m, *i});
      return true;
    }
    if (const auto* a = std::get_if<AxisValue>(&c.v)) {
      out.push_back(*a);
      return true;
    }
    if (const auto* t = std::get_if<TupleValue>(&c.v)) {
      for (const ConstValue& el : t->elems)
        if (!push(el)) return false;
      return true;
    }
    diags_.report(kTypeMismatch, e.range,
                  fmt::format("expected a stride (n, n@axis or @axis), found {}", constKindName(c)));
    return false;
  };
  return push(*v);
}

std::optional<ConstValue> ConstEvaluator::evalIterSpec(const ast::Expr& e, const ast::IterSpec& spec) {
  std::vector<int64_t> extents;
  std::vector<SourceRange> extentRanges;
  for (const ast::ExprPtr& x : spec.extents)
    if (!flattenInts(*x, extents, extentRanges)) return std::nullopt;
  for (size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] <= 0) {
      diags_.report(kLayoutExtent, extentRanges[i],
                    fmt::format("extent {} must be positive", extents[i]));
      return std::nullopt;
    }
  }
  std::vector<layout::Iter> iters;
  if (spec.hasStrides) {
    std::vector<AxisValue> strides;
    for (const ast::ExprPtr& x : spec.strides)
      if (!flattenStrides(*x, strides)) return std::nullopt;
    if (strides.size() != extents.size()) {
      diags_.report(kLayoutArity, e.range,
                    fmt::format("{} has {} extents but {} strides", spec.replica ? "R[...]" : "S[...]",
                                extents.size(), strides.size()));
      return std::nullopt;
    }
    for (size_t i = 0; i < extents.size(); ++i) iters.push_back({extents[i], strides[i].value, strides[i].axis});
  } else {
    iters = layout::TileLayout::rowMajor(extents).shard;
  }
  LayoutValue l;
  if (spec.replica) {
    l.replica = std::move(iters);
  } else {
    l.shard = std::move(iters);
    l.shardRange = e.range;
  }
  return ConstValue{std::move(l)};
}

// Swizzles the `m` axis of an evaluated tile layout.
std::optional<ConstValue> ConstEvaluator::applySwizzle(SourceRange where, layout::Swizzle swizzle,
                                                       const ast::Expr& tileExpr, const ConstValue& tile) {
  const auto* l = std::get_if<LayoutValue>(&tile.v);
  if (!l || !l->shard) {
    diags_.report(kTypeMismatch, tileExpr.range,
                  fmt::format("a swizzle applies to a layout with an S[...] term, found {}", constKindName(tile)));
    return std::nullopt;
  }
  if (l->swizzle) {
    diags_.report(kLayoutTerm, tileExpr.range, "this layout is already swizzled");
    return std::nullopt;
  }
  auto offAxis = [&](const std::vector<layout::Iter>& iters) -> std::optional<Axis> {
    for (const layout::Iter& it : iters)
      if (it.axis != Axis::m) return it.axis;
    return std::nullopt;
  };
  std::optional<Axis> bad = offAxis(*l->shard);
  if (!bad) bad = offAxis(l->replica);
  if (!bad)
    l->offset.forEach([&](Axis a, int64_t) {
      if (a != Axis::m && !bad) bad = a;
    });
  if (bad) {
    diags_.report(kSwizzleAxis, tileExpr.range,
                  fmt::format("a swizzle permutes memory offsets, so its tile layout may only map onto 'm', "
                              "but it maps onto '{}'",
                              layout::axisName(*bad)));
    return std::nullopt;
  }
  (void)where;
  LayoutValue out = *l;
  out.swizzle = swizzle;
  return ConstValue{std::move(out)};
}

// Checks the three swizzle fields (already known to lie in 0..62).
std::optional<layout::Swizzle> ConstEvaluator::makeSwizzle(SourceRange where, int64_t perElement, int64_t len,
                                                           int64_t atom, bool inner) {
  if (atom < len) {
    diags_.report(kSwizzleOverlap, where,
                  fmt::format("swizzle fields overlap: atom_len {} is smaller than swizzle_len {}, so the XOR "
                              "would destroy address bits instead of permuting them (need atom_len >= swizzle_len)",
                              atom, len));
    return std::nullopt;
  }
  if (perElement + len + atom > 62) {
    diags_.report(kSwizzleInvalid, where,
                  fmt::format("swizzle spans {} bits (per_element + swizzle_len + atom_len); at most 62 fit",
                              perElement + len + atom));
    return std::nullopt;
  }
  return layout::Swizzle::make(static_cast<int>(perElement), static_cast<int>(len), static_cast<int>(atom), inner);
}

std::optional<int64_t> ConstEvaluator::swizzleField(const ast::Expr& e) {
  std::optional<int64_t> v = evalInt(e);
  if (!v) return std::nullopt;
  if (*v < 0 || *v > 62) {
    diags_.report(kSwizzleInvalid, e.range, fmt::format("swizzle field must lie in 0..62, found {}", *v));
    return std::nullopt;
  }
  return v;
}

// ComposeLayout(per_element, swizzle_len, ...) and Swizzle(bits, base, ...) take the same two
// numbers in opposite orders; written positionally and different, either reading gives a valid
// swizzle, so the one meant is asked for by name.
namespace {
void checkSwizzleOrder(DiagnosticEngine& diags, const ast::Expr& e, const ast::Call& c, int64_t first, int64_t second,
                       const std::string& named) {
  if (c.args.size() < 2 || !c.args[0].name.empty() || !c.args[1].name.empty() || first == second) return;
  const bool compose = named.rfind("ComposeLayout", 0) == 0;
  diags.report(kSwizzleOrder, SourceRange{c.args[0].value->range.begin, c.args[1].value->range.end},
                fmt::format("{} reads ({}, {}) as {}; Swizzle(B, M, S) and ComposeLayout(M, B, S, ...) take these "
                            "two in opposite orders, so name them",
                            compose ? "ComposeLayout" : "Swizzle", first, second,
                            compose ? fmt::format("per_element = {}, swizzle_len = {}", first, second)
                                    : fmt::format("bits = {}, base = {}", first, second)))
      .note(e.range, fmt::format("with names: {}", named));
}
}  // namespace

std::optional<ConstValue> ConstEvaluator::composeLayout(const ast::Expr& e, const ast::Call& c) {
  BoundArgs args = bindArgs(diags_, e, c, "ComposeLayout",
                            {"per_element", "swizzle_len", "atom_len", "tile_layout", "swizzle_inner"}, 4);
  if (!args.ok) return std::nullopt;
  int64_t fields[3];
  for (int i = 0; i < 3; ++i) {
    std::optional<int64_t> v = swizzleField(*args.values[i]);
    if (!v) return std::nullopt;
    fields[i] = *v;
  }
  bool inner = true;
  if (args.values[4]) {
    std::optional<int64_t> v = evalInt(*args.values[4]);
    if (!v) return std::nullopt;
    inner = *v != 0;
  }
  checkSwizzleOrder(diags_, e, c, fields[0], fields[1],
                    fmt::format("ComposeLayout(per_element = {}, swizzle_len = {}, atom_len = {}, tile_layout = ...)",
                                fields[0], fields[1], fields[2]));
  std::optional<layout::Swizzle> swizzle = makeSwizzle(e.range, fields[0], fields[1], fields[2], inner);
  if (!swizzle) return std::nullopt;
  std::optional<ConstValue> tile = eval(*args.values[3]);
  if (!tile) return std::nullopt;
  return applySwizzle(e.range, *swizzle, *args.values[3], *tile);
}

std::optional<ConstValue> ConstEvaluator::evalCall(const ast::Expr& e, const ast::Call& c) {
  // `Swizzle(B, M, S)(layout)`: applying a swizzle composes it with the layout.
  if (!c.callee->as<ast::Name>()) {
    std::optional<ConstValue> callee = eval(*c.callee);
    if (!callee) return std::nullopt;
    const auto* sw = std::get_if<SwizzleValue>(&callee->v);
    if (!sw) {
      diags_.report(kTypeMismatch, c.callee->range,
                    fmt::format("only a swizzle can be applied to a layout, found {}", constKindName(*callee)));
      return std::nullopt;
    }
    BoundArgs args = bindArgs(diags_, e, c, "a swizzle", {"layout"}, 1);
    if (!args.ok) return std::nullopt;
    std::optional<ConstValue> tile = eval(*args.values[0]);
    if (!tile) return std::nullopt;
    return applySwizzle(e.range, sw->swizzle, *args.values[0], *tile);
  }
  const std::string& fn = c.callee->as<ast::Name>()->name;
  if (fn == "ComposeLayout") return composeLayout(e, c);
  if (fn == "Swizzle") {
    BoundArgs args = bindArgs(diags_, e, c, "Swizzle", {"bits", "base", "shift"}, 3);
    if (!args.ok) return std::nullopt;
    int64_t f[3];
    for (int i = 0; i < 3; ++i) {
      std::optional<int64_t> v = swizzleField(*args.values[i]);
      if (!v) return std::nullopt;
      f[i] = *v;
    }
    checkSwizzleOrder(diags_, e, c, f[0], f[1],
                      fmt::format("Swizzle(bits = {}, base = {}, shift = {})", f[0], f[1], f[2]));
    std::optional<layout::Swizzle> sw = makeSwizzle(e.range, f[1], f[0], f[2], true);
    if (!sw) return std::nullopt;
    return ConstValue{SwizzleValue{*sw}};
  }
  if (fn == "compose") {
    BoundArgs args = bindArgs(diags_, e, c, "compose", {"swizzle", "layout"}, 2);
    if (!args.ok) return std::nullopt;
    std::optional<ConstValue> sw = eval(*args.values[0]);
    if (!sw) return std::nullopt;
    const auto* s = std::get_if<SwizzleValue>(&sw->v);
    if (!s) {
      diags_.report(kTypeMismatch, args.values[0]->range,
                    fmt::format("compose expects a Swizzle(...) first, found {}", constKindName(*sw)));
      return std::nullopt;
    }
    std::optional<ConstValue> tile = eval(*args.values[1]);
    if (!tile) return std::nullopt;
    return applySwizzle(e.range, s->swizzle, *args.values[1], *tile);
  }
  if (fn == "TileLayout") {
    BoundArgs args = bindArgs(diags_, e, c, "TileLayout", {"layout"}, 1);
    if (!args.ok) return std::nullopt;
    std::optional<ConstValue> v = eval(*args.values[0]);
    if (!v) return std::nullopt;
    if (!isLayoutTerm(*v)) {
      diags_.report(kTypeMismatch, args.values[0]->range,
                    fmt::format("TileLayout expects a layout, found {}", constKindName(*v)));
      return std::nullopt;
    }
    return ConstValue{asLayoutTerm(*v)};
  }
  if (fn == "cdiv" || fn == "min" || fn == "max" || fn == "log2") {
    size_t arity = fn == "log2" ? 1 : 2;
    if (c.args.size() != arity) {
      diags_.report(kBadArgument, e.range, fmt::format("{} takes {} argument{}", fn, arity, arity == 1 ? "" : "s"));
      return std::nullopt;
    }
    for (const ast::Arg& a : c.args)
      if (!a.name.empty()) {
        diags_.report(kBadArgument, a.nameRange, fmt::format("{} takes no keyword arguments", fn));
        return std::nullopt;
      }
    if (fn == "min" || fn == "max") return evalMinMax(c, fn == "max");
    std::vector<int64_t> v;
    for (const ast::Arg& a : c.args) {
      std::optional<int64_t> x = evalInt(*a.value);
      if (!x) return std::nullopt;
      v.push_back(*x);
    }
    if (fn == "log2") {
      if (v[0] <= 0 || (v[0] & (v[0] - 1)) != 0) {
        diags_.report(kTypeMismatch, c.args[0].value->range,
                      fmt::format("log2 needs a positive power of two, found {}", v[0]));
        return std::nullopt;
      }
      return ConstValue{int64_t{__builtin_ctzll(static_cast<uint64_t>(v[0]))}};
    }
    if (v[1] <= 0) {
      diags_.report(kDivisionByZero, c.args[1].value->range,
                    fmt::format("cdiv needs a positive divisor, found {}", v[1]));
      return std::nullopt;
    }
    if (v[0] < 0) return ConstValue{v[0] / v[1]};
    return ConstValue{v[0] / v[1] + (v[0] % v[1] != 0)};
  }
  diags_.report(kNotConstant, c.callee->range, fmt::format("'{}' is not a compile-time function", fn));
  return std::nullopt;
}

}  // namespace tyl
