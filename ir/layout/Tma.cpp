#include "ir/layout/Tma.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "ir/layout/CheckedMath.h"

namespace tyl::layout {

int64_t tmaElementAddress(int swizzle, int64_t boxStart, int64_t boxCols, int elemBytes, int64_t r, int64_t c) {
  const int64_t address = boxStart + (r * boxCols + c) * elemBytes;
  if (swizzle == 0) return address;
  const int64_t mask = swizzle / 16 - 1;  // 1, 3 or 7 chunks
  return address ^ (((address >> 7) & mask) << 4);
}

std::variant<TmaTileForm, TmaFormMismatch> tmaTileForm(const TmaTile& tile) {
  auto mismatch = [](std::string message, std::optional<std::pair<int64_t, int64_t>> element = std::nullopt) {
    return TmaFormMismatch{std::move(message), element};
  };
  const Layout& layout = *tile.layout;
  const int e = tile.elemBytes;
  if (tile.origin.size() != tile.shape.size()) throw Error("a TMA tile's origin does not match its tensor");
  for (const Iter& it : layout.tile.shard)
    if (it.axis != Axis::m) return mismatch("a TMA destination lies in memory ('m') only");
  if (!layout.tile.replica.empty()) return mismatch("a TMA destination has no replicas");
  // The swizzle: none, or TMA's on bytes, Swizzle<B, 4, 3> with B = 1, 2 or 3.
  int swizzle = 0;
  if (layout.swizzle && layout.swizzle->len > 0) {
    const Swizzle& s = *layout.swizzle;
    const int byteShift = std::countr_zero(static_cast<unsigned>(e));
    if (!s.inner || s.perElement + byteShift != 4 || s.atom != 3 || s.len > 3)
      return mismatch(fmt::format("its swizzle is none of TMA's: for {}-byte elements, ComposeLayout(per_element = {}, "
                                  "swizzle_len = B, atom_len = 3, ...) "
                                  "with B = 1, 2 or 3 (32-, 64- or 128-byte spans)",
                                  e, 4 - byteShift));
    swizzle = 16 << s.len;
  }
  // A row of a box: the whole tile row when it fits, else one swizzle span (or 256 elements).
  const int64_t rowLimit = swizzle > 0 ? swizzle / e : kTmaMaxBox;
  TmaTileForm form;
  form.swizzle = swizzle;
  form.boxCols = std::min(tile.cols, rowLimit);
  form.boxRows = std::min(tile.rows, kTmaMaxBox);
  if (form.boxCols * e % 16 != 0)
    return mismatch(fmt::format("a TMA box row is a multiple of 16 bytes, but these rows are {} bytes",
                                form.boxCols * e));
  if (tile.cols % form.boxCols != 0 || tile.rows % form.boxRows != 0)
    return mismatch(fmt::format("the tile of {} x {} elements is not a whole number of {} x {} boxes", tile.rows,
                                tile.cols, form.boxRows, form.boxCols));

  // The outer dimensions: boxes of at most 256 along each, dividing the tile.
  if (tile.outerDims.size() != tile.outerExtents.size()) throw Error("a TMA tile's outer dimensions and extents differ");
  for (int64_t extent : tile.outerExtents) {
    const int64_t box = std::min(extent, kTmaMaxBox);
    if (extent % box != 0)
      return mismatch(fmt::format("the tile's extent {} along an outer dimension is not a whole number of boxes of {}",
                                  extent, box));
    form.boxOuter.push_back(box);
  }

  std::string outerExtents;  // "2 x " for a box of 2 x rows x cols
  for (int64_t b : form.boxOuter) outerExtents += fmt::format("{} x ", b);

  const Layout affine{layout.tile};
  std::vector<int64_t> coord;
  std::vector<int64_t> outer(tile.outerDims.size(), 0);  // the outer place being looked at
  auto at = [&](int64_t r, int64_t c) -> const std::vector<int64_t>& {
    coord = tile.origin;
    for (size_t i = 0; i < outer.size(); ++i) coord[static_cast<size_t>(tile.outerDims[i])] += outer[i];
    coord[static_cast<size_t>(tile.rowDim)] += r;
    coord[static_cast<size_t>(tile.colDim)] += c;
    return coord;
  };
  // Steps `place` (one index per outer dimension, the last fastest) through `extents`; false after
  // the last.
  auto next = [](std::vector<int64_t>& place, const std::vector<int64_t>& extents, const std::vector<int64_t>& step) {
    for (size_t i = place.size(); i-- > 0;) {
      place[i] += step[i];
      if (place[i] < extents[i]) return true;
      place[i] = 0;
    }
    return false;
  };
  const std::vector<int64_t> unit(outer.size(), 1);
  std::vector<int64_t> boxPlace(outer.size(), 0);  // the box's first outer place
  do {
    for (int64_t br = 0; br < tile.rows; br += form.boxRows)
      for (int64_t bc = 0; bc < tile.cols; bc += form.boxCols) {
        outer = boxPlace;
        const int64_t start = checkedMul(applyAxis(affine, at(br, bc), tile.shape, Axis::m), e);
        // TMA writes a box at a 128-byte boundary; a swizzled one at a whole period of the pattern
        // (8 rows of the span), where the absolute addresses' swizzle is the layout's.
        const int64_t period = std::max<int64_t>(128, 8 * swizzle);
        if (start % period != 0)
          return mismatch(fmt::format("the box at {} starts at byte {}, but TMA writes a box at a multiple of {} "
                                      "bytes{}",
                                      outer.empty() ? fmt::format("({}, {})", br, bc) : shapeToString(at(br, bc)),
                                      start, period,
                                      swizzle ? fmt::format(" (the period of the {}-byte swizzle)", swizzle) : ""),
                          std::pair{br, bc});
        form.boxes.push_back(TmaBox{br, bc, start, boxPlace});
        // The box's rows in the order TMA writes them: its outer places outermost.
        std::vector<int64_t> within(outer.size(), 0);
        int64_t row = 0;  // of the box's rows, counted over its outer places
        do {
          for (size_t i = 0; i < outer.size(); ++i) outer[i] = boxPlace[i] + within[i];
          for (int64_t r = 0; r < form.boxRows; ++r, ++row)
            for (int64_t c = 0; c < form.boxCols; ++c) {
              const int64_t written = tmaElementAddress(swizzle, start, form.boxCols, e, row, c);
              const int64_t placed = checkedMul(applyAxis(layout, at(br + r, bc + c), tile.shape, Axis::m), e);
              if (written != placed)
                return mismatch(fmt::format("TMA moves rows of {}{} x {} boxes{}: element {} is at byte {}, but "
                                            "TMA's box has it at byte {}",
                                            outerExtents, form.boxRows,
                                            form.boxCols, swizzle ? fmt::format(" with a {}-byte swizzle", swizzle) : "",
                                            shapeToString(at(br + r, bc + c)), placed, written),
                                std::pair{br + r, bc + c});
            }
        } while (next(within, form.boxOuter, unit));
      }
  } while (next(boxPlace, tile.outerExtents, form.boxOuter));
  return form;
}

}  // namespace tyl::layout
