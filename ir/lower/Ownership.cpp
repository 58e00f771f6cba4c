#include "ir/lower/Ownership.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/layout/Transforms.h"
#include "ir/thread/Builder.h"

namespace tyl::lower {

using layout::Axis;
using tir::ExprRef;
using tir::Type;

namespace {

ExprRef linearTid(const std::array<int64_t, 3>& b) {
  ExprRef t = tir::special(tir::Special::TidX);
  if (b[1] == 1 && b[2] == 1) return t;
  t = tir::add(t, tir::mul(tir::special(tir::Special::TidY), tir::intConst(b[0])));
  return tir::add(t, tir::mul(tir::special(tir::Special::TidZ), tir::intConst(b[0] * b[1])));
}

bool isPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// x / d and x % d for a non-negative x; powers of two become shifts and masks.
ExprRef divc(ExprRef x, int64_t d) {
  if (d == 1) return x;
  if (isPow2(d)) return tir::binary(tir::BinOp::Shr, x, tir::intConst(__builtin_ctzll(d), x->type));
  return tir::binary(tir::BinOp::Div, x, tir::intConst(d, x->type));
}

ExprRef modc(ExprRef x, int64_t d) {
  if (d == 1) return tir::intConst(0, x->type);
  if (isPow2(d)) return tir::binary(tir::BinOp::And, x, tir::intConst(d - 1, x->type));
  return tir::binary(tir::BinOp::Rem, x, tir::intConst(d, x->type));
}

}  // namespace

ExprRef threadAxisValue(Axis axis, const std::array<int64_t, 3>& b) {
  ExprRef tid = linearTid(b);
  switch (axis) {
    case Axis::tx: return tid;
    case Axis::laneid: return tir::special(tir::Special::LaneId);
    case Axis::warpid: return tir::special(tir::Special::WarpId);
    case Axis::wgid: return divc(tid, 128);
    case Axis::tid_in_wg: return modc(tid, 128);
    case Axis::wid_in_wg: return modc(divc(tid, 32), 4);
    default: return nullptr;
  }
}

int64_t threadAxisExtent(Axis axis, const std::array<int64_t, 3>& b) {
  int64_t threads = b[0] * b[1] * b[2];
  switch (axis) {
    case Axis::tx: return threads;
    case Axis::laneid: return std::min<int64_t>(32, threads);
    case Axis::warpid: return (threads + 31) / 32;
    case Axis::wgid: return (threads + 127) / 128;
    case Axis::tid_in_wg: return std::min<int64_t>(128, threads);
    case Axis::wid_in_wg: return std::min<int64_t>(4, (threads + 31) / 32);
    default: return 0;
  }
}

namespace {

struct AxisIter {
  size_t index;   // position in the shard (or replica) list
  bool replica;
  int64_t extent;
  int64_t stride;
};

}  // namespace

std::variant<FragmentMap, OwnershipError> decodeFragment(const layout::Layout& l, const layout::Shape& shape,
                                                           const std::array<int64_t, 3>& blockDim) {
  if (l.swizzle) return OwnershipError{"a register fragment cannot be swizzled"};
  layout::Grouped g;
  try {
    g = layout::group(l, shape);
  } catch (const layout::Error& e) {
    return OwnershipError{fmt::format("the layout cannot be split along the tensor's dimensions {}: {}",
                                      layout::shapeToString(shape), e.what())};
  }
  const layout::TileLayout& t = g.layout.tile;
  // The thread axes the layout places elements on, extent-1 iters included (grouping drops
  // them): S[(1, 4) : (1@wgid, 1@wid_in_wg)] puts everything in warpgroup 0, and the threads of
  // other warpgroups hold nothing, where a layout without wgid gives every warpgroup a copy.
  uint32_t mentioned = 0;
  for (const layout::Iter& it : l.tile.shard) mentioned |= layout::axisBit(it.axis);
  for (const layout::Iter& it : l.tile.replica) mentioned |= layout::axisBit(it.axis);
  FragmentMap fm;
  size_t rank = shape.size();
  std::vector<size_t> dimOf(t.shard.size());
  std::vector<int64_t> weight(t.shard.size());
  for (size_t d = 0; d < rank; ++d) {
    int64_t w = 1;
    for (size_t i = g.bounds[d + 1]; i-- > g.bounds[d];) {
      dimOf[i] = d;
      weight[i] = w;
      w *= t.shard[i].extent;
    }
  }

  // Decode each thread axis into the coordinates of the iters on it.
  std::vector<ExprRef> iterCoord(t.shard.size());
  std::vector<ExprRef> replicaCoord(t.replica.size());
  std::vector<ExprRef> owns, primary;
  for (Axis axis : layout::allAxes()) {
    std::vector<AxisIter> iters;
    for (size_t i = 0; i < t.shard.size(); ++i)
      if (t.shard[i].axis == axis) iters.push_back({i, false, t.shard[i].extent, t.shard[i].stride});
    for (size_t i = 0; i < t.replica.size(); ++i)
      if (t.replica[i].axis == axis) iters.push_back({i, true, t.replica[i].extent, t.replica[i].stride});
    bool used = !iters.empty() || t.offset.has(axis) || (mentioned & layout::axisBit(axis)) != 0;
    if (!used || axis == Axis::m) continue;
    if (!layout::isThreadAxis(axis))
      return OwnershipError{fmt::format("a register fragment cannot map onto '{}'", layout::axisName(axis))};
    fm.threadAxes |= layout::axisBit(axis);
    std::erase_if(iters, [](const AxisIter& it) { return it.extent == 1; });
    std::sort(iters.begin(), iters.end(), [](const AxisIter& a, const AxisIter& b) { return a.stride < b.stride; });
    for (size_t k = 0; k < iters.size(); ++k) {
      if (iters[k].stride <= 0)
        return OwnershipError{fmt::format("iters on '{}' need positive strides", layout::axisName(axis))};
      if (k + 1 < iters.size() && iters[k + 1].stride < iters[k].stride * iters[k].extent)
        return OwnershipError{fmt::format("iters on '{}' overlap (strides {} and {} with extent {}), so a thread's "
                                          "elements cannot be decoded from its id",
                                          layout::axisName(axis), iters[k].stride, iters[k + 1].stride,
                                          iters[k].extent)};
    }
    ExprRef v = tir::sub(threadAxisValue(axis, blockDim), tir::intConst(t.offset[axis]));
    int64_t covered = 1;
    bool compact = true;
    for (size_t k = 0; k < iters.size(); ++k) {
      compact &= iters[k].stride == covered;
      covered = iters[k].stride * iters[k].extent;
      ExprRef c = divc(v, iters[k].stride);
      if (k + 1 < iters.size()) c = modc(c, iters[k].extent);
      (iters[k].replica ? replicaCoord[iters[k].index] : iterCoord[iters[k].index]) = c;
    }
    // Threads outside the decoded range (or between strided iters) hold nothing.
    if (t.offset[axis] != 0) owns.push_back(tir::binary(tir::BinOp::Ge, v, tir::intConst(0)));
    if (compact) {
      if (covered < threadAxisExtent(axis, blockDim) || t.offset[axis] != 0)
        owns.push_back(tir::lt(v, tir::intConst(covered)));
    } else {
      ExprRef sum = tir::intConst(0);
      for (const AxisIter& it : iters) {
        ExprRef c = it.replica ? replicaCoord[it.index] : iterCoord[it.index];
        sum = tir::add(sum, tir::mul(c, tir::intConst(it.stride)));
      }
      owns.push_back(tir::binary(tir::BinOp::Eq, sum, v));
      if (!iters.empty()) {
        const AxisIter& last = iters.back();
        owns.push_back(tir::lt(last.replica ? replicaCoord[last.index] : iterCoord[last.index],
                               tir::intConst(last.extent)));
      }
    }
  }
  for (size_t i = 0; i < t.replica.size(); ++i) {
    if (t.replica[i].extent == 1) continue;
    if (t.replica[i].axis == Axis::m) return OwnershipError{"replicas of a register fragment must be on thread axes"};
    primary.push_back(tir::binary(tir::BinOp::Eq, replicaCoord[i], tir::intConst(0)));
  }

  // The thread's base coordinate: the contribution of its thread iters.
  fm.base.assign(rank, tir::intConst(0));
  for (size_t i = 0; i < t.shard.size(); ++i) {
    if (t.shard[i].axis == Axis::m || t.shard[i].extent == 1) continue;
    fm.base[dimOf[i]] = tir::add(fm.base[dimOf[i]], tir::mul(iterCoord[i], tir::intConst(weight[i])));
  }
  // Every combination of the slot iters is one register slot.
  std::vector<size_t> slotIters;
  for (size_t i = 0; i < t.shard.size(); ++i)
    if (t.shard[i].axis == Axis::m) slotIters.push_back(i);
  int64_t combos = 1;
  for (size_t i : slotIters) combos *= t.shard[i].extent;
  for (int64_t c = 0; c < combos; ++c) {
    FragmentSlot s;
    s.m = t.offset[Axis::m];
    s.offset.assign(rank, 0);
    int64_t rest = c;
    for (size_t k = slotIters.size(); k-- > 0;) {
      const layout::Iter& it = t.shard[slotIters[k]];
      int64_t x = rest % it.extent;
      rest /= it.extent;
      s.m += x * it.stride;
      s.offset[dimOf[slotIters[k]]] += x * weight[slotIters[k]];
    }
    fm.slots.push_back(std::move(s));
  }
  std::stable_sort(fm.slots.begin(), fm.slots.end(),
                   [](const FragmentSlot& a, const FragmentSlot& b) { return a.m < b.m; });
  for (const ExprRef& p : owns) fm.owns = fm.owns ? tir::land(fm.owns, p) : p;
  for (const ExprRef& p : primary) fm.primary = fm.primary ? tir::land(fm.primary, p) : p;
  return fm;
}

}  // namespace tyl::lower
