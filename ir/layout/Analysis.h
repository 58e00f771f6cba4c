// Properties of layouts decided by enumeration: injectivity, completeness and the
// shared-memory bank map. Enumeration is bounded (kMaxEnumeration points); larger
// layouts raise an Error rather than run for minutes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ir/layout/CheckedMath.h"
#include "ir/layout/Layout.h"

namespace tyl::layout {

inline constexpr int64_t kMaxEnumeration = int64_t{1} << 24;

// Throws an Error when `count` points are more than an enumeration may visit.
void checkEnumerable(int64_t count, const char* what);

// Every physical tuple (base + each replica, swizzled) of every element, in row-major
// element order; `visit(index, tuple)` returns false to stop. Each tuple carries every
// axis of the layout, as applyAll() does, but replica offsets are computed once.
template <class Visit>
void forEachPlacement(const Layout& layout, Visit&& visit) {
  const TileLayout& tile = layout.tile;
  int64_t size = tile.size();
  checkEnumerable(checkedMul(size, tile.replicaCount()), "enumerating every element and replica");
  std::vector<PhysCoord> replicas = replicaOffsets(tile);
  uint32_t usedAxes = tile.axesMask();
  forEachBase(tile, [&](int64_t index, PhysCoord base) {
    for (Axis a : allAxes())
      if ((usedAxes & axisBit(a)) && !base.has(a)) base.set(a, 0);
    for (const PhysCoord& r : replicas) {
      PhysCoord p = base;
      p.addAll(r);
      if (layout.swizzle) p.set(Axis::m, layout.swizzle->apply(p[Axis::m]));  // after the replica offset
      if (!visit(index, p)) return false;
    }
    return true;
  });
}

// Two distinct logical coordinates that land on the same physical point.
struct Collision {
  Shape first;
  Shape second;
  PhysCoord where;
};

// Injective over the axes in `axesMask` (every physical tuple, replicas included,
// projected onto those axes): no two distinct coordinates share a point. Returns the
// first collision found in row-major order (for layouts too large to enumerate, a
// collision found from the iters), or nullopt when injective. Throws Error only for a
// layout too large to enumerate whose iters do not decide the question.
std::optional<Collision> findCollision(const Layout& layout, std::span<const int64_t> shape,
                                       uint32_t axesMask);
// What the iters alone say, without enumerating elements: Injective, Collides (with a
// witness, not necessarily the first in row-major order), or Unknown. Cheap for any size.
struct IterVerdict {
  enum class Kind { Injective, Collides, Unknown } kind = Kind::Unknown;
  std::optional<Collision> witness;  // Collides
};
IterVerdict injectivityFromIters(const Layout& layout, std::span<const int64_t> shape, uint32_t axesMask);
inline bool isInjective(const Layout& layout, std::span<const int64_t> shape, uint32_t axesMask = ~0u) {
  return !findCollision(layout, shape, axesMask).has_value();
}

// Complete over `box` (an extent per axis; the axes not listed are ignored): every
// point of the box is hit by some element or replica. Returns a point that is not hit.
struct AxisExtent {
  Axis axis;
  int64_t extent;
};
std::optional<PhysCoord> findHole(const Layout& layout, std::span<const int64_t> shape,
                                  std::span<const AxisExtent> box);
inline bool isComplete(const Layout& layout, std::span<const int64_t> shape, std::span<const AxisExtent> box) {
  return !findHole(layout, shape, box).has_value();
}

// Shared memory has 32 banks of 4 bytes: bank = (byte address / 4) % 32.
inline constexpr int kBankCount = 32;
inline constexpr int kBankBytes = 4;

// The bank of every element of a memory layout (row-major over `shape`), for elements
// of `elementBytes` bytes at element offset `m`.
std::vector<int> bankMap(const Layout& layout, std::span<const int64_t> shape, int elementBytes);

// Conflict degree of one warp-wide shared-memory access: `byteAddresses[lane]` is the
// first byte each lane accesses (nullopt for inactive lanes), each lane accessing
// `accessBytes` bytes (1, 2, 4, 8 or 16). The warp's request is served in phases of
// 128 bytes' worth of lanes (32 lanes for <= 4-byte accesses, 16 for 8-byte, 8 for
// 16-byte); the degree is the largest number of distinct 4-byte words any bank holds in
// one phase (1 = conflict-free). Lanes reading the same word share it.
int bankConflictDegree(std::span<const std::optional<int64_t>> byteAddresses, int accessBytes);

}  // namespace tyl::layout
