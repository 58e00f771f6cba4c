// Semantic analysis of calls: builtins, allocations, views, and tile operations.
#include <fmt/format.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <set>

#include "base/CommonDiags.h"
#include "frontend/SemaImpl.h"
#include "ir/layout/Analysis.h"
#include "ir/layout/Transforms.h"

namespace tyl {

TYL_DIAG(kLayoutSize, Error, "layout-size-mismatch", "a layout whose size differs from its tensor's size");
TYL_DIAG(kLayoutSpace, Error, "layout-space", "a layout whose axes do not suit the tensor's memory space");
TYL_DIAG(kWindowBounds, Error, "window-bounds", "a window that does not lie inside its tensor");
TYL_DIAG(kSharedLimit, Error, "shared-limit", "shared memory beyond what one block can have");

namespace sema {

using tir::ExprRef;
using tir::Type;

namespace {

// Rebuilds the sums, differences, products, minima and maxima of an integer expression in 64
// bits, also those of the values of names in it (a pipeline's `k + 3`), so offsets into large
// global tensors (block_id.x * 1024 with many blocks) cannot overflow 32-bit arithmetic. The
// arithmetic written in the origin itself is in 64 bits already (KernelSema::inIndex_).
ExprRef widen(const ExprRef& e) {
  using tir::BinOp;
  if (!tir::isInt(e->type)) return e;
  if (e->kind == tir::ExprKind::Binary &&
      (e->bin == BinOp::Add || e->bin == BinOp::Sub || e->bin == BinOp::Mul || e->bin == BinOp::Min ||
       e->bin == BinOp::Max))
    return tir::binary(e->bin, widen(e->args[0]), widen(e->args[1]));
  if (e->type == Type::I64 && e->kind == tir::ExprKind::Cast && e->args[0]->type == Type::I32)
    return widen(e->args[0]);
  return e->type == Type::I64 ? e : tir::cast(Type::I64, e);
}

}  // namespace

std::optional<layout::Layout> KernelSema::layoutArg(const ast::Expr& e) {
  ConstEvaluator eval = constEvaluator();
  return eval.evalLayout(e);
}

std::optional<tile::Tensor> KernelSema::allocTensor(const ast::Expr& e, const ast::Call& c, tile::MemSpace space) {
  const char* fn = space == tile::MemSpace::Local ? "alloc_local" : "alloc_shared";
  const ast::Expr* typeArg = nullptr;
  const ast::Expr* layoutExpr = nullptr;
  for (const ast::Arg& a : c.args) {
    if (a.name.empty() && !typeArg) {
      typeArg = a.value.get();
    } else if (a.name == "layout" && !layoutExpr) {
      layoutExpr = a.value.get();
    } else {
      diags_.report(kBadArgument, a.name.empty() ? a.value->range : a.nameRange,
                    fmt::format("{} takes a tensor type and 'layout = ...'", fn));
      return std::nullopt;
    }
  }
  if (!typeArg) {
    diags_.report(kBadArgument, e.range,
                  space == tile::MemSpace::Local
                      ? "alloc_local needs a tensor type, e.g. alloc_local(f32[32, 4], layout = L)"
                      : "alloc_shared needs a tensor type, e.g. alloc_shared(f16[128, 32])");
    return std::nullopt;
  }
  std::optional<TensorType> tt = tensorType(*typeArg);
  if (!tt) return std::nullopt;
  tile::Tensor t;
  t.space = space;
  t.dtype = tt->dtype;
  t.shape = tt->shape;
  t.staticShape = tt->staticShape;
  t.loc = e.range;
  if (layoutExpr) {
    std::optional<layout::Layout> l = layoutArg(*layoutExpr);
    if (!l) return std::nullopt;
    t.layout = *l;
    t.layoutLoc = layoutExpr->range;
  } else {
    // Without a layout: row-major (for a fragment, every thread holds every element).
    t.layout = layout::Layout(layout::TileLayout::rowMajor(t.staticShape));
    t.layoutLoc = typeArg->range;
  }
  return t;
}

std::optional<Value> KernelSema::allocLocal(const ast::Expr& e, const ast::Call& c) {
  std::optional<tile::Tensor> made = allocTensor(e, c, tile::MemSpace::Local);
  if (!made) return std::nullopt;
  tile::Tensor& t = *made;
  int64_t size = layout::shapeSize(t.staticShape);
  if (t.layout->size() != size) {
    diags_.report(kLayoutSize, t.layoutLoc,
                  fmt::format("the layout places {} elements but the tensor {} has {}", t.layout->size(),
                              layout::shapeToString(t.staticShape), size));
    return std::nullopt;
  }
  if (t.layout->swizzle) {
    diags_.report(kLayoutSpace, t.layoutLoc, "a register fragment cannot be swizzled; swizzles permute memory offsets");
    return std::nullopt;
  }
  uint32_t allowed = layout::axisBit(layout::Axis::m);
  for (layout::Axis a : layout::allAxes())
    if (layout::isThreadAxis(a)) allowed |= layout::axisBit(a);
  uint32_t foreign = t.layout->tile.axesMask() & ~allowed;
  if (foreign) {
    diags_.report(kLayoutSpace, t.layoutLoc,
                  "a register fragment's layout maps onto thread axes and register slots ('m') only");
    return std::nullopt;
  }
  if (int64_t lo = layout::minValue(t.layout->tile, layout::Axis::m); lo < 0) {
    diags_.report(kNegativeOffset, t.layoutLoc,
                  fmt::format("the layout places an element at register slot {}; slots start at 0", lo));
    return std::nullopt;
  }
  layout::TileLayout perThread = layout::storage(t.layout->tile);
  t.slots = layout::cosize(layout::Layout(perThread), layout::Axis::m);
  if (t.slots <= 0) t.slots = 1;
  if (!withinRegisterLimit(t.slots, t.layoutLoc)) return std::nullopt;
  int n = static_cast<int>(k_.tensors.size());
  t.name = fmt::format("frag{}", n);
  t.autoNamed = true;
  t.madeBy = "alloc_local's fragment";
  t.array = tir::addArray(k_.skeleton, t.name, tile::toTir(t.dtype), t.slots);
  uint32_t id = addTensor(std::move(t));
  return Value::ofView(wholeView(id, e.range));
}

std::optional<Value> KernelSema::allocShared(const ast::Expr& e, const ast::Call& c) {
  std::optional<tile::Tensor> made = allocTensor(e, c, tile::MemSpace::Shared);
  if (!made) return std::nullopt;
  tile::Tensor& t = *made;
  int64_t size = layout::shapeSize(t.staticShape);
  // A layout for a smaller tile is repeated over leading dimensions (one stage each).
  if (t.layout->size() != size && size % t.layout->size() == 0 && t.staticShape.size() > 1) {
    int64_t inner = t.layout->size();
    std::vector<int64_t> lead;
    int64_t rest = size;
    size_t d = 0;
    while (rest > inner && d < t.staticShape.size()) {
      lead.push_back(t.staticShape[d]);
      rest /= t.staticShape[d];
      ++d;
    }
    if (rest == inner) {
      int64_t span = layout::cosize(*t.layout, layout::Axis::m);
      if (t.layout->swizzle) span = (span + t.layout->swizzle->period() - 1) / t.layout->swizzle->period() *
                                    t.layout->swizzle->period();
      layout::TileLayout stacked;
      int64_t stride = span;
      for (size_t i = lead.size(); i-- > 0;) {
        stacked.shard.insert(stacked.shard.begin(), layout::Iter{lead[i], stride, layout::Axis::m});
        stride *= lead[i];
      }
      for (const layout::Iter& it : t.layout->tile.shard) stacked.shard.push_back(it);
      stacked.offset = t.layout->tile.offset;
      t.layout = t.layout->swizzle ? layout::Layout::compose(*t.layout->swizzle, stacked) : layout::Layout(stacked);
    }
  }
  if (t.layout->size() != size) {
    diags_.report(kLayoutSize, t.layoutLoc,
                  fmt::format("the layout places {} elements but the tensor {} has {}", t.layout->size(),
                              layout::shapeToString(t.staticShape), size));
    return std::nullopt;
  }
  if (t.layout->tile.axesMask() & ~layout::axisBit(layout::Axis::m)) {
    diags_.report(kLayoutSpace, t.layoutLoc, "a shared-memory layout maps onto memory offsets ('m') only");
    return std::nullopt;
  }
  if (int64_t lo = layout::minValue(t.layout->tile, layout::Axis::m); lo < 0) {
    diags_.report(kNegativeOffset, t.layoutLoc,
                  fmt::format("the layout places an element at offset {}, before the start of the allocation", lo));
    return std::nullopt;
  }
  return placeShared(std::move(t), e);
}

// Gives a shared tensor its bytes after the block's earlier allocations.
std::optional<Value> KernelSema::placeShared(tile::Tensor t, const ast::Expr& e) {
  int64_t elems = layout::cosize(*t.layout, layout::Axis::m);
  if (elems > std::numeric_limits<int64_t>::max() / 2 / tile::dtypeBytes(t.dtype)) {  // bytes would overflow
    diags_.report(kSharedLimit, e.range,
                  fmt::format("the tile spans {} elements of {} bytes; a block can have at most {} bytes of "
                              "shared memory",
                              elems, tile::dtypeBytes(t.dtype), tir::kMaxSharedBytesPerBlock));
    return std::nullopt;
  }
  int64_t bytes = elems * tile::dtypeBytes(t.dtype);
  // Allocations start on 128 bytes, or on the swizzle's whole period, so the pattern's
  // phase is the one the layout describes.
  int64_t align = 128;
  if (t.layout->swizzle)
    align = std::max<int64_t>(align, std::min<int64_t>(1024, t.layout->swizzle->period() * tile::dtypeBytes(t.dtype)));
  int64_t offset = (k_.skeleton.sharedBytes + align - 1) / align * align;
  if (offset + bytes > tir::kMaxSharedBytesPerBlock) {
    diags_.report(kSharedLimit, e.range,
                  fmt::format("shared memory would reach {} bytes; a block can have at most {} bytes", offset + bytes,
                              tir::kMaxSharedBytesPerBlock));
    return std::nullopt;
  }
  k_.skeleton.sharedBytes = offset + bytes;
  t.name = fmt::format("{}{}", t.mbarriers ? "bars" : "smem", k_.tensors.size());
  t.autoNamed = true;
  t.madeBy = t.mbarriers ? "alloc_barriers' array" : "alloc_shared's tensor";
  t.alignBytes = align;
  tir::Buffer buf;
  buf.name = t.name;
  buf.space = tir::Space::Shared;
  buf.elem = tile::toTir(t.dtype);
  buf.sharedOffset = offset;
  buf.sharedBytes = bytes;
  buf.alignBytes = align;
  k_.skeleton.buffers.push_back(buf);
  t.buffer = static_cast<uint32_t>(k_.skeleton.buffers.size() - 1);
  uint32_t id = addTensor(std::move(t));
  return Value::ofView(wholeView(id, e.range));
}

std::optional<Value> KernelSema::window(const ast::Expr& e, const ast::Call& c, const tile::View& base) {
  if (c.args.size() != 2 || !c.args[0].name.empty() || !c.args[1].name.empty()) {
    diags_.report(kBadArgument, e.range, "window takes an origin and a shape: t.window((row, col), (rows, cols))");
    return std::nullopt;
  }
  std::optional<std::vector<Entry>> originEntries;
  {
    IndexScope wide(inIndex_);
    originEntries = entries(*c.args[0].value);
  }
  if (!originEntries) return std::nullopt;
  std::optional<std::vector<Entry>> shapeEntries = entries(*c.args[1].value);
  if (!shapeEntries) return std::nullopt;
  const std::vector<Entry>&origin = *originEntries, &shape = *shapeEntries;
  const tile::Tensor& t = k_.tensors[base.tensor];
  if (origin.size() != base.rank() || shape.size() != base.rank()) {
    diags_.report(kBadArgument, e.range,
                  fmt::format("'{}' has {} dimensions; the window's origin and shape need {} entries each", t.name,
                              base.rank(), base.rank()));
    return std::nullopt;
  }
  tile::View w = base;
  w.loc = e.range;
  for (size_t i = 0; i < base.rank(); ++i) {
    std::optional<int64_t> n = constInt(shape[i], "a window extent");
    if (!n) return std::nullopt;
    if (*n <= 0) {
      diags_.report(kWindowBounds, shape[i].range, fmt::format("a window extent must be positive, found {}", *n));
      return std::nullopt;
    }
    std::optional<ExprRef> o = toScalar(origin[i].value, origin[i].range, std::nullopt);
    if (!o) return std::nullopt;
    if (!tir::isInt((*o)->type)) {
      diags_.report(kTypeMismatch, origin[i].range, "a window origin must be an integer");
      return std::nullopt;
    }
    int d = base.dims[i];
    // A window of a window: its origin is relative to the outer one's. Constant origins add
    // as compile-time arithmetic does, without wrapping.
    int64_t outer = 0, inner = 0, sum = 0;
    if (tir::isIntConst(base.origin[d], &outer) && tir::isIntConst(widen(*o), &inner) &&
        __builtin_add_overflow(outer, inner, &sum)) {
      diags_.report(kIntegerOverflow, origin[i].range,
                    fmt::format("this origin, {}, plus the enclosing window's, {}, overflows 64 bits", inner, outer));
      return std::nullopt;
    }
    w.origin[d] = tir::add(base.origin[d], widen(*o));
    w.shape[i] = *n;
    // Windows of shared and register tensors must lie inside them; windows of global
    // tensors may run past the edge, and the elements outside are skipped.
    int64_t oc = 0;
    if (t.space != tile::MemSpace::Global && t.staticShape[d] >= 0) {
      // oc > extent - n rather than oc + n > extent: the origin may be any 64-bit value.
      if (*n > base.shape[i] || (tir::isIntConst(w.origin[d], &oc) && (oc < 0 || oc > t.staticShape[d] - *n))) {
        bool known = tir::isIntConst(w.origin[d], &oc);
        int64_t end = 0;
        diags_.report(kWindowBounds, e.range,
                      fmt::format("the window covers [{}, {}) of dimension {}, but '{}' has extent {} there",
                                  known ? fmt::format("{}", oc) : "?",
                                  known && !__builtin_add_overflow(oc, *n, &end) ? fmt::format("{}", end) : "?", i,
                                  t.name, t.staticShape[d]))
            .note(t.loc, fmt::format("'{}' is declared here", t.name));
        return std::nullopt;
      }
    }
  }
  if (t.space != tile::MemSpace::Global && !windowInsideAtSureValues(w, t)) return std::nullopt;
  return Value::ofView(std::move(w));
}

// A window of a shared or register tensor whose origin moves with loop variables or ids must
// lie inside it at the values they surely take (see escapeAtSureValues).
bool KernelSema::windowInsideAtSureValues(const tile::View& w, const tile::Tensor& t) {
  std::vector<ExprRef> origin;
  std::vector<int64_t> most;
  for (size_t i = 0; i < w.rank(); ++i) {
    const int d = w.dims[i];
    if (t.staticShape[d] < 0) return true;
    origin.push_back(w.origin[d]);
    most.push_back(t.staticShape[d] - w.shape[i]);
  }
  std::optional<Escape> esc = escapeAtSureValues(origin, most);
  if (!esc) {
    launchChecksAtSureValues(
        origin, most,
        [&](size_t d) {
          return fmt::format("the window of '{}' leaves dimension {} of extent {}", t.name, d,
                             t.staticShape[w.dims[d]]);
        },
        w.loc);
    return true;
  }
  const int64_t extent = w.shape[esc->dim];
  int64_t end = 0;
  DiagBuilder diag = diags_.report(
      kWindowBounds, w.loc,
      fmt::format("the window covers [{}, {}) of dimension {} {}, but '{}' has extent {} there", esc->value,
                  __builtin_add_overflow(esc->value, extent, &end) ? "?" : fmt::format("{}", end), esc->dim,
                  esc->when, t.name, t.staticShape[w.dims[esc->dim]]));
  diag.note(t.loc, fmt::format("'{}' is declared here", t.name));
  if (esc->loop) diag.note(esc->loop->loc, fmt::format("'{}' takes that value in this loop", esc->loop->name));
  if (copyEnable_)
    diag.note(w.loc,
              "a pipeline's copies run ahead of its loop: an iteration issues those of a later one, and past the "
              "end of the loop they still fill their shared destination with zeros");
  return false;
}

std::optional<Value> KernelSema::slotView(const ast::Expr& e, const ast::Call& c, const tile::View& base) {
  const tile::Tensor& t = k_.tensors[base.tensor];
  if (t.space != tile::MemSpace::Local) {
    diags_.report(kTypeMismatch, e.range, "view(...) gives this thread's slots of a register fragment");
    return std::nullopt;
  }
  if (!isWholeTensor(base)) {
    diags_.report(kTypeMismatch, e.range,
                  fmt::format("view(...) gives all of this thread's slots of a register fragment; this is a part of "
                              "'{}'",
                              t.name))
        .note(t.loc, fmt::format("'{}' is allocated here", t.name));
    return std::nullopt;
  }
  std::vector<int64_t> shape;
  for (const ast::Arg& a : c.args) {
    if (!a.name.empty()) {
      diags_.report(kBadArgument, a.nameRange, "view takes only a shape");
      return std::nullopt;
    }
    std::optional<int64_t> n = constInt(*a.value, "a view extent");
    if (!n) return std::nullopt;
    if (*n <= 0) {
      diags_.report(kBadArgument, a.value->range, fmt::format("a view extent must be positive, found {}", *n));
      return std::nullopt;
    }
    shape.push_back(*n);
  }
  if (shape.empty() || layout::shapeSize(shape) != t.slots) {
    diags_.report(kLayoutSize, e.range,
                  fmt::format("each thread holds {} slots of '{}', but the view has {} elements", t.slots, t.name,
                              shape.empty() ? 0 : layout::shapeSize(shape)))
        .note(t.layoutLoc, "the layout that decides the slots is here");
    return std::nullopt;
  }
  tile::Tensor v;
  v.name = t.name + "_view";
  v.space = tile::MemSpace::Local;
  v.dtype = t.dtype;
  v.staticShape = shape;
  for (int64_t d : shape) v.shape.push_back(tir::intConst(d, Type::I64));
  v.layout = layout::Layout(layout::TileLayout::rowMajor(shape));
  v.array = t.array;
  v.slots = t.slots;
  v.loc = e.range;
  v.layoutLoc = e.range;
  uint32_t id = addTensor(std::move(v));
  return Value::ofView(wholeView(id, e.range));
}
std::optional<int> KernelSema::pendingGroups(const ast::Expr& e, const ast::Call& c, std::string_view fn,
                                             const char* what, int most) {
  if (c.args.size() != 1 || !c.args[0].name.empty()) {
    diags_.report(kBadArgument, e.range, fmt::format("{} takes the number of {}", fn, what));
    return std::nullopt;
  }
  std::optional<int64_t> n = constInt(*c.args[0].value, fmt::format("the number of {}", what).c_str());
  if (!n) return std::nullopt;
  if (*n < 0 || *n > most) {
    diags_.report(kBadArgument, c.args[0].value->range,
                  fmt::format("{} takes 0..{} pending groups, found {}", fn, most, *n));
    return std::nullopt;
  }
  return static_cast<int>(*n);
}


// store_async(dst, src): a TMA store of a shared tile to a global window.
std::optional<Value> KernelSema::storeAsync(const ast::Expr& e, const ast::Call& c) {
  const bool staged = c.args.size() == 3 && c.args[2].name == "staging";
  if (c.args.size() == 3 && !staged && !c.args[2].name.empty()) {
    diags_.report(kBadArgument, c.args[2].nameRange,
                  fmt::format("store_async has no argument '{}': it takes staging = bufs", c.args[2].name));
    return std::nullopt;
  }
  if ((c.args.size() != 2 && !staged) || !c.args[0].name.empty() || !c.args[1].name.empty()) {
    diags_.report(kBadArgument, e.range, "store_async takes a global destination and a shared source, "
                                         "store_async(C.window(...), s), or a register tile and shared buffers to "
                                         "stage it in: store_async(C.window(...), acc, staging = bufs)");
    return std::nullopt;
  }
  if (staged) return stagedStore(e, c);
  std::optional<Value> dst = expr(*c.args[0].value);
  if (!dst) return std::nullopt;
  std::optional<Value> src = expr(*c.args[1].value);
  if (!src) return std::nullopt;
  const bool global = dst->kind == Value::Kind::View && k_.tensors[dst->view.tensor].space == tile::MemSpace::Global;
  const bool shared = src->kind == Value::Kind::View && k_.tensors[src->view.tensor].space == tile::MemSpace::Shared &&
                      !k_.tensors[src->view.tensor].mbarriers;
  if (!global || !shared) {
    diags_.report(kCopySpaces, e.range,
                  "store_async copies a shared tile to global memory (a TMA store): store_async(global, shared); a "
                  "register tile goes through shared buffers: store_async(global, value, staging = bufs)");
    return std::nullopt;
  }
  if (dst->view.shape != src->view.shape) {
    diags_.report(kCopyShape, e.range,
                  fmt::format("store_async from shape {} to shape {}", layout::shapeToString(src->view.shape),
                              layout::shapeToString(dst->view.shape)));
    return std::nullopt;
  }
  tile::Copy cp;
  cp.dst = dst->view;
  cp.src = src->view;
  cp.async = true;
  cp.tmaStore = true;
  emit(e.range, std::move(cp));
  return Value{};
}

std::optional<Value> KernelSema::copy(const ast::Expr& e, const ast::Call& c, bool async) {
  const char* fn = async ? "copy_async" : "copy";
  // copy_async(dst, src, enable = cond): when cond is false nothing is read and dst is
  // zero-filled, without a branch.
  // copy_async(dst, src, barrier = bars[i]): a TMA copy completing on an mbarrier.
  // copy_async(dst, src, barrier = bars[i], multicast = mask): into every block of the mask.
  const ast::Arg* enableArg = nullptr;
  const ast::Arg* barrierArg = nullptr;
  const ast::Arg* multicastArg = nullptr;
  bool argsOk = c.args.size() >= 2 && c.args[0].name.empty() && c.args[1].name.empty();
  for (size_t i = 2; i < c.args.size() && argsOk; ++i) {
    const std::string& name = c.args[i].name;
    const ast::Arg*& slot = name == "enable" ? enableArg : name == "barrier" ? barrierArg : multicastArg;
    argsOk = async && (name == "enable" || name == "barrier" || name == "multicast") && !slot;
    slot = &c.args[i];
  }
  if (!argsOk || (enableArg && barrierArg) || (multicastArg && !barrierArg && !copyBarrier_)) {
    diags_.report(kBadArgument, e.range,
                  async ? "copy_async takes a destination, a source and optionally a condition or an mbarrier: "
                          "copy_async(dst, src), copy_async(dst, src, enable = cond) or copy_async(dst, src, "
                          "barrier = bars[i]), the last with 'multicast = mask' in a cluster (in a warp-specialized "
                          "pipeline, 'multicast = true' shares a tile among the cluster's blocks)"
                        : "copy takes a destination and a source: copy(dst, src)");
    return std::nullopt;
  }
  if (copyBarrier_ && (barrierArg || enableArg)) {
    diags_.report(kBadArgument, e.range,
                  "the copies of a warp-specialized pipeline complete on the pipeline's own barriers: write "
                  "copy_async(dst, src)");
    return std::nullopt;
  }
  // In a warp-specialized pipeline, `multicast = true` shares the tile among the cluster's blocks:
  // each loads its part and multicasts it to all (in a block alone, it loads the whole tile).
  tir::ExprRef multicast;
  bool shared = false;
  if (multicastArg && copyBarrier_) {
    std::optional<int64_t> on = constInt(*multicastArg->value, "multicast (true or false)");
    if (!on) return std::nullopt;
    shared = *on != 0 && k_.skeleton.clusterSize() > 1;
  } else if (multicastArg) {
    multicast = clusterRankArg(*multicastArg, "multicast");
    if (!multicast) return std::nullopt;
  }
  tir::ExprRef enable = copyEnable_;
  if (enableArg) {
    std::optional<Value> cond = expr(*enableArg->value);
    if (!cond) return std::nullopt;
    std::optional<tir::ExprRef> p = toScalar(*cond, enableArg->value->range, Type::Pred);
    if (!p) return std::nullopt;
    enable = enable ? tir::land(enable, *p) : *p;
  }
  std::optional<tile::View> barrier = async ? copyBarrier_ : std::nullopt;
  if (barrierArg) {
    std::optional<Value> b = expr(*barrierArg->value);
    if (!b) return std::nullopt;
    if (b->kind != Value::Kind::View || !k_.tensors[b->view.tensor].mbarriers || b->view.rank() != 0) {
      diags_.report(kTypeMismatch, barrierArg->value->range,
                    fmt::format("a TMA copy completes on one mbarrier, bars[i] of an alloc_barriers array; found {}",
                                describe(*b)));
      return std::nullopt;
    }
    barrier = b->view;
  }
  std::optional<Value> dst = expr(*c.args[0].value);
  if (!dst) return std::nullopt;
  std::optional<Value> src = expr(*c.args[1].value);
  if (!src) return std::nullopt;
  if (dst->kind != Value::Kind::View) {
    diags_.report(kTypeMismatch, c.args[0].value->range, fmt::format("the destination of {} must be a tensor", fn));
    return std::nullopt;
  }
  for (const Value* side : {&*dst, &*src})
    if (side->kind == Value::Kind::View && k_.tensors[side->view.tensor].mbarriers) {
      diags_.report(kTypeMismatch, side == &*dst ? c.args[0].value->range : c.args[1].value->range,
                    fmt::format("'{}' holds mbarriers, not data: it is used with arrive and wait_barrier",
                                k_.tensors[side->view.tensor].name));
      return std::nullopt;
    }
  const tile::Tensor& dt = k_.tensors[dst->view.tensor];
  // Part of a fragment is filled from memory only: fragment arithmetic covers whole fragments.
  const bool memorySource =
      src->kind == Value::Kind::View && k_.tensors[src->view.tensor].space != tile::MemSpace::Local;
  if (dt.space == tile::MemSpace::Local && !isWholeTensor(dst->view) && !memorySource) {
    std::string what = "this value";
    if (src->kind == Value::Kind::View) what = fmt::format("register fragment '{}'", k_.tensors[src->view.tensor].name);
    if (src->kind == Value::Kind::Frag) what = "fragment arithmetic";
    if (src->kind == Value::Kind::Const || src->kind == Value::Kind::Scalar) what = "a scalar";
    DiagBuilder d = diags_.report(kCopyShape, c.args[0].value->range,
                                  fmt::format("{} into a part of register fragment '{}' needs a global or shared tensor "
                                              "or window as its source, not {}",
                                              fn, dt.name, what));
    d.note(dt.loc, fmt::format("'{}' is allocated here", dt.name));
    noteUnitDims(d, dst->view, c.args[0].value->range);
    return std::nullopt;
  }
  tile::Copy cp;
  cp.dst = dst->view;
  cp.async = async;
  cp.barrier = barrier;
  cp.multicast = multicast;
  if (async && !tir::isTrue(enable)) cp.enable = enable;
  if (cp.barrier && cp.enable) {
    diags_.report(kBadArgument, e.range,
                  "a TMA copy (barrier = ...) cannot be disabled by a condition; put it under an if instead (inside "
                  "a pipeline's loop, a copy_async is disabled past the end of the loop: TMA copies belong to a "
                  "producer written out by hand)");
    return std::nullopt;
  }
  std::optional<tile::View> srcView;
  if (memorySource) {
    cp.src = src->view;
    srcView = src->view;
  } else {
    std::optional<tile::FragRef> f = toFrag(*src, c.args[1].value->range, dt.space != tile::MemSpace::Local);
    if (!f || !wholeInRegisters(*f, dt, c.args[1].value->range)) return std::nullopt;
    cp.value = *f;
    const tile::FragExpr* leaf = tile::layoutLeaf(*f);
    if (!leaf) {
      diags_.report(kTypeMismatch, c.args[1].value->range,
                    fmt::format("the source of {} must be a tensor or fragment arithmetic; arithmetic on memory "
                                "tensors needs a register fragment among its operands to give the layout",
                                fn));
      return std::nullopt;
    }
    srcView = leaf->part ? *leaf->part : wholeView(leaf->tensor, e.range);
    // Register to register copies move slot i to slot i, which is the element-for-element copy
    // only when both fragments place their elements in the same threads and slots.
    if (dt.space == tile::MemSpace::Local && srcView->shape == dst->view.shape) {
      std::optional<tile::FragRef> d = toFrag(*dst, c.args[0].value->range);
      if (!d || !sameFragmentLayout(e.range, *d, *f)) return std::nullopt;
    }
  }
  // As for an assignment: a float does not become an integer without a conversion (between
  // memories, no type changes: copy-types).
  const tile::DType srcType = cp.src ? k_.tensors[cp.src->tensor].dtype : cp.value->dtype;
  if ((dt.space == tile::MemSpace::Local || !cp.src) && !noFloatIntoInt(dt, srcType, c.args[1].value->range, "source"))
    return std::nullopt;
  if (srcView->shape != dst->view.shape) {
    const bool fragment = dt.space == tile::MemSpace::Local || !cp.src;
    diags_.report(kCopyShape, e.range,
                  fmt::format("{} from shape {} to shape {}{}", fn, shapeText(*srcView), shapeText(dst->view),
                              fragment ? (runtimeShapeHint(*srcView).empty() ? runtimeShapeHint(dst->view)
                                                                             : runtimeShapeHint(*srcView))
                                       : ""));
    return std::nullopt;
  }
  if (async) {
    if (dt.space != tile::MemSpace::Shared || !cp.src || k_.tensors[cp.src->tensor].space != tile::MemSpace::Global) {
      diags_.report(kCopySpaces, e.range, "copy_async copies from global memory to shared memory (cp.async)");
      return std::nullopt;
    }
  }
  if (copyBarrier_) {
    int64_t bytes = tile::dtypeBytes(dt.dtype);
    for (int64_t n : cp.dst.shape) bytes *= n;
    pipelineBytes_ += bytes;
  }
  if (shared) {
    pipelineMulticast_ = true;
    return multicastParts(e, std::move(cp));
  }
  emit(e.range, std::move(cp));
  return Value{};
}

std::optional<std::string> KernelSema::clusterVarying(const tir::ExprRef& e) const {
  if (!e) return std::nullopt;
  using tir::Special;
  auto strip = [](tir::ExprRef x) {
    while (x->kind == tir::ExprKind::Cast) x = x->args[0];
    return x;
  };
  // Block ids along an axis whose cluster extent is c > 1 vary, but not block_id / m or
  // block_id >> s for m (or 2^s) a multiple of c: that is the cluster's place in the grid.
  auto axisOf = [](Special s) { return s == Special::CtaidX ? 0 : s == Special::CtaidY ? 1 : 2; };
  const tir::ExprRef x = strip(e);
  if (x->kind == tir::ExprKind::Binary && (x->bin == tir::BinOp::Div || x->bin == tir::BinOp::Shr)) {
    const tir::ExprRef a = strip(x->args[0]);
    int64_t m = 0;
    if (a->kind == tir::ExprKind::SpecialReg &&
        (a->special == Special::CtaidX || a->special == Special::CtaidY || a->special == Special::CtaidZ) &&
        tir::isIntConst(x->args[1], &m) && m >= 0 && (x->bin == tir::BinOp::Div || m < 62)) {
      const int64_t divisor = x->bin == tir::BinOp::Div ? m : int64_t{1} << m;
      if (divisor > 0 && divisor % k_.skeleton.cluster[static_cast<size_t>(axisOf(a->special))] == 0)
        return std::nullopt;
    }
  }
  switch (x->kind) {
    case tir::ExprKind::SpecialReg:
      switch (x->special) {
        case Special::ClusterRank:
          return std::string("cluster_rank()");
        case Special::CtaidX:
        case Special::CtaidY:
        case Special::CtaidZ: {
          const int axis = axisOf(x->special);
          if (k_.skeleton.cluster[static_cast<size_t>(axis)] == 1) return std::nullopt;
          return fmt::format("block_id.{}", "xyz"[axis]);
        }
        case Special::TidX:
        case Special::TidY:
        case Special::TidZ:
        case Special::LaneId:
        case Special::WarpId:
        case Special::ElectOne:
          return std::string("the thread's id");
        default:
          return std::nullopt;
      }
    case tir::ExprKind::VarRef:
      if (auto let = letValues_.find(x->id); let != letValues_.end()) return clusterVarying(let->second);
      return std::nullopt;
    default:
      for (const tir::ExprRef& a : x->args)
        if (std::optional<std::string> v = clusterVarying(a)) return v;
      return std::nullopt;
  }
}

// A pipeline's copy shared by the cluster's c blocks: the tile is cut into c parts along the first
// dimension that c divides, and the block of rank r loads part r into every block of the cluster,
//   if cluster_rank() == r { copy_async(dst part r, src part r, barrier = full[s], multicast = all) }
// so that each block's barrier receives the whole tile.
std::optional<Value> KernelSema::multicastParts(const ast::Expr& e, tile::Copy cp) {
  const int64_t blocks = k_.skeleton.clusterSize();
  // Along a dimension the cluster size divides, not the source's unit-stride one where another
  // will do: the parts keep TMA's rows whole.
  const tile::Tensor& src = k_.tensors[cp.src->tensor];
  auto unitStride = [&](size_t j) {
    int64_t stride = 0;
    return tir::isIntConst(src.strides[static_cast<size_t>(cp.src->dims[j])], &stride) && stride == 1;
  };
  std::optional<size_t> cut;
  for (size_t j = 0; j < cp.dst.shape.size(); ++j)
    if (cp.dst.shape[j] % blocks == 0 && (!cut || (unitStride(*cut) && !unitStride(j)))) cut = j;
  if (!cut) {
    diags_.report(kBadArgument, e.range,
                  fmt::format("a multicast tile is cut into one part per block of the cluster, along a dimension "
                              "that {} divides; its shape is {}",
                              blocks, shapeText(cp.dst)));
    return std::nullopt;
  }
  for (const tir::ExprRef& o : cp.src->origin)
    if (std::optional<std::string> varying = clusterVarying(o)) {
      diags_.report(kBadArgument, e.range,
                    fmt::format("a multicast tile is the same for every block of the cluster, but this window's "
                                "origin depends on {}, which differs between them",
                                *varying));
      return std::nullopt;
    }
  const size_t d = *cut;
  const int64_t part = cp.dst.shape[d] / blocks;
  cp.multicast = tir::intConst((int64_t{1} << blocks) - 1, tir::Type::I32);
  for (int64_t r = 0; r < blocks; ++r) {
    tile::Copy piece = cp;
    for (tile::View* v : {&piece.dst, &*piece.src}) {
      const int t = v->dims[d];
      v->origin[static_cast<size_t>(t)] =
          tir::add(v->origin[static_cast<size_t>(t)], tir::intConst(r * part, v->origin[static_cast<size_t>(t)]->type));
      v->shape[d] = part;
    }
    tile::If branch{tir::binary(tir::BinOp::Eq, tir::special(tir::Special::ClusterRank), tir::intConst(r, tir::Type::I32)),
                    {}, {}};
    branch.then.push_back(tile::Stmt{e.range, std::move(piece)});
    emit(e.range, std::move(branch));
  }
  return Value{};
}

// View position i of the result is position order[i] of `base`: nothing moves in memory.
std::optional<Value> KernelSema::reordered(SourceRange where, const tile::View& base, const std::vector<int>& order,
                                           const char* spelling) {
  const tile::Tensor& t = k_.tensors[base.tensor];
  if (t.space == tile::MemSpace::Local || t.mbarriers) {
    diags_.report(kTypeMismatch, where,
                  fmt::format("{} reorders the dimensions of a global or shared tensor, but '{}' is {}", spelling,
                              t.name,
                              t.mbarriers ? "an array of mbarriers"
                                          : "a register fragment, whose transpose would give its elements to other "
                                            "threads: store it and read the memory in the order you want"));
    return std::nullopt;
  }
  if (order.size() != base.rank()) {  // only .T gets here with another rank: permute counts its arguments
    diags_.report(kBadArgument, where,
                  fmt::format(".T exchanges the two dimensions of a 2-D view, but this one has {}{}", base.rank(),
                              base.rank() > 2 ? ": permute(...) puts them in any order" : ""));
    return std::nullopt;
  }
  tile::View v = base;
  v.loc = where;
  for (size_t i = 0; i < order.size(); ++i) {
    v.dims[i] = base.dims[static_cast<size_t>(order[i])];
    v.shape[i] = base.shape[static_cast<size_t>(order[i])];
  }
  return Value::ofView(std::move(v));
}

std::optional<Value> KernelSema::permute(const ast::Expr& e, const ast::Call& c, const tile::View& base) {
  const size_t rank = base.rank();
  if (c.args.size() != rank) {
    diags_.report(kBadArgument, e.range,
                  fmt::format("permute takes each of the view's {} dimensions once, in their new order, but is given "
                              "{}",
                              rank, c.args.size()));
    return std::nullopt;
  }
  std::vector<int> order;
  std::vector<bool> seen(rank, false);
  for (const ast::Arg& a : c.args) {
    if (!a.name.empty()) {
      diags_.report(kBadArgument, a.value->range, "permute takes dimensions by position, without names");
      return std::nullopt;
    }
    std::optional<int64_t> d = constInt(*a.value, "a dimension of permute");
    if (!d) return std::nullopt;
    if (*d < 0 || static_cast<size_t>(*d) >= rank) {
      diags_.report(kBadArgument, a.value->range,
                    fmt::format("dimension {} is outside this {}-D view (0 to {})", *d, rank, rank - 1));
      return std::nullopt;
    }
    if (seen[static_cast<size_t>(*d)]) {
      diags_.report(kBadArgument, a.value->range,
                    fmt::format("dimension {} is given twice; permute takes each dimension once", *d));
      return std::nullopt;
    }
    seen[static_cast<size_t>(*d)] = true;
    order.push_back(static_cast<int>(*d));
  }
  return reordered(e.range, base, order, "permute");
}

std::optional<Value> KernelSema::method(const ast::Expr& e, const ast::Call& c, const ast::Member& m) {
  std::optional<Value> base = expr(*m.base);
  if (!base) return std::nullopt;
  if (base->kind == Value::Kind::View) {
    if (m.name == "window") return window(e, c, base->view);
    if (m.name == "view") return slotView(e, c, base->view);
    if (m.name == "permute") return permute(e, c, base->view);
    if (m.name == "coord") return coordCall(e, c, base->view);
    diags_.report(kUnknownName, m.nameRange, fmt::format("{} has no method '{}'", describe(*base), m.name))
        .note(m.nameRange, "a tensor's methods are window(...), view(...), permute(...) and, for a register "
                           "fragment, coord(...); .T is its transpose");
    return std::nullopt;
  }
  if (base->kind == Value::Kind::Mma && m.name == "zero_c") {
    if (!c.args.empty()) {
      diags_.report(kBadArgument, e.range, "zero_c() takes no arguments");
      return std::nullopt;
    }
    return zeroC(e, base->mma);
  }
  diags_.report(kUnknownName, m.nameRange, fmt::format("{} has no method '{}'", describe(*base), m.name));
  return std::nullopt;
}

ExprRef roundedUp(const ExprRef& q, const ExprRef& r) {
  const ExprRef up = tir::select(tir::binary(tir::BinOp::Gt, r, tir::intConst(0, r->type)), tir::intConst(1, q->type),
                                 tir::intConst(0, q->type));
  return tir::add(q, up);
}

ExprRef KernelSema::threadIndex() const {
  using S = tir::Special;
  const auto& b = k_.skeleton.block;
  if (b[1] == 1 && b[2] == 1) return tir::special(S::TidX);
  ExprRef t = tir::special(S::TidX);
  t = tir::add(t, tir::mul(tir::special(S::TidY), tir::intConst(b[0])));
  return tir::add(t, tir::mul(tir::special(S::TidZ), tir::intConst(b[0] * b[1])));
}

std::optional<Value> KernelSema::call(const ast::Expr& e, const ast::Call& c) {
  if (const auto* m = c.callee->as<ast::Member>()) return method(e, c, *m);
  const auto* callee = c.callee->as<ast::Name>();
  if (!callee) return constExpr(e);  // Swizzle(...)(layout)
  const std::string& fn = callee->name;
  // Calling a tiled MMA runs it: mma(acc, a, b).
  if (Binding* b = lookup(fn); b && b->poisoned) return std::nullopt;
  if (Binding* b = lookup(fn); b && b->value.kind == Value::Kind::Mma) return mmaCall(e, c, b->value.mma);
  auto noArgs = [&]() {
    if (!c.args.empty()) {
      diags_.report(kBadArgument, e.range, fmt::format("{}() takes no arguments", fn));
      return false;
    }
    return true;
  };
  // Operations that emit statements belong to a kernel body, not to its parameters or
  // launch clause.
  static const std::set<std::string, std::less<>> kBodyOnly = {
      "alloc_local", "alloc_shared", "copy", "store", "copy_async", "barrier", "commit_copies", "wait_copies",
      "alloc_barriers", "init_barriers", "arrive", "wait_barrier", "elect_one", "increase_registers",
      "decrease_registers", "store_async", "commit_stores", "wait_stores", "wait_mmas", "cluster_rank", "cluster_barrier"};
  if (out_.empty() && kBodyOnly.count(fn)) {
    diags_.report(kNotConstant, e.range, fmt::format("{}() can only be called in a kernel body", fn));
    return std::nullopt;
  }
  using S = tir::Special;
  if (fn == "lane_id") return noArgs() ? std::optional(Value::runtime(tir::special(S::LaneId))) : std::nullopt;
  if (fn == "warp_id") return noArgs() ? std::optional(Value::runtime(tir::special(S::WarpId))) : std::nullopt;
  if (fn == "warpgroup_id") {
    if (!noArgs()) return std::nullopt;
    return Value::runtime(tir::binary(tir::BinOp::Shr, tir::special(S::WarpId), tir::intConst(2, tir::Type::I32)));
  }
  // The device's multiprocessor count, which the launcher reads: for the grid of a persistent kernel.
  if (fn == "sm_count") {
    if (!noArgs()) return std::nullopt;
    if (!out_.empty() || !blockKnown_) {
      diags_.report(kBadArgument, e.range,
                    "sm_count() is the device's SM count, which the launcher reads: use it in the launch clause's "
                    "grid (a thread reads the grid's size as grid_dim)");
      return std::nullopt;
    }
    return Value::runtime(tir::special(S::SmCount));
  }
  if (fn == "cluster_rank") return noArgs() ? std::optional(Value::runtime(tir::special(S::ClusterRank))) : std::nullopt;
  if (fn == "cluster_barrier") {
    if (!noArgs()) return std::nullopt;
    emit(e.range, tile::Barrier{true});
    return Value{};
  }
  // elect.sync: true in one lane of the warp, which must run it whole.
  if (fn == "elect_one") return noArgs() ? std::optional(Value::runtime(tir::special(S::ElectOne))) : std::nullopt;
  if (fn == "increase_registers" || fn == "decrease_registers")
    return setMaxRegisters(e, c, fn == "increase_registers");
  if (fn == "thread_index") return noArgs() ? std::optional(Value::runtime(threadIndex())) : std::nullopt;
  if (fn == "persistent_grid") return persistentGrid(e, c);
  if (fn == "alloc_local") return allocLocal(e, c);
  if (fn == "alloc_shared") return allocShared(e, c);
  if (fn == "alloc_barriers") return allocBarriers(e, c);
  if (fn == "init_barriers" || fn == "arrive" || fn == "wait_barrier") return barrierOp(e, c, fn);
  if (fn == "copy" || fn == "store") return copy(e, c, false);
  if (fn == "copy_async") return copy(e, c, true);
  if (fn == "barrier") return blockBarrier(e, c);
  if (fn == "store_async") return storeAsync(e, c);
  if (fn == "commit_stores") {
    if (!noArgs()) return std::nullopt;
    emit(e.range, tile::CommitStores{});
    return Value{};
  }
  if (fn == "wait_stores") {
    std::optional<int> n = pendingGroups(e, c, "wait_stores", "store groups that may still read");
    if (!n) return std::nullopt;
    emit(e.range, tile::WaitStores{*n});
    return Value{};
  }
  if (fn == "wait_mmas") {
    std::optional<int> n = pendingGroups(e, c, "wait_mmas", "MMA groups that may stay in flight", 7);
    if (!n) return std::nullopt;
    emit(e.range, tile::WaitMmas{*n});
    return Value{};
  }
  if (fn == "commit_copies") {
    if (!noArgs()) return std::nullopt;
    emit(e.range, tile::CommitCopies{});
    return Value{};
  }
  if (fn == "wait_copies") {
    std::optional<int> n = pendingGroups(e, c, "wait_copies", "copy groups that may stay in flight");
    if (!n) return std::nullopt;
    emit(e.range, tile::WaitCopies{*n});
    return Value{};
  }
  // Conversions and elementwise functions on scalars and fragments.
  // A type parameter converts to the type it stands for, unless a local name shadows it.
  std::optional<tile::DType> castTo = tile::dtypeFromName(fn);
  if (auto it = typeArgs_.find(fn); it != typeArgs_.end() && !lookup(fn)) castTo = it->second;
  // relu and the math functions: f32 in, f32 out.
  static const std::map<std::string, tir::UnOp, std::less<>> kMath = {
      {"relu", tir::UnOp::Relu},          {"abs", tir::UnOp::Abs},
      {"sqrt", tir::UnOp::Sqrt},          {"rsqrt", tir::UnOp::Rsqrt},
      {"exp2", tir::UnOp::Exp2},          {"exp", tir::UnOp::Exp},
      {"log2", tir::UnOp::Log2},          {"log", tir::UnOp::Log},
      {"fast_sqrt", tir::UnOp::FastSqrt}, {"fast_rsqrt", tir::UnOp::FastRsqrt},
      {"fast_exp2", tir::UnOp::FastExp2}, {"fast_exp", tir::UnOp::FastExp},
      {"fast_log2", tir::UnOp::FastLog2}, {"fast_log", tir::UnOp::FastLog}};
  const auto mathIt = kMath.find(fn);
  const tir::UnOp* math = mathIt == kMath.end() ? nullptr : &mathIt->second;
  if (castTo || math || fn == "min" || fn == "max" || fn == "cdiv") {
    size_t arity = (castTo || math) ? 1 : 2;
    if (c.args.size() != arity) {
      diags_.report(kBadArgument, e.range, fmt::format("{} takes {} argument{}", fn, arity, arity == 1 ? "" : "s"));
      return std::nullopt;
    }
    std::vector<Value> args;
    bool allConst = true, anyFrag = false;
    for (const ast::Arg& a : c.args) {
      if (!a.name.empty()) {
        diags_.report(kBadArgument, a.nameRange, fmt::format("{} takes no keyword arguments", fn));
        return std::nullopt;
      }
      std::optional<Value> v = expr(*a.value);
      if (!v) return std::nullopt;
      allConst &= v->kind == Value::Kind::Const;
      anyFrag |= v->kind == Value::Kind::Frag || v->kind == Value::Kind::View;
      args.push_back(std::move(*v));
    }
    // log2 of a compile-time integer is the exponent of a power of two (ConstEval).
    if (allConst && !castTo && (!math || fn == "log2")) return constExpr(e);
    if (anyFrag) {
      tile::FragExpr f;
      std::optional<tile::FragRef> a0 = toFrag(args[0], c.args[0].value->range, true);
      if (!a0) return std::nullopt;
      f.a = *a0;
      f.dtype = (*a0)->dtype;
      if (castTo) {
        f.kind = tile::FragExpr::Kind::Cast;
        f.dtype = *castTo;
      } else if (math) {
        f.kind = tile::FragExpr::Kind::Unary;
        f.un = *math;
        f.dtype = tile::DType::F32;
      } else if (fn == "min" || fn == "max") {
        std::optional<tile::FragRef> a1 = toFrag(args[1], c.args[1].value->range, true);
        if (!a1 || !alignFragments(e.range, *a0, *a1)) return std::nullopt;
        return fragBinary(fn == "min" ? tir::BinOp::Min : tir::BinOp::Max, *a0, *a1);
      } else {
        diags_.report(kTypeMismatch, e.range, "cdiv works on integers, not fragments");
        return std::nullopt;
      }
      Value v;
      v.kind = Value::Kind::Frag;
      v.frag = std::make_shared<const tile::FragExpr>(std::move(f));
      return v;
    }
    std::optional<ExprRef> a = toScalar(args[0], c.args[0].value->range, std::nullopt);
    if (!a) return std::nullopt;
    if (castTo) return Value::runtime(tir::cast(tile::toTir(*castTo), *a));
    if (math) return Value::runtime(tir::unary(*math, tir::cast(Type::F32, *a)));
    std::optional<ExprRef> b = toScalar(args[1], c.args[1].value->range, std::nullopt);
    if (!b) return std::nullopt;
    if (fn == "cdiv") {
      if (tir::isFloat((*a)->type) || tir::isFloat((*b)->type)) {
        diags_.report(kTypeMismatch, e.range, "cdiv works on integers");
        return std::nullopt;
      }
      // a / b rounded up, as a / b + (a % b > 0): (a + b - 1) / b would overflow for an a
      // near the type's largest value.
      std::optional<ExprRef> q = arith(tir::BinOp::Div, *a, *b, e.range);
      std::optional<ExprRef> r = q ? arith(tir::BinOp::Rem, *a, *b, e.range) : std::nullopt;
      if (!r) return std::nullopt;
      return Value::runtime(roundedUp(*q, *r));
    }
    std::optional<ExprRef> r = arith(fn == "min" ? tir::BinOp::Min : tir::BinOp::Max, *a, *b, e.range);
    if (!r) return std::nullopt;
    return Value::runtime(*r);
  }
  if (fn == "range" || fn == "unroll" || fn == "tiles") {
    diags_.report(kBadArgument, e.range, fmt::format("{}(...) is only used as the iterable of a for loop", fn));
    return std::nullopt;
  }
  if (fn == "ComposeLayout" || fn == "Swizzle" || fn == "compose" || fn == "TileLayout" || fn == "log2")
    return constExpr(e);
  if (fn == "mma_m16n8k16") return mmaAtom(e, c);
  if (fn == "tiled_mma") return tiledMma(e, c);
  if (fn == "warpgroup_mma") return warpgroupMma(e, c);
  if (int64_t n = 0; fn.starts_with("wgmma_m64n") && fn.ends_with("k16") &&
                     std::sscanf(fn.c_str(), "wgmma_m64n%" SCNd64 "k16", &n) == 1 &&
                     fn == fmt::format("wgmma_m64n{}k16", n))
    return wgmmaAtom(e, c, n);
  if (fn == "load_a" || fn == "load_b") return loadOperand(e, c, fn == "load_a");
  if (fn == "reduce") return reduceCall(e, c);
  if (fn == "where") return whereCall(e, c);
  if (Binding* b = lookup(fn)) {
    diags_.report(kUnknownName, c.callee->range, fmt::format("'{}' is {}, not a function", fn, describe(b->value)));
    return std::nullopt;
  }
  // A misspelled builtin gets its name; anything else, where the builtins are listed.
  if (std::optional<std::string> near = closestBuiltin(fn)) {
    diags_.report(kUnknownName, c.callee->range, fmt::format("unknown function '{}'; did you mean '{}'?", fn, *near));
  } else {
    diags_.report(kUnknownName, c.callee->range, fmt::format("unknown function '{}'", fn))
        .note(c.callee->range,
              "the builtin functions on scalars are min, max, cdiv, where, relu, abs, sqrt, rsqrt, exp2, exp, log2, log (and "
              "fast_sqrt, ..., fast_log), the conversions f32, f16, bf16, i32, "
              "i64, and the ids (lane_id, warp_id, warpgroup_id, thread_index); the others allocate, copy, "
              "synchronize and multiply tiles (docs/language.md lists them all)");
  }
  return std::nullopt;
}

namespace {

// Edits between two names (insertions, deletions, substitutions and swaps of neighbours: 'cidv'
// is one from 'cdiv'), for names of a few dozen characters.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> KernelSema::closestBuiltin(std::string_view fn) {
  static const char* const kBuiltins[] = {
      "abs", "alloc_barriers", "alloc_local", "alloc_shared", "arrive", "barrier", "bf16", "cdiv", "cluster_barrier",
      "cluster_rank", "commit_copies", "commit_stores", "copy", "copy_async", "decrease_registers", "elect_one",
      "exp", "exp2", "f16", "f32", "fast_exp", "fast_exp2", "fast_log", "fast_log2", "fast_rsqrt", "fast_sqrt", "i32",
      "i64", "increase_registers", "init_barriers", "lane_id", "load_a", "load_b", "log", "log2", "max", "min",
      "mma_m16n8k16", "persistent_grid", "range", "reduce", "relu", "rsqrt", "sm_count", "sqrt", "store",
      "store_async", "thread_index", "tiled_mma", "tiles", "unroll", "wait_barrier", "wait_copies", "wait_mmas",
      "wait_stores", "warp_id", "warpgroup_id", "where", "warpgroup_mma", "ComposeLayout", "Swizzle"};
  // One edit in a short name, two in a longer one: 'sum' is not 'min'.
  const size_t limit = fn.size() <= 4 ? 1 : 2;
  std::optional<std::string> best;
  size_t bestDistance = limit + 1;
  for (const char* b : kBuiltins)
    if (const size_t d = editDistance(fn, b); d < bestDistance) {
      best = b;
      bestDistance = d;
    }
  return best;
}

}  // namespace sema
}  // namespace tyl
