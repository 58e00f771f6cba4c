// The brute-force reference the layout algebra's tests check against: nested loops over a
// layout's iters, paired with row-major logical indices, and the swizzle bit by bit. Written
// independently of Layout.cpp, so a test that compares the two checks the library against its
// definition. Also the small constructions those tests share (the exhaustive family of small
// layouts, a shape's factorizations) and Catch's printing of layout types.
#pragma once

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/layout/Layout.h"

namespace Catch {
template <>
struct StringMaker<tyl::layout::TileLayout> {
  static std::string convert(const tyl::layout::TileLayout& t) { return tyl::layout::toString(t); }
};
template <>
struct StringMaker<tyl::layout::Layout> {
  static std::string convert(const tyl::layout::Layout& l) { return tyl::layout::toString(l); }
};
template <>
struct StringMaker<tyl::layout::PhysCoord> {
  static std::string convert(const tyl::layout::PhysCoord& p) { return tyl::layout::toString(p); }
};
template <>
struct StringMaker<tyl::layout::Iter> {
  static std::string convert(const tyl::layout::Iter& it) {
    return std::to_string(it.extent) + ":" + std::to_string(it.stride) + "@" +
           std::string(tyl::layout::axisName(it.axis));
  }
};
}  // namespace Catch

namespace tyl::layout::test {

// A physical point with every axis spelled out (absent axes read 0).
using Point = std::array<int64_t, kAxisCount>;

inline Point toPoint(const PhysCoord& p) {
  Point r{};
  p.forEach([&](Axis a, int64_t v) { r[static_cast<size_t>(a)] = v; });
  return r;
}

inline int64_t& at(Point& p, Axis a) { return p[static_cast<size_t>(a)]; }

inline Point plus(Point a, const Point& b) {
  for (size_t k = 0; k < a.size(); ++k) a[k] += b[k];
  return a;
}

inline std::string pointText(const Point& p) {
  std::string text = "{";
  for (Axis a : allAxes())
    if (p[static_cast<size_t>(a)] != 0)
      text += std::string(axisName(a)) + ": " + std::to_string(p[static_cast<size_t>(a)]) + " ";
  return text + "}";
}

// Calls f(coord) for every coordinate of `extents`, last entry fastest.
template <class F>
void odometer(const std::vector<int64_t>& extents, F&& f) {
  std::vector<int64_t> c(extents.size(), 0);
  for (int64_t e : extents)
    if (e <= 0) return;
  for (;;) {
    f(c);
    size_t i = extents.size();
    for (;;) {
      if (i == 0) return;
      --i;
      if (++c[i] < extents[i]) break;
      c[i] = 0;
    }
  }
}

inline int64_t rowMajorIndex(const std::vector<int64_t>& c, const std::vector<int64_t>& shape) {
  int64_t index = 0;
  for (size_t d = 0; d < c.size(); ++d) index = index * shape[d] + c[d];
  return index;
}

// The swizzle bit by bit, written independently of Swizzle::apply.
inline int64_t refSwizzle(const Swizzle& s, int64_t m) {
  for (int i = 0; i < s.len; ++i) {
    int low = s.perElement + i;
    int high = s.perElement + s.atom + i;
    int from = s.inner ? high : low;
    int to = s.inner ? low : high;
    if ((m >> from) & 1) m ^= int64_t{1} << to;
  }
  return m;
}

struct Reference {
  std::vector<Point> base;                 // per element, row-major
  std::vector<std::vector<Point>> tuples;  // per element, per replica combination (row-major)
};

inline Reference evaluate(const Layout& layout) {
  const TileLayout& t = layout.tile;
  std::vector<Point> replicas;
  std::vector<int64_t> repExtents;
  for (const Iter& it : t.replica) repExtents.push_back(it.extent);
  odometer(repExtents, [&](const std::vector<int64_t>& r) {
    Point p{};
    for (size_t j = 0; j < r.size(); ++j) at(p, t.replica[j].axis) += r[j] * t.replica[j].stride;
    replicas.push_back(p);
  });
  auto swizzled = [&](Point p) {
    if (layout.swizzle) at(p, Axis::m) = refSwizzle(*layout.swizzle, at(p, Axis::m));
    return p;
  };
  Reference ref;
  std::vector<int64_t> extents;
  for (const Iter& it : t.shard) extents.push_back(it.extent);
  odometer(extents, [&](const std::vector<int64_t>& c) {
    Point p{};
    for (size_t i = 0; i < c.size(); ++i) at(p, t.shard[i].axis) += c[i] * t.shard[i].stride;
    t.offset.forEach([&](Axis a, int64_t v) { at(p, a) += v; });
    ref.base.push_back(swizzled(p));
    std::vector<Point> all;
    for (const Point& r : replicas) all.push_back(swizzled(plus(p, r)));
    ref.tuples.push_back(all);
  });
  return ref;
}

// A check for hot loops: the description is only built when it fails (INFO and REQUIRE
// on every passing iteration would dominate the run time).
template <class Describe>
void require(bool ok, Describe&& describe) {
  if (!ok) FAIL(describe());
}

// ---- Construction helpers --------------------------------------------------------

inline TileLayout makeTile(std::vector<Iter> shard, std::vector<Iter> replica = {},
                           std::vector<std::pair<Axis, int64_t>> offsets = {}) {
  TileLayout t;
  t.shard = std::move(shard);
  t.replica = std::move(replica);
  for (auto [a, v] : offsets) t.offset.add(a, v);
  return t;
}

// Every shape of rank 1..3 whose extents multiply to n.
inline std::vector<Shape> factorizations(int64_t n) {
  std::vector<Shape> shapes{{n}};
  for (int64_t a = 1; a <= n; ++a) {
    if (n % a) continue;
    shapes.push_back({a, n / a});
    for (int64_t b = 1; b <= n / a; ++b)
      if ((n / a) % b == 0) shapes.push_back({a, b, n / a / b});
  }
  return shapes;
}

// All shards of 1..3 iters with extents {1,2,3,4}, strides {0,1,2,4} on m or laneid;
// every fourth one also gets an offset, a replica, or both.
inline std::vector<TileLayout> smallFamily() {
  const int64_t extents[] = {1, 2, 3, 4};
  const int64_t strides[] = {0, 1, 2, 4};
  const Axis axes[] = {Axis::m, Axis::laneid};
  std::vector<Iter> choices;
  for (int64_t e : extents)
    for (int64_t s : strides)
      for (Axis a : axes) choices.push_back(Iter{e, s, a});
  std::vector<TileLayout> family;
  auto addVariant = [&](std::vector<Iter> shard) {
    TileLayout t = makeTile(std::move(shard));
    switch (family.size() % 4) {
      case 1: t.offset.add(Axis::m, 3); break;
      case 2: t.replica.push_back(Iter{2, 16, Axis::warpid}); break;
      case 3:
        t.replica.push_back(Iter{2, 1, Axis::m});
        t.offset.add(Axis::laneid, 2);
        break;
      default: break;
    }
    family.push_back(t);
  };
  for (const Iter& a : choices) {
    addVariant({a});
    for (const Iter& b : choices) {
      addVariant({a, b});
      for (const Iter& c : choices) addVariant({a, b, c});
    }
  }
  return family;
}

}  // namespace tyl::layout::test
