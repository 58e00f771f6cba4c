// Which thread holds which elements of a register fragment, as code.
//
// A fragment layout spreads a tensor over thread axes (laneid, warpid, tx, ...) and
// register slots (m). Lowering needs the inverse, per thread: for each of the thread's
// slots, the coordinate of the element it holds. The thread part of every coordinate is
// decoded from the thread id at run time; the slot part is a compile-time constant, so
// register indices stay static.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/layout/Layout.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::lower {

struct FragmentSlot {
  int64_t m = 0;                // the register slot
  std::vector<int64_t> offset;  // its coordinate, minus the thread's base coordinate
};

struct FragmentMap {
  std::vector<tir::ExprRef> base;   // per dimension: the thread's base coordinate (i32)
  std::vector<FragmentSlot> slots;  // in increasing slot order
  tir::ExprRef owns;                // does this thread hold any element (null: every thread does)
  tir::ExprRef primary;             // is it the first replica (null: always)
  // Thread axes used by the layout, for the launch checks.
  uint32_t threadAxes = 0;
};

// Why a layout cannot be lowered to per-thread code.
struct OwnershipError {
  std::string message;
};

// Thread ids on each thread axis for a block of `blockDim` threads.
tir::ExprRef threadAxisValue(layout::Axis axis, const std::array<int64_t, 3>& blockDim);
// The number of distinct values each thread axis takes in such a block.
int64_t threadAxisExtent(layout::Axis axis, const std::array<int64_t, 3>& blockDim);

// Decodes `l` over `shape`. Fails when the iters on one thread axis overlap, or the
// layout uses an axis a fragment cannot (block axes, tensor memory).
std::variant<FragmentMap, OwnershipError> decodeFragment(const layout::Layout& l, const layout::Shape& shape,
                                                           const std::array<int64_t, 3>& blockDim);

}  // namespace tyl::lower
