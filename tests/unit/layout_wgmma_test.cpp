// The wgmma atom as layouts (ir/layout/Wgmma.h): the accumulator against the PTX formula, and
// the operand forms and descriptors against values worked out by hand from the PTX ISA's rules
// (the golden values of design/HOPPER.md).
#include <catch2/catch.hpp>

#include <tuple>
#include <variant>

#include "ir/layout/Wgmma.h"
#include "tests/unit/LayoutReference.h"

using namespace tyl::layout;
using tyl::layout::test::makeTile;

namespace {

// ComposeLayout(3, b, 3, S[(rows, cols) : (cols, 1)]): rows of `cols` 16-bit elements.
Layout swizzledRows(int b, int64_t rows, int64_t cols) {
  return Layout::compose(Swizzle::make(3, b, 3), makeTile({{rows, cols}, {cols, 1}}));
}

WgmmaOperandForm form(const std::variant<WgmmaOperandForm, WgmmaFormMismatch>& r) {
  if (const auto* m = std::get_if<WgmmaFormMismatch>(&r)) FAIL(m->message);
  return std::get<WgmmaOperandForm>(r);
}

}  // namespace

TEST_CASE("wgmma accumulator: the layout holds what the PTX formula says, in every register", "[wgmma]") {
  for (int64_t n : {8, 16, 64, 136, 256}) {
    INFO("N = " << n);
    const Layout d{wgmmaLayoutD(n)};
    const Shape shape{kWgmmaM, n};
    for (int thread = 0; thread < 128; ++thread)
      for (int reg = 0; reg < n / 2; ++reg) {
        const RowCol rc = wgmmaAtomD(thread, reg);
        const PhysCoord p = apply(d, std::vector<int64_t>{rc.row, rc.col}, shape);
        CHECK(p[Axis::wid_in_wg] == thread / 32);
        CHECK(p[Axis::laneid] == thread % 32);
        CHECK(p[Axis::m] == reg);
      }
  }
  // G6: thread 0 holds (0, 0), (0, 1), (8, 0), (8, 1); thread 37, r 0: (17, 2); r 127: (25, 251);
  // thread 127, r 2: (63, 6).
  CHECK(wgmmaAtomD(0, 2).row == 8);
  CHECK(wgmmaAtomD(0, 3).col == 1);
  CHECK((wgmmaAtomD(37, 0).row == 17 && wgmmaAtomD(37, 0).col == 2));
  CHECK((wgmmaAtomD(37, 127).row == 25 && wgmmaAtomD(37, 127).col == 251));
  CHECK((wgmmaAtomD(127, 2).row == 63 && wgmmaAtomD(127, 2).col == 6));
  CHECK_FALSE(validWgmmaN(260));
  CHECK_FALSE(validWgmmaN(12));
  CHECK_THROWS_AS(wgmmaLayoutD(12), Error);
}

TEST_CASE("wgmma A in registers: each warp holds its 16 rows as mma.sync holds its A", "[wgmma]") {
  // Over (64 groupsM, 16 kBlocks) with groupsN warpgroups per row: thread t of warpgroup g, register
  // 8 kb + j holds row 64 (g / groupsN) + 16 (t / 32) + (mma.sync A's row), column 16 kb + (its column),
  // from the PTX table of m16n8k16's A (register j: row l / 4 + 8 ((j >> 1) & 1), column
  // 2 (l % 4) + (j & 1) + 8 (j >> 2)).
  for (auto [kBlocks, groupsM, groupsN] : {std::tuple{1, 1, 1}, std::tuple{4, 1, 1}, std::tuple{2, 2, 2},
                                           std::tuple{3, 1, 3}}) {
    INFO("k blocks " << kBlocks << ", warpgroups " << groupsM << " x " << groupsN);
    const Layout a{wgmmaLayoutA(kBlocks, groupsM, groupsN)};
    const Shape shape{kWgmmaM * groupsM, kWgmmaK * kBlocks};
    for (int64_t g = 0; g < groupsM * groupsN; ++g)
      for (int thread = 0; thread < 128; ++thread)
        for (int64_t kb = 0; kb < kBlocks; ++kb)
          for (int j = 0; j < 8; ++j) {
            const int l = thread % 32;
            const int64_t row = 64 * (g / groupsN) + 16 * (thread / 32) + l / 4 + 8 * ((j >> 1) & 1);
            const int64_t col = 16 * kb + 2 * (l % 4) + (j & 1) + 8 * (j >> 2);
            CHECK(mmaAtomA(l, j).row == l / 4 + 8 * ((j >> 1) & 1));
            CHECK(mmaAtomA(l, j).col == 2 * (l % 4) + (j & 1) + 8 * (j >> 2));
            // The element is held by this thread, in register 8 kb + j, among its replicas.
            bool held = false;
            for (const PhysCoord& p : applyAll(a, std::vector<int64_t>{row, col}, shape))
              held = held || (p[Axis::wgid] == g && p[Axis::wid_in_wg] == thread / 32 && p[Axis::laneid] == l &&
                              p[Axis::m] == 8 * kb + j);
            CHECK(held);
          }
  }
  CHECK_THROWS_AS(wgmmaLayoutA(0), Error);
}

TEST_CASE("wgmma descriptors: the golden encodings", "[wgmma]") {
  // G1: K-major, 128-byte swizzle, at 0x400, LBO 16 B, SBO 1024 B; a k16 step adds 2 (32 B).
  CHECK(WgmmaDescriptor{0x400, 16, 1024, WgmmaSwizzle::B128}.encode() == 0x4000004000010040ull);
  CHECK(WgmmaDescriptor{0x400 + 32, 16, 1024, WgmmaSwizzle::B128}.encode() == 0x4000004000010042ull);
  // G2: MN-major, 128-byte swizzle, at 0x8000, LBO 8192 B, SBO 1024 B; a k16 step adds 0x80.
  CHECK(WgmmaDescriptor{0x8000, 8192, 1024, WgmmaSwizzle::B128}.encode() == 0x4000004002000800ull);
  CHECK(WgmmaDescriptor{0x8000 + 2048, 8192, 1024, WgmmaSwizzle::B128}.encode() == 0x4000004002000880ull);
  CHECK(WgmmaDescriptor{0, 128, 256, WgmmaSwizzle::None}.encode() == 0x0000001000080000ull);
  CHECK(WgmmaDescriptor{0, 16, 256, WgmmaSwizzle::B32}.encode() >> 62 == 3);
  CHECK(WgmmaDescriptor{0, 16, 512, WgmmaSwizzle::B64}.encode() >> 62 == 2);
  CHECK_THROWS_AS((WgmmaDescriptor{8, 16, 1024, WgmmaSwizzle::B128}.encode()), Error);
  CHECK_THROWS_AS((WgmmaDescriptor{0, 16, 1 << 18, WgmmaSwizzle::B128}.encode()), Error);
}

TEST_CASE("wgmma descriptors: the swizzle acts on absolute addresses (G3)", "[wgmma]") {
  // In a K-major 128-byte tile at an aligned base, the descriptor of k16 step 3 starts at +96:
  // element (row 2, col 56) is k = 8 of that step, read at byte +336 of the tile.
  const int64_t offset = wgmmaCanonicalOffset(WgmmaMajor::K, WgmmaSwizzle::B128, 16, 1024, 2, 2, 8);
  CHECK(wgmmaSwizzleAddress(WgmmaSwizzle::B128, 96 + offset) == 336);
  // Swizzling the offset from the start instead gives +400: the wrong element.
  CHECK(96 + wgmmaSwizzleAddress(WgmmaSwizzle::B128, offset) == 400);
  // The layout puts it there too.
  const Layout sa = swizzledRows(3, 128, 64);
  CHECK(2 * applyAxis(sa, std::vector<int64_t>{2, 56}, Shape{128, 64}, Axis::m) == 336);
  // G5: ComposeLayout(3, 3, 3, S[(8, 64) : (64, 1)]) puts (5, 20) at element 380.
  CHECK(applyAxis(swizzledRows(3, 8, 64), std::vector<int64_t>{5, 20}, Shape{8, 64}, Axis::m) == 380);
}

TEST_CASE("wgmma operand forms: the examples' tiles, with their descriptors", "[wgmma]") {
  SECTION("A, K-major, 128-byte swizzle: SA = ComposeLayout(3, 3, 3, S[(128, 64) : (64, 1)])") {
    const WgmmaOperandForm f = form(wgmmaOperandForm(swizzledRows(3, 128, 64), Shape{128, 64}, 0, 64, 2));
    CHECK(f.major == WgmmaMajor::K);
    CHECK(f.swizzle == WgmmaSwizzle::B128);
    CHECK(f.lbo == 16);
    CHECK(f.sbo == 1024);
    CHECK(f.atomsMN == 2);
    CHECK(f.stepsK == 4);
    CHECK(f.start(0, 3) == 96);     // +32 B per k16 step
    CHECK(f.start(1, 0) == 8192);   // the second warpgroup's 64 rows
    CHECK(WgmmaDescriptor{0x400 + f.start(0, 0), f.lbo, f.sbo, f.swizzle}.encode() == 0x4000004000010040ull);
  }
  SECTION("B, MN-major panels, 128-byte swizzle: SB = ComposeLayout(3, 3, 3, S[(64, 4, 64) : (64, 4096, 1)])") {
    // (K, N) = (64, 256) as N-panels of 64 columns: element (k, n) at panel n / 64, row k, column n % 64.
    Layout sb = Layout::compose(Swizzle::make(3, 3, 3), makeTile({{64, 64}, {4, 64 * 64}, {64, 1}}));
    const WgmmaOperandForm f = form(wgmmaOperandForm(sb, Shape{64, 256}, 1, 256, 2));
    CHECK(f.major == WgmmaMajor::MN);
    CHECK(f.swizzle == WgmmaSwizzle::B128);
    CHECK(f.lbo == 8192);  // the next panel of 64 columns
    CHECK(f.sbo == 1024);  // the next 8 rows of K
    CHECK(f.start(0, 1) == 2048);
    CHECK(WgmmaDescriptor{0x8000 + f.start(0, 0), f.lbo, f.sbo, f.swizzle}.encode() == 0x4000004002000800ull);
    // G4: element (k = 9, n = 70) is at byte 9372 of the stage.
    CHECK(2 * applyAxis(sb, std::vector<int64_t>{9, 70}, Shape{64, 256}, Axis::m) == 9372);
  }
  SECTION("every swizzle, both majors, tiles of several sizes") {
    for (int b : {1, 2, 3}) {
      const int64_t rowElems = 8 << b;  // one swizzle span of 16-bit elements
      INFO("swizzle B = " << b);
      // K-major: rows of exactly one span.
      const WgmmaOperandForm k = form(wgmmaOperandForm(swizzledRows(b, 64, rowElems), Shape{64, rowElems}, 0, 64, 2));
      CHECK(k.major == WgmmaMajor::K);
      CHECK(static_cast<int>(k.swizzle) == 16 << b);
      CHECK(k.sbo == 8 * 2 * rowElems);
      // MN-major: K rows of one span of MN.
      const WgmmaOperandForm mn =
          form(wgmmaOperandForm(swizzledRows(b, 32, rowElems), Shape{32, rowElems}, 1, rowElems, 2));
      CHECK(mn.major == WgmmaMajor::MN);
      CHECK(mn.sbo == 8 * 2 * rowElems);
    }
    // No swizzle, K-major, 8 x 8 core matrices stored one after another (interleaved).
    Layout interleaved{makeTile({{8, 128}, {8, 8}, {2, 64}, {8, 1}})};  // (mn / 8, mn % 8, k / 8, k % 8)
    const WgmmaOperandForm none = form(wgmmaOperandForm(interleaved, Shape{64, 16}, 0, 64, 2));
    CHECK(none.swizzle == WgmmaSwizzle::None);
    CHECK(none.lbo == 128);
    CHECK(none.sbo == 256);
  }
}

TEST_CASE("wgmma operand forms: a tile in none of them is refused with the element that breaks it", "[wgmma]") {
  auto refused = [](const std::variant<WgmmaOperandForm, WgmmaFormMismatch>& r) -> WgmmaFormMismatch {
    REQUIRE(std::holds_alternative<WgmmaFormMismatch>(r));
    return std::get<WgmmaFormMismatch>(r);
  };
  // Row-major 128-element rows (256 bytes) under a 128-byte swizzle: the K-major form has rows
  // 128 bytes apart within each group of 8, these are 256 (row 1 at 256, swizzled to 288).
  WgmmaFormMismatch wide = refused(wgmmaOperandForm(swizzledRows(3, 64, 128), Shape{64, 128}, 0, 64, 2));
  CHECK_THAT(wide.message, Catch::Contains("element (1, 0) is at byte 288, but the descriptor reads it at byte 144"));
  REQUIRE(wide.element);
  CHECK(*wide.element == std::pair<int64_t, int64_t>{1, 0});
  // 64-byte swizzle on 128-byte rows.
  CHECK(refused(wgmmaOperandForm(swizzledRows(2, 64, 64), Shape{64, 64}, 0, 64, 2)).element);
  // Swizzles that are none of wgmma's, whatever the tile: ComposeLayout(2, 3, 3) and (4, 3, 3)
  // (in 16-bit elements, Swizzle<3, 3, 4> and <3, 5, 3> on bytes).
  for (int perElement : {2, 4}) {
    Layout l = Layout::compose(Swizzle::make(perElement, 3, 3), makeTile({{64, 64}, {64, 1}}));
    CHECK_THAT(refused(wgmmaOperandForm(l, Shape{64, 64}, 0, 64, 2)).message, Catch::Contains("none of wgmma's"));
  }
  // A transposed tile in a layout whose neither dimension is contiguous.
  Layout strided{makeTile({{64, 2}, {16, 128}})};
  CHECK_THAT(refused(wgmmaOperandForm(strided, Shape{64, 16}, 0, 64, 2)).message, Catch::Contains("contiguous"));
  // Extents that are not whole atoms.
  CHECK_THAT(refused(wgmmaOperandForm(swizzledRows(3, 32, 64), Shape{32, 64}, 0, 64, 2)).message,
             Catch::Contains("multiples of 64"));
}
