#include "ir/layout/MmaAtom.h"

#include "ir/layout/CheckedMath.h"

namespace tyl::layout {

TileLayout mmaLayoutC(const TiledMmaShape& s) {
  TileLayout t;
  t.shard = {
      {s.warpsM, s.warpsN, Axis::warpid},       // warp row
      {s.repeatM, s.repeatN * 4, Axis::m},      // atom row within the warp
      {2, 2, Axis::m},                          // h: rows g and g + 8
      {8, 4, Axis::laneid},                     // g
      {s.warpsN, 1, Axis::warpid},              // warp column
      {s.repeatN, 4, Axis::m},                  // atom column within the warp
      {4, 1, Axis::laneid},                     // t
      {2, 1, Axis::m},                          // e
  };
  return t;
}

TileLayout mmaLayoutA(const TiledMmaShape& s, int64_t kBlocks) {
  TileLayout t;
  t.shard = {
      {s.warpsM, s.warpsN, Axis::warpid},          // warp row
      {s.repeatM, checkedMul(kBlocks, 8), Axis::m},  // atom row within the warp
      {2, 2, Axis::m},                             // h
      {8, 4, Axis::laneid},                        // g
      {kBlocks, 8, Axis::m},                       // K block
      {2, 4, Axis::m},                             // q: columns 2t and 2t + 8
      {4, 1, Axis::laneid},                        // t
      {2, 1, Axis::m},                             // e
  };
  t.replica = {{s.warpsN, 1, Axis::warpid}};
  return t;
}

TileLayout mmaLayoutB(const TiledMmaShape& s, int64_t kBlocks) {
  TileLayout t;
  t.shard = {
      {kBlocks, 4, Axis::m},                          // K block
      {2, 2, Axis::m},                                // q: rows 2t and 2t + 8
      {4, 1, Axis::laneid},                           // t
      {2, 1, Axis::m},                                // e
      {s.warpsN, 1, Axis::warpid},                    // warp column
      {s.repeatN, checkedMul(kBlocks, 4), Axis::m},  // atom column within the warp
      {8, 4, Axis::laneid},                           // g
  };
  t.replica = {{s.warpsM, s.warpsN, Axis::warpid}};
  return t;
}

RowCol mmaAtomA(int lane, int slot) {
  int g = lane / 4, t = lane % 4, e = slot % 2, h = (slot / 2) % 2, q = slot / 4;
  return {g + 8 * h, 2 * t + e + 8 * q};
}

RowCol mmaAtomB(int lane, int slot) {
  int g = lane / 4, t = lane % 4, e = slot % 2, q = slot / 2;
  return {2 * t + e + 8 * q, g};
}

RowCol mmaAtomC(int lane, int slot) {
  int g = lane / 4, t = lane % 4, e = slot % 2, h = slot / 2;
  return {g + 8 * h, 2 * t + e};
}

}  // namespace tyl::layout
