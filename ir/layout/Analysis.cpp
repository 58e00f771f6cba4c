#include "ir/layout/Analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <unordered_map>

#include "ir/layout/CheckedMath.h"

namespace tyl::layout {
namespace {

struct PhysCoordHash {
  size_t operator()(const PhysCoord& p) const { return p.hash(); }
};

void checkShapeMatches(const Layout& layout, std::span<const int64_t> shape) {
  for (int64_t e : shape)
    if (e <= 0) throw Error(fmt::format("shape {} has a non-positive extent", shapeToString(shape)));
  int64_t size = layout.size();
  if (shapeSize(shape) != size)
    throw Error(fmt::format("shape {} has {} elements but the layout {} has {}", shapeToString(shape),
                            shapeSize(shape), toString(layout), size));
}


}  // namespace

void checkEnumerable(int64_t count, const char* what) {
  if (count > kMaxEnumeration)
    throw Error(fmt::format("{} needs {} points, more than the {} this check enumerates", what, count,
                            kMaxEnumeration));
}

// ---- Injectivity -----------------------------------------------------------------

// Projected onto the axes in the mask, a layout is a sum of independent per-axis maps
// (each iter moves one axis), and an XOR swizzle of non-negative offsets is a bijection,
// so the layout is injective exactly when no iter with extent > 1 is lost by the
// projection and every axis's map c -> sum(c_i * s_i) is injective. An axis's map is
// injective when its strides dominate (sorted by |s|, each exceeds the reach of the
// smaller ones); otherwise two iters that cancel are a collision, and an axis whose own
// iters are few enough is enumerated.
IterVerdict injectivityFromIters(const Layout& layout, std::span<const int64_t> shape, uint32_t axesMask) {
  const TileLayout& tile = layout.tile;
  if (layout.swizzle && minValue(tile, Axis::m) < 0) return {};
  Shape extents = tile.shardExtents();
  auto collides = [&](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    int64_t ia = flatten(a, extents), ib = flatten(b, extents);
    if (ia > ib) std::swap(ia, ib);
    // The point as forEachPlacement gives it: every axis of the layout present.
    PhysCoord where = apply(layout, ia);
    for (Axis a : allAxes())
      if ((tile.axesMask() & axisBit(a)) && !where.has(a)) where.set(a, 0);
    where = where.project(axesMask);
    return IterVerdict{IterVerdict::Kind::Collides, Collision{unflatten(ia, shape), unflatten(ib, shape), where}};
  };
  // An iter the projection loses: elements that differ only there share a point.
  for (size_t i = 0; i < tile.shard.size(); ++i) {
    const Iter& it = tile.shard[i];
    if (it.extent > 1 && (it.stride == 0 || !(axesMask & axisBit(it.axis)))) {
      std::vector<int64_t> a(tile.shard.size(), 0), b = a;
      b[i] = 1;
      return collides(a, b);
    }
  }
  struct AxisIter {
    size_t shardIndex;  // npos for a replica iter
    int64_t extent;
    int64_t stride;
  };
  constexpr size_t kReplica = static_cast<size_t>(-1);
  constexpr int64_t kAxisEnumeration = int64_t{1} << 20;
  for (Axis axis : allAxes()) {
    if (!(axesMask & axisBit(axis))) continue;
    std::vector<AxisIter> iters;
    bool replicas = false;
    for (size_t i = 0; i < tile.shard.size(); ++i)
      if (tile.shard[i].axis == axis && tile.shard[i].extent > 1)
        iters.push_back({i, tile.shard[i].extent, tile.shard[i].stride});
    for (const Iter& it : tile.replica)
      if (it.axis == axis && it.extent > 1) {
        iters.push_back({kReplica, it.extent, it.stride});
        replicas = true;
      }
    std::sort(iters.begin(), iters.end(),
              [](const AxisIter& a, const AxisIter& b) { return std::abs(a.stride) < std::abs(b.stride); });
    int64_t reach = 0;  // the largest |sum| the smaller iters can make
    bool dominated = true;
    for (const AxisIter& it : iters) {
      if (std::abs(it.stride) <= reach) {
        dominated = false;
        break;
      }
      reach = checkedAdd(reach, checkedMul(it.extent - 1, std::abs(it.stride)));
    }
    if (dominated) continue;
    // Two shard iters alone: d_i * s_i + d_j * s_j = 0 has the smallest nonzero solution
    // d_i = s_j / g, d_j = -s_i / g; it collides when both fit their extents.
    for (size_t i = 0; i < iters.size(); ++i)
      for (size_t j = i + 1; j < iters.size(); ++j) {
        if (iters[i].shardIndex == kReplica || iters[j].shardIndex == kReplica) continue;
        int64_t g = std::gcd(iters[i].stride, iters[j].stride);
        int64_t di = iters[j].stride / g, dj = -iters[i].stride / g;
        if (std::abs(di) >= iters[i].extent || std::abs(dj) >= iters[j].extent) continue;
        std::vector<int64_t> a(tile.shard.size(), 0), b = a;
        a[iters[i].shardIndex] = std::max<int64_t>(di, 0);
        b[iters[i].shardIndex] = std::max<int64_t>(-di, 0);
        a[iters[j].shardIndex] = std::max<int64_t>(dj, 0);
        b[iters[j].shardIndex] = std::max<int64_t>(-dj, 0);
        return collides(a, b);
      }
    // A replica that does not dominate may land another element on a point: only
    // enumeration of every placement can tell.
    if (replicas) return {};
    int64_t count = 1;
    for (const AxisIter& it : iters)
      if (__builtin_mul_overflow(count, it.extent, &count) || count > kAxisEnumeration) return {};
    std::unordered_map<int64_t, int64_t> seen;
    std::vector<int64_t> sub(iters.size(), 0);
    for (int64_t k = 0; k < count; ++k) {
      int64_t value = 0, rest = k;
      for (size_t j = iters.size(); j-- > 0;) {
        sub[j] = rest % iters[j].extent;
        rest /= iters[j].extent;
        value = checkedAdd(value, checkedMul(sub[j], iters[j].stride));
      }
      auto [prev, fresh] = seen.emplace(value, k);
      if (fresh) continue;
      std::vector<int64_t> a(tile.shard.size(), 0), b = a;
      rest = prev->second;
      for (size_t j = iters.size(); j-- > 0;) {
        a[iters[j].shardIndex] = rest % iters[j].extent;
        rest /= iters[j].extent;
        b[iters[j].shardIndex] = sub[j];
      }
      return collides(a, b);
    }
  }
  return {IterVerdict::Kind::Injective, std::nullopt};
}


std::optional<Collision> findCollision(const Layout& layout, std::span<const int64_t> shape,
                                       uint32_t axesMask) {
  checkShapeMatches(layout, shape);
  // Most layouts are decided from their iters; the rest, and the first collision in
  // row-major order, come from enumerating every placement when that is affordable.
  IterVerdict verdict = injectivityFromIters(layout, shape, axesMask);
  if (verdict.kind == IterVerdict::Kind::Injective) return std::nullopt;
  if (verdict.kind == IterVerdict::Kind::Collides &&
      checkedMul(layout.size(), layout.tile.replicaCount()) > kMaxEnumeration)
    return verdict.witness;
  std::unordered_map<PhysCoord, int64_t, PhysCoordHash> owner;
  std::optional<Collision> found;
  forEachPlacement(layout, [&](int64_t index, const PhysCoord& p) {
    PhysCoord point = p.project(axesMask);
    auto [it, inserted] = owner.emplace(point, index);
    // Replicas of one element may share a point; only distinct elements collide.
    if (inserted || it->second == index) return true;
    found = Collision{unflatten(it->second, shape), unflatten(index, shape), point};
    return false;
  });
  return found;
}

// ---- Completeness ----------------------------------------------------------------

std::optional<PhysCoord> findHole(const Layout& layout, std::span<const int64_t> shape,
                                  std::span<const AxisExtent> box) {
  checkShapeMatches(layout, shape);
  Shape extents;
  uint32_t seen = 0;
  for (const AxisExtent& b : box) {
    if (b.extent <= 0)
      throw Error(fmt::format("box extent {} on '{}' must be positive", b.extent, axisName(b.axis)));
    if (seen & axisBit(b.axis)) throw Error(fmt::format("box lists axis '{}' twice", axisName(b.axis)));
    seen |= axisBit(b.axis);
    extents.push_back(b.extent);
  }
  int64_t boxSize = shapeSize(extents);
  checkEnumerable(boxSize, "the completeness box");
  std::vector<char> hit(static_cast<size_t>(boxSize), 0);
  forEachPlacement(layout, [&](int64_t, const PhysCoord& p) {
    // An axis the layout never uses reads as 0 (PhysCoord's convention).
    int64_t flat = 0;
    for (const AxisExtent& b : box) {
      int64_t v = p[b.axis];
      if (v < 0 || v >= b.extent) return true;  // outside the box: irrelevant
      flat = flat * b.extent + v;
    }
    hit[static_cast<size_t>(flat)] = 1;
    return true;
  });
  auto hole = std::find(hit.begin(), hit.end(), 0);
  if (hole == hit.end()) return std::nullopt;
  std::vector<int64_t> point = unflatten(hole - hit.begin(), extents);
  PhysCoord result;
  for (size_t i = 0; i < box.size(); ++i) result.set(box[i].axis, point[i]);
  return result;
}

// ---- Banks -----------------------------------------------------------------------

std::vector<int> bankMap(const Layout& layout, std::span<const int64_t> shape, int elementBytes) {
  if (elementBytes <= 0) throw Error(fmt::format("element size {} bytes must be positive", elementBytes));
  if (layout.tile.axesMask() & ~axisBit(Axis::m))
    throw Error(fmt::format("bank map needs a shared-memory layout that maps only onto 'm', got {}",
                            toString(layout)));
  checkShapeMatches(layout, shape);
  int64_t size = layout.size();
  checkEnumerable(size, "the bank map");
  std::vector<int> banks;
  banks.reserve(static_cast<size_t>(size));
  // Row-major coordinates over `shape` flatten to the same index the layout splits.
  for (int64_t index = 0; index < size; ++index) {
    int64_t byte = checkedMul(apply(layout, index)[Axis::m], elementBytes);
    banks.push_back(static_cast<int>(floorMod(floorDiv(byte, kBankBytes), kBankCount)));
  }
  return banks;
}

int bankConflictDegree(std::span<const std::optional<int64_t>> byteAddresses, int accessBytes) {
  if (accessBytes != 1 && accessBytes != 2 && accessBytes != 4 && accessBytes != 8 && accessBytes != 16)
    throw Error(fmt::format("shared-memory access width {} bytes is not 1, 2, 4, 8 or 16", accessBytes));
  if (byteAddresses.size() > 32)
    throw Error(fmt::format("a warp has 32 lanes, got {} addresses", byteAddresses.size()));
  for (const std::optional<int64_t>& a : byteAddresses) {
    if (!a) continue;
    if (*a < 0) throw Error(fmt::format("shared-memory address {} is negative", *a));
    if (*a % accessBytes != 0)
      throw Error(
          fmt::format("shared-memory address {} is not aligned to the {}-byte access", *a, accessBytes));
  }
  // Each phase moves at most 128 bytes: 32 lanes of <= 4 bytes, 16 of 8, 8 of 16.
  const size_t lanesPerPhase = static_cast<size_t>(128 / std::max(accessBytes, kBankBytes));
  const int64_t wordsPerAccess = (accessBytes + kBankBytes - 1) / kBankBytes;
  int degree = 0;
  for (size_t first = 0; first < byteAddresses.size(); first += lanesPerPhase) {
    // The (bank, word) pairs of the phase, at most 128 bytes' worth: the degree is the
    // most distinct words any one bank serves.
    std::array<std::pair<int64_t, int64_t>, 128 / kBankBytes> hits;
    size_t n = 0;
    size_t last = std::min(byteAddresses.size(), first + lanesPerPhase);
    for (size_t lane = first; lane < last; ++lane) {
      if (!byteAddresses[lane]) continue;
      for (int64_t w = 0; w < wordsPerAccess; ++w) {
        int64_t word = *byteAddresses[lane] / kBankBytes + w;
        hits[n++] = {word % kBankCount, word};
      }
    }
    std::sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(n));
    n = static_cast<size_t>(std::unique(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(n)) - hits.begin());
    for (size_t i = 0, j = 0; i < n; i = j) {
      while (j < n && hits[j].first == hits[i].first) ++j;
      degree = std::max(degree, static_cast<int>(j - i));
    }
  }
  return degree;
}

}  // namespace tyl::layout
