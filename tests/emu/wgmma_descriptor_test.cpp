// The compiler's wgmma operand forms (ir/layout/Wgmma.h) against the emulator's decoder of
// descriptor bits (backend/emu/Wgmma.h): for every tile the compiler accepts, each atom's
// encoded descriptor, decoded as the hardware reads it, must address exactly the elements the
// tile's layout places, in every swizzle mode and both majors, at several shared addresses.
#include <catch2/catch.hpp>

#include <variant>

#include "backend/emu/Wgmma.h"
#include "ir/layout/Wgmma.h"

using namespace tyl;
using namespace tyl::layout;

namespace {

Layout swizzled(int b, TileLayout t) { return Layout::compose(Swizzle::make(3, b, 3), std::move(t)); }

TileLayout tile(std::vector<Iter> shard) {
  TileLayout t;
  t.shard = std::move(shard);
  return t;
}

struct Case {
  const char* what;
  Layout layout;
  Shape shape;
  int mnDim;
  int64_t atomMN;
};

}  // namespace

TEST_CASE("emu.wgmma: the golden descriptors decode as the PTX ISA says", "[wgmma]") {
  const emu::MatrixDescriptor g1 = emu::decodeMatrixDescriptor(0x4000004000010040ull);
  CHECK(g1.start == 0x400);
  CHECK(g1.lbo == 16);
  CHECK(g1.sbo == 1024);
  CHECK(g1.layoutType == 1);
  CHECK(g1.baseOffset == 0);
  const emu::MatrixDescriptor g2 = emu::decodeMatrixDescriptor(0x4000004002000800ull);
  CHECK(g2.start == 0x8000);
  CHECK(g2.lbo == 8192);
  CHECK(g2.sbo == 1024);
  // G3: the k16 step 3 descriptor of a K-major 128-byte tile at 0x400 reads (row 2, col 56),
  // its (mn 2, k 8), at 0x400 + 336.
  const emu::MatrixDescriptor step3 = emu::decodeMatrixDescriptor(0x4000004000010040ull + 6);
  CHECK(emu::matrixElementAddress(step3, false, 2, 2, 8) == 0x400 + 336);
  // G4: in SB at 0x8000 (MN-major panels), element (k 9, n 70): k16 step 0, mn 70, k 9.
  CHECK(emu::matrixElementAddress(g2, true, 2, 70, 9) == 0x8000 + 9372);
  CHECK(emu::decodeMatrixDescriptor(uint64_t{5} << 49).baseOffset == 5);
}

TEST_CASE("emu.wgmma: every accepted tile reads back element for element through the decoder", "[wgmma]") {
  std::vector<Case> cases = {
      {"A 128x64, K-major, 128 B", swizzled(3, tile({{128, 64}, {64, 1}})), {128, 64}, 0, 64},
      {"B 64x256 as N-panels, MN-major, 128 B", swizzled(3, tile({{64, 64}, {4, 4096}, {64, 1}})), {64, 256}, 1, 256},
      {"B 64x128 stored N x K (K-major B), 128 B", swizzled(3, tile({{64, 1}, {128, 64}})), {64, 128}, 1, 128},
      {"A 64x32, K-major, 64 B", swizzled(2, tile({{64, 32}, {32, 1}})), {64, 32}, 0, 64},
      {"A 64x16, K-major, 32 B", swizzled(1, tile({{64, 16}, {16, 1}})), {64, 16}, 0, 64},
      {"A 64x64 as K-panels of 32, K-major, 64 B", swizzled(2, tile({{64, 32}, {2, 64 * 32}, {32, 1}})), {64, 64}, 0, 64},
      {"B 32x64 (K, N), MN-major, 64 B, panels of 32", swizzled(2, tile({{32, 32}, {2, 1024}, {32, 1}})), {32, 64}, 1, 64},
      {"B 16x32 (K, N), MN-major, 32 B, panels of 16", swizzled(1, tile({{16, 16}, {2, 256}, {16, 1}})), {16, 32}, 1, 32},
      {"A 64x16, K-major, no swizzle, 8x8 core matrices", Layout{tile({{8, 128}, {8, 8}, {2, 64}, {8, 1}})}, {64, 16}, 0,
       64},
      {"B 16x64 (K, N), MN-major, no swizzle", Layout{tile({{2, 64}, {8, 8}, {8, 128}, {8, 1}})}, {16, 64}, 1, 64},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    auto r = wgmmaOperandForm(c.layout, c.shape, c.mnDim, c.atomMN, 2);
    if (const auto* m = std::get_if<WgmmaFormMismatch>(&r)) FAIL(m->message);
    const WgmmaOperandForm& form = std::get<WgmmaOperandForm>(r);
    const int kDim = 1 - c.mnDim;
    int64_t compared = 0;
    for (int64_t base : {int64_t{0}, int64_t{0x2000}, int64_t{0x1C000}}) {
      for (int64_t a = 0; a < form.atomsMN; ++a)
        for (int64_t s = 0; s < form.stepsK; ++s) {
          const uint64_t bits = WgmmaDescriptor{base + form.start(a, s), form.lbo, form.sbo, form.swizzle}.encode();
          const emu::MatrixDescriptor d = emu::decodeMatrixDescriptor(bits);
          for (int64_t mn = 0; mn < c.atomMN; ++mn)
            for (int64_t k = 0; k < kWgmmaK; ++k) {
              std::vector<int64_t> coord(2);
              coord[static_cast<size_t>(c.mnDim)] = a * c.atomMN + mn;
              coord[static_cast<size_t>(kDim)] = s * kWgmmaK + k;
              const int64_t expected = base + 2 * applyAxis(c.layout, coord, c.shape, Axis::m);
              const int64_t read = emu::matrixElementAddress(d, form.major == WgmmaMajor::MN, 2, mn, k);
              ++compared;
              if (read != expected)
                FAIL("base " << base << ", atom " << a << ", step " << s << ", (mn " << mn << ", k " << k << "): reads "
                             << read << ", the layout has " << expected);
            }
        }
    }
    CHECK(compared == 3 * c.shape[0] * c.shape[1]);
  }
}
