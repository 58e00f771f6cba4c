// TileLayout: where each element of a logical tensor lives.
//
// A layout maps a logical coordinate to a point on named physical axes (Axis.h):
//   S[(e0, e1, ...) : (s0, s1, ...)]   shard iters: the distinct placement of elements
//   R[(r0, ...) : (t0, ...)]           replica iters: where copies of every element live
//   + n@axis                           fixed offsets, summed per axis
// optionally followed by an XOR swizzle of the `m` axis (ComposeLayout).
//
// Evaluation is row-major: a logical coordinate over the tensor shape is flattened
// row-major, then split over the shard extents with the LAST iter fastest (the first
// iter takes the undivided quotient). Each axis receives the sum of coord_i * stride_i
// over the iters on it, plus its offset. Replicas add r * stride for every r in the
// row-major product of the replica iters.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/layout/Axis.h"
#include "ir/layout/Error.h"

namespace tyl::layout {

using Shape = std::vector<int64_t>;

// One iter: `extent` positions, each step adding `stride` on `axis`.
struct Iter {
  int64_t extent = 1;
  int64_t stride = 1;
  Axis axis = Axis::m;

  friend bool operator==(const Iter&, const Iter&) = default;
};

// A point on the physical axes: a value for every axis that is present.
class PhysCoord {
 public:
  PhysCoord() = default;

  // Adds `value` to `axis` (overflow-checked) and marks the axis present.
  void add(Axis axis, int64_t value);
  void set(Axis axis, int64_t value);
  void erase(Axis axis);
  void addAll(const PhysCoord& other);

  bool has(Axis axis) const { return (present_ >> static_cast<int>(axis)) & 1u; }
  // The value on `axis`, 0 when the axis is absent.
  int64_t operator[](Axis axis) const { return values_[static_cast<int>(axis)]; }
  bool empty() const { return present_ == 0; }
  uint32_t axesMask() const { return present_; }
  // The coordinate restricted to the axes in `mask`; absent axes stay absent.
  PhysCoord project(uint32_t mask) const;

  // Calls f(axis, value) for each present axis, in axis order.
  template <class F>
  void forEach(F&& f) const {
    for (uint32_t rest = present_; rest != 0; rest &= rest - 1) {
      const int i = std::countr_zero(rest);
      f(static_cast<Axis>(i), values_[i]);
    }
  }

  size_t hash() const;
  friend bool operator==(const PhysCoord& a, const PhysCoord& b) {
    return a.present_ == b.present_ && a.values_ == b.values_;
  }

 private:
  std::array<int64_t, kAxisCount> values_{};
  uint32_t present_ = 0;
};

inline uint32_t axisBit(Axis a) { return 1u << static_cast<int>(a); }
uint32_t threadAxesMask();
uint32_t memoryAxesMask();

// The affine part of a layout: shard iters, replica iters, offsets.
struct TileLayout {
  std::vector<Iter> shard;
  std::vector<Iter> replica;
  PhysCoord offset;

  // `S[shape]`: row-major strides on `m`.
  static TileLayout rowMajor(std::span<const int64_t> shape);

  // Number of logical elements: the product of the shard extents.
  int64_t size() const;
  // Product of the extents of the shard iters on `axis`.
  int64_t size(Axis axis) const;
  // Number of replica combinations (1 when there are no replica iters).
  int64_t replicaCount() const;
  Shape shardExtents() const;
  // Axes appearing in shard iters or offsets (the keys of a base coordinate).
  uint32_t baseAxesMask() const;
  // Axes appearing anywhere: shard, replica or offset.
  uint32_t axesMask() const;

  friend bool operator==(const TileLayout&, const TileLayout&) = default;
};

// Swizzle<B, M, S> on the `m` offset: with x = m >> M,
// x ^= (x & (((1 << B) - 1) << S)) >> S, result (x << M) | (m & ((1 << M) - 1)).
// `inner == false` moves the low field up instead (Swizzle<B, M, -S>).
struct Swizzle {
  int perElement = 0;  // M: low bits kept intact
  int len = 0;         // B: width of the XOR field
  int atom = 0;        // S: distance between the two fields
  bool inner = true;

  // Validates the fields: non-negative, disjoint (S >= B), within 62 bits in all.
  static Swizzle make(int perElement, int len, int atom, bool inner = true);
  int64_t apply(int64_t m) const;
  // Number of elements in one period of the pattern: 2^(M + B + S).
  int64_t period() const { return int64_t{1} << (perElement + len + atom); }

  friend bool operator==(const Swizzle&, const Swizzle&) = default;
};

// A TileLayout, optionally composed with a swizzle of its `m` axis.
struct Layout {
  TileLayout tile;
  std::optional<Swizzle> swizzle;

  Layout() = default;
  Layout(TileLayout t) : tile(std::move(t)) {}  // NOLINT: a tile layout is a layout
  // ComposeLayout: the tile layout must map only onto `m`.
  static Layout compose(Swizzle swizzle, TileLayout tile);

  int64_t size() const { return tile.size(); }

  friend bool operator==(const Layout&, const Layout&) = default;
};

// ---- Coordinates -----------------------------------------------------------------

// Product of the extents, overflow-checked.
int64_t shapeSize(std::span<const int64_t> shape);
// Row-major flattening. Each coordinate must lie in [0, shape[i]).
int64_t flatten(std::span<const int64_t> coord, std::span<const int64_t> shape);
// Splits `index` over `extents`, last fastest; the first entry takes the undivided quotient.
std::vector<int64_t> splitIndex(int64_t index, std::span<const int64_t> extents);
// Row-major unflattening over a full shape (index must be in range).
std::vector<int64_t> unflatten(int64_t index, std::span<const int64_t> shape);
// Steps `coord` to the next coordinate of `shape` in row-major order; false (and all zeros)
// after the last one. Visiting a shape this way costs no division per element.
bool nextCoord(std::span<int64_t> coord, std::span<const int64_t> shape);

// ---- Apply -----------------------------------------------------------------------

// Base coordinate (shard contribution + offsets, then swizzle) from one coordinate per shard iter.
PhysCoord applyIters(const Layout& layout, std::span<const int64_t> iterCoord);
// Base coordinate of a linear index (split over the shard extents).
PhysCoord apply(const Layout& layout, int64_t index);
// Base coordinate of a logical coordinate over `shape` (whose size must equal the layout size).
PhysCoord apply(const Layout& layout, std::span<const int64_t> coord, std::span<const int64_t> shape);
// apply(layout, coord, shape)[axis] alone, without the other axes' arithmetic.
int64_t applyAxis(const Layout& layout, std::span<const int64_t> coord, std::span<const int64_t> shape, Axis axis);
// applyAxis of every element, in row-major order, computed a stride at a time (the last
// shard iter fastest), with no division per element; nullopt when !stepsFitIn64Bits. It
// holds one entry per element: the caller bounds the layout's size.
std::optional<std::vector<int64_t>> applyAxisToAll(const Layout& layout, Axis axis);
// Whether stepping through a tile layout's elements one stride at a time, as applyAxisToAll
// and forEachPlacement do, surely stays within 64 bits: |offset| plus every iter's
// |stride| * (extent - 1) fits on each axis. The bound is conservative; where it fails,
// those callers apply the layout element by element, and apply() reports any overflow.
bool stepsFitIn64Bits(const TileLayout& tile);
// Calls visit(index, base) for every element in row-major order, with `base` the element's
// coordinate before replicas and swizzle, as apply() of the tile layout gives it; visit returns
// false to stop. When stepsFitIn64Bits, each next base adds one iter's stride and takes back
// the iters that wrapped (an odometer over the shard iters, the last fastest), with no
// division; otherwise apply() computes each, reporting any overflow where it happens.
template <class Visit>
void forEachBase(const TileLayout& tile, Visit&& visit);
// Per-iter coordinate of a logical coordinate over `shape`.
std::vector<int64_t> iterCoord(const Layout& layout, std::span<const int64_t> coord,
                               std::span<const int64_t> shape);

// The offsets contributed by each replica combination, row-major over the replica
// iters. Exactly one (empty) entry when there are no replicas.
std::vector<PhysCoord> replicaOffsets(const TileLayout& layout);
// Every physical tuple holding the element: base + each replica offset, swizzled.
// Each tuple holds every axis that appears anywhere in the layout.
std::vector<PhysCoord> applyAll(const Layout& layout, std::span<const int64_t> coord,
                                std::span<const int64_t> shape);

// ---- Sizes -----------------------------------------------------------------------

// 1 + sum over the shard and replica iters on `axis` of (extent - 1) * |stride|.
int64_t span(const TileLayout& layout, Axis axis);
// 1 + the largest value `axis` takes over every element and replica (offsets and
// swizzle included): the storage an allocation needs. 0 for an axis never used.
int64_t cosize(const Layout& layout, Axis axis);
// The smallest value `axis` takes over every element and replica, before any swizzle
// (an XOR swizzle keeps non-negative offsets non-negative). 0 for an axis never used.
int64_t minValue(const TileLayout& layout, Axis axis);

// ---- Text ------------------------------------------------------------------------

std::string toString(const TileLayout& layout);
std::string toString(const Layout& layout);
std::string toString(const PhysCoord& coord);
std::string shapeToString(std::span<const int64_t> shape);

template <class Visit>
void forEachBase(const TileLayout& tile, Visit&& visit) {
  const int64_t size = tile.size();
  if (!stepsFitIn64Bits(tile)) {
    const Layout affine{tile};
    for (int64_t index = 0; index < size; ++index)
      if (!visit(index, apply(affine, index))) return;
    return;
  }
  const std::vector<Iter>& shard = tile.shard;
  PhysCoord base = tile.offset;
  for (const Iter& it : shard) base.add(it.axis, 0);
  std::vector<int64_t> digit(shard.size(), 0);
  for (int64_t index = 0; index < size; ++index) {
    if (index > 0) {
      for (size_t i = shard.size(); i-- > 0;) {
        if (++digit[i] < shard[i].extent) {
          base.add(shard[i].axis, shard[i].stride);
          break;
        }
        digit[i] = 0;
        base.add(shard[i].axis, -(shard[i].extent - 1) * shard[i].stride);
      }
    }
    if (!visit(index, std::as_const(base))) return;
  }
}

}  // namespace tyl::layout
