#include "ir/layout/Transforms.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <tuple>

#include "ir/layout/CheckedMath.h"

namespace tyl::layout {
namespace {

// ---- Validation ------------------------------------------------------------------

void checkIterExtents(const std::vector<Iter>& iters, const char* kind) {
  for (const Iter& it : iters)
    if (it.extent <= 0) throw Error(fmt::format("{} iter extent {} must be positive", kind, it.extent));
}

void checkTile(const TileLayout& tile) {
  checkIterExtents(tile.shard, "shard");
  checkIterExtents(tile.replica, "replica");
}

void checkShape(std::span<const int64_t> shape, const char* what) {
  for (int64_t e : shape)
    if (e <= 0) throw Error(fmt::format("{} {} has a non-positive extent", what, shapeToString(shape)));
}

void checkShapeMatches(const TileLayout& tile, std::span<const int64_t> shape, const char* what) {
  checkShape(shape, what);
  int64_t size = tile.size();
  int64_t shapeElems = shapeSize(shape);
  if (shapeElems != size)
    throw Error(fmt::format("{} {} has {} elements but the layout {} has {}", what, shapeToString(shape),
                            shapeElems, toString(tile), size));
}

// ---- Canonicalization steps ------------------------------------------------------

std::vector<Iter> withoutUnitIters(const std::vector<Iter>& iters) {
  std::vector<Iter> kept;
  for (const Iter& it : iters)
    if (it.extent != 1) kept.push_back(it);
  return kept;
}

PhysCoord withoutZeroOffsets(const PhysCoord& offset) {
  PhysCoord kept;
  offset.forEach([&](Axis a, int64_t v) {
    if (v != 0) kept.set(a, v);
  });
  return kept;
}

// `outer` then `inner` walk one run when the outer step is exactly one full sweep of
// the inner iter. A product that overflows cannot equal a representable stride, so it
// simply does not fuse (the layout itself may still be valid: (e-1)*s can fit while
// e*s does not).
bool contiguous(const Iter& outer, const Iter& inner) {
  if (outer.axis != inner.axis) return false;
  int64_t sweep;
  if (__builtin_mul_overflow(inner.extent, inner.stride, &sweep)) return false;
  return outer.stride == sweep;
}

std::vector<Iter> fuseContiguous(const std::vector<Iter>& iters) {
  std::vector<Iter> fused;
  for (const Iter& it : iters) {
    if (!fused.empty() && contiguous(fused.back(), it)) {
      // (a, b) with a's step one sweep of b is the single iter a*b with b's step.
      fused.back() = Iter{checkedMul(fused.back().extent, it.extent), it.stride, it.axis};
    } else {
      fused.push_back(it);
    }
  }
  return fused;
}

void sortReplicas(std::vector<Iter>& replicas) {
  std::stable_sort(replicas.begin(), replicas.end(), [](const Iter& a, const Iter& b) {
    return std::tuple(static_cast<int>(a.axis), a.stride, a.extent) <
           std::tuple(static_cast<int>(b.axis), b.stride, b.extent);
  });
}

// ---- Grouping --------------------------------------------------------------------

struct Grouping {
  std::vector<Iter> shard;
  std::vector<size_t> bounds;
};

// Walks the iters outermost first, handing each dimension (outermost first) iters
// until their extents multiply to its extent. An iter straddling a boundary is split:
// its outer part (the larger stride) finishes the earlier dimension. Extent-1
// dimensions own an empty run. Expects no unit iters. Fails (nullopt) when a boundary
// falls where neither extent divides the other.
std::optional<Grouping> tryGroup(const std::vector<Iter>& shard, std::span<const int64_t> shape) {
  Grouping g;
  g.bounds.push_back(0);
  size_t dim = 0;
  int64_t need = shape.empty() ? 1 : shape[0];
  auto closeFinishedDims = [&] {
    while (dim < shape.size() && need == 1) {
      g.bounds.push_back(g.shard.size());
      ++dim;
      need = dim < shape.size() ? shape[dim] : 1;
    }
  };
  closeFinishedDims();
  for (Iter it : shard) {
    while (it.extent > 1) {
      if (dim == shape.size()) return std::nullopt;
      if (need % it.extent == 0) {
        g.shard.push_back(it);
        need /= it.extent;
        it.extent = 1;
      } else if (it.extent % need == 0) {
        int64_t rest = it.extent / need;
        g.shard.push_back(Iter{need, checkedMul(it.stride, rest), it.axis});
        it.extent = rest;
        need = 1;
      } else {
        return std::nullopt;
      }
      closeFinishedDims();
    }
  }
  if (dim != shape.size()) return std::nullopt;
  return g;
}

// ---- Tiling ----------------------------------------------------------------------

// Scales every iter by the inner layout's span on its axis: one step of the outer
// layout moves past a whole inner tile.
std::vector<Iter> scaledBySpan(const std::vector<Iter>& iters, const TileLayout& inner) {
  std::vector<Iter> scaled = iters;
  for (Iter& it : scaled) it.stride = checkedMul(it.stride, span(inner, it.axis));
  return scaled;
}

void checkSameRank(size_t a, size_t b, const char* what) {
  if (a != b) throw Error(fmt::format("{}: ranks differ ({} vs {})", what, a, b));
}

}  // namespace

// ---- canonicalize ----------------------------------------------------------------

TileLayout canonicalize(const TileLayout& layout) {
  checkTile(layout);
  TileLayout result;
  result.shard = fuseContiguous(withoutUnitIters(layout.shard));
  result.replica = withoutUnitIters(layout.replica);
  sortReplicas(result.replica);
  result.offset = withoutZeroOffsets(layout.offset);
  return result;
}

Layout canonicalize(const Layout& layout) {
  Layout result{canonicalize(layout.tile)};
  result.swizzle = layout.swizzle;
  return result;
}

// ---- group -----------------------------------------------------------------------

Grouped group(const Layout& layout, std::span<const int64_t> shape) {
  checkTile(layout.tile);
  checkShapeMatches(layout.tile, shape, "group shape");
  // Keep the caller's iters where possible (only unit iters go); fall back to fused
  // iters, which can be split at boundaries the original iters straddle unevenly, e.g.
  // S[(4, 6):(6, 1)] grouped by (6, 4) becomes S[(6, 4):(4, 1)]. Only the shard changes.
  TileLayout base = layout.tile;
  base.shard = withoutUnitIters(base.shard);
  std::optional<Grouping> g = tryGroup(base.shard, shape);
  if (!g) {
    base.shard = fuseContiguous(base.shard);
    g = tryGroup(base.shard, shape);
  }
  if (!g)
    throw Error(
        fmt::format("layout {} cannot be grouped by shape {}: a dimension boundary splits an iter "
                    "whose extent does not divide evenly",
                    toString(layout), shapeToString(shape)));
  base.shard = std::move(g->shard);
  Layout grouped{std::move(base)};
  grouped.swizzle = layout.swizzle;
  return Grouped{std::move(grouped), std::move(g->bounds)};
}

// ---- reduceDims ------------------------------------------------------------------

Layout reduceDims(const Layout& layout, std::span<const int64_t> shape, std::span<const size_t> dims) {
  if (layout.swizzle) throw Error(fmt::format("the swizzled layout {} cannot be reduced", toString(layout)));
  for (size_t d : dims)
    if (d >= shape.size())
      throw Error(fmt::format("dimension {} is not one of the {} of shape {}", d, shape.size(), shapeToString(shape)));
  const Grouped g = group(layout, shape);
  TileLayout out;
  out.replica = g.layout.tile.replica;
  out.offset = g.layout.tile.offset;
  for (size_t d = 0; d + 1 < g.bounds.size(); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    for (size_t i = g.bounds[d]; i < g.bounds[d + 1]; ++i) {
      const Iter& it = g.layout.tile.shard[i];
      if (!reduced)
        out.shard.push_back(it);
      else if (it.axis != Axis::m)
        out.replica.push_back(it);
    }
  }
  // The slots left, renumbered densely: a mixed radix over the m iters in stride order, which is
  // one-to-one as the original m iters were (they alone separate the elements of one thread).
  // Replicas on m (never those of a fragment) keep the strides they were placed among.
  const bool mReplicas = std::any_of(out.replica.begin(), out.replica.end(), [](const Iter& it) { return it.axis == Axis::m; });
  if (mReplicas) return Layout{canonicalize(out)};
  std::vector<Iter*> slots;
  for (Iter& it : out.shard)
    if (it.axis == Axis::m) slots.push_back(&it);
  std::stable_sort(slots.begin(), slots.end(), [](const Iter* a, const Iter* b) { return a->stride < b->stride; });
  int64_t stride = 1;
  for (Iter* it : slots) {
    it->stride = stride;
    stride = checkedMul(stride, it->extent);
  }
  out.offset.erase(Axis::m);
  return Layout{canonicalize(out)};
}

// ---- tile ------------------------------------------------------------------------

TileLayout tile(const TileLayout& inner, const TileLayout& outer, std::span<const int64_t> outerShape,
                std::span<const int64_t> innerShape) {
  checkSameRank(outerShape.size(), innerShape.size(), "tile: outer and inner shapes");
  Grouped in = group(Layout{canonicalize(inner)}, innerShape);
  Grouped out = group(Layout{canonicalize(outer)}, outerShape);
  const TileLayout& innerTile = in.layout.tile;
  const TileLayout& outerTile = out.layout.tile;
  // The result's extents must be representable, even though only their product is used.
  for (size_t d = 0; d < innerShape.size(); ++d) checkedMul(outerShape[d], innerShape[d]);

  std::vector<Iter> outerShard = scaledBySpan(outerTile.shard, innerTile);
  TileLayout result;
  for (size_t d = 0; d < innerShape.size(); ++d) {
    // The outer part of each dimension is the slower-varying one.
    result.shard.insert(result.shard.end(), outerShard.begin() + out.bounds[d],
                        outerShard.begin() + out.bounds[d + 1]);
    result.shard.insert(result.shard.end(), innerTile.shard.begin() + in.bounds[d],
                        innerTile.shard.begin() + in.bounds[d + 1]);
  }
  // Outer replicas are in units of whole inner tiles, like the outer shard.
  result.replica = innerTile.replica;
  for (const Iter& it : scaledBySpan(outerTile.replica, innerTile)) result.replica.push_back(it);
  result.offset = innerTile.offset;
  result.offset.addAll(outerTile.offset);
  return canonicalize(result);
}

TileLayout tileTo(const TileLayout& inner, std::span<const int64_t> toShape,
                  std::span<const int64_t> curShape) {
  checkSameRank(toShape.size(), curShape.size(), "tile_to: target and current shapes");
  checkShape(toShape, "tile_to target shape");
  checkShape(curShape, "tile_to current shape");
  Shape outerShape(toShape.size());
  for (size_t d = 0; d < toShape.size(); ++d) {
    if (toShape[d] % curShape[d] != 0)
      throw Error(fmt::format("tile_to: target shape {} is not a multiple of the current shape {}",
                              shapeToString(toShape), shapeToString(curShape)));
    outerShape[d] = toShape[d] / curShape[d];
  }
  return tile(inner, TileLayout::rowMajor(outerShape), outerShape, curShape);
}

// ---- permute ---------------------------------------------------------------------

Layout permute(const Layout& layout, std::span<const int64_t> shape, std::span<const int64_t> perm) {
  checkSameRank(shape.size(), perm.size(), "permute: shape and permutation");
  std::vector<bool> used(shape.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(shape.size()) || used[static_cast<size_t>(p)])
      throw Error(fmt::format("permute: {} is not a permutation of the {} dimensions", shapeToString(perm),
                              shape.size()));
    used[static_cast<size_t>(p)] = true;
  }
  // Once every dimension owns its own iters, permuting dimensions is permuting runs.
  Grouped g = group(layout, shape);
  Layout result = g.layout;
  result.tile.shard.clear();
  for (int64_t p : perm) {
    auto d = static_cast<size_t>(p);
    result.tile.shard.insert(result.tile.shard.end(), g.layout.tile.shard.begin() + g.bounds[d],
                             g.layout.tile.shard.begin() + g.bounds[d + 1]);
  }
  return result;
}

// ---- storage ---------------------------------------------------------------------

TileLayout storage(const TileLayout& layout) {
  TileLayout result;
  for (const Iter& it : layout.shard)
    if (isMemoryAxis(it.axis)) result.shard.push_back(it);
  for (const Iter& it : layout.replica)
    if (isMemoryAxis(it.axis)) result.replica.push_back(it);
  result.offset = layout.offset.project(memoryAxesMask());
  return result;
}

// ---- Window ----------------------------------------------------------------------

Window Window::make(Layout parent, Shape parentShape, Shape origin, Shape shape) {
  checkSameRank(parentShape.size(), origin.size(), "window: parent shape and origin");
  checkSameRank(parentShape.size(), shape.size(), "window: parent shape and window shape");
  checkShapeMatches(parent.tile, parentShape, "window parent shape");
  checkShape(shape, "window shape");
  for (size_t d = 0; d < shape.size(); ++d) {
    if (origin[d] < 0 || checkedAdd(origin[d], shape[d]) > parentShape[d])
      throw Error(fmt::format("window at origin {} with shape {} does not fit inside the parent shape {}",
                              shapeToString(origin), shapeToString(shape), shapeToString(parentShape)));
  }
  return Window{std::move(parent), std::move(parentShape), std::move(origin), std::move(shape)};
}

Window Window::window(Shape subOrigin, Shape subShape) const {
  checkSameRank(shape.size(), subOrigin.size(), "window: window shape and origin");
  checkSameRank(shape.size(), subShape.size(), "window: window shape and sub-window shape");
  checkShape(subShape, "window shape");
  for (size_t d = 0; d < shape.size(); ++d) {
    if (subOrigin[d] < 0 || checkedAdd(subOrigin[d], subShape[d]) > shape[d])
      throw Error(fmt::format("window at origin {} with shape {} does not fit inside the window shape {}",
                              shapeToString(subOrigin), shapeToString(subShape), shapeToString(shape)));
  }
  Shape nested(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) nested[d] = checkedAdd(origin[d], subOrigin[d]);
  return make(parent, parentShape, std::move(nested), std::move(subShape));
}

Shape Window::parentCoord(std::span<const int64_t> coord) const {
  checkSameRank(shape.size(), coord.size(), "window: shape and coordinate");
  Shape result(coord.size());
  for (size_t d = 0; d < coord.size(); ++d) {
    if (coord[d] < 0 || coord[d] >= shape[d])
      throw Error(fmt::format("coordinate {} is outside the window shape {}", shapeToString(coord),
                              shapeToString(shape)));
    result[d] = checkedAdd(origin[d], coord[d]);
  }
  return result;
}

PhysCoord Window::apply(std::span<const int64_t> coord) const {
  return layout::apply(parent, parentCoord(coord), parentShape);
}

std::vector<PhysCoord> Window::applyAll(std::span<const int64_t> coord) const {
  return layout::applyAll(parent, parentCoord(coord), parentShape);
}

}  // namespace tyl::layout
