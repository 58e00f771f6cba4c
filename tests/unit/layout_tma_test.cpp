// Where TMA writes a box in shared memory (ir/layout/Tma.h): the address formula against values
// worked out by hand from the swizzle rule (design/HOPPER.md's G4), the boxes found for the
// tiles the tests and examples use, and the mismatches named by element.
#include <catch2/catch.hpp>

#include <variant>

#include "ir/layout/Tma.h"
#include "tests/unit/LayoutReference.h"

using namespace tyl::layout;
using tyl::layout::test::makeTile;

namespace {

std::variant<TmaTileForm, TmaFormMismatch> formOf(const Layout& l, Shape shape, int64_t rows, int64_t cols,
                                                  int elemBytes = 2, std::vector<int64_t> origin = {},
                                                  int rowDim = 0, int colDim = 1) {
  TmaTile t;
  t.layout = &l;
  t.origin = origin.empty() ? std::vector<int64_t>(shape.size(), 0) : origin;
  t.shape = std::move(shape);
  t.rowDim = rowDim;
  t.colDim = colDim;
  t.rows = rows;
  t.cols = cols;
  t.elemBytes = elemBytes;
  return tmaTileForm(t);
}

TmaTileForm form(const std::variant<TmaTileForm, TmaFormMismatch>& r) {
  if (const auto* m = std::get_if<TmaFormMismatch>(&r)) FAIL(m->message);
  return std::get<TmaTileForm>(r);
}

TmaFormMismatch mismatch(const std::variant<TmaTileForm, TmaFormMismatch>& r) {
  if (std::holds_alternative<TmaTileForm>(r)) FAIL("the tile was accepted");
  return std::get<TmaFormMismatch>(r);
}

}  // namespace

TEST_CASE("TMA element addresses: the swizzle acts on absolute addresses", "[tma]") {
  // Unswizzled: row after row.
  CHECK(tmaElementAddress(0, 2048, 64, 2, 3, 5) == 2048 + (3 * 64 + 5) * 2);
  // 128-byte swizzle: chunk bits [4, 7) ^= bits [7, 10). Row 1 of a box at 0 (byte 128) has its
  // chunk 0 at chunk 1.
  CHECK(tmaElementAddress(128, 0, 64, 2, 1, 0) == 128 + 16);
  CHECK(tmaElementAddress(128, 0, 64, 2, 7, 63) == ((7 * 128 + 126) ^ (7 << 4)));
  // 64-byte swizzle: two chunk bits; 32-byte: one.
  CHECK(tmaElementAddress(64, 0, 32, 2, 3, 0) == 192 + 16);
  CHECK(tmaElementAddress(32, 0, 16, 2, 1, 0) == 32);
  CHECK(tmaElementAddress(32, 0, 16, 2, 4, 0) == 128 + 16);
  // G4: in SB = ComposeLayout(3, 3, 3, S[(64, 4, 64) : (64, 4096, 1)]), (k = 9, n = 70) is in the
  // second 64-column box (at byte 8192), row 9, column 6: byte 9372.
  CHECK(tmaElementAddress(128, 8192, 64, 2, 9, 6) == 9372);
}

TEST_CASE("TMA tiles: the boxes of the tiles TMA writes", "[tma]") {
  SECTION("a K-major tile with a 128-byte swizzle is one box") {
    const Layout l = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{32, 64}, {64, 1}}));
    const TmaTileForm f = form(formOf(l, {32, 64}, 32, 64));
    CHECK(f.swizzle == 128);
    CHECK(f.boxRows == 32);
    CHECK(f.boxCols == 64);
    REQUIRE(f.boxes.size() == 1);
    CHECK(f.boxes[0].start == 0);
  }
  SECTION("a panel of SB, at each panel's origin") {
    const Layout l = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{64, 64}, {4, 4096}, {64, 1}}));
    for (int64_t p = 0; p < 4; ++p) {
      const TmaTileForm f = form(formOf(l, {64, 4, 64}, 64, 64, 2, {0, p, 0}, 0, 2));
      REQUIRE(f.boxes.size() == 1);
      CHECK(f.boxes[0].start == p * 8192);
    }
  }
  SECTION("rows wider than the swizzle span are several boxes, each at a period of its own") {
    // T[64, 128] over S[(64, 2, 64) : (64, 4096, 1)]: N-panels of 64 columns, 8 KB apart.
    const Layout panels = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{64, 64}, {2, 4096}, {64, 1}}));
    const TmaTileForm f = form(formOf(panels, {64, 128}, 64, 128));
    CHECK(f.boxCols == 64);
    REQUIRE(f.boxes.size() == 2);
    CHECK(f.boxes[1].col == 64);
    CHECK(f.boxes[1].start == 8192);
    // Rows of 128 elements: the second box (columns 64..127) starts 128 bytes in, inside the
    // first box's period.
    const Layout flat = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{64, 64}, {128, 1}}));
    const TmaFormMismatch m = mismatch(formOf(flat, {64, 128}, 64, 128));
    CHECK_THAT(m.message, Catch::Contains("starts at byte 128") && Catch::Contains("multiple of 1024"));
    REQUIRE(m.element.has_value());
    CHECK(m.element->first == 0);
    CHECK(m.element->second == 64);
  }
  SECTION("no swizzle: rows up to 256 elements, boxes of up to 256 rows") {
    const Layout l{makeTile({{512, 32}, {32, 1}})};
    const TmaTileForm f = form(formOf(l, {512, 32}, 512, 32));
    CHECK(f.swizzle == 0);
    CHECK(f.boxRows == 256);
    CHECK(f.boxCols == 32);
    REQUIRE(f.boxes.size() == 2);
    CHECK(f.boxes[1].row == 256);
    CHECK(f.boxes[1].start == 256 * 32 * 2);
  }
  SECTION("32-byte swizzle of f32") {
    const Layout l = Layout::compose(Swizzle::make(2, 1, 3), makeTile({{16, 8}, {8, 1}}));
    const TmaTileForm f = form(formOf(l, {16, 8}, 16, 8, 4));
    CHECK(f.swizzle == 32);
    CHECK(f.boxCols == 8);
  }
  SECTION("a stage of a ring, at every stage") {
    const Layout l = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{3, 8192}, {128, 64}, {64, 1}}));
    for (int64_t s = 0; s < 3; ++s) {
      const TmaTileForm f = form(formOf(l, {3, 128, 64}, 128, 64, 2, {s, 0, 0}, 1, 2));
      REQUIRE(f.boxes.size() == 1);
      CHECK(f.boxes[0].start == s * 16384);
    }
  }
}

TEST_CASE("TMA tiles: mismatches name the element", "[tma]") {
  SECTION("a column-major tile") {
    const Layout l{makeTile({{32, 1}, {64, 32}})};
    const TmaFormMismatch m = mismatch(formOf(l, {32, 64}, 32, 64));
    CHECK_THAT(m.message, Catch::Contains("element (0, 1)"));
    REQUIRE(m.element.has_value());
    CHECK(*m.element == std::pair<int64_t, int64_t>{0, 1});
  }
  SECTION("a swizzle that is not TMA's") {
    const Layout l = Layout::compose(Swizzle::make(2, 3, 3), makeTile({{32, 64}, {64, 1}}));
    CHECK_THAT(mismatch(formOf(l, {32, 64}, 32, 64)).message, Catch::Contains("none of TMA's"));
  }
  SECTION("a window that starts inside the swizzle's period") {
    const Layout l = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{64, 64}, {64, 1}}));
    const TmaFormMismatch m = mismatch(formOf(l, {64, 64}, 8, 64, 2, {1, 0}));
    CHECK_THAT(m.message, Catch::Contains("starts at byte 128") && Catch::Contains("128-byte swizzle"));
  }
  SECTION("an unswizzled box away from a 128-byte boundary") {
    const Layout l{makeTile({{64, 8}, {8, 1}})};
    const TmaFormMismatch m = mismatch(formOf(l, {64, 8}, 8, 8, 2, {1, 0}));
    CHECK_THAT(m.message, Catch::Contains("starts at byte 16") && Catch::Contains("multiple of 128"));
  }
  SECTION("rows of fewer than 16 bytes") {
    const Layout l{makeTile({{8, 4}, {4, 1}})};
    CHECK_THAT(mismatch(formOf(l, {8, 4}, 8, 4)).message, Catch::Contains("multiple of 16 bytes"));
  }
  SECTION("replicas and thread axes") {
    const Layout l{makeTile({{32, 1, Axis::laneid}, {8, 1}})};
    CHECK_THAT(mismatch(formOf(l, {32, 8}, 32, 8)).message, Catch::Contains("memory ('m') only"));
  }
}

TEST_CASE("TMA tiles of three dimensions: the box's rows are its outer places' rows, one after another", "[tma]") {
  // bf16[2, 32, 64] with a 128-byte swizzle, the matrices 4096 bytes apart: one box of 2 x 32 x 64,
  // whose (o, r, c) TMA writes as row 32 o + r of a 64 x 64 box.
  const Layout l = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{2, 2048}, {32, 64}, {64, 1}}));
  TmaTile t;
  t.layout = &l;
  t.shape = {2, 32, 64};
  t.origin = {0, 0, 0};
  t.rowDim = 1;
  t.colDim = 2;
  t.rows = 32;
  t.cols = 64;
  t.outerDims = {0};
  t.outerExtents = {2};
  const TmaTileForm f = form(tmaTileForm(t));
  CHECK(f.boxOuter == std::vector<int64_t>{2});
  REQUIRE(f.boxes.size() == 1);
  CHECK(f.boxes[0].start == 0);
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t r = 0; r < 32; ++r)
      for (int64_t c = 0; c < 64; ++c)
        CHECK(2 * applyAxis(l, std::vector<int64_t>{o, r, c}, t.shape, Axis::m) ==
              tmaElementAddress(128, 0, 64, 2, 32 * o + r, c));
  // Over 300 matrices the outer box is 256 long at most: 300 is not a whole number of them.
  const Layout tall{makeTile({{300, 2048}, {32, 64}, {64, 1}})};
  t.layout = &tall;
  t.shape = {300, 32, 64};
  t.outerExtents = {300};
  CHECK_THAT(mismatch(tmaTileForm(t)).message, Catch::Contains("not a whole number of boxes of 256"));
  // The matrices interleaved with the rows: not where TMA writes them.
  const Layout mixed{makeTile({{2, 64}, {32, 128}, {64, 1}})};
  t.layout = &mixed;
  t.shape = {2, 32, 64};
  t.outerExtents = {2};
  CHECK_THAT(mismatch(tmaTileForm(t)).message, Catch::Contains("TMA moves rows of 2 x 32 x 64 boxes"));
}
