// The CuTe side of the cross-check (cute_crosscheck_test.cpp): shared tiles built with CUTLASS
// CuTe, and what CuTe says about them, behind plain functions. cute_reference.cu, compiled by
// nvcc, is the only file that includes CuTe; this header uses standard types only, so the test
// itself is built by the host compiler with the rest of tyloc.
#pragma once

#include <cstdint>

namespace tyl::cute_reference {

// The shared tiles, each as CuTe builds it from its GMMA layout atoms (16-bit elements). The
// operand tiles are (MN, K) tensors in CuTe's convention; each names the tyloc layout it must be.
enum class Tile : int {
  // A, K-major: ComposeLayout(3, B, 3, S[(M, K) : (K, 1)]).
  AK128_64x64,   // 128-byte swizzle, 64 x 64
  AK64_64x32,    // 64-byte swizzle, 64 x 32
  AK32_64x16,    // 32-byte swizzle, 64 x 16
  AK128_128x64,  // 128-byte swizzle, 128 x 64 (two atoms of 64 rows)
  // B stored (K, N) row-major, MN-major.
  BMN128_Panels_64x128,  // ComposeLayout(3, 3, 3, S[(64, 2, 64) : (64, 4096, 1)]) over (64, 128)
  BMN128_64x64,          // ComposeLayout(3, 3, 3, S[(64, 64) : (64, 1)]) over (64, 64)
  // B stored (N, K) row-major, K-major: ComposeLayout(3, 2, 3, S[(32, 64) : (1, 32)]) over (32, 64).
  BK64_32x64,
  // B, MN-major without swizzle: S[(2, 8, 4, 8) : (256, 8, 64, 1)] over (16, 32).
  BMNNone_16x32,
  // TMA destinations (row, col), not wgmma operands: ComposeLayout(3, 3, 3, S[(32, 64) : (64, 1)])
  // and ComposeLayout(3, 2, 3, S[(32, 2, 32) : (32, 1024, 1)]) over (32, 64).
  Tma128_32x64,
  Tma64_Panels_32x64,
};

// CuTe's make_gmma_desc for the k16 step `step` of MN atom `atom` of an operand tile whose first
// element is at shared byte address `smemAddress` (a multiple of 1024).
uint64_t gmmaDescriptor(Tile tile, uint32_t smemAddress, int atom, int step);

// The shared byte address CuTe's tensor puts element (i, j) at, swizzle applied, for a tile at
// `smemAddress`: (mn, k) for operands, (row, col) for TMA destinations.
uint32_t elementAddress(Tile tile, uint32_t smemAddress, int i, int j);

// The TMA swizzle, in bytes (0, 32, 64 or 128), that CuTe's TMA copies use for the tile's
// shared layout (get_tma_swizzle_bits).
int tmaSwizzleBytes(Tile tile);

// For Swizzle<bits, 4, 3>, bits 0 to 3: the TMA swizzle CuTe maps it to, in bytes, and its value
// on a byte address.
int tmaSwizzleBytesOf(int bits);
uint32_t swizzleAddress(int bits, uint32_t byteAddress);

// The register fragments of CuTe's SM90 GMMA atoms (m64nNk16, 16-bit inputs, f32 accumulator),
// as (thread of the warpgroup, value) -> element: A in registers (the RS atoms' ALayout) and the
// accumulator for N = 64, 128 or 256 (CLayout), each value's element as (row, col) of the 64 x 16
// A or the 64 x N C.
void gmmaRegisterA(int thread, int value, int* row, int* col);
void gmmaAccumulator(int n, int thread, int value, int* row, int* col);

}  // namespace tyl::cute_reference
