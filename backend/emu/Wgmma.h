// wgmma's view of shared memory, from a matrix descriptor's bits alone (PTX ISA 9.7.15.5.1.2).
//
// The emulator decodes the 64-bit descriptors the generated code computes, never the compiler's
// idea of them, so an encoding bug reads the wrong elements and gives wrong numbers. The
// canonical layouts are written here as the PTX ISA states them, in CuTe's (shape : stride)
// notation over 16-byte units T and elements, and evaluated digit by digit:
//   K-major, none:  ((8, m), (T, 2k)) : ((T, SBO), (1, LBO))
//   K-major, 32 B:  ((8, m), (T, 2k)) : ((2T, SBO), (1, T))      64 B: 4T, 128 B: 8T
//   MN-major, none: ((T, 1, m), (8, k)) : ((1, T, SBO), (T, LBO))
//   MN-major, 32 B: ((T, 2, m), (8, k)) : ((1, T, LBO), (2T, SBO))   64 B: (T, 4, m), 4T; 128 B: (T, 8, m), 8T
// then the swizzle of the absolute address (128 B: bits [4, 7) ^= bits [7, 10); 64 B: [4, 6) ^=
// [7, 9); 32 B: bit 4 ^= bit 7).
#pragma once

#include <array>
#include <cstdint>
#include <functional>

#include "ir/thread/ThreadIR.h"

namespace tyl::emu {

struct MatrixDescriptor {
  int64_t start = 0;  // bytes
  int64_t lbo = 0;
  int64_t sbo = 0;
  int baseOffset = 0;
  int layoutType = 0;  // 0 none, 1 128 B, 2 64 B, 3 32 B swizzle
};

MatrixDescriptor decodeMatrixDescriptor(uint64_t bits);

// The shared-memory byte address wgmma reads element (mn, k) of the matrix at, for
// `elemBytes`-byte elements; `mnMajor` as the instruction's transpose flag for the operand says.
int64_t matrixElementAddress(const MatrixDescriptor& d, bool mnMajor, int elemBytes, int64_t mn, int64_t k);

// A from registers: one warp's 16 x 16 A (element (r, k) at 16 r + k) from its lanes' four words,
// `word(lane, j)`, each holding two `type` elements as mma.sync m16n8k16 holds its A.
std::array<double, 256> registerA(tir::Type type, const std::function<uint32_t(int lane, int word)>& word);

}  // namespace tyl::emu
