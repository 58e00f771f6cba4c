// The mma.sync m16n8k16 atom as layouts.
//
// The PTX ISA fixes which lane holds which element of each operand. With g = lane / 4
// and t = lane % 4:
//   A (16 x 16, row, col): register slot e + 2h + 4q holds (g + 8h, 2t + e + 8q)
//   B (16 x 8,  k, n):     register slot e + 2q      holds (2t + e + 8q, g)
//   C (16 x 8,  row, col): register slot e + 2h      holds (g + 8h, 2t + e)
// A tiled MMA repeats the atom over a grid of warps (warp w sits at row w / wn, column
// w % wn) and, within each warp, over rm x rn atom positions and the K blocks of a
// fragment. The functions here give the fragment layouts of that arrangement; B uses
// mathematical (K, N) coordinates throughout.
#pragma once

#include <cstdint>

#include "ir/layout/Layout.h"

namespace tyl::layout {

struct TiledMmaShape {
  int64_t warpsM = 1, warpsN = 1;      // warp grid
  int64_t repeatM = 1, repeatN = 1;    // atoms per warp
  static constexpr int64_t kAtomM = 16, kAtomN = 8, kAtomK = 16;

  int64_t tileM() const { return kAtomM * warpsM * repeatM; }
  int64_t tileN() const { return kAtomN * warpsN * repeatN; }
  int64_t threads() const { return 32 * warpsM * warpsN; }
};

// The accumulator over (tileM, tileN): 4 f32 slots per atom position.
TileLayout mmaLayoutC(const TiledMmaShape& s);
// The A operand over (tileM, 16 * kBlocks): 8 16-bit slots per atom position and K block,
// replicated over the warps of one warp row.
TileLayout mmaLayoutA(const TiledMmaShape& s, int64_t kBlocks);
// The B operand over (16 * kBlocks, tileN): 4 16-bit slots per atom position and K block,
// replicated over the warps of one warp column.
TileLayout mmaLayoutB(const TiledMmaShape& s, int64_t kBlocks);

// The PTX tables for one atom: the (row, col) of operand slot `slot` in lane `lane`.
struct RowCol {
  int64_t row, col;
};
RowCol mmaAtomA(int lane, int slot);  // slot 0..7
RowCol mmaAtomB(int lane, int slot);  // slot 0..3, (k, n)
RowCol mmaAtomC(int lane, int slot);  // slot 0..3

}  // namespace tyl::layout
