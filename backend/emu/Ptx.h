// The warp-collective PTX instructions as pure functions of their operands: which lane holds
// which matrix element for ldmatrix/stmatrix (m8n8, b16) and mma.sync (m16n8k16), and the
// multiply-accumulate itself. The interpreter gathers operands and scatters results.
#pragma once

#include <array>
#include <cstdint>

#include "backend/emu/Values.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::emu {

// One 8x8 matrix of 16-bit elements, [row][column], as eight 16-byte rows of shared memory.
using Matrix8x8 = std::array<std::array<uint16_t, 8>, 8>;

// The 32-bit word lane `lane` receives from (or gives to) `m`: row lane/4, columns
// 2*(lane%4) and 2*(lane%4)+1 (low half first). With `trans` the matrix is read column-major:
// rows 2*(lane%4) and 2*(lane%4)+1 of column lane/4.
uint32_t ldmatrixWord(const Matrix8x8& m, int lane, bool trans);
void stmatrixWord(Matrix8x8& m, int lane, bool trans, uint32_t word);

// mma.sync m16n8k16 fragment ownership. With g = lane/4 and t = lane%4:
//   A (16x16, elements e 0..7, word e/2, half e%2): (g + 8*((e/2)%2), 2t + e%2 + 8*(e/4))
//   B (16x8 as [k][n], e 0..3, word e/2):            (2t + e%2 + 8*(e/2), g)
//   C and D (16x8, e 0..3 floats):                   (g + 8*(e/2), 2t + e%2)
struct MatrixCoord {
  int row;
  int col;
};
MatrixCoord mmaA(int lane, int e);
MatrixCoord mmaB(int lane, int e);
MatrixCoord mmaC(int lane, int e);

using MmaA = std::array<std::array<uint32_t, 4>, kWarpSize>;  // 4 packed words per lane
using MmaB = std::array<std::array<uint32_t, 2>, kWarpSize>;  // 2 packed words per lane
using MmaC = std::array<std::array<float, 4>, kWarpSize>;     // 4 floats per lane

// d = a * b + c with `ab` (F16 or BF16) inputs and f32 accumulation. The products are exact
// and the sum is formed in double, then rounded once to f32: the tensor core's own
// accumulation order and internal precision are unspecified, so results may differ from a
// GPU in the last bits.
MmaC mmaM16n8k16(tir::Type ab, const MmaA& a, const MmaB& b, const MmaC& c);

}  // namespace tyl::emu
