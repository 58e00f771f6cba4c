// Tests of Layout.h: evaluation, replicas, swizzle, sizes and text. Every function is
// checked against an independent brute-force evaluator (nested loops over the iters,
// paired with row-major logical indices), exhaustively on small layouts and on seeded
// random ones.
#include <catch2/catch.hpp>

#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/layout/Analysis.h"
#include "ir/layout/Layout.h"
#include "tests/unit/LayoutReference.h"
#include "tests/unit/RandomLayouts.h"

using namespace tyl::layout;
using namespace tyl::layout::test;

namespace {

// Random layouts: 0..4 shard iters, 0..2 replica iters, offsets, over a few axes.
struct RandomLayouts : test::RandomSource {
  using RandomSource::RandomSource;

  Iter iter(bool mOnly, bool nonNegative) {
    static constexpr Axis kAxes[] = {Axis::m, Axis::laneid, Axis::warpid, Axis::TCol};
    Axis a = mOnly ? Axis::m : kAxes[pick(0, 3)];
    return Iter{pick(1, 5), pick(nonNegative ? 0 : -3, 9), a};
  }

  TileLayout tile(bool mOnly, bool nonNegative) {
    TileLayout t;
    for (int64_t i = pick(0, 4); i > 0; --i) t.shard.push_back(iter(mOnly, nonNegative));
    for (int64_t i = pick(0, 2); i > 0; --i) t.replica.push_back(iter(mOnly, nonNegative));
    if (pick(0, 1)) t.offset.add(Axis::m, pick(nonNegative ? 0 : -5, 7));
    if (!mOnly && pick(0, 1)) t.offset.add(Axis::warpid, pick(-2, 3));
    return t;
  }

  Layout layout() {
    if (pick(0, 2) != 0) return Layout{tile(false, false)};
    Swizzle s = swizzle(3);
    return Layout::compose(s, tile(true, true));
  }
};

constexpr uint64_t kSeed = 0x7e57'1a70'2024'0001ull;

// A few shapes of n elements: flat, padded with unit dimensions, and split at the
// smallest divisor.
std::vector<Shape> fewShapes(int64_t n) {
  std::vector<Shape> shapes{{n}, {1, n, 1}};
  for (int64_t d = 2; d < n; ++d)
    if (n % d == 0) {
      shapes.push_back({d, n / d});
      shapes.push_back({n / d, 1, d});
      break;
    }
  return shapes;
}

void checkAgainstReference(const Layout& layout, const std::vector<Shape>& shapes) {
  Reference ref = evaluate(layout);
  int64_t n = layout.size();
  REQUIRE(static_cast<int64_t>(ref.base.size()) == n);
  auto where = [&](const char* what, int64_t index, const Point& got, const Point& want) {
    return toString(layout) + " " + what + " at index " + std::to_string(index) + ": got " + pointText(got) +
           ", want " + pointText(want);
  };
  for (int64_t i = 0; i < n; ++i) {
    Point got = toPoint(apply(layout, i));
    const Point& want = ref.base[static_cast<size_t>(i)];
    require(got == want, [&] { return where("apply(index)", i, got, want); });
  }
  uint32_t axes = layout.tile.axesMask() | (layout.swizzle ? axisBit(Axis::m) : 0u);
  // A stride at a time (these small layouts always fit in 64 bits).
  REQUIRE(stepsFitIn64Bits(layout.tile));
  for (Axis a : allAxes()) {
    std::optional<std::vector<int64_t>> all = applyAxisToAll(layout, a);
    REQUIRE(all);
    REQUIRE(static_cast<int64_t>(all->size()) == n);
    for (int64_t i = 0; i < n; ++i)
      require((*all)[static_cast<size_t>(i)] == ref.base[static_cast<size_t>(i)][static_cast<size_t>(a)],
              [&] { return toString(layout) + " applyAxisToAll on " + std::string(axisName(a)) + " at " + std::to_string(i); });
  }
  int64_t visited = 0;
  forEachPlacement(layout, [&](int64_t index, const PhysCoord& p) {
    const std::vector<Point>& wantAll = ref.tuples[static_cast<size_t>(index)];
    const size_t r = static_cast<size_t>(visited++) - static_cast<size_t>(index) * wantAll.size();
    require(r < wantAll.size() && toPoint(p) == wantAll[r] && p.axesMask() == axes,
            [&] { return where("forEachPlacement", index, toPoint(p), wantAll[r < wantAll.size() ? r : 0]); });
    return true;
  });
  CHECK(visited == n * layout.tile.replicaCount());
  for (const Shape& shape : shapes) {
    int64_t index = 0;
    odometer(shape, [&](const std::vector<int64_t>& c) {
      Point got = toPoint(apply(layout, c, shape));
      const Point& want = ref.base[static_cast<size_t>(index)];
      require(got == want, [&] { return where("apply(coord, shape)", index, got, want); });
      for (Axis a : allAxes())
        require(applyAxis(layout, c, shape, a) == want[static_cast<size_t>(a)],
                [&] { return where("applyAxis", index, got, want) + " on " + std::string(axisName(a)); });
      std::vector<PhysCoord> all = applyAll(layout, c, shape);
      const std::vector<Point>& wantAll = ref.tuples[static_cast<size_t>(index)];
      require(all.size() == wantAll.size(), [&] { return toString(layout) + ": replica count differs"; });
      for (size_t r = 0; r < all.size(); ++r) {
        Point gotR = toPoint(all[r]);
        require(gotR == wantAll[r], [&] { return where("applyAll", index, gotR, wantAll[r]); });
        // Every tuple holds every axis of the layout.
        require(all[r].axesMask() == axes, [&] { return toString(layout) + ": tuple axes differ"; });
      }
      ++index;
    });
  }
}

}  // namespace

// ---- Worked numbers --------------------------------------------------------------

TEST_CASE("worked example: lane-sharded fragment", "[core]") {
  Layout l{makeTile({{32, 1, Axis::laneid}, {4, 1, Axis::m}})};
  PhysCoord p = apply(l, Shape{3, 2}, Shape{32, 4});
  CHECK(p[Axis::laneid] == 3);
  CHECK(p[Axis::m] == 2);
  CHECK(p.axesMask() == (axisBit(Axis::laneid) | axisBit(Axis::m)));
}

TEST_CASE("worked example: row-major and 128B swizzle", "[core]") {
  Layout plain{makeTile({{16, 32}, {32, 1}})};
  CHECK(apply(plain, Shape{3, 7}, Shape{16, 32})[Axis::m] == 103);

  Layout sw = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{8, 64}, {64, 1}}));
  CHECK(apply(sw, Shape{1, 0}, Shape{8, 64})[Axis::m] == 72);
  // addr(i, j) = 64i + 8((j / 8) xor i) + j % 8
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 64; ++j)
      REQUIRE(apply(sw, Shape{i, j}, Shape{8, 64})[Axis::m] == 64 * i + 8 * ((j / 8) ^ i) + j % 8);

  Layout s232 = Layout::compose(Swizzle::make(3, 2, 2), TileLayout::rowMajor(Shape{32, 32}));
  CHECK(apply(s232, Shape{1, 0}, Shape{32, 32})[Axis::m] == 40);
}

TEST_CASE("worked example: ComposeLayout(0, 2, 3) over S[8, 8]", "[core]") {
  Layout l = Layout::compose(Swizzle::make(0, 2, 3), TileLayout::rowMajor(Shape{8, 8}));
  CHECK(apply(l, Shape{1, 2}, Shape{8, 8})[Axis::m] == 11);
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 8; ++j)
      REQUIRE(apply(l, Shape{i, j}, Shape{8, 8})[Axis::m] == i * 8 + (j / 4) * 4 + ((i % 4) ^ (j % 4)));
  // Inner and outer swizzle over S[64] (TIRx test_apply).
  Layout in = Layout::compose(Swizzle::make(0, 3, 3), TileLayout::rowMajor(Shape{64}));
  Layout out = Layout::compose(Swizzle::make(0, 3, 3, false), TileLayout::rowMajor(Shape{64}));
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      REQUIRE(apply(in, i * 8 + j)[Axis::m] == i * 8 + (i ^ j));
      REQUIRE(apply(out, i * 8 + j)[Axis::m] == (i ^ j) * 8 + j);
    }
}

TEST_CASE("worked example: book layout with replica and offset", "[core]") {
  Layout l{makeTile({{8, 4, Axis::laneid}, {2, 1, Axis::warpid}, {4, 1, Axis::laneid}, {2, 1, Axis::m}},
                    {{2, 4, Axis::warpid}}, {{Axis::warpid, 5}})};
  Shape shape{8, 16};
  PhysCoord a = apply(l, Shape{1, 3}, shape);
  CHECK(a[Axis::laneid] == 5);
  CHECK(a[Axis::warpid] == 5);
  CHECK(a[Axis::m] == 1);
  PhysCoord b = apply(l, Shape{7, 15}, shape);
  CHECK(b[Axis::laneid] == 31);
  CHECK(b[Axis::warpid] == 6);
  CHECK(b[Axis::m] == 1);
  // Closed form: laneid = 4i + (j/2)%4, warpid = j/8 + 5 (+4r), m = j%2.
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 16; ++j) {
      std::vector<PhysCoord> all = applyAll(l, Shape{i, j}, shape);
      REQUIRE(all.size() == 2);
      for (int64_t r = 0; r < 2; ++r) {
        const PhysCoord& p = all[static_cast<size_t>(r)];
        REQUIRE(p[Axis::laneid] == 4 * i + (j / 2) % 4);
        REQUIRE(p[Axis::warpid] == j / 8 + 5 + 4 * r);
        REQUIRE(p[Axis::m] == j % 2);
      }
    }
  CHECK(toString(l) == "S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)] + R[2 : 4@warpid] + 5@warpid");
}

TEST_CASE("worked example: replicas of a lane-sharded fragment", "[core]") {
  Layout l{makeTile({{32, 1, Axis::laneid}, {4, 1, Axis::m}}, {{2, 1, Axis::warpid}}, {{Axis::m, 4}})};
  std::vector<PhysCoord> all = applyAll(l, Shape{3, 2}, Shape{32, 4});
  REQUIRE(all.size() == 2);
  PhysCoord first, second;
  first.set(Axis::laneid, 3);
  first.set(Axis::m, 6);
  first.set(Axis::warpid, 0);
  second = first;
  second.set(Axis::warpid, 1);
  CHECK(all[0] == first);
  CHECK(all[1] == second);
  // The base holds only the shard and offset axes.
  PhysCoord base = apply(l, Shape{3, 2}, Shape{32, 4});
  CHECK_FALSE(base.has(Axis::warpid));
  CHECK(base[Axis::m] == 6);
}

TEST_CASE("worked example: unit iter in a fragment (TIRx test_tile_layout_3)", "[core]") {
  Layout l{makeTile({{8, 4, Axis::laneid}, {1, 2}, {4, 1, Axis::laneid}, {2, 1}})};
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      PhysCoord p = apply(l, Shape{i, j}, Shape{8, 8});
      REQUIRE(p[Axis::m] == j % 2);
      REQUIRE(p[Axis::laneid] == 4 * i + j / 2);
    }
  CHECK(span(l.tile, Axis::m) == 2);
  CHECK(span(makeTile({{8, 8}, {6, 1}}), Axis::m) == 62);
}

// ---- Swizzle ---------------------------------------------------------------------

TEST_CASE("swizzle is an involution that keeps the low M bits", "[core][swizzle]") {
  for (int m = 0; m <= 3; ++m)
    for (int b = 0; b <= 3; ++b)
      for (int s = b; s <= 4; ++s)
        for (bool inner : {true, false}) {
          Swizzle sw = Swizzle::make(m, b, s, inner);
          int64_t lowMask = (int64_t{1} << m) - 1;
          for (int64_t x = 0; x < 3 * sw.period(); ++x) {
            INFO("M=" << m << " B=" << b << " S=" << s << " inner=" << inner << " x=" << x);
            int64_t y = sw.apply(x);
            REQUIRE(y == refSwizzle(sw, x));
            REQUIRE(sw.apply(y) == x);
            REQUIRE((y & lowMask) == (x & lowMask));
            // It permutes within one period.
            REQUIRE(y / sw.period() == x / sw.period());
          }
        }
}

TEST_CASE("swizzle fields are validated", "[core][swizzle]") {
  CHECK_THROWS_AS(Swizzle::make(3, 3, 2), Error);  // S < B: fields overlap
  CHECK_THROWS_WITH(Swizzle::make(0, 2, 1), Catch::Contains("overlap"));
  CHECK_THROWS_AS(Swizzle::make(-1, 2, 3), Error);
  CHECK_THROWS_AS(Swizzle::make(3, -1, 3), Error);
  CHECK_THROWS_AS(Swizzle::make(3, 2, -3), Error);
  CHECK_THROWS_AS(Swizzle::make(20, 21, 22), Error);  // 63 bits
  CHECK_THROWS_AS(Swizzle::make(INT_MAX, INT_MAX, INT_MAX), Error);  // the sum must not wrap
  CHECK_NOTHROW(Swizzle::make(20, 20, 22));
  CHECK_NOTHROW(Swizzle::make(3, 3, 3));
  CHECK_NOTHROW(Swizzle::make(0, 0, 0));
  CHECK_THROWS_AS(Swizzle::make(3, 3, 3).apply(-8), Error);
}

TEST_CASE("compose rejects a tile layout with a non-m axis", "[core][swizzle]") {
  Swizzle s = Swizzle::make(3, 3, 3);
  CHECK_THROWS_AS(Layout::compose(s, makeTile({{32, 1, Axis::laneid}, {4, 1}})), Error);
  CHECK_THROWS_AS(Layout::compose(s, makeTile({{4, 1}}, {{2, 1, Axis::warpid}})), Error);
  CHECK_THROWS_AS(Layout::compose(s, makeTile({{4, 1}}, {}, {{Axis::TCol, 2}})), Error);
  CHECK_THROWS_WITH(Layout::compose(s, makeTile({{4, 1, Axis::TLane}})), Catch::Contains("'TLane'"));
  Layout ok = Layout::compose(s, makeTile({{8, 64}, {64, 1}}, {{2, 512}}, {{Axis::m, 8}}));
  CHECK(ok.swizzle == s);
  CHECK(toString(ok) == "ComposeLayout(3, 3, 3, S[(8, 64) : (64, 1)] + R[2 : 512] + 8)");
}

// ---- Coordinates -----------------------------------------------------------------

TEST_CASE("flatten, unflatten and splitIndex", "[core]") {
  Shape shape{3, 4, 5};
  int64_t index = 0;
  odometer(shape, [&](const std::vector<int64_t>& c) {
    REQUIRE(flatten(c, shape) == index);
    REQUIRE(unflatten(index, shape) == c);
    REQUIRE(splitIndex(index, shape) == c);
    ++index;
  });
  CHECK(index == 60);
  CHECK(shapeSize(shape) == 60);
  // nextCoord walks the same order and wraps to zeros after the last coordinate.
  std::vector<int64_t> c(3, 0);
  for (int64_t i = 1; i < 60; ++i) {
    REQUIRE(nextCoord(c, shape));
    REQUIRE(c == unflatten(i, shape));
  }
  CHECK_FALSE(nextCoord(c, shape));
  CHECK(c == Shape{0, 0, 0});
  std::vector<int64_t> none;
  CHECK_FALSE(nextCoord(none, Shape{}));
  CHECK(shapeSize(Shape{}) == 1);
  // The first entry takes the undivided quotient: an index past the size extends it.
  CHECK(splitIndex(4000, Shape{512}) == Shape{4000});
  CHECK(splitIndex(100, Shape{2, 8}) == Shape{12, 4});
  CHECK(apply(Layout{TileLayout::rowMajor(Shape{512})}, 4000)[Axis::m] == 4000);
  CHECK(splitIndex(7, Shape{}).empty());
  CHECK_THROWS_AS(flatten(Shape{1, 4}, Shape{2, 4}), Error);
  CHECK_THROWS_AS(flatten(Shape{-1, 0}, Shape{2, 4}), Error);
  CHECK_THROWS_AS(flatten(Shape{1}, Shape{2, 4}), Error);
  CHECK_THROWS_AS(unflatten(8, Shape{2, 4}), Error);
  CHECK_THROWS_AS(unflatten(-1, Shape{2, 4}), Error);
}

TEST_CASE("apply checks coordinates and shapes", "[core]") {
  Layout l{TileLayout::rowMajor(Shape{4, 8})};
  CHECK_THROWS_AS(apply(l, Shape{0, 0}, Shape{4, 4}), Error);  // 16 != 32 elements
  CHECK_THROWS_AS(apply(l, Shape{4, 0}, Shape{4, 8}), Error);
  CHECK_THROWS_AS(applyIters(l, Shape{1, 2, 3}), Error);
  CHECK(applyIters(l, Shape{3, 5})[Axis::m] == 29);
  CHECK(iterCoord(l, Shape{5, 1}, Shape{8, 4}) == Shape{2, 5});
  CHECK(iterCoord(l, Shape{1, 1, 1}, Shape{2, 2, 8}) == Shape{3, 1});  // index 25
}

// ---- Exhaustive and randomized evaluation ----------------------------------------

TEST_CASE("apply and applyAll match the brute-force evaluator on every small layout", "[core][exhaustive]") {
  std::vector<TileLayout> family = smallFamily();
  REQUIRE(family.size() > 30000);
  for (size_t k = 0; k < family.size(); k += 3)
    checkAgainstReference(Layout{family[k]}, fewShapes(family[k].size()));
  // iterCoord is the row-major split of the flattened coordinate.
  for (size_t k = 0; k < family.size(); k += 97) {
    Layout l{family[k]};
    int64_t n = l.size();
    int64_t index = 0;
    odometer(Shape{n}, [&](const std::vector<int64_t>& c) {
      std::vector<int64_t> ic = iterCoord(l, c, Shape{n});
      int64_t back = 0;
      for (size_t i = 0; i < ic.size(); ++i) {
        REQUIRE(ic[i] >= 0);
        REQUIRE(ic[i] < l.tile.shard[i].extent);
        back = back * l.tile.shard[i].extent + ic[i];
      }
      REQUIRE(back == index++);
      REQUIRE(applyIters(l, ic) == apply(l, c, Shape{n}));
    });
  }
}

TEST_CASE("apply and applyAll match the brute-force evaluator on random layouts", "[core][random]") {
  RandomLayouts gen(kSeed);
  INFO("seed " << kSeed);
  for (int i = 0; i < 600; ++i) {
    INFO("case " << i);
    Layout l = gen.layout();
    checkAgainstReference(l, l.size() <= 64 ? factorizations(l.size()) : fewShapes(l.size()));
  }
}

TEST_CASE("replicaOffsets enumerates the replica product row-major", "[core]") {
  TileLayout t = makeTile({{4, 1}}, {{2, 8, Axis::m}, {3, 1, Axis::warpid}});
  std::vector<PhysCoord> r = replicaOffsets(t);
  REQUIRE(r.size() == 6);
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 3; ++b) {
      const PhysCoord& p = r[static_cast<size_t>(a * 3 + b)];
      CHECK(p[Axis::m] == 8 * a);
      CHECK(p[Axis::warpid] == b);
    }
  std::vector<PhysCoord> none = replicaOffsets(makeTile({{4, 1}}));
  REQUIRE(none.size() == 1);
  CHECK(none[0].empty());
  CHECK(t.replicaCount() == 6);
}

TEST_CASE("span and cosize match their definitions", "[core]") {
  RandomLayouts gen(kSeed + 1);
  INFO("seed " << kSeed + 1);
  for (int i = 0; i < 400; ++i) {
    Layout l = gen.layout();
    INFO("case " << i << " layout " << toString(l));
    Reference ref = evaluate(l);
    for (Axis a : allAxes()) {
      INFO("axis " << axisName(a));
      int64_t s = 1;
      for (const auto* iters : {&l.tile.shard, &l.tile.replica})
        for (const Iter& it : *iters)
          if (it.axis == a) s += (it.extent - 1) * (it.stride < 0 ? -it.stride : it.stride);
      REQUIRE(span(l.tile, a) == s);

      bool used = (l.tile.axesMask() & axisBit(a)) != 0;
      int64_t hi = INT64_MIN;
      for (const auto& tuples : ref.tuples)
        for (const Point& p : tuples) hi = std::max(hi, p[static_cast<size_t>(a)]);
      if (!l.swizzle) {
        Reference unswizzled = evaluate(Layout{l.tile});
        int64_t lo = INT64_MAX;
        for (const auto& tuples : unswizzled.tuples)
          for (const Point& p : tuples) lo = std::min(lo, p[static_cast<size_t>(a)]);
        REQUIRE(minValue(l.tile, a) == (used ? lo : 0));
      }
      if (!used) {
        REQUIRE(cosize(l, a) == 0);
      } else if (!l.swizzle) {
        REQUIRE(cosize(l, a) == hi + 1);
      } else {
        // With a swizzle cosize is a bound that stays inside the period of the maximum,
        // and exact for small layouts whose offsets are not negative.
        REQUIRE(cosize(l, a) >= hi + 1);
        REQUIRE(cosize(l, a) <= (hi / l.swizzle->period() + 1) * l.swizzle->period());
        if (a == Axis::m && minValue(l.tile, a) >= 0) REQUIRE(cosize(l, a) == hi + 1);
      }
    }
  }
  Layout sw = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{8, 64}, {64, 1}}));
  CHECK(cosize(sw, Axis::m) == 512);
  CHECK(cosize(sw, Axis::laneid) == 0);
  CHECK(cosize(Layout{makeTile({{4, 2}}, {{2, 100}}, {{Axis::m, 1}})}, Axis::m) == 108);
  CHECK(cosize(Layout{makeTile({{4, -2}}, {}, {{Axis::m, 6}})}, Axis::m) == 7);
  CHECK(minValue(makeTile({{4, -2}}, {}, {{Axis::m, 6}}), Axis::m) == 0);
  CHECK(minValue(makeTile({{4, -2}, {2, 1}}, {{3, -5}}, {{Axis::m, 1}}), Axis::m) == -15);
  CHECK(minValue(makeTile({{4, 1}}), Axis::laneid) == 0);
}

// ---- Sizes, PhysCoord, text ------------------------------------------------------

TEST_CASE("sizes and axis masks", "[core]") {
  TileLayout t = makeTile({{8, 4, Axis::laneid}, {2, 1, Axis::warpid}, {4, 1, Axis::laneid}, {2, 1}},
                          {{2, 4, Axis::TCol}}, {{Axis::wgid, 5}});
  CHECK(t.size() == 128);
  CHECK(t.size(Axis::laneid) == 32);
  CHECK(t.size(Axis::warpid) == 2);
  CHECK(t.size(Axis::TLane) == 1);
  CHECK(t.shardExtents() == Shape{8, 2, 4, 2});
  CHECK(t.baseAxesMask() ==
        (axisBit(Axis::laneid) | axisBit(Axis::warpid) | axisBit(Axis::m) | axisBit(Axis::wgid)));
  CHECK(t.axesMask() == (t.baseAxesMask() | axisBit(Axis::TCol)));
  CHECK(TileLayout::rowMajor(Shape{2, 3, 4}) == makeTile({{2, 12}, {3, 4}, {4, 1}}));
  CHECK_THROWS_AS(TileLayout::rowMajor(Shape{2, 0}), Error);
  CHECK(threadAxesMask() == ((1u << kAxisCount) - 1 - memoryAxesMask()));
  CHECK(memoryAxesMask() == (axisBit(Axis::m) | axisBit(Axis::TLane) | axisBit(Axis::TCol)));
}

TEST_CASE("PhysCoord keeps presence separate from value", "[core]") {
  PhysCoord p;
  CHECK(p.empty());
  p.add(Axis::laneid, 3);
  p.add(Axis::laneid, 4);
  p.set(Axis::m, 0);
  CHECK(p[Axis::laneid] == 7);
  CHECK(p.has(Axis::m));
  CHECK_FALSE(p.has(Axis::warpid));
  CHECK(p[Axis::warpid] == 0);
  PhysCoord q = p.project(axisBit(Axis::m) | axisBit(Axis::warpid));
  CHECK(q.axesMask() == axisBit(Axis::m));
  PhysCoord r;
  r.set(Axis::m, 0);
  CHECK(q == r);
  CHECK(q.hash() == r.hash());
  r.erase(Axis::m);
  CHECK(r.empty());
  CHECK_FALSE(q == r);
  CHECK(toString(p) == "{laneid: 7, m: 0}");
}

TEST_CASE("text forms", "[core]") {
  CHECK(toString(makeTile({{32, 1, Axis::laneid}, {4, 1}})) == "S[(32, 4) : (1@laneid, 1)]");
  CHECK(toString(makeTile({})) == "S[1]");
  CHECK(toString(makeTile({{8, 1}}, {}, {{Axis::m, -3}, {Axis::warpid, 0}})) == "S[8 : 1] - 3");
  CHECK(toString(Layout::compose(Swizzle::make(0, 3, 3, false), TileLayout::rowMajor(Shape{64}))) ==
        "ComposeLayout(per_element = 0, swizzle_len = 3, atom_len = 3, tile_layout = S[64 : 1], swizzle_inner = False)");
  CHECK(toString(Layout::compose(Swizzle::make(3, 3, 3, false), TileLayout::rowMajor(Shape{64}))) ==
        "ComposeLayout(3, 3, 3, S[64 : 1], swizzle_inner = False)");
  CHECK(shapeToString(Shape{4}) == "(4,)");
  CHECK(shapeToString(Shape{4, 2}) == "(4, 2)");
  CHECK(axisFromName("tid_in_wg") == Axis::tid_in_wg);
  CHECK_FALSE(axisFromName("reg").has_value());
  CHECK(axisKind(Axis::bx) == AxisKind::Block);
}

// ---- Overflow --------------------------------------------------------------------

TEST_CASE("overflow is reported, never wrapped", "[core][overflow]") {
  const int64_t big = INT64_MAX / 2;  // 2^62 - 1
  CHECK_THROWS_AS(makeTile({{int64_t{1} << 32, 1}, {int64_t{1} << 32, 1}}).size(), OverflowError);
  CHECK_THROWS_AS(apply(Layout{makeTile({{4, big}})}, 3), OverflowError);
  CHECK(apply(Layout{makeTile({{4, big}})}, 2)[Axis::m] == 2 * big);
  // Stepping through such a layout would overflow: applyAxisToAll declines, and
  // forEachPlacement applies element by element, reporting the overflow where apply does.
  CHECK_FALSE(stepsFitIn64Bits(makeTile({{4, big}})));
  CHECK(stepsFitIn64Bits(makeTile({{3, big}})));
  CHECK_FALSE(stepsFitIn64Bits(makeTile({{2, INT64_MIN}})));
  CHECK_FALSE(stepsFitIn64Bits(makeTile({{2, 1}}, {}, {{Axis::m, INT64_MIN}})));
  CHECK_FALSE(stepsFitIn64Bits(makeTile({{2, big}, {2, big}}, {}, {{Axis::m, 2}})));
  CHECK_FALSE(applyAxisToAll(Layout{makeTile({{4, big}})}, Axis::m));
  int64_t reached = -1;
  CHECK_THROWS_AS(forEachPlacement(Layout{makeTile({{4, big}})},
                                   [&](int64_t index, const PhysCoord&) {
                                     reached = index;
                                     return true;
                                   }),
                  OverflowError);
  CHECK(reached == 2);
  CHECK_THROWS_AS(apply(Layout{makeTile({{2, INT64_MAX}}, {}, {{Axis::m, 1}})}, 1), OverflowError);
  CHECK_THROWS_AS(apply(Layout{makeTile({{2, INT64_MIN}}, {}, {{Axis::m, -1}})}, 1), OverflowError);
  CHECK_THROWS_AS(span(makeTile({{3, big + 1}}), Axis::m), OverflowError);
  CHECK_THROWS_AS(span(makeTile({{2, INT64_MIN}}), Axis::m), OverflowError);
  CHECK_THROWS_AS(cosize(Layout{makeTile({{2, INT64_MAX}}, {}, {{Axis::m, 1}})}, Axis::m), OverflowError);
  CHECK_THROWS_AS(flatten(Shape{2, 0}, Shape{INT64_MAX, INT64_MAX}), OverflowError);
  // The outermost stride would be 2^64; the stride past the last dimension is never needed.
  CHECK_THROWS_AS(TileLayout::rowMajor(Shape{2, int64_t{1} << 32, int64_t{1} << 32}), OverflowError);
  CHECK(TileLayout::rowMajor(Shape{int64_t{1} << 62, 2}).shard[0].stride == 2);
  CHECK_THROWS_AS(replicaOffsets(makeTile({{2, 1}}, {{2, INT64_MAX}, {2, INT64_MAX}})), OverflowError);
  PhysCoord p;
  p.add(Axis::m, INT64_MAX);
  CHECK_THROWS_AS(p.add(Axis::m, 1), OverflowError);
}
