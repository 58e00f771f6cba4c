// Tests of Analysis.h: injectivity, completeness, bank map and bank conflicts, each
// checked against a brute-force evaluation written independently of the library.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/layout/Analysis.h"
#include "tests/unit/LayoutReference.h"
#include "tests/unit/RandomLayouts.h"

using namespace tyl::layout;
using namespace tyl::layout::test;

namespace {

// Every physical tuple of every element (row-major), replicas included.
std::vector<std::vector<Point>> tuplesOf(const Layout& layout) { return evaluate(layout).tuples; }

Point projected(Point p, uint32_t mask) {
  for (Axis a : allAxes())
    if (!(mask & axisBit(a))) at(p, a) = 0;
  return p;
}

// The first collision in row-major order: the first element (and replica) that lands
// on a point an earlier element holds, paired with the earliest such element.
struct RefCollision {
  int64_t first;
  int64_t second;
  Point where;
};
std::optional<RefCollision> refCollision(const Layout& layout, uint32_t mask) {
  std::vector<std::vector<Point>> tuples = tuplesOf(layout);
  for (size_t j = 0; j < tuples.size(); ++j)
    for (const Point& pj : tuples[j])
      for (size_t i = 0; i < j; ++i)
        for (const Point& pi : tuples[i])
          if (projected(pi, mask) == projected(pj, mask))
            return RefCollision{static_cast<int64_t>(i), static_cast<int64_t>(j), projected(pj, mask)};
  return std::nullopt;
}

constexpr uint64_t kSeed = 0x7e57'1a70'2024'0003ull;

struct Random : test::RandomSource {
  using RandomSource::RandomSource;

  TileLayout tile(bool mOnly) {
    static constexpr Axis kAxes[] = {Axis::m, Axis::laneid, Axis::warpid};
    auto axis = [&] { return mOnly ? Axis::m : kAxes[pick(0, 2)]; };
    TileLayout t;
    for (int64_t i = pick(0, 4); i > 0; --i)
      t.shard.push_back(Iter{pick(1, 4), pick(mOnly ? 0 : -2, 8), axis()});
    for (int64_t i = pick(0, 2); i > 0; --i)
      t.replica.push_back(Iter{pick(1, 3), pick(mOnly ? 0 : -2, 8), axis()});
    if (pick(0, 1)) t.offset.add(axis(), pick(0, 4));
    return t;
  }

  Layout layout() {
    if (pick(0, 2) != 0) return Layout{tile(false)};
    Swizzle s = swizzle(2);
    return Layout::compose(s, tile(true));
  }

  // A random shape of the layout's size: its size split at a random divisor, or flat.
  Shape shapeFor(int64_t n) {
    int64_t d = divisor(n);
    return pick(0, 2) == 0 ? Shape{n} : Shape{d, n / d};
  }
};

const uint32_t kMasks[] = {~0u,
                           axisBit(Axis::m),
                           axisBit(Axis::laneid),
                           axisBit(Axis::m) | axisBit(Axis::laneid),
                           axisBit(Axis::warpid) | axisBit(Axis::m),
                           0u};

// findCollision agrees with the brute-force search, and its witness really collides.
void checkCollision(const Layout& l, const Shape& shape, uint32_t mask) {
  std::optional<Collision> got = findCollision(l, shape, mask);
  std::optional<RefCollision> want = refCollision(l, mask);
  std::string what = "findCollision " + toString(l) + " mask " + std::to_string(mask);
  require(got.has_value() == want.has_value(), [&] { return what + ": injectivity differs"; });
  require(isInjective(l, shape, mask) == !want.has_value(), [&] { return what + ": isInjective differs"; });
  if (!got) return;
  require(
      rowMajorIndex(got->first, shape) == want->first && rowMajorIndex(got->second, shape) == want->second,
      [&] { return what + ": not the first collision"; });
  require(got->first != got->second, [&] { return what + ": a coordinate collides with itself"; });
  require(toPoint(got->where) == want->where, [&] { return what + ": wrong point"; });
  require((got->where.axesMask() & ~mask) == 0, [&] { return what + ": point not projected"; });
  // Both coordinates really reach the point.
  auto reaches = [&](const Shape& c) {
    for (const PhysCoord& p : applyAll(l, c, shape))
      if (p.project(mask) == got->where) return true;
    return false;
  };
  require(reaches(got->first) && reaches(got->second), [&] { return what + ": witness does not collide"; });
}

}  // namespace

// ---- Injectivity -----------------------------------------------------------------

TEST_CASE("findCollision: examples", "[analysis][injective]") {
  Layout frag{makeTile({{32, 1, Axis::laneid}, {4, 1}})};
  CHECK(isInjective(frag, Shape{32, 4}));
  CHECK(isInjective(frag, Shape{128}, axisBit(Axis::laneid) | axisBit(Axis::m)));
  // On lanes alone, four elements share every lane.
  std::optional<Collision> c = findCollision(frag, Shape{32, 4}, axisBit(Axis::laneid));
  REQUIRE(c.has_value());
  CHECK(c->first == Shape{0, 0});
  CHECK(c->second == Shape{0, 1});
  PhysCoord lane0;
  lane0.set(Axis::laneid, 0);
  CHECK(c->where == lane0);

  // Replicas at a distinct place keep it injective; replicas overlapping others do not.
  CHECK(isInjective(Layout{makeTile({{4, 1}}, {{2, 4}})}, Shape{4}));
  std::optional<Collision> r = findCollision(Layout{makeTile({{4, 1}}, {{2, 1}})}, Shape{4}, ~0u);
  REQUIRE(r.has_value());
  CHECK(r->first == Shape{0});
  CHECK(r->second == Shape{1});
  // Replicas of one element on the same point are no collision of distinct elements.
  CHECK(isInjective(Layout{makeTile({{4, 1}}, {{2, 0}})}, Shape{2, 2}));

  // The 128B swizzle permutes: still injective.
  Layout sw = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{8, 64}, {64, 1}}));
  CHECK(isInjective(sw, Shape{8, 64}));
  CHECK_FALSE(isInjective(Layout{makeTile({{8, 1}, {8, 1}})}, Shape{8, 8}));
}

TEST_CASE("findCollision: errors and the enumeration bound", "[analysis][injective]") {
  Layout l{makeTile({{4, 1}})};
  CHECK_THROWS_AS(findCollision(l, Shape{3}, ~0u), Error);
  CHECK_THROWS_AS(findCollision(l, Shape{-2, -2}, ~0u), Error);
  // Strides 2 and 3 neither dominate nor cancel in pairs: only enumeration decides.
  Layout huge{makeTile({{3, 2}, {int64_t{1} << 23, 3}})};
  CHECK(injectivityFromIters(huge, Shape{3 << 23}, ~0u).kind == IterVerdict::Kind::Unknown);
  CHECK_THROWS_WITH(findCollision(huge, Shape{3 << 23}, ~0u), Catch::Contains("more than"));
  Layout replicated{makeTile({{int64_t{1} << 20, 1}}, {{int64_t{1} << 5, 1, Axis::warpid}})};
  CHECK(isInjective(replicated, Shape{int64_t{1} << 20}));  // decided from the iters
  Layout overlapping{makeTile({{int64_t{1} << 20, 1}}, {{int64_t{1} << 5, 3}})};
  CHECK_THROWS_AS(findCollision(overlapping, Shape{int64_t{1} << 20}, ~0u), Error);
  CHECK_THROWS_AS(findCollision(Layout{makeTile({{int64_t{1} << 40, 1}}, {{int64_t{1} << 40, 1}})},
                                Shape{int64_t{1} << 40}, ~0u),
                  OverflowError);
}

TEST_CASE("findCollision decides large layouts from their iters", "[analysis][injective]") {
  const int64_t n = 8192;
  CHECK(isInjective(Layout{makeTile({{n, n}, {n, 1}})}, Shape{n, n}));
  CHECK(isInjective(Layout::compose(Swizzle::make(3, 3, 3), makeTile({{n, n}, {n, 1}})), Shape{n, n}));
  CHECK(isInjective(Layout{makeTile({{n, 1}, {n, -n}}, {}, {{Axis::m, n * n}})}, Shape{n, n}));
  // Equal strides: (0, 1) and (1, 0) share m = 1.
  std::optional<Collision> c = findCollision(Layout{makeTile({{n, 1}, {n, 1}})}, Shape{n, n}, ~0u);
  REQUIRE(c.has_value());
  CHECK(c->first == Shape{0, 1});
  CHECK(c->second == Shape{1, 0});
  CHECK(c->where[Axis::m] == 1);
  // Strides 6 and 4 cancel at 2 * 6 = 3 * 4.
  c = findCollision(Layout{makeTile({{n, 6}, {n, 4}})}, Shape{n, n}, ~0u);
  REQUIRE(c.has_value());
  CHECK(c->first == Shape{0, 3});
  CHECK(c->second == Shape{2, 0});
  // Projected onto lanes, the register dimension is lost.
  c = findCollision(Layout{makeTile({{32, 1, Axis::laneid}, {n * 64, 1}})}, Shape{32, n * 64},
                    axisBit(Axis::laneid));
  REQUIRE(c.has_value());
  CHECK(c->first == Shape{0, 0});
  CHECK(c->second == Shape{0, 1});
}

TEST_CASE("injectivityFromIters never contradicts brute force", "[analysis][injective][random]") {
  Random gen(kSeed + 7);
  INFO("seed " << kSeed + 7);
  int decided = 0;
  for (int i = 0; i < 1000; ++i) {
    INFO("case " << i);
    Layout l = gen.layout();
    Shape shape = gen.shapeFor(l.size());
    uint32_t mask = kMasks[gen.pick(0, std::size(kMasks) - 1)];
    IterVerdict v = injectivityFromIters(l, shape, mask);
    std::optional<RefCollision> want = refCollision(l, mask);
    std::string what = toString(l) + " mask " + std::to_string(mask);
    if (v.kind == IterVerdict::Kind::Unknown) continue;
    ++decided;
    require((v.kind == IterVerdict::Kind::Injective) == !want.has_value(),
            [&] { return what + ": the iters' verdict differs"; });
    if (v.kind != IterVerdict::Kind::Collides) continue;
    const Collision& w = *v.witness;
    require(w.first != w.second, [&] { return what + ": a coordinate collides with itself"; });
    auto reaches = [&](const Shape& coord) {
      for (const PhysCoord& p : applyAll(l, coord, shape))
        if (p.project(mask) == w.where) return true;
      return false;
    };
    require(reaches(w.first) && reaches(w.second), [&] { return what + ": witness does not collide"; });
  }
  CHECK(decided > 700);
}

TEST_CASE("findCollision agrees with brute force on every small layout",
          "[analysis][injective][exhaustive]") {
  std::vector<TileLayout> family = smallFamily();
  int injective = 0, colliding = 0;
  for (size_t k = 0; k < family.size(); k += 5) {
    Layout l{family[k]};
    uint32_t mask = kMasks[k % std::size(kMasks)];
    Shape shape = (k % 2) ? Shape{l.size()} : Shape{1, l.size()};
    checkCollision(l, shape, mask);
    (isInjective(l, shape, mask) ? injective : colliding)++;
  }
  CHECK(injective > 300);
  CHECK(colliding > 300);
}

TEST_CASE("findCollision agrees with brute force on random layouts", "[analysis][injective][random]") {
  Random gen(kSeed);
  INFO("seed " << kSeed);
  for (int i = 0; i < 500; ++i) {
    INFO("case " << i);
    Layout l = gen.layout();
    checkCollision(l, gen.shapeFor(l.size()), kMasks[gen.pick(0, std::size(kMasks) - 1)]);
  }
}

// ---- Completeness ----------------------------------------------------------------

// The first box point (row-major over the box) no tuple reaches, by brute force.
std::optional<std::vector<int64_t>> refHole(const Layout& l, const std::vector<AxisExtent>& box) {
  std::set<std::vector<int64_t>> hit;
  for (const auto& tuples : tuplesOf(l))
    for (Point p : tuples) {
      std::vector<int64_t> v;
      for (const AxisExtent& b : box) v.push_back(at(p, b.axis));
      hit.insert(v);
    }
  std::vector<int64_t> extents;
  for (const AxisExtent& b : box) extents.push_back(b.extent);
  std::optional<std::vector<int64_t>> hole;
  odometer(extents, [&](const std::vector<int64_t>& c) {
    if (!hole && !hit.count(c)) hole = c;
  });
  return hole;
}

void checkHole(const Layout& l, const Shape& shape, const std::vector<AxisExtent>& box) {
  std::optional<PhysCoord> got = findHole(l, shape, box);
  std::optional<std::vector<int64_t>> want = refHole(l, box);
  std::string what = "findHole " + toString(l);
  require(got.has_value() == want.has_value(), [&] { return what + ": completeness differs"; });
  require(isComplete(l, shape, box) == !want.has_value(), [&] { return what + ": isComplete differs"; });
  if (!got) return;
  uint32_t boxMask = 0;
  for (size_t i = 0; i < box.size(); ++i) {
    boxMask |= axisBit(box[i].axis);
    require(got->has(box[i].axis) && (*got)[box[i].axis] == (*want)[i],
            [&] { return what + ": not the first hole, got " + toString(*got); });
  }
  require(got->axesMask() == boxMask, [&] { return what + ": hole has extra axes"; });
}

TEST_CASE("findHole: examples", "[analysis][complete]") {
  Layout frag{makeTile({{8, 4, Axis::laneid}, {4, 1, Axis::laneid}, {2, 1}})};
  std::vector<AxisExtent> lanes{{Axis::laneid, 32}};
  CHECK(isComplete(frag, Shape{8, 8}, lanes));
  std::vector<AxisExtent> warp{{Axis::laneid, 32}, {Axis::m, 2}};
  CHECK(isComplete(frag, Shape{64}, warp));
  std::vector<AxisExtent> more{{Axis::laneid, 32}, {Axis::m, 3}};
  std::optional<PhysCoord> h = findHole(frag, Shape{64}, more);
  REQUIRE(h.has_value());
  CHECK((*h)[Axis::laneid] == 0);
  CHECK((*h)[Axis::m] == 2);
  // Half the lanes: lane 16 is the first one nobody holds.
  Layout half{makeTile({{16, 1, Axis::laneid}, {2, 1}})};
  std::optional<PhysCoord> l16 = findHole(half, Shape{32}, lanes);
  REQUIRE(l16.has_value());
  CHECK((*l16)[Axis::laneid] == 16);
  // Replicas fill the other half.
  CHECK(isComplete(Layout{makeTile({{16, 1, Axis::laneid}, {2, 1}}, {{2, 16, Axis::laneid}})}, Shape{32},
                   lanes));
  // An axis the layout never uses reads 0: only that row of the box is covered.
  std::vector<AxisExtent> warps{{Axis::warpid, 2}};
  CHECK(findHole(half, Shape{32}, warps).value()[Axis::warpid] == 1);
  // Points outside the box are ignored; an empty box is always covered.
  CHECK(isComplete(Layout{makeTile({{64, 1}})}, Shape{64}, std::vector<AxisExtent>{{Axis::m, 10}}));
  CHECK(isComplete(half, Shape{32}, std::vector<AxisExtent>{}));
  // The swizzle permutes inside the tile, which stays complete.
  Layout sw = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{8, 64}, {64, 1}}));
  CHECK(isComplete(sw, Shape{8, 64}, std::vector<AxisExtent>{{Axis::m, 512}}));
}

TEST_CASE("findHole: errors and the enumeration bound", "[analysis][complete]") {
  Layout l{makeTile({{4, 1}})};
  CHECK_THROWS_AS(findHole(l, Shape{4}, std::vector<AxisExtent>{{Axis::m, 0}}), Error);
  CHECK_THROWS_AS(findHole(l, Shape{4}, std::vector<AxisExtent>{{Axis::m, 4}, {Axis::m, 4}}), Error);
  CHECK_THROWS_AS(findHole(l, Shape{5}, std::vector<AxisExtent>{{Axis::m, 4}}), Error);
  CHECK_THROWS_AS(findHole(l, Shape{4}, std::vector<AxisExtent>{{Axis::m, int64_t{1} << 25}}), Error);
  CHECK_THROWS_AS(
      findHole(l, Shape{4},
               std::vector<AxisExtent>{{Axis::m, int64_t{1} << 40}, {Axis::laneid, int64_t{1} << 40}}),
      OverflowError);
}

TEST_CASE("findHole agrees with brute force on every small layout", "[analysis][complete][exhaustive]") {
  std::vector<TileLayout> family = smallFamily();
  const std::vector<std::vector<AxisExtent>> boxes = {
      {{Axis::m, 4}},
      {{Axis::laneid, 3}},
      {{Axis::m, 2}, {Axis::laneid, 4}},
      {{Axis::laneid, 2}, {Axis::m, 5}, {Axis::warpid, 2}},
      {{Axis::m, 1}},
  };
  int complete = 0, holes = 0;
  for (size_t k = 0; k < family.size(); k += 4) {
    Layout l{family[k]};
    const auto& box = boxes[k % boxes.size()];
    checkHole(l, Shape{l.size()}, box);
    (isComplete(l, Shape{l.size()}, box) ? complete : holes)++;
  }
  CHECK(complete > 300);
  CHECK(holes > 300);
}

TEST_CASE("findHole agrees with brute force on random layouts", "[analysis][complete][random]") {
  Random gen(kSeed + 1);
  INFO("seed " << kSeed + 1);
  const Axis axes[] = {Axis::m, Axis::laneid, Axis::warpid};
  for (int i = 0; i < 500; ++i) {
    INFO("case " << i);
    Layout l = gen.layout();
    std::vector<AxisExtent> box;
    for (Axis a : axes)
      if (gen.pick(0, 1)) box.push_back(AxisExtent{a, gen.pick(1, 12)});
    std::shuffle(box.begin(), box.end(), gen.rng);
    checkHole(l, gen.shapeFor(l.size()), box);
  }
}

// ---- Bank map --------------------------------------------------------------------

TEST_CASE("bankMap: the 128B swizzle spreads a column over the banks", "[analysis][banks]") {
  Layout sw = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{8, 64}, {64, 1}}));
  std::vector<int> banks = bankMap(sw, Shape{8, 64}, 2);
  REQUIRE(banks.size() == 512);
  // Column j = 0 of the f16 tile: rows land on banks 0, 4, ..., 28.
  std::set<int> column;
  for (int64_t i = 0; i < 8; ++i) {
    CHECK(banks[static_cast<size_t>(i * 64)] == 4 * i);
    column.insert(banks[static_cast<size_t>(i * 64)]);
  }
  CHECK(column.size() == 8);
  // Without the swizzle every row starts in bank 0.
  std::vector<int> plain = bankMap(Layout{makeTile({{8, 64}, {64, 1}})}, Shape{8, 64}, 2);
  for (int64_t i = 0; i < 8; ++i) CHECK(plain[static_cast<size_t>(i * 64)] == 0);
  // f32 elements: one word each.
  std::vector<int> f32 = bankMap(Layout{TileLayout::rowMajor(Shape{2, 40})}, Shape{2, 40}, 4);
  CHECK(f32[39] == 7);
  CHECK(f32[40] == 8);
}

TEST_CASE("bankMap: errors", "[analysis][banks]") {
  CHECK_THROWS_AS(bankMap(Layout{makeTile({{32, 1, Axis::laneid}})}, Shape{32}, 4), Error);
  CHECK_THROWS_AS(bankMap(Layout{makeTile({{32, 1}}, {{2, 1, Axis::warpid}})}, Shape{32}, 4), Error);
  CHECK_THROWS_AS(bankMap(Layout{makeTile({{32, 1}})}, Shape{16}, 4), Error);
  CHECK_THROWS_AS(bankMap(Layout{makeTile({{32, 1}})}, Shape{32}, 0), Error);
  CHECK_THROWS_AS(bankMap(Layout{makeTile({{2, INT64_MAX / 2}})}, Shape{2}, 4), OverflowError);
  CHECK_THROWS_AS(bankMap(Layout{makeTile({{int64_t{1} << 25, 1}})}, Shape{int64_t{1} << 25}, 4), Error);
}

TEST_CASE("bankMap matches (m * elementBytes / 4) % 32 on random layouts", "[analysis][banks][random]") {
  Random gen(kSeed + 2);
  INFO("seed " << kSeed + 2);
  const int widths[] = {1, 2, 4, 8, 16};
  for (int i = 0; i < 500; ++i) {
    INFO("case " << i);
    Layout l = gen.layout();
    // Shared layouts map onto m only; random m-only tiles may still have negative
    // strides, whose floor semantics the reference follows too.
    if (!l.swizzle) {
      l.tile = gen.tile(true);
      for (Iter& it : l.tile.shard) it.stride -= 2;
    }
    int bytes = widths[gen.pick(0, 4)];
    Shape shape = gen.shapeFor(l.size());
    std::vector<int> banks = bankMap(l, shape, bytes);
    std::vector<std::vector<Point>> tuples = tuplesOf(l);
    REQUIRE(banks.size() == tuples.size());
    for (size_t k = 0; k < banks.size(); ++k) {
      int64_t byte = at(tuples[k][0], Axis::m) * bytes;
      int64_t word = byte >= 0 ? byte / 4 : -((-byte + 3) / 4);
      int64_t bank = ((word % 32) + 32) % 32;
      require(banks[k] == bank, [&] { return toString(l) + ": bank of element " + std::to_string(k); });
    }
  }
}

// ---- Bank conflicts --------------------------------------------------------------

namespace {

std::vector<std::optional<int64_t>> lanes(int count, int64_t (*address)(int64_t)) {
  std::vector<std::optional<int64_t>> a;
  for (int64_t l = 0; l < count; ++l) a.push_back(address(l));
  return a;
}

// Brute force: the largest number of distinct words in one bank, over the phases.
int refDegree(const std::vector<std::optional<int64_t>>& addrs, int bytes) {
  size_t phase = bytes <= 4 ? 32 : 128 / static_cast<size_t>(bytes);
  int worst = 0;
  for (size_t start = 0; start < addrs.size(); start += phase) {
    std::set<std::pair<int64_t, int64_t>> words;  // (bank, word)
    for (size_t l = start; l < std::min(addrs.size(), start + phase); ++l) {
      if (!addrs[l]) continue;
      for (int64_t b = *addrs[l]; b < *addrs[l] + bytes; ++b) words.insert({(b / 4) % 32, b / 4});
    }
    for (int64_t bank = 0; bank < 32; ++bank) {
      int n = 0;
      for (const auto& w : words) n += w.first == bank;
      worst = std::max(worst, n);
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("bankConflictDegree: examples", "[analysis][banks]") {
  CHECK(bankConflictDegree(lanes(32, [](int64_t l) { return l * 4; }), 4) == 1);
  CHECK(bankConflictDegree(lanes(32, [](int64_t l) { return l * 8; }), 4) == 2);
  CHECK(bankConflictDegree(lanes(32, [](int64_t l) { return l * 128; }), 4) == 32);
  CHECK(bankConflictDegree(lanes(32, [](int64_t) { return int64_t{64}; }), 4) == 1);  // broadcast
  CHECK(bankConflictDegree(lanes(32, [](int64_t l) { return l; }), 1) == 1);          // 8 words
  CHECK(bankConflictDegree(lanes(32, [](int64_t l) { return l * 2; }), 2) == 1);
  CHECK(bankConflictDegree(lanes(32, [](int64_t l) { return l * 256; }), 2) == 32);
  // 8-byte accesses: two half-warp phases of 128 bytes each.
  CHECK(bankConflictDegree(lanes(32, [](int64_t l) { return l * 8; }), 8) == 1);
  CHECK(bankConflictDegree(lanes(32, [](int64_t l) { return l * 16; }), 8) == 2);
  // 16-byte accesses: four quarter-warp phases.
  CHECK(bankConflictDegree(lanes(32, [](int64_t l) { return l * 16; }), 16) == 1);
  CHECK(bankConflictDegree(lanes(32, [](int64_t l) { return l * 128; }), 16) == 8);
  // Inactive lanes take no part; no active lane at all is degree 0.
  std::vector<std::optional<int64_t>> some(32);
  CHECK(bankConflictDegree(some, 4) == 0);
  some[3] = 0;
  some[7] = 128;
  CHECK(bankConflictDegree(some, 4) == 2);
  CHECK(bankConflictDegree(std::vector<std::optional<int64_t>>{}, 4) == 0);
}

TEST_CASE("bankConflictDegree: ldmatrix rows of the 128B-swizzled f16 tile", "[analysis][banks]") {
  // Each of 8 lanes reads one 16-byte row chunk of an 8x64 f16 tile, column chunk kc.
  Layout plain{makeTile({{8, 64}, {64, 1}})};
  Layout sw = Layout::compose(Swizzle::make(3, 3, 3), plain.tile);
  for (int64_t kc = 0; kc < 8; ++kc) {
    std::vector<std::optional<int64_t>> a, b;
    for (int64_t row = 0; row < 8; ++row) {
      a.push_back(apply(plain, Shape{row, kc * 8}, Shape{8, 64})[Axis::m] * 2);
      b.push_back(apply(sw, Shape{row, kc * 8}, Shape{8, 64})[Axis::m] * 2);
    }
    CHECK(bankConflictDegree(a, 16) == 8);
    CHECK(bankConflictDegree(b, 16) == 1);
  }
}

TEST_CASE("bankConflictDegree: errors", "[analysis][banks]") {
  std::vector<std::optional<int64_t>> ok = lanes(32, [](int64_t l) { return l * 16; });
  CHECK_THROWS_AS(bankConflictDegree(ok, 3), Error);
  CHECK_THROWS_AS(bankConflictDegree(ok, 32), Error);
  CHECK_THROWS_AS(bankConflictDegree(ok, 0), Error);
  CHECK_THROWS_AS(bankConflictDegree(lanes(32, [](int64_t l) { return l * 4 + 2; }), 4), Error);
  CHECK_THROWS_AS(bankConflictDegree(lanes(32, [](int64_t l) { return l * 8 + 4; }), 8), Error);
  CHECK_THROWS_AS(bankConflictDegree(lanes(33, [](int64_t l) { return l * 4; }), 4), Error);
  CHECK_THROWS_AS(bankConflictDegree(lanes(1, [](int64_t) { return int64_t{-4}; }), 4), Error);
}

TEST_CASE("bankConflictDegree matches brute force on random accesses", "[analysis][banks][random]") {
  Random gen(kSeed + 3);
  INFO("seed " << kSeed + 3);
  const int widths[] = {1, 2, 4, 8, 16};
  for (int i = 0; i < 2000; ++i) {
    int bytes = widths[gen.pick(0, 4)];
    int64_t spread = gen.pick(1, 64);
    std::vector<std::optional<int64_t>> addrs;
    for (int64_t l = 0, n = gen.pick(0, 32); l < n; ++l) {
      if (gen.pick(0, 5) == 0)
        addrs.push_back(std::nullopt);
      else
        addrs.push_back(gen.pick(0, spread * 32) * bytes);
    }
    INFO("case " << i << " width " << bytes);
    REQUIRE(bankConflictDegree(addrs, bytes) == refDegree(addrs, bytes));
  }
}
