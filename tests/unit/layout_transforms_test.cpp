// Tests of Transforms.h. Each operation is checked against its definition, evaluated
// by an independent brute-force evaluator (nested loops over the iters, paired with
// row-major logical indices), exhaustively on small layouts and on seeded random ones.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "ir/layout/Analysis.h"
#include "ir/layout/Transforms.h"
#include "tests/unit/LayoutReference.h"
#include "tests/unit/RandomLayouts.h"

using namespace tyl::layout;
using namespace tyl::layout::test;

namespace {

std::vector<Point> sorted(std::vector<Point> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Both layouts map every index to the same point and the same set of replica tuples.
void requireSameMap(const Layout& got, const Layout& want, const std::string& what) {
  require(got.size() == want.size(), [&] { return what + ": sizes differ"; });
  Reference g = evaluate(got);
  Reference w = evaluate(want);
  for (size_t i = 0; i < w.base.size(); ++i) {
    require(g.base[i] == w.base[i], [&] {
      return what + ": " + toString(got) + " vs " + toString(want) + " at index " + std::to_string(i) +
             ": got " + pointText(g.base[i]) + ", want " + pointText(w.base[i]);
    });
    require(sorted(g.tuples[i]) == sorted(w.tuples[i]), [&] {
      return what + ": replicas of " + toString(got) + " vs " + toString(want) + " differ at index " +
             std::to_string(i);
    });
  }
}

constexpr uint64_t kSeed = 0x7e57'1a70'2024'0002ull;

struct Random : test::RandomSource {
  using RandomSource::RandomSource;

  Axis axis(bool mOnly) {
    static constexpr Axis kAxes[] = {Axis::m, Axis::laneid, Axis::warpid, Axis::TCol, Axis::m};
    return mOnly ? Axis::m : kAxes[pick(0, 4)];
  }

  // Iters whose extents multiply to `extent`, each extent a random divisor of what is left.
  std::vector<Iter> itersFor(int64_t extent, bool mOnly, bool nonNegative) {
    std::vector<Iter> iters;
    int64_t left = extent;
    while (left > 1 || pick(0, 4) == 0) {
      int64_t e = divisor(left);
      iters.push_back(Iter{e, pick(nonNegative ? 0 : -3, 9), axis(mOnly)});
      left /= e;
    }
    return iters;
  }

  Shape shape(int rank, int64_t maxExtent) {
    Shape s;
    for (int d = 0; d < rank; ++d) s.push_back(pick(1, maxExtent));
    return s;
  }

  // A layout whose shard is built dimension by dimension, so it groups by `shape`,
  // plus random replicas and offsets.
  TileLayout groupable(const Shape& shape, bool mOnly, bool nonNegative) {
    TileLayout t;
    for (int64_t e : shape)
      for (const Iter& it : itersFor(e, mOnly, nonNegative)) t.shard.push_back(it);
    for (int64_t i = pick(0, 2); i > 0; --i)
      t.replica.push_back(Iter{pick(1, 3), pick(nonNegative ? 0 : -2, 6), axis(mOnly)});
    if (pick(0, 1)) t.offset.add(axis(mOnly), pick(nonNegative ? 0 : -4, 6));
    return t;
  }

  Layout maybeSwizzled(const Shape& shape) {
    if (pick(0, 2) != 0) return Layout{groupable(shape, false, false)};
    Swizzle s = swizzle(2);
    return Layout::compose(s, groupable(shape, true, true));
  }
};

// 1 + sum of (extent - 1) * |stride| over the shard and replica iters on `axis`.
int64_t refSpan(const TileLayout& t, Axis axis) {
  int64_t s = 1;
  for (const auto* iters : {&t.shard, &t.replica})
    for (const Iter& it : *iters)
      if (it.axis == axis) s += (it.extent - 1) * (it.stride < 0 ? -it.stride : it.stride);
  return s;
}

}  // namespace

// ---- canonicalize ----------------------------------------------------------------

TEST_CASE("canonicalize: fuses contiguous iters", "[transforms][canonicalize]") {
  CHECK(canonicalize(makeTile({{8, 512}, {8, 64}, {8, 8}, {4, 2}, {2, 1}})) == makeTile({{4096, 1}}));
  CHECK(canonicalize(makeTile({{8, 4, Axis::laneid}, {4, 1, Axis::laneid}})) ==
        makeTile({{32, 1, Axis::laneid}}));
  // Zero strides fuse too: both steps add nothing.
  CHECK(canonicalize(makeTile({{2, 0}, {3, 0}})) == makeTile({{6, 0}}));
  // Partial runs: only the contiguous neighbours fuse.
  CHECK(canonicalize(makeTile({{2, 100}, {4, 8}, {2, 4}, {4, 2}})) == makeTile({{2, 100}, {8, 4}, {4, 2}}));
  CHECK(canonicalize(makeTile({{2, 100}, {4, 8}, {2, 4}, {4, 1}})) == makeTile({{2, 100}, {32, 1}}));
  // Different axes or a gap never fuse.
  TileLayout apart = makeTile({{4, 4, Axis::laneid}, {4, 1}});
  CHECK(canonicalize(apart) == apart);
  TileLayout gap = makeTile({{4, 5}, {4, 1}});
  CHECK(canonicalize(gap) == gap);
  // Negative strides fuse when the outer step is one inner sweep.
  CHECK(canonicalize(makeTile({{2, -8}, {4, -2}})) == makeTile({{8, -2}}));
}

TEST_CASE("canonicalize: drops unit iters and zero offsets, sorts replicas", "[transforms][canonicalize]") {
  TileLayout t = makeTile({{1, 7}, {4, 1}, {1, 3, Axis::laneid}}, {{1, 5}, {2, 1, Axis::warpid}, {1, 9}},
                          {{Axis::laneid, 0}, {Axis::m, 2}});
  CHECK(canonicalize(t) == makeTile({{4, 1}}, {{2, 1, Axis::warpid}}, {{Axis::m, 2}}));
  CHECK(toString(canonicalize(t)) == "S[4 : 1] + R[2 : 1@warpid] + 2");
  // Replicas sort by axis (registry order), then stride, then extent.
  TileLayout r = makeTile({{4, 1}}, {{3, 8}, {2, 4}, {2, 1, Axis::warpid}, {2, 8}, {2, 2, Axis::laneid}});
  CHECK(canonicalize(r).replica ==
        std::vector<Iter>{{2, 2, Axis::laneid}, {2, 1, Axis::warpid}, {2, 4}, {2, 8}, {3, 8}});
  // All-unit shard: nothing left.
  CHECK(canonicalize(makeTile({{1, 4}, {1, 1, Axis::laneid}})).shard.empty());
  // A swizzled layout canonicalizes its tile and keeps its swizzle.
  Layout sw = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{8, 64}, {1, 5}, {8, 8}, {8, 1}}));
  Layout c = canonicalize(sw);
  CHECK(c.swizzle == sw.swizzle);
  CHECK(c.tile == makeTile({{512, 1}}));
  // Invalid extents are errors, not silently dropped.
  CHECK_THROWS_AS(canonicalize(makeTile({{0, 1}})), Error);
  CHECK_THROWS_AS(canonicalize(makeTile({{4, 1}}, {{-2, 1}})), Error);
}

TEST_CASE("canonicalize: a stride product that overflows just does not fuse", "[transforms][overflow]") {
  // (2 - 1) * 2^62 fits, so the layout is valid; 2 * 2^62 does not, so it cannot fuse.
  TileLayout t = makeTile({{2, 1}, {2, int64_t{1} << 62}});
  CHECK(canonicalize(t) == t);
  CHECK(apply(Layout{canonicalize(t)}, 3)[Axis::m] == 1 + (int64_t{1} << 62));
  // Fusing two zero-stride iters of 2^32 would need an extent of 2^64.
  CHECK_THROWS_AS(canonicalize(makeTile({{int64_t{1} << 32, 0}, {int64_t{1} << 32, 0}})), OverflowError);
}

// Canonical form: no unit iters, no contiguous neighbours, sorted replicas, no zero offset.
void requireCanonical(const TileLayout& c) {
  for (const Iter& it : c.shard) require(it.extent != 1, [&] { return toString(c) + ": unit iter left"; });
  for (const Iter& it : c.replica)
    require(it.extent != 1, [&] { return toString(c) + ": unit replica left"; });
  for (size_t i = 1; i < c.shard.size(); ++i) {
    const Iter& o = c.shard[i - 1];
    const Iter& n = c.shard[i];
    require(!(o.axis == n.axis && o.stride == n.extent * n.stride),
            [&] { return toString(c) + ": not fused"; });
  }
  for (size_t i = 1; i < c.replica.size(); ++i) {
    const Iter& a = c.replica[i - 1];
    const Iter& b = c.replica[i];
    require(std::tuple(static_cast<int>(a.axis), a.stride, a.extent) <=
                std::tuple(static_cast<int>(b.axis), b.stride, b.extent),
            [&] { return toString(c) + ": replicas not sorted"; });
  }
  c.offset.forEach([&](Axis, int64_t v) { require(v != 0, [&] { return toString(c) + ": zero offset"; }); });
}

TEST_CASE("canonicalize: preserves the map on every small layout", "[transforms][canonicalize][exhaustive]") {
  std::vector<TileLayout> family = smallFamily();
  for (size_t k = 0; k < family.size(); k += 3) {
    Layout l{family[k]};
    Layout c = canonicalize(l);
    requireCanonical(c.tile);
    requireSameMap(c, l, "canonicalize");
    require(canonicalize(c) == c, [&] { return toString(l) + ": canonicalize is not idempotent"; });
  }
}

TEST_CASE("canonicalize: preserves the map on random layouts", "[transforms][canonicalize][random]") {
  Random gen(kSeed);
  INFO("seed " << kSeed);
  for (int i = 0; i < 500; ++i) {
    INFO("case " << i);
    Shape shape = gen.shape(static_cast<int>(gen.pick(1, 3)), 6);
    Layout l = gen.maybeSwizzled(shape);
    // Scramble iter order so that not everything is groupable or fusable.
    if (gen.pick(0, 1)) std::shuffle(l.tile.shard.begin(), l.tile.shard.end(), gen.rng);
    Layout c = canonicalize(l);
    requireCanonical(c.tile);
    requireSameMap(c, l, "canonicalize");
    REQUIRE(canonicalize(c) == c);
  }
}

// ---- group -----------------------------------------------------------------------

// Independent statement of groupability: every internal boundary of the shape (a
// prefix product) must fall on an iter boundary or split one iter evenly.
bool refGroupable(const std::vector<Iter>& shard, const Shape& shape) {
  int64_t boundary = 1;
  for (size_t d = 0; d + 1 < shape.size(); ++d) {
    boundary *= shape[d];
    bool ok = false;
    int64_t before = 1;
    for (const Iter& it : shard) {
      if (boundary % before == 0 && it.extent % (boundary / before) == 0) ok = true;
      before *= it.extent;
    }
    if (!ok && boundary != before) return false;
  }
  return true;
}

std::vector<Iter> withoutUnits(const std::vector<Iter>& iters) {
  std::vector<Iter> kept;
  for (const Iter& it : iters)
    if (it.extent != 1) kept.push_back(it);
  return kept;
}

// The grouped layout's runs multiply to the dimensions, and evaluating each dimension
// over its own run gives the original map.
void requireGroupedCorrectly(const Layout& original, const Shape& shape, const Grouped& g) {
  std::string what = "group " + toString(original) + " by " + shapeToString(shape);
  const std::vector<Iter>& shard = g.layout.tile.shard;
  require(g.bounds.size() == shape.size() + 1 && g.bounds.front() == 0 && g.bounds.back() == shard.size(),
          [&] { return what + ": bad bounds"; });
  for (size_t d = 0; d < shape.size(); ++d) {
    require(g.bounds[d] <= g.bounds[d + 1], [&] { return what + ": bounds not monotone"; });
    int64_t product = 1;
    for (size_t i = g.bounds[d]; i < g.bounds[d + 1]; ++i) product *= shard[i].extent;
    require(product == shape[d],
            [&] { return what + ": run of dimension " + std::to_string(d) + " is wrong"; });
  }
  requireSameMap(g.layout, original, what);
  Reference ref = evaluate(original);
  int64_t index = 0;
  odometer(shape, [&](const std::vector<int64_t>& c) {
    Point p{};
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t rest = c[d];
      for (size_t i = g.bounds[d + 1]; i-- > g.bounds[d];) {
        at(p, shard[i].axis) += (rest % shard[i].extent) * shard[i].stride;
        rest /= shard[i].extent;
      }
    }
    g.layout.tile.offset.forEach([&](Axis a, int64_t v) { at(p, a) += v; });
    if (g.layout.swizzle) at(p, Axis::m) = refSwizzle(*g.layout.swizzle, at(p, Axis::m));
    require(p == ref.base[static_cast<size_t>(index)], [&] { return what + ": per-dimension map differs"; });
    ++index;
  });
}

TEST_CASE("group: examples", "[transforms][group]") {
  Layout frag{makeTile({{8, 4, Axis::laneid}, {1, 2}, {4, 1, Axis::laneid}, {2, 1}})};
  Grouped g = group(frag, Shape{8, 8});
  CHECK(g.layout.tile.shard == std::vector<Iter>{{8, 4, Axis::laneid}, {4, 1, Axis::laneid}, {2, 1}});
  CHECK(g.bounds == std::vector<size_t>{0, 1, 3});

  // A boundary inside an iter splits it; the outer part goes to the earlier dimension.
  Grouped flat = group(Layout{makeTile({{32, 1}})}, Shape{4, 8});
  CHECK(flat.layout.tile.shard == std::vector<Iter>{{4, 8}, {8, 1}});
  CHECK(flat.bounds == std::vector<size_t>{0, 1, 2});

  Grouped three = group(Layout{makeTile({{2, 1, Axis::laneid}, {12, 1}})}, Shape{2, 3, 2, 2});
  CHECK(three.layout.tile.shard == std::vector<Iter>{{2, 1, Axis::laneid}, {3, 4}, {2, 2}, {2, 1}});
  CHECK(three.bounds == std::vector<size_t>{0, 1, 2, 3, 4});

  // Extent-1 dimensions own an empty run.
  Grouped ones = group(Layout{makeTile({{8, 1}})}, Shape{1, 8, 1});
  CHECK(ones.bounds == std::vector<size_t>{0, 0, 1, 1});
  CHECK(group(Layout{makeTile({{1, 5}})}, Shape{}).bounds == std::vector<size_t>{0});

  // Uneven as given, but the canonical form S[24 : 1] splits: (6, 4) : (4, 1).
  // Replicas and offsets stay exactly as given (unsorted, zero offset kept).
  TileLayout uneven = makeTile({{4, 6}, {6, 1}}, {{2, 1, Axis::warpid}, {2, 1, Axis::laneid}}, {{Axis::tx, 0}});
  Grouped fused = group(Layout{uneven}, Shape{6, 4});
  CHECK(fused.layout.tile.shard == std::vector<Iter>{{6, 4}, {4, 1}});
  CHECK(fused.layout.tile.replica == uneven.replica);
  CHECK(fused.layout.tile.offset == uneven.offset);

  // Swizzle, replicas and offsets are kept.
  Layout sw =
      Layout::compose(Swizzle::make(3, 3, 3), makeTile({{8, 64}, {64, 1}}, {{2, 512}}, {{Axis::m, 4}}));
  Grouped gs = group(sw, Shape{4, 2, 8, 8});
  CHECK(gs.layout.swizzle == sw.swizzle);
  CHECK(gs.layout.tile.replica == sw.tile.replica);
  CHECK(gs.layout.tile.offset == sw.tile.offset);
  requireGroupedCorrectly(sw, Shape{4, 2, 8, 8}, gs);
}

TEST_CASE("group: errors", "[transforms][group]") {
  // laneid = index / 6 cannot be split into a part per dimension of (6, 4).
  CHECK_THROWS_WITH(group(Layout{makeTile({{4, 1, Axis::laneid}, {6, 1}})}, Shape{6, 4}),
                    Catch::Contains("cannot be grouped"));
  CHECK_THROWS_AS(group(Layout{makeTile({{4, 1}})}, Shape{2, 3}), Error);  // size mismatch
  CHECK_THROWS_AS(group(Layout{makeTile({{4, 1}})}, Shape{-2, -2}), Error);
  CHECK_THROWS_AS(group(Layout{makeTile({{4, 1}})}, Shape{0}), Error);
  // The outer half of S[4 : 2^62] would step 2^63.
  CHECK_THROWS_AS(group(Layout{makeTile({{4, int64_t{1} << 62}})}, Shape{2, 2}), OverflowError);
}

TEST_CASE("group: agrees with the definition on every small layout", "[transforms][group][exhaustive]") {
  std::vector<TileLayout> family = smallFamily();
  int grouped = 0, refused = 0;
  for (size_t k = 0; k < family.size(); k += 5) {
    Layout l{family[k]};
    std::vector<Shape> shapes = factorizations(l.size());
    for (size_t s = k % 3; s < shapes.size(); s += 3) {
      const Shape& shape = shapes[s];
      bool possible =
          refGroupable(withoutUnits(l.tile.shard), shape) || refGroupable(canonicalize(l.tile).shard, shape);
      bool ok = true;
      Grouped g;
      try {
        g = group(l, shape);
      } catch (const Error&) {
        ok = false;
      }
      require(ok == possible, [&] {
        return "group " + toString(l) + " by " + shapeToString(shape) + (ok ? " succeeded" : " failed");
      });
      if (ok) {
        requireGroupedCorrectly(l, shape, g);
        ++grouped;
      } else {
        ++refused;
      }
    }
  }
  CHECK(grouped > 1000);
  CHECK(refused > 100);
}

TEST_CASE("group: layouts built dimension by dimension always group", "[transforms][group][random]") {
  Random gen(kSeed + 1);
  INFO("seed " << kSeed + 1);
  for (int i = 0; i < 500; ++i) {
    INFO("case " << i);
    Shape shape = gen.shape(static_cast<int>(gen.pick(0, 4)), 6);
    Layout l = gen.maybeSwizzled(shape);
    INFO("layout " << toString(l) << " shape " << shapeToString(shape));
    Grouped g = group(l, shape);
    requireGroupedCorrectly(l, shape, g);
    // The caller's iters are kept, only unit iters go.
    REQUIRE(g.layout.tile.shard == withoutUnits(l.tile.shard));
  }
}

// ---- reduceDims ------------------------------------------------------------------

// reduceDims against its definition: every thread that holds an element of the source row of
// a result element (its coordinate with the reduced dimensions free) holds the result element,
// and no other; the result is one-to-one where the source was, in no more slots.
void requireReduceDefinition(const Layout& src, const Shape& shape, const std::vector<size_t>& dims) {
  const Layout got = reduceDims(src, shape, dims);
  Shape small = shape;
  for (size_t d : dims) small[d] = 1;
  const std::string what = "reduce " + toString(src) + " " + shapeToString(shape) + " = " + toString(got);
  require(got.size() == shapeSize(small), [&] { return what + ": wrong size"; });
  auto threadsOf = [](const std::vector<Point>& tuples) {
    std::vector<Point> out;
    for (Point p : tuples) {
      at(p, Axis::m) = 0;
      out.push_back(p);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  const Reference rs = evaluate(src), rg = evaluate(got);
  std::vector<std::vector<Point>> want(rg.base.size());
  int64_t index = 0;
  odometer(shape, [&](const std::vector<int64_t>& c) {
    std::vector<int64_t> r = c;
    for (size_t d : dims) r[d] = 0;
    std::vector<Point>& w = want[static_cast<size_t>(rowMajorIndex(r, small))];
    for (const Point& p : threadsOf(rs.tuples[static_cast<size_t>(index++)])) w.push_back(p);
  });
  for (size_t i = 0; i < want.size(); ++i) {
    std::sort(want[i].begin(), want[i].end());
    want[i].erase(std::unique(want[i].begin(), want[i].end()), want[i].end());
    require(threadsOf(rg.tuples[i]) == want[i], [&] { return what + ": other threads at index " + std::to_string(i); });
  }
  if (isInjective(src, shape)) {
    require(isInjective(got, small), [&] { return what + ": not one-to-one"; });
    require(cosize(got, Axis::m) <= std::max<int64_t>(cosize(src, Axis::m), 1),
            [&] { return what + ": more slots than the source"; });
  }
}

TEST_CASE("reduceDims: the m16n8 accumulator's rows", "[transforms][reduce]") {
  // Rows by groupID (lane / 4) and the slot pair's high bit; columns by lane % 4 and slot bit 0.
  Layout c{makeTile({{2, 2}, {8, 4, Axis::laneid}, {4, 1, Axis::laneid}, {2, 1}})};
  Layout rows = reduceDims(c, Shape{16, 8}, std::vector<size_t>{1});
  CHECK(rows == Layout{makeTile({{2, 1}, {8, 4, Axis::laneid}}, {{4, 1, Axis::laneid}})});
  requireReduceDefinition(c, Shape{16, 8}, {1});
  // Columns: the rows' lanes and slot become replicas and go.
  requireReduceDefinition(c, Shape{16, 8}, {0});
  requireReduceDefinition(c, Shape{16, 8}, {0, 1});
  // Over warps too: rows of 16 by warp.
  Layout tiled{makeTile({{4, 1, Axis::warpid}, {2, 2}, {8, 4, Axis::laneid}, {2, 4}, {4, 1, Axis::laneid}, {2, 1}})};
  CHECK(reduceDims(tiled, Shape{64, 16}, std::vector<size_t>{1}) ==
        Layout{makeTile({{4, 1, Axis::warpid}, {2, 1}, {8, 4, Axis::laneid}}, {{4, 1, Axis::laneid}})});
  requireReduceDefinition(tiled, Shape{64, 16}, {0});
  CHECK_THROWS_AS(reduceDims(Layout::compose(Swizzle::make(0, 1, 1), makeTile({{4, 1}})), Shape{4},
                             std::vector<size_t>{0}),
                  Error);
  CHECK_THROWS_AS(reduceDims(c, Shape{16, 8}, std::vector<size_t>{2}), Error);
}

TEST_CASE("reduceDims: agrees with the definition on random layouts", "[transforms][reduce][random]") {
  Random gen(kSeed + 7);
  INFO("seed " << kSeed + 7);
  for (int i = 0; i < 400; ++i) {
    INFO("case " << i);
    Shape shape = gen.shape(static_cast<int>(gen.pick(1, 3)), 6);
    TileLayout t = gen.groupable(shape, false, true);
    std::vector<size_t> dims;
    for (size_t d = 0; d < shape.size(); ++d)
      if (gen.pick(0, 1)) dims.push_back(d);
    requireReduceDefinition(Layout{t}, shape, dims);
  }
}

// ---- tile ------------------------------------------------------------------------

// tile() against its definition: result(c) = outer'(c / inner) + inner(c % inner), with
// outer' the outer layout whose strides are scaled by the inner span on their axis,
// every replica combination of both, offsets summed.
void requireTileDefinition(const TileLayout& inner, const TileLayout& outer, const Shape& outerShape,
                           const Shape& innerShape, const TileLayout& result) {
  std::string what = "tile " + toString(inner) + " by " + toString(outer) + " " + shapeToString(outerShape) +
                     " x " + shapeToString(innerShape) + " = " + toString(result);
  TileLayout scaled = outer;
  for (auto* iters : {&scaled.shard, &scaled.replica})
    for (Iter& it : *iters) it.stride *= refSpan(inner, it.axis);
  Reference ri = evaluate(Layout{inner});
  Reference ro = evaluate(Layout{scaled});
  Reference rr = evaluate(Layout{result});
  Shape full(outerShape.size());
  for (size_t d = 0; d < full.size(); ++d) full[d] = outerShape[d] * innerShape[d];
  require(static_cast<int64_t>(rr.base.size()) == shapeSize(full), [&] { return what + ": wrong size"; });
  int64_t index = 0;
  odometer(full, [&](const std::vector<int64_t>& c) {
    std::vector<int64_t> co(c.size()), ci(c.size());
    for (size_t d = 0; d < c.size(); ++d) {
      co[d] = c[d] / innerShape[d];
      ci[d] = c[d] % innerShape[d];
    }
    auto o = static_cast<size_t>(rowMajorIndex(co, outerShape));
    auto n = static_cast<size_t>(rowMajorIndex(ci, innerShape));
    Point want = plus(ro.base[o], ri.base[n]);
    const Point& got = rr.base[static_cast<size_t>(index)];
    require(got == want, [&] {
      return what + " at " + shapeToString(c) + ": got " + pointText(got) + ", want " + pointText(want);
    });
    std::vector<Point> wantAll;
    for (const Point& a : ri.tuples[n])
      for (const Point& b : ro.tuples[o]) wantAll.push_back(plus(a, b));
    require(sorted(rr.tuples[static_cast<size_t>(index)]) == sorted(wantAll),
            [&] { return what + ": replicas differ at " + shapeToString(c); });
    ++index;
  });
}

TEST_CASE("tile: worked examples", "[transforms][tile]") {
  TileLayout r1 = tile(makeTile({{2, 1}, {4, 2}}), makeTile({{8, 8}, {8, 1}}), Shape{8, 8}, Shape{2, 4});
  CHECK(r1 == makeTile({{8, 64}, {2, 1}, {32, 2}}));
  CHECK(toString(r1) == "S[(8, 2, 32) : (64, 1, 2)]");
  requireTileDefinition(makeTile({{2, 1}, {4, 2}}), makeTile({{8, 8}, {8, 1}}), {8, 8}, {2, 4}, r1);

  // Thread sharding is a tile whose outer layout is on thread axes.
  TileLayout outer = makeTile({{8, 4, Axis::laneid}, {4, 1, Axis::laneid}});
  TileLayout r2 = tile(makeTile({{1, 2}, {2, 1}}), outer, Shape{8, 4}, Shape{1, 2});
  CHECK(r2 == makeTile({{32, 1, Axis::laneid}, {2, 1}}));
  requireTileDefinition(makeTile({{1, 2}, {2, 1}}), outer, {8, 4}, {1, 2}, r2);

  // Replicas: inner first, outer ones in units of whole inner tiles; offsets summed.
  TileLayout in = makeTile({{4, 1}}, {{2, 4}}, {{Axis::m, 1}});
  TileLayout out =
      makeTile({{2, 1, Axis::warpid}, {3, 1}}, {{2, 1}, {2, 1, Axis::laneid}}, {{Axis::warpid, 2}});
  TileLayout r3 = tile(in, out, Shape{6}, Shape{4});
  CHECK(r3 == makeTile({{2, 1, Axis::warpid}, {3, 8}, {4, 1}}, {{2, 1, Axis::laneid}, {2, 4}, {2, 8}},
                       {{Axis::warpid, 2}, {Axis::m, 1}}));
  requireTileDefinition(in, out, {6}, {4}, r3);
}

TEST_CASE("tile_to: the mma.sync m16n8k16 A fragment", "[transforms][tile]") {
  TileLayout half = makeTile({{2, 2}, {8, 4, Axis::laneid}, {4, 1, Axis::laneid}, {2, 1}});
  TileLayout a = tileTo(half, Shape{16, 16}, Shape{16, 8});
  CHECK(toString(a) == "S[(2, 8, 2, 4, 2) : (2, 4@laneid, 4, 1@laneid, 1)]");
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < 16; ++j) {
      PhysCoord p = apply(Layout{a}, Shape{i, j}, Shape{16, 16});
      REQUIRE(p[Axis::laneid] == 4 * (i % 8) + (j % 8) / 2);
      REQUIRE(p[Axis::m] == (j % 2) + 2 * (i / 8) + 4 * (j / 8));
    }
  requireTileDefinition(half, TileLayout::rowMajor(Shape{1, 2}), {1, 2}, {16, 8}, a);
  // One thread holds 8 slots.
  CHECK(storage(a) == makeTile({{2, 2}, {2, 4}, {2, 1}}));
  CHECK(cosize(Layout{storage(a)}, Axis::m) == 8);
}

TEST_CASE("tile_to: errors", "[transforms][tile]") {
  TileLayout t = TileLayout::rowMajor(Shape{2, 4});
  CHECK_THROWS_AS(tileTo(t, Shape{6, 6}, Shape{2, 4}), Error);
  CHECK_THROWS_AS(tileTo(t, Shape{8}, Shape{2, 4}), Error);
  CHECK_THROWS_AS(tileTo(t, Shape{4, 8}, Shape{2, 2}), Error);  // 8 elements laid over a 2x2 tile
  CHECK_THROWS_AS(tileTo(t, Shape{0, 8}, Shape{2, 4}), Error);
  CHECK_THROWS_AS(tile(t, t, Shape{2, 4}, Shape{8}), Error);
  CHECK(tileTo(t, Shape{4, 8}, Shape{2, 4}) == makeTile({{2, 16}, {2, 4}, {2, 8}, {4, 1}}));
}

TEST_CASE("tile: overflow is reported", "[transforms][tile][overflow]") {
  TileLayout wide = makeTile({{2, int64_t{1} << 61}});  // span 2^61 + 1
  CHECK_NOTHROW(tile(wide, makeTile({{2, 2}}), Shape{2}, Shape{2}));
  CHECK_THROWS_AS(tile(wide, makeTile({{2, 4}}), Shape{2}, Shape{2}), OverflowError);
  // The row-major outer (2, 2) steps 2 tiles of span 2^62 + 1.
  CHECK_THROWS_AS(tileTo(makeTile({{2, int64_t{1} << 62}}), Shape{2, 4}, Shape{1, 2}), OverflowError);
}

TEST_CASE("tile: matches its definition on small layouts", "[transforms][tile][exhaustive]") {
  std::vector<TileLayout> outers = {
      makeTile({{2, 3}, {3, 1}}),
      makeTile({{2, 1, Axis::laneid}, {2, 2}}, {{2, 1, Axis::warpid}}, {{Axis::laneid, 1}}),
      makeTile({{3, 1}, {2, 3}}, {{2, 1}}),
      makeTile({{4, 1, Axis::laneid}, {1, 5}}, {}, {{Axis::m, 2}}),
  };
  std::vector<Shape> outerShapes = {{2, 3}, {2, 2}, {3, 2}, {4, 1}};
  std::vector<TileLayout> family = smallFamily();
  int tiled = 0;
  for (size_t k = 0; k < family.size(); k += 11) {
    const TileLayout& inner = family[k];
    for (const Shape& innerShape : factorizations(inner.size())) {
      if (innerShape.size() != 2) continue;
      size_t o = (k / 11) % outers.size();
      TileLayout result;
      try {
        result = tile(inner, outers[o], outerShapes[o], innerShape);
      } catch (const Error&) {
        // Only grouping may refuse; that is group's own test.
        bool possible = refGroupable(canonicalize(inner).shard, innerShape);
        require(!possible, [&] { return "tile refused a groupable " + toString(inner); });
        continue;
      }
      requireTileDefinition(inner, outers[o], outerShapes[o], innerShape, result);
      requireCanonical(result);
      ++tiled;
    }
  }
  CHECK(tiled > 1000);
}

TEST_CASE("tile: matches its definition on random layouts", "[transforms][tile][random]") {
  Random gen(kSeed + 2);
  INFO("seed " << kSeed + 2);
  for (int i = 0; i < 400; ++i) {
    INFO("case " << i);
    int rank = static_cast<int>(gen.pick(1, 3));
    Shape innerShape = gen.shape(rank, 4);
    Shape outerShape = gen.shape(rank, 4);
    TileLayout inner = gen.groupable(innerShape, false, false);
    TileLayout outer = gen.groupable(outerShape, false, false);
    TileLayout result = tile(inner, outer, outerShape, innerShape);
    requireTileDefinition(inner, outer, outerShape, innerShape, result);
    if (i % 4 == 0) {
      Shape toShape(innerShape.size());
      for (size_t d = 0; d < toShape.size(); ++d) toShape[d] = innerShape[d] * outerShape[d];
      TileLayout to = tileTo(inner, toShape, innerShape);
      requireTileDefinition(inner, TileLayout::rowMajor(outerShape), outerShape, innerShape, to);
    }
  }
}

// ---- permute ---------------------------------------------------------------------

void requirePermuted(const Layout& l, const Shape& shape, const Shape& perm) {
  Layout p = permute(l, shape, perm);
  std::string what = "permute " + toString(l) + " " + shapeToString(shape) + " by " + shapeToString(perm);
  Shape newShape(shape.size());
  for (size_t i = 0; i < perm.size(); ++i) newShape[i] = shape[static_cast<size_t>(perm[i])];
  Reference ref = evaluate(l);
  Reference got = evaluate(p);
  require(p.swizzle == l.swizzle && p.tile.replica == l.tile.replica && p.tile.offset == l.tile.offset,
          [&] { return what + ": replicas, offsets or swizzle changed"; });
  int64_t index = 0;
  odometer(newShape, [&](const std::vector<int64_t>& c2) {
    std::vector<int64_t> c(shape.size());
    for (size_t i = 0; i < perm.size(); ++i) c[static_cast<size_t>(perm[i])] = c2[i];
    auto orig = static_cast<size_t>(rowMajorIndex(c, shape));
    require(got.base[static_cast<size_t>(index)] == ref.base[orig],
            [&] { return what + " at " + shapeToString(c2); });
    require(sorted(got.tuples[static_cast<size_t>(index)]) == sorted(ref.tuples[orig]),
            [&] { return what + ": replicas at " + shapeToString(c2); });
    ++index;
  });
}

TEST_CASE("permute: examples and errors", "[transforms][permute]") {
  Layout rm{TileLayout::rowMajor(Shape{4, 8})};
  Layout t = permute(rm, Shape{4, 8}, Shape{1, 0});
  CHECK(t.tile == makeTile({{8, 1}, {4, 8}}));
  CHECK(apply(t, Shape{5, 2}, Shape{8, 4})[Axis::m] == 21);
  Layout sw = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{8, 64}, {64, 1}}));
  requirePermuted(sw, Shape{8, 8, 8}, Shape{2, 0, 1});
  CHECK(permute(rm, Shape{32}, Shape{0}) == rm);
  CHECK_THROWS_AS(permute(rm, Shape{4, 8}, Shape{0, 0}), Error);
  CHECK_THROWS_AS(permute(rm, Shape{4, 8}, Shape{0, 2}), Error);
  CHECK_THROWS_AS(permute(rm, Shape{4, 8}, Shape{-1, 0}), Error);
  CHECK_THROWS_AS(permute(rm, Shape{4, 8}, Shape{1, 0, 2}), Error);
  CHECK_THROWS_AS(permute(Layout{makeTile({{4, 1, Axis::laneid}, {6, 1}})}, Shape{6, 4}, Shape{1, 0}), Error);
}

TEST_CASE("permute: matches its definition on every small layout", "[transforms][permute][exhaustive]") {
  std::vector<TileLayout> family = smallFamily();
  int permuted = 0;
  for (size_t k = 0; k < family.size(); k += 7) {
    Layout l{family[k]};
    std::vector<Shape> shapes = factorizations(l.size());
    const Shape& shape = shapes[k % shapes.size()];
    if (!refGroupable(canonicalize(l.tile).shard, shape)) continue;
    Shape perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      requirePermuted(l, shape, perm);
      ++permuted;
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  CHECK(permuted > 5000);
}

TEST_CASE("permute: matches its definition on random layouts", "[transforms][permute][random]") {
  Random gen(kSeed + 3);
  INFO("seed " << kSeed + 3);
  for (int i = 0; i < 300; ++i) {
    INFO("case " << i);
    Shape shape = gen.shape(static_cast<int>(gen.pick(1, 4)), 5);
    Layout l = gen.maybeSwizzled(shape);
    Shape perm(shape.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), gen.rng);
    requirePermuted(l, shape, perm);
  }
}

// ---- storage ---------------------------------------------------------------------

TEST_CASE("storage keeps exactly the memory axes", "[transforms][storage]") {
  TileLayout frag =
      makeTile({{32, 1, Axis::laneid}, {4, 1}}, {{2, 1, Axis::warpid}}, {{Axis::m, 4}, {Axis::warpid, 2}});
  CHECK(storage(frag) == makeTile({{4, 1}}, {}, {{Axis::m, 4}}));
  TileLayout tmem =
      makeTile({{4, 32, Axis::TLane}, {16, 1, Axis::TLane}, {8, 1, Axis::TCol}, {2, 1, Axis::wid_in_wg}},
               {{4, 32, Axis::TLane}, {2, 1, Axis::bx}}, {{Axis::TLane, 16}, {Axis::tx, 1}});
  CHECK(storage(tmem) == makeTile({{4, 32, Axis::TLane}, {16, 1, Axis::TLane}, {8, 1, Axis::TCol}},
                                  {{4, 32, Axis::TLane}}, {{Axis::TLane, 16}}));

  Random gen(kSeed + 4);
  INFO("seed " << kSeed + 4);
  const Axis axes[] = {Axis::m,    Axis::TLane,     Axis::TCol,      Axis::laneid, Axis::warpid, Axis::tx,
                       Axis::wgid, Axis::tid_in_wg, Axis::wid_in_wg, Axis::bx,     Axis::by,     Axis::bz};
  for (int i = 0; i < 300; ++i) {
    TileLayout t;
    for (int64_t k = gen.pick(0, 5); k > 0; --k)
      t.shard.push_back(Iter{gen.pick(1, 4), gen.pick(-2, 5), axes[gen.pick(0, 11)]});
    for (int64_t k = gen.pick(0, 3); k > 0; --k)
      t.replica.push_back(Iter{gen.pick(1, 4), gen.pick(-2, 5), axes[gen.pick(0, 11)]});
    for (int64_t k = gen.pick(0, 3); k > 0; --k) t.offset.add(axes[gen.pick(0, 11)], gen.pick(-3, 3));
    INFO("case " << i << " layout " << toString(t));
    TileLayout s = storage(t);
    std::vector<Iter> shard, replica;
    for (const Iter& it : t.shard)
      if (it.axis == Axis::m || it.axis == Axis::TLane || it.axis == Axis::TCol) shard.push_back(it);
    for (const Iter& it : t.replica)
      if (it.axis == Axis::m || it.axis == Axis::TLane || it.axis == Axis::TCol) replica.push_back(it);
    REQUIRE(s.shard == shard);
    REQUIRE(s.replica == replica);
    REQUIRE(s.axesMask() == (t.axesMask() & memoryAxesMask()));
    for (Axis a : axes) {
      bool memory = a == Axis::m || a == Axis::TLane || a == Axis::TCol;
      REQUIRE(s.offset.has(a) == (memory && t.offset.has(a)));
      REQUIRE(s.offset[a] == (memory ? t.offset[a] : 0));
    }
  }
}

// ---- Window ----------------------------------------------------------------------

TEST_CASE("window keeps the swizzle phase of its parent", "[transforms][window]") {
  Layout parent = Layout::compose(Swizzle::make(3, 2, 2), TileLayout::rowMajor(Shape{32, 32}));
  Window w = Window::make(parent, Shape{32, 32}, Shape{1, 8}, Shape{16, 16});
  CHECK(w.apply(Shape{2, 3}) == apply(parent, Shape{3, 11}, Shape{32, 32}));
  CHECK(w.parentCoord(Shape{2, 3}) == Shape{3, 11});
  // The window's first element is the parent's (1, 8): affine m = 40, x = 40 >> 3 = 0b101,
  // x ^= (x >> 2) & 0b11 gives 0b100, so m = 32; a fresh swizzled tile would give 0.
  CHECK(w.apply(Shape{0, 0})[Axis::m] == 32);
}

TEST_CASE("window: bounds and nesting", "[transforms][window]") {
  Layout parent{TileLayout::rowMajor(Shape{4, 6})};
  CHECK_THROWS_AS(Window::make(parent, Shape{4, 6}, Shape{0, 0, 0}, Shape{1, 1}), Error);
  CHECK_THROWS_AS(Window::make(parent, Shape{4, 6}, Shape{0, 0}, Shape{1}), Error);
  CHECK_THROWS_AS(Window::make(parent, Shape{4, 5}, Shape{0, 0}, Shape{1, 1}), Error);  // 20 != 24
  CHECK_THROWS_AS(Window::make(parent, Shape{4, 6}, Shape{-1, 0}, Shape{2, 2}), Error);
  CHECK_THROWS_AS(Window::make(parent, Shape{4, 6}, Shape{3, 0}, Shape{2, 2}), Error);
  CHECK_THROWS_AS(Window::make(parent, Shape{4, 6}, Shape{0, 5}, Shape{1, 2}), Error);
  CHECK_THROWS_AS(Window::make(parent, Shape{4, 6}, Shape{0, 0}, Shape{0, 2}), Error);
  CHECK_THROWS_AS(Window::make(parent, Shape{4, 6}, Shape{0, INT64_MAX}, Shape{1, 1}), OverflowError);
  Window w = Window::make(parent, Shape{4, 6}, Shape{1, 2}, Shape{3, 4});
  CHECK_THROWS_AS(w.apply(Shape{3, 0}), Error);
  CHECK_THROWS_AS(w.apply(Shape{0}), Error);
  // A sub-window must fit in the window, not merely in the parent.
  CHECK_THROWS_AS(w.window(Shape{0, 1}, Shape{1, 4}), Error);
  Window n = w.window(Shape{1, 1}, Shape{2, 2});
  CHECK(n.origin == Shape{2, 3});
  CHECK(n.parentShape == Shape{4, 6});
  CHECK(n.apply(Shape{1, 1})[Axis::m] == 3 * 6 + 4);
}

TEST_CASE("window: every window of small parents evaluates the parent", "[transforms][window][exhaustive]") {
  std::vector<std::pair<Layout, Shape>> parents = {
      {Layout{TileLayout::rowMajor(Shape{4, 6})}, Shape{4, 6}},
      {Layout{makeTile({{2, 1, Axis::laneid}, {4, 1}, {3, 8}}, {{2, 1, Axis::warpid}}, {{Axis::m, 5}})},
       Shape{4, 6}},
      {Layout::compose(Swizzle::make(1, 2, 2), TileLayout::rowMajor(Shape{8, 8})), Shape{8, 8}},
      {Layout::compose(Swizzle::make(0, 1, 3, false), makeTile({{4, 1}, {2, 16}, {4, 4}})), Shape{2, 4, 4}},
  };
  int checked = 0;
  for (const auto& entry : parents) {
    // Named references, not a structured binding: lambdas may not capture those before clang 16.
    const auto& parent = entry.first;
    const auto& pshape = entry.second;
    Reference ref = evaluate(parent);
    // Every origin and shape that fits.
    odometer(pshape, [&](const std::vector<int64_t>& origin) {
      Shape room(pshape.size());
      for (size_t d = 0; d < room.size(); ++d) room[d] = pshape[d] - origin[d];
      odometer(room, [&](const std::vector<int64_t>& shapeMinusOne) {
        Shape shape = shapeMinusOne;
        for (int64_t& e : shape) ++e;
        Window w = Window::make(parent, pshape, origin, shape);
        odometer(shape, [&](const std::vector<int64_t>& c) {
          Shape pc(c.size());
          for (size_t d = 0; d < c.size(); ++d) pc[d] = origin[d] + c[d];
          auto index = static_cast<size_t>(rowMajorIndex(pc, pshape));
          require(toPoint(w.apply(c)) == ref.base[index], [&] {
            return toString(parent) + " window " + shapeToString(origin) + " " + shapeToString(shape) +
                   " at " + shapeToString(c);
          });
          std::vector<PhysCoord> all = w.applyAll(c);
          std::vector<Point> got;
          for (const PhysCoord& p : all) got.push_back(toPoint(p));
          require(got == ref.tuples[index], [&] { return toString(parent) + ": window replicas differ"; });
          ++checked;
        });
        // A nested window at the far corner adds origins.
        Shape half(shape.size()), sub(shape.size());
        for (size_t d = 0; d < shape.size(); ++d) {
          half[d] = shape[d] / 2;
          sub[d] = shape[d] - half[d];
        }
        Window n = w.window(half, sub);
        Shape zero(shape.size(), 0);
        require(n.apply(zero) == w.apply(half), [&] { return toString(parent) + ": nested window"; });
      });
    });
  }
  CHECK(checked > 10000);
}
