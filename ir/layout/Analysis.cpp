#include "ir/layout/Analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

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

std::optional<Collision> findCollision(const Layout& layout, std::span<const int64_t> shape,
                                       uint32_t axesMask) {
  checkShapeMatches(layout, shape);
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
    std::vector<std::unordered_set<int64_t>> words(kBankCount);
    size_t last = std::min(byteAddresses.size(), first + lanesPerPhase);
    for (size_t lane = first; lane < last; ++lane) {
      if (!byteAddresses[lane]) continue;
      for (int64_t w = 0; w < wordsPerAccess; ++w) {
        int64_t word = *byteAddresses[lane] / kBankBytes + w;
        words[static_cast<size_t>(word % kBankCount)].insert(word);
      }
    }
    for (const auto& bank : words) degree = std::max(degree, static_cast<int>(bank.size()));
  }
  return degree;
}

}  // namespace tyl::layout
