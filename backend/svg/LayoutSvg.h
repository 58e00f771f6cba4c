// Pictures of layouts: the logical tensor drawn as a grid of cells, each labelled with
// where its element lives and coloured by its owning thread or by its shared-memory bank.
//
// Rendering is a pure function of the layout: it returns the SVG text and touches no
// files, so the driver decides where a picture goes and tests can parse it directly.
// The output is self-contained (no fonts, scripts or stylesheets are fetched) and
// deterministic: the same layout always gives the same bytes.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/layout/Layout.h"

namespace tyl::svg {

// Requests the renderer refuses. They are the user's to fix, never bugs, so the driver
// reports each kind as a diagnostic.
class SvgError : public layout::Error {
 public:
  enum class Kind {
    TooLarge,         // more cells (or cells x replicas) than a picture can show
    NotMemoryLayout,  // bank colours or an access asked of a layout that is not only on `m`
    BadHighlight,     // an access that leaves the grid or is not a legal shared-memory access
  };
  SvgError(Kind kind, const std::string& message) : layout::Error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// The 2-D grid a tensor is drawn as. Rank 1 is one row; rank > 2 folds every dimension
// but the last into the rows, row-major. So cell (r, c) is always the element whose
// row-major flat index over the shape is r * cols + c.
struct Grid {
  int64_t rows = 1;
  int64_t cols = 1;
};
Grid gridOf(std::span<const int64_t> shape);

// Beyond 256 x 256 cells a picture is no longer readable and grows to tens of megabytes.
inline constexpr int64_t kMaxCells = 256 * 256;
// Every replica of every cell is listed, so their product is bounded as well (256 x 256
// cells with 4 replicas each, or 64 x 64 with 64).
inline constexpr int64_t kMaxPlacements = int64_t{1} << 18;
// Above 64 x 64 cells the text inside the cells is dropped; each cell's tooltip keeps it.
inline constexpr int64_t kMaxLabelledCells = 64 * 64;

// A warp-wide shared-memory access to mark, in grid coordinates (row, column):
//   row:R              lane i reads element (R, i), for the first min(32, cols) columns
//   col:C              lane i reads element (i, C), for the first min(32, rows) rows
//   ldmatrix:R,C       lane i < 8 reads the 16-byte row that starts at (R + i, C): one 8x8
//                      matrix of ldmatrix, the unit whose rows are served together
//   cells:R,C;R,C;...  lane i reads the element at the i-th listed cell (1 to 32 cells)
// Each lane reads one element except for ldmatrix, whose lanes read 16 bytes. A suffix /BYTES
// (2, 4, 8 or 16) on row, col and cells makes each lane read a vector of that many bytes from
// its cell on along the row: row:R/16 is lane i reading the 16 bytes from (R, i x 16 / element
// size), the accesses of a copy with 16-byte vectors.
struct Highlight {
  enum class Kind { Row, Column, Ldmatrix, Cells };
  Kind kind = Kind::Row;
  int vectorBytes = 0;  // the /BYTES suffix; 0 when each lane reads one element
  int64_t row = 0;  // Row, Ldmatrix
  int64_t col = 0;  // Column, Ldmatrix
  std::vector<std::array<int64_t, 2>> cells;
  std::string text;  // as written, for the caption
};

// Parses the forms above; on a malformed spec returns nullopt and sets `why`.
std::optional<Highlight> parseHighlight(std::string_view text, std::string& why);

// What one lane of a highlighted access touches.
struct LaneAccess {
  std::vector<int64_t> elements;  // flat (row-major) indices of the elements read
  int64_t byteAddress = 0;        // first byte read (element offset m x element size)
};

struct WarpAccess {
  std::vector<LaneAccess> lanes;  // lane i is lanes[i]
  int accessBytes = 0;
  int conflictDegree = 1;  // layout::bankConflictDegree of the lanes' addresses
};

// Resolves `highlight` over a memory layout (one that maps only onto `m`) for elements
// of `elementBytes` bytes. Throws SvgError when the access leaves the grid, or when an
// ldmatrix row is not 16 contiguous, 16-byte aligned bytes.
WarpAccess resolveHighlight(const layout::Layout& layout, std::span<const int64_t> shape,
                            const Highlight& highlight, int elementBytes);

struct SvgOptions {
  // Colour cells by shared-memory bank for elements of this many bytes (memory layouts only).
  std::optional<int> elementBytes;
  std::string dtype;  // the element type's name, for the caption
  // The access to mark; needs elementBytes.
  std::optional<Highlight> highlight;
};

// The picture of `layout` over `shape` (whose size must equal the layout's size).
//
// Every cell is a <g class="cell"> carrying, for tools and tests:
//   data-coord   the logical coordinate, e.g. "3,2"
//   data-owners  every placement of the element, replicas included, as cellLabel()s joined by "; ";
//                the first is the cell's label
//   data-bank    the shared-memory bank (with elementBytes)
//   data-lanes   the lanes of the highlighted access that read the element (with a highlight)
// its <title> (the tooltip, where the cell's text does not already say everything: in pictures
// too large for text, and for replicated or highlighted cells) names every placement axis by axis,
// and its <rect> fill is ownerColor() of the owning thread, bankColor() of the bank, or a shade of
// the offset.
// Throws SvgError for the requests it refuses.
std::string renderLayoutSvg(const layout::Layout& layout, std::span<const int64_t> shape,
                            const SvgOptions& options = {});

// ---- The vocabulary of a picture, public so that tests can hold it to the algebra ----

// Where one placement lives, briefly: "T3 r2" (lane 3, register slot 2), "W1 L3 r0"
// (warp 1, lane 3) when several thread axes are present, "72" (offset) for memory.
std::string cellLabel(const layout::PhysCoord& where);
// Only the thread part of cellLabel: "T3", "W1 L3"; empty when no thread axis is present.
std::string ownerLabel(const layout::PhysCoord& where);
// A stable colour ("#rrggbb") per owning thread: consecutive threads get distant hues.
std::string ownerColor(const layout::PhysCoord& where);
// One of 32 colours, one per shared-memory bank, in hue order around the colour wheel.
std::string bankColor(int bank);

}  // namespace tyl::svg
