// An independent check of tyloc's wgmma matrix descriptors and TMA swizzle addresses against
// NVIDIA's CUTLASS CuTe. tyloc's descriptor encoder (ir/layout/Wgmma.h) and its emulator read the
// PTX rules the same way, so a mistake the two share would agree with itself in every emulated
// test; CuTe is a second implementation of those rules, written and used elsewhere.
//
// For each shared operand layout of the GEMM kernels (tests/emu/kernels/wgmma_tiles.tyl,
// tma_tiles.tyl and ws_gemm.tyl) the test builds the same tile from CuTe's GMMA layout atoms
// (cute_reference.cu), checks that tyloc's layout and CuTe's tensor put every element at the same
// shared address, and compares tyloc's descriptor of every wgmma atom with CuTe's make_gmma_desc,
// field by field, at several 1024-aligned tile addresses. For TMA it compares the addresses tyloc
// says a copy writes with a 32-, 64- or 128-byte swizzle with CuTe's Swizzle<B, 4, 3> of the
// byte address, and the swizzle mode of each tile with the one CuTe's TMA copies use for it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "ir/layout/Tma.h"
#include "ir/layout/Wgmma.h"
#include "tests/cute/CuteReference.h"
#include "tests/unit/LayoutReference.h"

using namespace tyl::layout;
using tyl::cute_reference::Tile;
using tyl::layout::test::makeTile;
namespace cute = tyl::cute_reference;

namespace {

// Tile addresses in shared memory: multiples of the 128-byte swizzle's period (1024 bytes), the
// last near the top of the 228 KiB an SM90 block can have.
const std::vector<uint32_t> kBases{0x400, 0x8000, 0x2C000};

// ComposeLayout(3, b, 3, tile): the 16-bit wgmma swizzles (Swizzle<b, 4, 3> on byte addresses).
Layout swizzled(int b, TileLayout tile) { return Layout::compose(Swizzle::make(3, b, 3), std::move(tile)); }

struct OperandCase {
  const char* text;  // the layout as the kernels write it
  Tile tile;         // the same tile in CuTe, as (MN, K)
  Layout layout;
  Shape shape;  // tyloc's: A as (M, K), B as (K, N)
  int mnDim;
  int64_t atomMN;
  // The descriptor fields both must find, in bytes.
  WgmmaMajor major;
  WgmmaSwizzle swizzle;
  int64_t lbo, sbo;
};

std::vector<OperandCase> operandCases() {
  using enum WgmmaMajor;
  using enum WgmmaSwizzle;
  return {
      {"A: ComposeLayout(3, 3, 3, S[(64, 64) : (64, 1)])", Tile::AK128_64x64,
       swizzled(3, makeTile({{64, 64}, {64, 1}})), {64, 64}, 0, 64, K, B128, 16, 1024},
      {"A: ComposeLayout(3, 2, 3, S[(64, 32) : (32, 1)])", Tile::AK64_64x32,
       swizzled(2, makeTile({{64, 32}, {32, 1}})), {64, 32}, 0, 64, K, B64, 16, 512},
      {"A: ComposeLayout(3, 1, 3, S[(64, 16) : (16, 1)])", Tile::AK32_64x16,
       swizzled(1, makeTile({{64, 16}, {16, 1}})), {64, 16}, 0, 64, K, B32, 16, 256},
      {"A: ComposeLayout(3, 3, 3, S[(128, 64) : (64, 1)])", Tile::AK128_128x64,
       swizzled(3, makeTile({{128, 64}, {64, 1}})), {128, 64}, 0, 64, K, B128, 16, 1024},
      {"B: ComposeLayout(3, 3, 3, S[(64, 2, 64) : (64, 4096, 1)])", Tile::BMN128_Panels_64x128,
       swizzled(3, makeTile({{64, 64}, {2, 4096}, {64, 1}})), {64, 128}, 1, 128, MN, B128, 8192, 1024},
      // One 64-column span of N: no second span for the LBO to reach, and both write 0.
      {"B: ComposeLayout(3, 3, 3, S[(64, 64) : (64, 1)])", Tile::BMN128_64x64,
       swizzled(3, makeTile({{64, 64}, {64, 1}})), {64, 64}, 1, 64, MN, B128, 0, 1024},
      // B stored N x K (A @ B^T): K-major.
      {"B: ComposeLayout(3, 2, 3, S[(32, 64) : (1, 32)])", Tile::BK64_32x64,
       swizzled(2, makeTile({{32, 1}, {64, 32}})), {32, 64}, 1, 64, K, B64, 16, 512},
      {"B: S[(2, 8, 4, 8) : (256, 8, 64, 1)]", Tile::BMNNone_16x32,
       Layout{makeTile({{2, 256}, {8, 8}, {4, 64}, {8, 1}})}, {16, 32}, 1, 32, MN, None, 512, 128},
  };
}

// Tyloc's coordinate of element (mn, k) of an operand.
std::vector<int64_t> coordOf(const OperandCase& c, int64_t mn, int64_t k) {
  return c.mnDim == 0 ? std::vector<int64_t>{mn, k} : std::vector<int64_t>{k, mn};
}

// The shared byte address tyloc's layout puts an element at, for a tile at `base`: offsets
// swizzle as absolute addresses do because the base lies on the swizzle's period.
int64_t tyloAddress(const Layout& layout, const Shape& shape, const std::vector<int64_t>& coord, uint32_t base) {
  return base + 2 * applyAxis(layout, coord, shape, Axis::m);
}

// A descriptor's fields (PTX ISA, wgmma matrix descriptor), read independently of both encoders.
struct Fields {
  uint64_t start, lbo, sbo;  // 16-byte units
  uint64_t baseOffset, layoutType;
  uint64_t other;  // every bit outside the fields: reserved, 0
};

Fields fieldsOf(uint64_t d) {
  const uint64_t fieldBits = 0x3FFFull | 0x3FFFull << 16 | 0x3FFFull << 32 | 0x7ull << 49 | 0x3ull << 62;
  return {d & 0x3FFF, d >> 16 & 0x3FFF, d >> 32 & 0x3FFF, d >> 49 & 0x7, d >> 62, d & ~fieldBits};
}

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

}  // namespace

TEST_CASE("CuTe cross-check: tyloc's operand layouts are the tiles CuTe builds from its GMMA atoms", "[cute]") {
  for (const OperandCase& c : operandCases()) {
    INFO(c.text);
    const int64_t extentMN = c.shape[static_cast<size_t>(c.mnDim)], extentK = c.shape[static_cast<size_t>(1 - c.mnDim)];
    for (uint32_t base : kBases) {
      INFO("tile at " << hex(base));
      std::string firstDifference;
      for (int64_t mn = 0; mn < extentMN && firstDifference.empty(); ++mn)
        for (int64_t k = 0; k < extentK && firstDifference.empty(); ++k) {
          const int64_t tylo = tyloAddress(c.layout, c.shape, coordOf(c, mn, k), base);
          const uint32_t reference = cute::elementAddress(c.tile, base, static_cast<int>(mn), static_cast<int>(k));
          if (tylo != reference)
            firstDifference = "element (mn " + std::to_string(mn) + ", k " + std::to_string(k) + "): tyloc " +
                              hex(static_cast<uint64_t>(tylo)) + ", CuTe " + hex(reference);
        }
      CHECK(firstDifference == "");
    }
  }
}

TEST_CASE("CuTe cross-check: tyloc's wgmma descriptors are CuTe's make_gmma_desc, field by field", "[cute]") {
  // Every field is compared, those PTX says the hardware ignores included: LBO of a K-major
  // swizzled form ("assumed 1"), which both write as 16 bytes; LBO of an MN-major swizzled tile
  // one span wide, which both write as 0. The base offset is 0 in both: every tile starts on its
  // swizzle's period.
  for (const OperandCase& c : operandCases()) {
    INFO(c.text);
    const auto result = wgmmaOperandForm(c.layout, c.shape, c.mnDim, c.atomMN, 2);
    if (const auto* mismatch = std::get_if<WgmmaFormMismatch>(&result)) FAIL(mismatch->message);
    const WgmmaOperandForm& form = std::get<WgmmaOperandForm>(result);
    CHECK(form.major == c.major);
    CHECK(form.swizzle == c.swizzle);
    CHECK(form.lbo == c.lbo);
    CHECK(form.sbo == c.sbo);
    for (uint32_t base : kBases)
      for (int64_t atom = 0; atom < form.atomsMN; ++atom)
        for (int64_t step = 0; step < form.stepsK; ++step) {
          const WgmmaDescriptor descriptor{base + form.start(atom, step), form.lbo, form.sbo, form.swizzle};
          const uint64_t tylo = descriptor.encode();
          const uint64_t reference =
              cute::gmmaDescriptor(c.tile, base, static_cast<int>(atom), static_cast<int>(step));
          INFO("tile at " << hex(base) << ", atom " << atom << ", k16 step " << step << ": tyloc " << hex(tylo)
                          << ", CuTe " << hex(reference));
          const Fields t = fieldsOf(tylo), r = fieldsOf(reference);
          CHECK(t.start == r.start);
          CHECK(t.lbo == r.lbo);
          CHECK(t.sbo == r.sbo);
          CHECK(t.baseOffset == r.baseOffset);
          CHECK(t.baseOffset == 0);
          CHECK(t.layoutType == r.layoutType);
          CHECK(t.other == r.other);
          CHECK(tylo == reference);
        }
  }
}

TEST_CASE("CuTe cross-check: a TMA box's swizzled addresses are CuTe's Swizzle<B, 4, 3> of its byte addresses",
          "[cute]") {
  CHECK(cute::tmaSwizzleBytesOf(0) == 0);
  for (int bits : {1, 2, 3}) {
    // CuTe's TMA copies take Swizzle<bits, 4, 3> for the mode of 16 << bits bytes.
    const int swizzle = cute::tmaSwizzleBytesOf(bits);
    INFO("Swizzle<" << bits << ", 4, 3>, TMA swizzle " << swizzle << " B");
    REQUIRE(swizzle == 16 << bits);
    // A box of bf16 rows one span wide (64 columns for 128 bytes), four swizzle periods tall.
    const int64_t boxCols = swizzle / 2, boxRows = 32;
    for (uint32_t start : kBases) {
      std::string firstDifference;
      for (int64_t r = 0; r < boxRows && firstDifference.empty(); ++r)
        for (int64_t c = 0; c < boxCols && firstDifference.empty(); ++c) {
          const int64_t tylo = tmaElementAddress(swizzle, start, boxCols, 2, r, c);
          const uint32_t reference = cute::swizzleAddress(bits, static_cast<uint32_t>(start + (r * boxCols + c) * 2));
          if (tylo != reference)
            firstDifference = "box at " + hex(start) + ", element (" + std::to_string(r) + ", " + std::to_string(c) +
                              "): tyloc " + hex(static_cast<uint64_t>(tylo)) + ", CuTe " + hex(reference);
        }
      CHECK(firstDifference == "");
    }
  }
}

TEST_CASE("CuTe cross-check: TMA writes tyloc's shared tiles where CuTe's tensors have their elements", "[cute]") {
  struct TmaCase {
    const char* text;
    Tile tile;
    Layout layout;
    Shape shape;      // (rows, cols) of the copy
    bool transposed;  // CuTe's tensor is (cols, rows): a B operand as (N, K)
    int swizzle;      // bytes
  };
  const std::vector<TmaCase> cases{
      {"tma_b128: ComposeLayout(3, 3, 3, S[(32, 64) : (64, 1)])", Tile::Tma128_32x64,
       swizzled(3, makeTile({{32, 64}, {64, 1}})), {32, 64}, false, 128},
      {"tma_b64_panels: ComposeLayout(3, 2, 3, S[(32, 2, 32) : (32, 1024, 1)])", Tile::Tma64_Panels_32x64,
       swizzled(2, makeTile({{32, 32}, {2, 1024}, {32, 1}})), {32, 64}, false, 64},
      {"tma_gemm A: ComposeLayout(3, 3, 3, S[(64, 64) : (64, 1)])", Tile::AK128_64x64,
       swizzled(3, makeTile({{64, 64}, {64, 1}})), {64, 64}, false, 128},
      {"ws_gemm A stage: ComposeLayout(3, 3, 3, S[(128, 64) : (64, 1)])", Tile::AK128_128x64,
       swizzled(3, makeTile({{128, 64}, {64, 1}})), {128, 64}, false, 128},
      {"tma_gemm B: ComposeLayout(3, 3, 3, S[(64, 2, 64) : (64, 4096, 1)])", Tile::BMN128_Panels_64x128,
       swizzled(3, makeTile({{64, 64}, {2, 4096}, {64, 1}})), {64, 128}, true, 128},
  };
  for (const TmaCase& c : cases) {
    INFO(c.text);
    TmaTile tile;
    tile.layout = &c.layout;
    tile.shape = c.shape;
    tile.origin = {0, 0};
    tile.rows = c.shape[0];
    tile.cols = c.shape[1];
    tile.elemBytes = 2;
    const auto result = tmaTileForm(tile);
    if (const auto* mismatch = std::get_if<TmaFormMismatch>(&result)) FAIL(mismatch->message);
    const TmaTileForm& form = std::get<TmaTileForm>(result);
    CHECK(form.swizzle == c.swizzle);
    CHECK(cute::tmaSwizzleBytes(c.tile) == form.swizzle);
    for (uint32_t base : kBases) {
      std::string firstDifference;
      for (const TmaBox& box : form.boxes)
        for (int64_t r = 0; r < form.boxRows && firstDifference.empty(); ++r)
          for (int64_t col = 0; col < form.boxCols && firstDifference.empty(); ++col) {
            const int64_t written = tmaElementAddress(form.swizzle, base + box.start, form.boxCols, 2, r, col);
            const int row = static_cast<int>(box.row + r), column = static_cast<int>(box.col + col);
            const uint32_t reference = c.transposed ? cute::elementAddress(c.tile, base, column, row)
                                                    : cute::elementAddress(c.tile, base, row, column);
            if (written != reference)
              firstDifference = "tile at " + hex(base) + ", element (" + std::to_string(row) + ", " +
                                std::to_string(column) + "): TMA writes " + hex(static_cast<uint64_t>(written)) +
                                ", CuTe has it at " + hex(reference);
          }
      CHECK(firstDifference == "");
    }
  }
}

// The register fragments: the element each register of each thread holds, in tyloc's layouts of A
// in registers and of the accumulator, against CuTe's GMMA atoms' ALayout and CLayout.
TEST_CASE("CuTe cross-check: the wgmma A-in-registers and accumulator fragments are CuTe's", "[cute]") {
  auto holds = [](const Layout& layout, const Shape& shape, int row, int col, int thread, int value) {
    for (const PhysCoord& p : applyAll(layout, std::vector<int64_t>{row, col}, shape))
      if (p[Axis::wid_in_wg] == thread / 32 && p[Axis::laneid] == thread % 32 && p[Axis::m] == value) return true;
    return false;
  };
  const Layout a{wgmmaLayoutA(1)};
  for (int thread = 0; thread < 128; ++thread)
    for (int value = 0; value < 8; ++value) {
      int row = 0, col = 0;
      cute::gmmaRegisterA(thread, value, &row, &col);
      INFO("A: thread " << thread << ", value " << value << ": CuTe's (" << row << ", " << col << ")");
      CHECK(holds(a, Shape{64, 16}, row, col, thread, value));
    }
  for (int n : {64, 128, 256}) {
    const Layout d{wgmmaLayoutD(n)};
    for (int thread = 0; thread < 128; ++thread)
      for (int value = 0; value < n / 2; ++value) {
        int row = 0, col = 0;
        cute::gmmaAccumulator(n, thread, value, &row, &col);
        INFO("D, N = " << n << ": thread " << thread << ", value " << value << ": CuTe's (" << row << ", " << col
                       << ")");
        CHECK(holds(d, Shape{64, n}, row, col, thread, value));
      }
  }
}
