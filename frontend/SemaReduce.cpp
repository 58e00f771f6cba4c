// reduce(x, dims, op): a register fragment reduced over some of its dimensions. The result's
// layout is derived from x's (layout::reduceDims): extent 1 in the reduced dimensions, held by
// every thread that held part of a row. Lowering combines slots, then lanes.
#include <fmt/format.h>

#include <algorithm>

#include "base/CommonDiags.h"
#include "frontend/SemaImpl.h"
#include "ir/layout/Transforms.h"

namespace tyl {
namespace sema {

std::optional<Value> KernelSema::reduceCall(const ast::Expr& e, const ast::Call& c) {
  if (c.args.size() != 3) {
    diags_.report(kBadArgument, e.range,
                  "reduce takes a fragment, the dimensions to reduce and the operation: reduce(x, 1, max), "
                  "reduce(x, (0, 1), sum)");
    return std::nullopt;
  }
  for (const ast::Arg& a : c.args)
    if (!a.name.empty()) {
      diags_.report(kBadArgument, a.nameRange, "reduce takes its arguments by position");
      return std::nullopt;
    }
  // The operation: a bare name, as in reduce(x, 1, max).
  const ast::Name* opName = c.args[2].value->as<ast::Name>();
  static const std::pair<const char*, tir::BinOp> kOps[] = {
      {"sum", tir::BinOp::Add}, {"max", tir::BinOp::Max}, {"min", tir::BinOp::Min}};
  const auto* op = opName ? std::find_if(std::begin(kOps), std::end(kOps),
                                         [&](const auto& o) { return opName->name == o.first; })
                          : std::end(kOps);
  if (op == std::end(kOps)) {
    diags_.report(kBadArgument, c.args[2].value->range, "the operation of reduce is sum, max or min");
    return std::nullopt;
  }
  std::optional<Value> x = expr(*c.args[0].value);
  if (!x) return std::nullopt;
  std::optional<tile::FragRef> src = toFrag(*x, c.args[0].value->range);
  if (!src) return std::nullopt;
  const tile::FragExpr* leaf = tile::layoutLeaf(*src);
  if (!leaf) {
    diags_.report(kTypeMismatch, c.args[0].value->range,
                  x->kind == Value::Kind::Scalar || x->kind == Value::Kind::Const
                      ? fmt::format("reduce works on register fragments (and arithmetic on them), not on {}",
                                    describe(*x))
                      : "reduce works on register fragments (and arithmetic on them); copy memory into a fragment "
                        "first");
    return std::nullopt;
  }
  const tile::Tensor& t = k_.tensors[leaf->tensor];
  if (!wholeInRegisters(*src, t, c.args[0].value->range)) return std::nullopt;
  const tir::Type type = tile::toTir((*src)->dtype);
  if (type == tir::Type::I64) {
    diags_.report(kTypeMismatch, c.args[0].value->range,
                  "reduce works on floats (in f32) and 32-bit integers, and this is an i64 fragment");
    return std::nullopt;
  }
  // The dimensions: one compile-time integer or a tuple of them, each once.
  std::optional<std::vector<Entry>> dimEntries = entries(*c.args[1].value);
  if (!dimEntries) return std::nullopt;
  std::vector<size_t> dims;
  for (const Entry& d : *dimEntries) {
    std::optional<int64_t> v = constInt(d, "a dimension to reduce");
    if (!v) return std::nullopt;
    if (*v < 0 || static_cast<size_t>(*v) >= t.staticShape.size()) {
      diags_.report(kBadArgument, d.range,
                    fmt::format("dimension {} is outside {}, which has {} dimensions (0 to {})", *v, tensorRef(t),
                                t.staticShape.size(), t.staticShape.size() - 1));
      return std::nullopt;
    }
    if (std::find(dims.begin(), dims.end(), static_cast<size_t>(*v)) != dims.end()) {
      diags_.report(kBadArgument, d.range, fmt::format("dimension {} is given twice", *v));
      return std::nullopt;
    }
    dims.push_back(static_cast<size_t>(*v));
  }
  if (dims.empty()) {
    diags_.report(kBadArgument, c.args[1].value->range, "reduce needs at least one dimension to reduce");
    return std::nullopt;
  }
  std::vector<int64_t> shape = t.staticShape;
  for (size_t d : dims) shape[d] = 1;
  const layout::Layout from = t.layout ? *t.layout : layout::Layout(layout::TileLayout::rowMajor(t.staticShape));
  layout::Layout reduced;
  try {
    reduced = layout::reduceDims(from, t.staticShape, dims);
  } catch (const layout::Error& err) {
    diags_.report(kTypeMismatch, e.range, fmt::format("the layout of {} cannot be reduced: {}", tensorRef(t), err.what()));
    return std::nullopt;
  }
  const tile::DType dtype = tir::isFloat(type) ? tile::DType::F32 : tile::DType::I32;
  std::optional<uint32_t> dst =
      allocFragment("red", dtype, shape, reduced, e.range, fmt::format("the reduction of {}", tensorRef(t)));
  if (!dst) return std::nullopt;
  emit(e.range, tile::Reduce{*dst, *src, dims, op->second});
  return Value::ofView(wholeView(*dst, e.range));
}

std::optional<Value> KernelSema::coordCall(const ast::Expr& e, const ast::Call& c, const tile::View& v) {
  const tile::Tensor& t = k_.tensors[v.tensor];
  if (t.space != tile::MemSpace::Local || !isWholeTensor(v)) {
    diags_.report(kTypeMismatch, e.range,
                  fmt::format("coord(d) gives the coordinates of a whole register fragment's elements, and {} is {}",
                              t.space != tile::MemSpace::Local ? tensorRef(t) : "this",
                              t.space != tile::MemSpace::Local ? "in memory" : "a part of one"));
    return std::nullopt;
  }
  if (c.args.size() != 1 || !c.args[0].name.empty()) {
    diags_.report(kBadArgument, e.range, "coord takes the dimension: x.coord(1) is each element's column");
    return std::nullopt;
  }
  std::optional<int64_t> d = constInt(*c.args[0].value, "a dimension");
  if (!d) return std::nullopt;
  if (*d < 0 || static_cast<size_t>(*d) >= t.staticShape.size()) {
    diags_.report(kBadArgument, c.args[0].value->range,
                  fmt::format("dimension {} is outside {}, which has {} dimensions (0 to {})", *d, tensorRef(t),
                              t.staticShape.size(), t.staticShape.size() - 1));
    return std::nullopt;
  }
  tile::FragExpr f;
  f.kind = tile::FragExpr::Kind::Tensor;
  f.dtype = tile::DType::I32;
  f.tensor = v.tensor;
  f.coord = static_cast<size_t>(*d);
  Value r;
  r.kind = Value::Kind::Frag;
  r.frag = std::make_shared<const tile::FragExpr>(std::move(f));
  return r;
}

std::optional<Value> KernelSema::whereCall(const ast::Expr& e, const ast::Call& c) {
  if (c.args.size() != 3) {
    diags_.report(kBadArgument, e.range, "where takes a condition and two values: where(x < 0.0, 0.0, x)");
    return std::nullopt;
  }
  std::vector<Value> args;
  bool fragment = false;
  for (const ast::Arg& a : c.args) {
    if (!a.name.empty()) {
      diags_.report(kBadArgument, a.nameRange, "where takes its arguments by position");
      return std::nullopt;
    }
    std::optional<Value> v = expr(*a.value);
    if (!v) return std::nullopt;
    fragment = fragment || v->kind == Value::Kind::Frag || v->kind == Value::Kind::View;
    args.push_back(std::move(*v));
  }
  if (!fragment) {
    std::optional<tir::ExprRef> p = toScalar(args[0], c.args[0].value->range, tir::Type::Pred);
    std::optional<tir::ExprRef> a = p ? toScalar(args[1], c.args[1].value->range, std::nullopt) : std::nullopt;
    std::optional<tir::ExprRef> b = a ? toScalar(args[2], c.args[2].value->range, (*a)->type) : std::nullopt;
    if (!b) return std::nullopt;
    // Both sides in one type, as arithmetic promotes them.
    const tir::Type ta = (*a)->type, tb = (*b)->type;
    const tir::Type t = ta == tb                                    ? ta
                        : tir::isFloat(ta) || tir::isFloat(tb)      ? tir::Type::F32
                        : ta == tir::Type::I64 || tb == tir::Type::I64 ? tir::Type::I64
                                                                    : tir::Type::I32;
    a = tir::cast(t, *a);
    b = tir::cast(t, *b);
    return Value::runtime(tir::select(*p, *a, *b));
  }
  // A scalar condition picks the same side in every element.
  std::optional<tile::FragRef> cond;
  if (args[0].kind != Value::Kind::Frag && args[0].kind != Value::Kind::View) {
    std::optional<tir::ExprRef> p = toScalar(args[0], c.args[0].value->range, tir::Type::Pred);
    if (!p) return std::nullopt;
    tile::FragExpr f;
    f.kind = tile::FragExpr::Kind::Scalar;
    f.dtype = tile::DType::Bool;
    f.scalar = *p;
    cond = std::make_shared<const tile::FragExpr>(std::move(f));
  } else {
    cond = toFrag(args[0], c.args[0].value->range, true);
  }
  std::optional<tile::FragRef> a = cond ? toFrag(args[1], c.args[1].value->range, true) : std::nullopt;
  std::optional<tile::FragRef> b = a ? toFrag(args[2], c.args[2].value->range, true) : std::nullopt;
  if (!b) return std::nullopt;
  if ((*cond)->dtype != tile::DType::Bool) {
    diags_.report(kTypeMismatch, c.args[0].value->range,
                  "the condition of where on fragments is a comparison of them (x.coord(1) < n, x > 0.0) or a "
                  "scalar condition");
    return std::nullopt;
  }
  if ((*a)->dtype == tile::DType::Bool || (*b)->dtype == tile::DType::Bool) {
    diags_.report(kTypeMismatch, e.range, "where chooses between values, and a comparison is not one");
    return std::nullopt;
  }
  if (!alignFragments(e.range, *cond, *a) || !alignFragments(e.range, *cond, *b) ||
      !alignFragments(e.range, *a, *b))
    return std::nullopt;
  Value arith = fragBinary(tir::BinOp::Add, *a, *b);  // for the type both sides compute in
  tile::FragExpr f;
  f.kind = tile::FragExpr::Kind::Select;
  f.dtype = arith.frag->dtype;
  f.cond = *cond;
  f.a = *a;
  f.b = *b;
  Value r;
  r.kind = Value::Kind::Frag;
  r.frag = std::make_shared<const tile::FragExpr>(std::move(f));
  return r;
}

}  // namespace sema
}  // namespace tyl
