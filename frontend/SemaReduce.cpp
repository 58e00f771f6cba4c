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
                  "reduce works on register fragments (and arithmetic on them); copy memory into a fragment first");
    return std::nullopt;
  }
  const tile::Tensor& t = k_.tensors[leaf->tensor];
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

}  // namespace sema
}  // namespace tyl
