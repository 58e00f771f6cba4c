// The wgmma m64nNk16 atom (f16/bf16 inputs, f32 accumulator) as layouts, and its shared-memory
// operands as matrix descriptors.
//
// Accumulator. One warpgroup (128 threads) holds the 64 x N tile D; with w = warp in the
// warpgroup, l = lane and r = register (PTX ISA, wgmma D fragment):
//   row = 16 w + l / 4 + 8 ((r >> 1) & 1),   col = 8 (r >> 2) + 2 (l % 4) + (r & 1)
// so thread 37 (w 1, l 5) holds (17, 2) in r = 0, and in TileLayout notation, over (64, N):
//   S[(4, 2, 8, N/8, 4, 2) : (1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]
//
// Operands in shared memory. A wgmma reads each operand matrix (A: 64 x 16, B: N x 16, as MN x K)
// through a 64-bit descriptor: a start address, two byte offsets (leading, LBO; stride, SBO) and a
// swizzle mode, read in one of eight canonical forms (PTX ISA 9.7.15.5.1.2). With T = 16 bytes
// (one 16-byte chunk) and W = the swizzle span (32, 64 or 128 bytes), the byte offset of
// element (mn, k) from the start, before the swizzle, is:
//   K-major,  no swizzle: (mn % 8) T + (mn / 8) SBO + (k % (T/e)) e + (k / (T/e)) LBO
//   K-major,  swizzled:   (mn % 8) W + (mn / 8) SBO + (k % (T/e)) e + (k / (T/e)) T
//   MN-major, no swizzle: (mn % (T/e)) e + (mn / (T/e)) SBO + (k % 8) T + (k / 8) LBO
//   MN-major, swizzled:   (mn % (W/e)) e + (mn / (W/e)) LBO + (k % 8) W + (k / 8) SBO
// (e the element's bytes). The swizzle then XORs bits of the absolute shared address: 128 B
// XORs bits [4, 7) with bits [7, 10), 64 B bits [4, 6) with [7, 9), 32 B bit 4 with bit 7.
// `wgmmaOperandForm` finds the form a tile layout is in and proves it element by element.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/layout/Layout.h"
#include "ir/layout/MmaAtom.h"

namespace tyl::layout {

// ---- The accumulator ---------------------------------------------------------------

inline constexpr int64_t kWgmmaM = 64;
inline constexpr int64_t kWgmmaK = 16;

// Whether N is an extent a 16-bit wgmma takes: 8 to 256 in steps of 8.
bool validWgmmaN(int64_t n);
// The accumulator over (64 groupsM, n groupsN) of a groupsM x groupsN grid of warpgroups
// (warpgroup g holds rows 64 (g / groupsN) .. and columns n (g % groupsN) ..), f32 slots on `m`:
// n / 2 per thread.
TileLayout wgmmaLayoutD(int64_t n, int64_t groupsM = 1, int64_t groupsN = 1);
// The A operand of m64nNk16 in registers, over a (64 groupsM, 16 kBlocks) tile of 16-bit elements:
// warp w of a warpgroup holds rows 16 w .. 16 w + 15 as mma.sync m16n8k16 holds its A (register j
// of a k block: row l / 4 + 8 ((j >> 1) & 1), column 2 (l % 4) + (j & 1) + 8 (j >> 2)), the k
// blocks one after another; the groupsN warpgroups of a row hold the same elements.
TileLayout wgmmaLayoutA(int64_t kBlocks, int64_t groupsM = 1, int64_t groupsN = 1);
// The PTX formula: the (row, col) that thread `thread` (0..127) holds in register `reg`.
RowCol wgmmaAtomD(int thread, int reg);

// ---- Operand descriptors -----------------------------------------------------------

// Which of the operand's dimensions is contiguous in 16-byte chunks.
enum class WgmmaMajor : uint8_t { K, MN };
// The swizzle span, in bytes (0: none). The descriptor's layout_type field codes them 0 (none),
// 1 (128 B), 2 (64 B) and 3 (32 B).
enum class WgmmaSwizzle : uint8_t { None = 0, B32 = 32, B64 = 64, B128 = 128 };

const char* majorName(WgmmaMajor m);
const char* swizzleName(WgmmaSwizzle s);
// The period of the swizzle pattern, in bytes: a tile must start on it (0 for none).
int64_t swizzlePeriodBytes(WgmmaSwizzle s);

// The fields of a wgmma matrix descriptor, in bytes.
struct WgmmaDescriptor {
  int64_t start = 0;  // shared-memory byte address of the matrix's first chunk
  int64_t lbo = 0;    // leading dimension byte offset
  int64_t sbo = 0;    // stride dimension byte offset
  WgmmaSwizzle swizzle = WgmmaSwizzle::None;

  // The 64-bit value: start, LBO and SBO as (x & 0x3FFFF) >> 4 in bits [0, 14), [16, 30) and
  // [32, 46), base offset 0 in bits [49, 52), the layout type in bits [62, 64). Each byte value
  // must be a multiple of 16 below 2^18 (Error otherwise).
  uint64_t encode() const;
};

// The byte offset of element (mn, k) from the descriptor's start, before the swizzle (the forms
// above), for `elemBytes`-byte elements.
int64_t wgmmaCanonicalOffset(WgmmaMajor major, WgmmaSwizzle swizzle, int64_t lbo, int64_t sbo, int elemBytes,
                             int64_t mn, int64_t k);
// The swizzle of an absolute shared-memory byte address.
int64_t wgmmaSwizzleAddress(WgmmaSwizzle swizzle, int64_t address);

// A shared tile in one of the forms: every wgmma atom it holds reads through a descriptor with
// these fields and the start offset of its atom.
struct WgmmaOperandForm {
  WgmmaMajor major;
  WgmmaSwizzle swizzle;
  int64_t lbo, sbo;
  int64_t atomsMN, stepsK;  // atoms along MN (of `atomMN` each) and k16 steps
  // Byte offset from the start of the allocation of the matrix of MN atom `a` and k16 step `s`,
  // at [a * stepsK + s]: where element (a * atomMN, 16 s) lies, which the swizzle leaves in place
  // (the form requires it), so its address is the descriptor's start.
  std::vector<int64_t> starts;

  int64_t start(int64_t atom, int64_t step) const { return starts[static_cast<size_t>(atom * stepsK + step)]; }
};

// Why a tile is in none of the forms: `message`, and the first element (mn, k) whose byte
// offset in the tile differs from where the nearest form's descriptor reads it.
struct WgmmaFormMismatch {
  std::string message;
  std::optional<std::pair<int64_t, int64_t>> element;
};

// A tile of a shared tensor as a wgmma operand: the tensor's layout over `shape` (offsets on `m`
// count elements from the start of its allocation, which lies on the swizzle period, so that
// offsets and absolute addresses swizzle alike), and the tile of extentMN x extentK elements
// whose element (mn, k) is the tensor element at `origin` plus mn along dimension `mnDim` and k
// along `kDim`. The extents must be multiples of `atomMN` (64 for A, N for B) and 16.
struct WgmmaTile {
  const Layout* layout = nullptr;
  Shape shape;
  std::vector<int64_t> origin;
  int mnDim = 0, kDim = 1;
  int64_t extentMN = 0, extentK = 0;
  int64_t atomMN = 64;
  int elemBytes = 2;
};

// The form of a tile (16-bit elements), or the element that breaks the nearest form; the
// mismatch's element is in tile coordinates (mn, k).
std::variant<WgmmaOperandForm, WgmmaFormMismatch> wgmmaOperandForm(const WgmmaTile& tile);
// The same for a whole 2-D tensor whose dimension `mnDim` is MN (0 for A stored (M, K); 1 for B
// stored (K, N)) and the other K.
std::variant<WgmmaOperandForm, WgmmaFormMismatch> wgmmaOperandForm(const Layout& layout, const Shape& shape, int mnDim,
                                                                  int64_t atomMN, int elemBytes);

}  // namespace tyl::layout
