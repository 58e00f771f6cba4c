// Operations that build new layouts from old ones. Each preserves the mapping it
// documents; the exhaustive tests in tests/unit check every one against its definition.
#pragma once

#include <span>
#include <vector>

#include "ir/layout/Layout.h"

namespace tyl::layout {

// Drops unit iters and zero offsets, fuses neighbouring shard iters on the same axis
// that are row-major contiguous (outer.stride == inner.extent * inner.stride), and
// sorts replica iters. The mapping over any shape of the same size is unchanged.
Layout canonicalize(const Layout& layout);
TileLayout canonicalize(const TileLayout& layout);

// A layout split so that each dimension of `shape` owns a contiguous run of shard
// iters; `bounds[d]..bounds[d+1]` are the iters of dimension d (bounds has rank+1
// entries). Iters are split where a dimension boundary falls inside one. Throws when
// the shard cannot be grouped by `shape`.
struct Grouped {
  Layout layout;
  std::vector<size_t> bounds;
};
Grouped group(const Layout& layout, std::span<const int64_t> shape);

// Blocked product: every dimension d of the result has extent outerShape[d] *
// innerShape[d]; coordinate c splits into an outer part c / innerShape[d] mapped by
// `outer` and an inner part c % innerShape[d] mapped by `inner`. Outer strides are
// scaled by the inner layout's span on the same axis. Replicas are concatenated (inner
// first) and offsets summed. The result is canonicalized.
TileLayout tile(const TileLayout& inner, const TileLayout& outer, std::span<const int64_t> outerShape,
                std::span<const int64_t> innerShape);
// tile() with a row-major outer layout over toShape / curShape.
TileLayout tileTo(const TileLayout& inner, std::span<const int64_t> toShape,
                  std::span<const int64_t> curShape);

// The layout over the permuted shape (new dimension i is old dimension perm[i]).
Layout permute(const Layout& layout, std::span<const int64_t> shape, std::span<const int64_t> perm);

// The layout of a reduction over dimensions `dims` of a register fragment (shape`, layout): the
// result has extent 1 in those dimensions. Their iters on thread axes become replicas (every
// thread that held part of a row holds the row's result), their iters on `m` go (a thread
// combines those slots), and the remaining `m` iters are renumbered densely, in the order of
// their strides (unless a replica lies on `m`). Throws for a swizzled layout or one that cannot
// be grouped by `shape`.
Layout reduceDims(const Layout& layout, std::span<const int64_t> shape, std::span<const size_t> dims);

// Keeps only memory-axis iters and offsets: what one thread stores.
TileLayout storage(const TileLayout& layout);

// A rectangular view of a parent layout. It keeps the parent's mapping and origin:
// element c of the window is element origin + c of the parent, so a window into a
// swizzled tile keeps the swizzle phase of the allocation.
struct Window {
  Layout parent;
  Shape parentShape;
  Shape origin;
  Shape shape;

  // Checks that the window lies inside the parent.
  static Window make(Layout parent, Shape parentShape, Shape origin, Shape shape);
  // A window of this window: origins add, the parent stays the allocation.
  Window window(Shape origin, Shape shape) const;

  PhysCoord apply(std::span<const int64_t> coord) const;
  std::vector<PhysCoord> applyAll(std::span<const int64_t> coord) const;
  Shape parentCoord(std::span<const int64_t> coord) const;
};

}  // namespace tyl::layout
