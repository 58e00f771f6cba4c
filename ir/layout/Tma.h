// Where a TMA copy (cp.async.bulk.tensor) puts the elements of a box in shared memory, and the
// boxes a shared tile is made of.
//
// TMA writes a box of boxRows x boxCols elements (the rows of a 2-D tensor, innermost last) row
// after row, each row boxCols * e bytes long: element (r, c) of a box at shared byte address B
// lands at B + (r * boxCols + c) * e, and with a swizzle of S bytes (32, 64, 128) the 16-byte
// chunk bits [4, 4 + log2(S / 16)) of that absolute address are XORed with bits [7, ...): the
// same pattern wgmma reads (ir/layout/Wgmma.h), which is why a tile TMA writes with a 128-byte
// swizzle is a tile wgmma reads with one. A box row is at most the swizzle span (TMA's rule:
// inner box bytes <= S), so a tile wider than one span is several boxes side by side, and one
// taller than 256 rows several boxes one above the other. `tmaTileForm` finds the boxes of a
// shared tile and proves the tile's layout puts every element where TMA writes it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/layout/Layout.h"

namespace tyl::layout {

inline constexpr int64_t kTmaMaxBox = 256;  // elements per box dimension

// A tile of a shared tensor, as a TMA destination: the tensor's layout over `shape` (offsets on
// `m` count elements from the allocation's start, which lies on the swizzle period), and the tile
// of rows x cols elements whose (r, c) is the tensor element at `origin` plus r along dimension
// `rowDim` and c along `colDim`; with `outerDims`, a tile of more dimensions, (o..., r, c) adding
// o[i] along outerDims[i] (outermost first, each extent outerExtents[i]). TMA writes such a box's
// rows one after another, outer dimensions outermost: as the rows of a 2-D box of
// (product of the outer extents) x boxRows rows.
struct TmaTile {
  const Layout* layout = nullptr;
  Shape shape;
  std::vector<int64_t> origin;
  int rowDim = 0, colDim = 1;
  int64_t rows = 0, cols = 0;
  int elemBytes = 2;
  std::vector<int> outerDims;
  std::vector<int64_t> outerExtents;
};

struct TmaBox {
  int64_t row, col;  // the box's first element, in the tile
  int64_t start;     // its byte offset from the allocation's start: a multiple of 128 bytes, and of the
                     // swizzle's period (8 x its span) when there is one
  std::vector<int64_t> outer;  // along the tile's outer dimensions
};

struct TmaTileForm {
  int swizzle = 0;  // bytes: 0, 32, 64 or 128
  int64_t boxRows = 0, boxCols = 0;
  std::vector<int64_t> boxOuter;  // the box's extents along the outer dimensions
  std::vector<TmaBox> boxes;      // row-major over the tile, outer dimensions outermost
};

struct TmaFormMismatch {
  std::string message;
  std::optional<std::pair<int64_t, int64_t>> element;  // (r, c) of the tile (in its first outer place)
};

std::variant<TmaTileForm, TmaFormMismatch> tmaTileForm(const TmaTile& tile);

// The shared byte address TMA writes element (r, c) of a box to: `boxStart` the box's first
// byte address, before the swizzle, which then acts on the absolute address.
int64_t tmaElementAddress(int swizzle, int64_t boxStart, int64_t boxCols, int elemBytes, int64_t r, int64_t c);

}  // namespace tyl::layout
