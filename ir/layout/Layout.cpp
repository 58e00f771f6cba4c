#include "ir/layout/Layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>

#include "ir/layout/CheckedMath.h"

namespace tyl::layout {

// ---- PhysCoord -------------------------------------------------------------------

void PhysCoord::add(Axis axis, int64_t value) {
  int i = static_cast<int>(axis);
  values_[i] = checkedAdd(values_[i], value);
  present_ |= 1u << i;
}

void PhysCoord::set(Axis axis, int64_t value) {
  int i = static_cast<int>(axis);
  values_[i] = value;
  present_ |= 1u << i;
}

void PhysCoord::erase(Axis axis) {
  int i = static_cast<int>(axis);
  values_[i] = 0;
  present_ &= ~(1u << i);
}

void PhysCoord::addAll(const PhysCoord& other) {
  other.forEach([&](Axis a, int64_t v) { add(a, v); });
}

PhysCoord PhysCoord::project(uint32_t mask) const {
  PhysCoord r;
  forEach([&](Axis a, int64_t v) {
    if (mask & axisBit(a)) r.set(a, v);
  });
  return r;
}

size_t PhysCoord::hash() const {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ present_;
  for (int64_t v : values_) {
    h ^= static_cast<uint64_t>(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  }
  return static_cast<size_t>(h);
}

uint32_t threadAxesMask() {
  uint32_t mask = 0;
  for (Axis a : allAxes())
    if (axisKind(a) != AxisKind::Memory) mask |= axisBit(a);
  return mask;
}

uint32_t memoryAxesMask() { return ~threadAxesMask() & ((1u << kAxisCount) - 1); }

// ---- TileLayout ------------------------------------------------------------------

TileLayout TileLayout::rowMajor(std::span<const int64_t> shape) {
  TileLayout layout;
  layout.shard.resize(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] <= 0) throw Error(fmt::format("extent {} must be positive", shape[i]));
    layout.shard[i] = Iter{shape[i], stride, Axis::m};
    if (i > 0) stride = checkedMul(stride, shape[i]);
  }
  return layout;
}

int64_t TileLayout::size() const {
  int64_t n = 1;
  for (const Iter& it : shard) n = checkedMul(n, it.extent);
  return n;
}

int64_t TileLayout::size(Axis axis) const {
  int64_t n = 1;
  for (const Iter& it : shard)
    if (it.axis == axis) n = checkedMul(n, it.extent);
  return n;
}

int64_t TileLayout::replicaCount() const {
  int64_t n = 1;
  for (const Iter& it : replica) n = checkedMul(n, it.extent);
  return n;
}

Shape TileLayout::shardExtents() const {
  Shape s;
  s.reserve(shard.size());
  for (const Iter& it : shard) s.push_back(it.extent);
  return s;
}

uint32_t TileLayout::baseAxesMask() const {
  uint32_t mask = offset.axesMask();
  for (const Iter& it : shard) mask |= axisBit(it.axis);
  return mask;
}

uint32_t TileLayout::axesMask() const {
  uint32_t mask = baseAxesMask();
  for (const Iter& it : replica) mask |= axisBit(it.axis);
  return mask;
}

// ---- Swizzle ---------------------------------------------------------------------

Swizzle Swizzle::make(int perElement, int len, int atom, bool inner) {
  if (perElement < 0 || len < 0 || atom < 0)
    throw Error(fmt::format("swizzle fields must be non-negative (per_element={}, swizzle_len={}, atom_len={})",
                            perElement, len, atom));
  if (atom < len)
    throw Error(fmt::format("swizzle fields overlap: atom_len {} is smaller than swizzle_len {}; the XOR "
                            "would destroy address bits instead of permuting them",
                            atom, len));
  // Summed in 64 bits: three ints near INT_MAX must not wrap past the check.
  int64_t bits = int64_t{perElement} + len + atom;
  if (bits > 62) throw Error(fmt::format("swizzle spans {} bits, more than the 62 an offset can hold", bits));
  return Swizzle{perElement, len, atom, inner};
}

int64_t Swizzle::apply(int64_t m) const {
  if (m < 0) throw Error(fmt::format("swizzled offset {} is negative", m));
  uint64_t low = static_cast<uint64_t>(m) & ((uint64_t{1} << perElement) - 1);
  uint64_t x = static_cast<uint64_t>(m) >> perElement;
  uint64_t field = (uint64_t{1} << len) - 1;
  if (inner)
    x ^= (x & (field << atom)) >> atom;
  else
    x ^= (x & field) << atom;
  return static_cast<int64_t>((x << perElement) | low);
}

Layout Layout::compose(Swizzle swizzle, TileLayout tile) {
  for (const Iter& it : tile.shard)
    if (it.axis != Axis::m)
      throw Error(fmt::format("a swizzled tile layout may only map onto 'm', but an iter maps onto '{}'",
                              axisName(it.axis)));
  for (const Iter& it : tile.replica)
    if (it.axis != Axis::m)
      throw Error(fmt::format("a swizzled tile layout may only map onto 'm', but a replica maps onto '{}'",
                              axisName(it.axis)));
  if (tile.offset.axesMask() & ~axisBit(Axis::m))
    throw Error("a swizzled tile layout may only map onto 'm', but it has an offset on another axis");
  Layout layout{std::move(tile)};
  layout.swizzle = swizzle;
  return layout;
}

// ---- Coordinates -----------------------------------------------------------------

int64_t shapeSize(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t e : shape) n = checkedMul(n, e);
  return n;
}

int64_t flatten(std::span<const int64_t> coord, std::span<const int64_t> shape) {
  if (coord.size() != shape.size())
    throw Error(fmt::format("coordinate has {} entries but the shape has {} dimensions", coord.size(),
                            shape.size()));
  int64_t index = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (coord[i] < 0 || coord[i] >= shape[i])
      throw Error(fmt::format("coordinate {} is outside the shape {}", shapeToString(coord), shapeToString(shape)));
    index = checkedAdd(checkedMul(index, shape[i]), coord[i]);
  }
  return index;
}

std::vector<int64_t> splitIndex(int64_t index, std::span<const int64_t> extents) {
  std::vector<int64_t> parts(extents.size());
  if (extents.empty()) return parts;
  for (size_t i = extents.size(); i-- > 1;) {
    parts[i] = floorMod(index, extents[i]);
    index = floorDiv(index, extents[i]);
  }
  parts[0] = index;
  return parts;
}

std::vector<int64_t> unflatten(int64_t index, std::span<const int64_t> shape) {
  int64_t size = shapeSize(shape);
  if (index < 0 || index >= size)
    throw Error(fmt::format("index {} is outside a shape of {} elements", index, size));
  return splitIndex(index, shape);
}

bool nextCoord(std::span<int64_t> coord, std::span<const int64_t> shape) {
  for (size_t d = coord.size(); d-- > 0;) {
    if (++coord[d] < shape[d]) return true;
    coord[d] = 0;
  }
  return false;
}

// ---- Apply -----------------------------------------------------------------------

PhysCoord applyIters(const Layout& layout, std::span<const int64_t> iterCoord) {
  const TileLayout& tile = layout.tile;
  if (iterCoord.size() != tile.shard.size())
    throw Error(fmt::format("expected one coordinate per shard iter ({}), got {}", tile.shard.size(),
                            iterCoord.size()));
  PhysCoord result;
  for (size_t i = 0; i < tile.shard.size(); ++i)
    result.add(tile.shard[i].axis, checkedMul(iterCoord[i], tile.shard[i].stride));
  result.addAll(tile.offset);
  if (layout.swizzle) result.set(Axis::m, layout.swizzle->apply(result[Axis::m]));
  return result;
}

namespace {

constexpr size_t kInlineIters = 16;

// splitIndex(index, shard extents) into `parts`, without allocating; false when the
// layout has more iters than `parts` holds.
bool splitOverShard(const Layout& layout, int64_t index, std::array<int64_t, kInlineIters>& parts) {
  const std::vector<Iter>& shard = layout.tile.shard;
  if (shard.size() > kInlineIters) return false;
  if (shard.empty()) return true;
  for (size_t i = shard.size(); i-- > 1;) {
    parts[i] = floorMod(index, shard[i].extent);
    index = floorDiv(index, shard[i].extent);
  }
  parts[0] = index;
  return true;
}

// applyIters(layout, splitIndex(index, shard extents)) without building either vector
// (lowering applies layouts to every element of every copy).
PhysCoord applyIndex(const Layout& layout, int64_t index) {
  std::array<int64_t, kInlineIters> parts{};
  if (!splitOverShard(layout, index, parts)) return applyIters(layout, splitIndex(index, layout.tile.shardExtents()));
  return applyIters(layout, std::span<const int64_t>(parts.data(), layout.tile.shard.size()));
}

}  // namespace

int64_t applyAxis(const Layout& layout, std::span<const int64_t> coord, std::span<const int64_t> shape, Axis axis) {
  if (shapeSize(shape) != layout.size())
    throw Error(fmt::format("shape {} has {} elements but the layout has {}", shapeToString(shape),
                            shapeSize(shape), layout.size()));
  int64_t index = flatten(coord, shape);
  std::array<int64_t, kInlineIters> parts{};
  if (!splitOverShard(layout, index, parts)) return applyIndex(layout, index)[axis];
  const std::vector<Iter>& shard = layout.tile.shard;
  int64_t value = 0;
  for (size_t i = 0; i < shard.size(); ++i)
    if (shard[i].axis == axis) value = checkedAdd(value, checkedMul(parts[i], shard[i].stride));
  value = checkedAdd(value, layout.tile.offset[axis]);
  if (layout.swizzle && axis == Axis::m) value = layout.swizzle->apply(value);
  return value;
}

PhysCoord apply(const Layout& layout, int64_t index) { return applyIndex(layout, index); }

bool stepsFitIn64Bits(const TileLayout& tile) {
  // Per axis, |offset| + sum of |stride| * (extent - 1) bounds every partial sum.
  std::array<int64_t, kAxisCount> reach{};
  auto grow = [&](Axis a, int64_t v) {
    if (v == std::numeric_limits<int64_t>::min()) return false;
    int64_t& r = reach[static_cast<int>(a)];
    return !__builtin_add_overflow(r, v < 0 ? -v : v, &r);
  };
  bool fits = true;
  tile.offset.forEach([&](Axis a, int64_t v) { fits = fits && grow(a, v); });
  for (const Iter& it : tile.shard) {
    int64_t span = 0;
    fits = fits && it.extent >= 1 && !__builtin_mul_overflow(it.extent - 1, it.stride, &span) && grow(it.axis, span);
  }
  return fits;
}

std::optional<std::vector<int64_t>> applyAxisToAll(const Layout& layout, Axis axis) {
  if (!stepsFitIn64Bits(layout.tile)) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(layout.tile.size()));
  forEachBase(layout.tile, [&](int64_t, const PhysCoord& base) {
    out.push_back(layout.swizzle && axis == Axis::m ? layout.swizzle->apply(base[axis]) : base[axis]);
    return true;
  });
  return out;
}

std::vector<int64_t> iterCoord(const Layout& layout, std::span<const int64_t> coord,
                               std::span<const int64_t> shape) {
  int64_t size = layout.size();
  if (shapeSize(shape) != size)
    throw Error(fmt::format("shape {} has {} elements but the layout has {}", shapeToString(shape),
                            shapeSize(shape), size));
  Shape extents = layout.tile.shardExtents();
  return splitIndex(flatten(coord, shape), extents);
}

PhysCoord apply(const Layout& layout, std::span<const int64_t> coord, std::span<const int64_t> shape) {
  if (shapeSize(shape) != layout.size())
    throw Error(fmt::format("shape {} has {} elements but the layout has {}", shapeToString(shape),
                            shapeSize(shape), layout.size()));
  return applyIndex(layout, flatten(coord, shape));
}

std::vector<PhysCoord> replicaOffsets(const TileLayout& layout) {
  int64_t count = layout.replicaCount();
  // Enumerating more replicas than any machine has threads would only exhaust memory.
  if (count > (int64_t{1} << 24)) throw Error(fmt::format("{} replica combinations are too many to enumerate", count));
  std::vector<PhysCoord> result;
  Shape extents;
  for (const Iter& it : layout.replica) extents.push_back(it.extent);
  for (int64_t r = 0; r < count; ++r) {
    std::vector<int64_t> parts = splitIndex(r, extents);
    PhysCoord offset;
    for (size_t i = 0; i < parts.size(); ++i)
      offset.add(layout.replica[i].axis, checkedMul(parts[i], layout.replica[i].stride));
    result.push_back(offset);
  }
  return result;
}

std::vector<PhysCoord> applyAll(const Layout& layout, std::span<const int64_t> coord,
                                std::span<const int64_t> shape) {
  std::vector<int64_t> iters = iterCoord(layout, coord, shape);
  PhysCoord base;
  for (size_t i = 0; i < layout.tile.shard.size(); ++i)
    base.add(layout.tile.shard[i].axis, checkedMul(iters[i], layout.tile.shard[i].stride));
  base.addAll(layout.tile.offset);
  // Every tuple carries every axis of the layout, zero where nothing contributes.
  uint32_t all = layout.tile.axesMask();
  for (Axis a : allAxes())
    if ((all & axisBit(a)) && !base.has(a)) base.set(a, 0);
  std::vector<PhysCoord> result;
  for (const PhysCoord& r : replicaOffsets(layout.tile)) {
    PhysCoord p = base;
    p.addAll(r);
    if (layout.swizzle) p.set(Axis::m, layout.swizzle->apply(p[Axis::m]));
    result.push_back(p);
  }
  return result;
}

// ---- Sizes -----------------------------------------------------------------------

int64_t span(const TileLayout& layout, Axis axis) {
  int64_t s = 1;
  auto addIters = [&](const std::vector<Iter>& iters) {
    for (const Iter& it : iters)
      if (it.axis == axis) {
        int64_t magnitude = it.stride < 0 ? checkedSub(0, it.stride) : it.stride;
        s = checkedAdd(s, checkedMul(checkedSub(it.extent, 1), magnitude));
      }
  };
  addIters(layout.shard);
  addIters(layout.replica);
  return s;
}

int64_t minValue(const TileLayout& tile, Axis axis) {
  if (!(tile.axesMask() & axisBit(axis))) return 0;
  int64_t lo = tile.offset[axis];
  for (const std::vector<Iter>* iters : {&tile.shard, &tile.replica})
    for (const Iter& it : *iters)
      if (it.axis == axis && it.stride < 0) lo = checkedAdd(lo, checkedMul(it.extent - 1, it.stride));
  return lo;
}

int64_t cosize(const Layout& layout, Axis axis) {
  const TileLayout& tile = layout.tile;
  if (!(tile.axesMask() & axisBit(axis))) return 0;
  // Affine part: the largest value is reached with every iter at its extreme.
  int64_t hi = tile.offset[axis];
  auto addIters = [&](const std::vector<Iter>& iters) {
    for (const Iter& it : iters)
      if (it.axis == axis && it.stride > 0) hi = checkedAdd(hi, checkedMul(it.extent - 1, it.stride));
  };
  addIters(tile.shard);
  addIters(tile.replica);
  if (!layout.swizzle || axis != Axis::m) return checkedAdd(hi, 1);
  if (hi < 0) return 0;
  // Small layouts: the exact largest swizzled offset over every element and replica.
  int64_t count = 1;
  for (const std::vector<Iter>* iters : {&tile.shard, &tile.replica})
    for (const Iter& it : *iters) {
      if (__builtin_mul_overflow(count, it.extent, &count)) count = INT64_MAX;
    }
  constexpr int64_t kExactLimit = int64_t{1} << 22;
  if (count <= kExactLimit) {
    // The m iters (the others do not move m), counted like an odometer: m changes by
    // one stride per step, and falls back when a digit wraps.
    std::vector<Iter> all;
    for (const std::vector<Iter>* iters : {&tile.shard, &tile.replica})
      for (const Iter& it : *iters)
        if (it.axis == Axis::m && it.extent > 1) all.push_back(it);
    std::vector<int64_t> digit(all.size(), 0);
    int64_t m = tile.offset[Axis::m];
    int64_t best = -1;
    while (true) {
      if (m >= 0) best = std::max(best, layout.swizzle->apply(m));
      size_t k = all.size();
      while (k-- > 0) {
        if (++digit[k] < all[k].extent) {
          m = checkedAdd(m, all[k].stride);
          break;
        }
        digit[k] = 0;
        m = checkedSub(m, checkedMul(all[k].extent - 1, all[k].stride));
      }
      if (k == static_cast<size_t>(-1)) break;
    }
    return checkedAdd(best, 1);
  }
  // Large layouts: a swizzle changes only the bits below M + B, so it cannot raise an
  // offset past the affine maximum with those bits all set.
  int64_t low = (int64_t{1} << (layout.swizzle->perElement + layout.swizzle->len)) - 1;
  return checkedAdd(hi | low, 1);
}

// ---- Text ------------------------------------------------------------------------

namespace {

// The smallest int64 has no literal (its magnitude does not fit): it is written as a difference.
std::string intText(int64_t v) { return v == INT64_MIN ? "(-9223372036854775807 - 1)" : fmt::format("{}", v); }

std::string strideText(const Iter& it) {
  if (it.axis == Axis::m) return intText(it.stride);
  return fmt::format("{}@{}", intText(it.stride), axisName(it.axis));
}

std::string itersText(char kind, const std::vector<Iter>& iters) {
  if (iters.empty()) return fmt::format("{}[1]", kind);
  if (iters.size() == 1) return fmt::format("{}[{} : {}]", kind, iters[0].extent, strideText(iters[0]));
  std::string extents, strides;
  for (size_t i = 0; i < iters.size(); ++i) {
    if (i) {
      extents += ", ";
      strides += ", ";
    }
    extents += fmt::format("{}", iters[i].extent);
    strides += strideText(iters[i]);
  }
  return fmt::format("{}[({}) : ({})]", kind, extents, strides);
}

}  // namespace

std::string toString(const TileLayout& layout) {
  std::string text = itersText('S', layout.shard);
  if (!layout.replica.empty()) text += " + " + itersText('R', layout.replica);
  layout.offset.forEach([&](Axis a, int64_t v) {
    if (v == 0) return;
    std::string sign = v < 0 ? " - " : " + ";
    const std::string at = a == Axis::m ? "" : fmt::format("@{}", axisName(a));
    if (v == INT64_MIN) {
      text += fmt::format(" - {}{} - 1{}", INT64_MAX, at, at);
      return;
    }
    text += fmt::format("{}{}{}", sign, v < 0 ? -v : v, at);
  });
  return text;
}

std::string toString(const Layout& layout) {
  if (!layout.swizzle) return toString(layout.tile);
  const Swizzle& s = *layout.swizzle;
  // Positional fields only where their order cannot be mistaken for Swizzle(B, M, S)'s, which
  // takes the first two the other way round.
  if (s.perElement != s.len)
    return fmt::format("ComposeLayout(per_element = {}, swizzle_len = {}, atom_len = {}, tile_layout = {}{})",
                       s.perElement, s.len, s.atom, toString(layout.tile), s.inner ? "" : ", swizzle_inner = False");
  return fmt::format("ComposeLayout({}, {}, {}, {}{})", s.perElement, s.len, s.atom, toString(layout.tile),
                     s.inner ? "" : ", swizzle_inner = False");
}

std::string toString(const PhysCoord& coord) {
  std::string text = "{";
  bool first = true;
  coord.forEach([&](Axis a, int64_t v) {
    text += fmt::format("{}{}: {}", first ? "" : ", ", axisName(a), v);
    first = false;
  });
  return text + "}";
}

std::string shapeToString(std::span<const int64_t> shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

}  // namespace tyl::layout
