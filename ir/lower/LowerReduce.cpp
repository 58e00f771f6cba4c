// Reductions and broadcasts of register fragments.
//
// reduce(x, dims, op) combines, in each thread, the slots whose elements share a row (their
// coordinates outside `dims`), then the lanes that hold parts of one row, with a butterfly of
// shfl.sync.bfly over the lane bits the layout gives `dims`. The result's layout
// (layout::reduceDims) puts each row in every thread that held part of it, so a broadcast back
// (`x - row_max`) reads it from a register of the same thread. Both are checked thread by thread
// against the fragments' layouts: a layout where they would not hold gets a diagnostic naming the
// thread and the element.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <map>
#include <set>

#include "ir/layout/Transforms.h"
#include "base/InternalError.h"
#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

TYL_DIAG(kBroadcastLayout, Error, "broadcast-layout",
         "a broadcast or reduction whose fragments do not hold each row in the threads that need it");
TYL_DIAG(kReduceLanes, Error, "reduce-lanes",
         "a reduction whose threads cannot be combined by shuffles within a warp");

using tir::ExprRef;
using tir::Type;

namespace {

std::string coordText(const std::vector<int64_t>& c) { return fmt::format("({})", fmt::join(c, ", ")); }

}  // namespace

std::optional<std::vector<int64_t>> KernelLowering::rowSlots(SourceRange loc, const FragmentMap& fm,
                                                             const tile::Tensor& shaped, uint32_t narrow) {
  const tile::Tensor& n = tk_.tensors[narrow];
  const FragmentMap* nm = fragment(narrow, loc);
  if (!nm) return std::nullopt;
  const std::optional<std::vector<std::vector<int64_t>>> full = threadCoords(fm), rows = threadCoords(*nm);
  if (!full || !rows) {
    diags_.report(kBroadcastLayout, loc,
                  fmt::format("which elements of {} and {} each thread holds is not known at compile time",
                              shaped.ref(), n.ref()));
    return std::nullopt;
  }
  const size_t threads = full->size();
  const std::vector<bool> holdsFull = holders(fm).value_or(std::vector<bool>(threads, true));
  const std::vector<bool> holdsRow = holders(*nm).value_or(std::vector<bool>(threads, true));
  std::vector<int64_t> at(static_cast<size_t>(shaped.slots), -1);
  std::vector<size_t> firstThread(at.size(), 0);
  for (size_t i = 0; i < threads; ++i) {
    if (!holdsFull[i]) continue;
    std::map<std::vector<int64_t>, int64_t> slotOf;  // this thread's elements of `narrow`
    if (holdsRow[i])
      for (const FragmentSlot& s : nm->slots) {
        std::vector<int64_t> c = (*rows)[i];
        for (size_t d = 0; d < c.size(); ++d) c[d] += s.offset[d];
        slotOf.emplace(std::move(c), s.m);
      }
    for (const FragmentSlot& s : fm.slots) {
      std::vector<int64_t> element = (*full)[i], row(element.size());
      for (size_t d = 0; d < element.size(); ++d) {
        element[d] += s.offset[d];
        row[d] = n.staticShape[d] == 1 ? 0 : element[d];
      }
      const auto found = slotOf.find(row);
      if (found == slotOf.end()) {
        diags_.report(kBroadcastLayout, loc,
                      fmt::format("thread {} holds element {} of {} (slot {}) but not element {} of {}, its row: "
                                  "the layout of {} must give each row to every thread that holds part of it, as "
                                  "reduce's result does",
                                  i, coordText(element), shaped.ref(), s.m, coordText(row), n.ref(), n.ref()));
        return std::nullopt;
      }
      int64_t& slot = at[static_cast<size_t>(s.m)];
      if (slot < 0) {
        slot = found->second;
        firstThread[static_cast<size_t>(s.m)] = i;
      } else if (slot != found->second) {
        diags_.report(kBroadcastLayout, loc,
                      fmt::format("slot {} of {} needs slot {} of {} in thread {} but slot {} in thread {}: each "
                                  "slot reads its row from one register slot in every thread (the same layout as "
                                  "reduce derives)",
                                  s.m, shaped.ref(), slot, n.ref(), firstThread[static_cast<size_t>(s.m)],
                                  found->second, i));
        return std::nullopt;
      }
    }
  }
  return at;
}

std::optional<std::vector<int>> KernelLowering::reductionLanes(SourceRange loc, const tile::Tensor& t,
                                                               const std::vector<size_t>& dims) {
  if (!t.layout) return std::vector<int>{};  // a private array: every element in this thread
  const layout::Grouped g = layout::group(*t.layout, t.staticShape);
  const bool flat = k_.block[1] == 1 && k_.block[2] == 1;
  std::vector<int> masks;
  for (size_t d : dims)
    for (size_t i = g.bounds[d]; i < g.bounds[d + 1]; ++i) {
      const layout::Iter& it = g.layout.tile.shard[i];
      if (it.axis == layout::Axis::m) continue;
      // The bit of the linear thread id where the axis starts.
      int base = 0;
      switch (it.axis) {
        case layout::Axis::laneid:
        case layout::Axis::tid_in_wg: base = 0; break;
        case layout::Axis::tx: base = flat ? 0 : -1; break;
        case layout::Axis::warpid:
        case layout::Axis::wid_in_wg: base = 5; break;
        case layout::Axis::wgid: base = 7; break;
        default: base = -1;
      }
      if (base < 0 || !std::has_single_bit(static_cast<uint64_t>(it.extent)) ||
          !std::has_single_bit(static_cast<uint64_t>(it.stride))) {
        if (base >= 5)
          diags_.report(kReduceLanes, loc,
                        fmt::format("dimension {} of {} takes {} warps in steps of {} on {}: a reduction combines "
                                    "the warps that share a row through shared memory, grouped by bits of the warp "
                                    "id, so their number and step must be powers of two",
                                    d, t.ref(), it.extent, it.stride, layout::axisName(it.axis)));
        else
          diags_.report(kReduceLanes, loc,
                        fmt::format("dimension {} of {} takes {} threads in steps of {} on {}: a reduction combines "
                                    "threads by shuffles over bits of the lane id, so their number and step must be "
                                    "powers of two{}",
                                    d, t.ref(), it.extent, it.stride, layout::axisName(it.axis),
                                    base < 0 ? " (and tx that of a one-dimensional block)" : ""));
        return std::nullopt;
      }
      const int low = base + std::countr_zero(static_cast<uint64_t>(it.stride));
      const int bits = std::countr_zero(static_cast<uint64_t>(it.extent));
      for (int b = low; b < low + bits; ++b) masks.push_back(1 << b);
    }
  std::sort(masks.begin(), masks.end());
  return masks;
}

bool KernelLowering::checkButterfly(SourceRange loc, const tile::Reduce& r, const FragmentMap& src,
                                    const FragmentMap& dst, const std::vector<int64_t>& into,
                                    const std::vector<int>& masks) {
  const tile::Tensor& st = tk_.tensors[tile::layoutLeaf(r.src)->tensor];
  const tile::Tensor& dt = tk_.tensors[r.dst];
  const std::optional<std::vector<std::vector<int64_t>>> sc = threadCoords(src), dc = threadCoords(dst);
  if (!sc || !dc) return true;  // rowSlots has reported it
  const size_t threads = sc->size();
  const std::vector<bool> holds = holders(src).value_or(std::vector<bool>(threads, true));
  int64_t rowLength = 1;
  for (size_t d : r.dims) rowLength *= st.staticShape[d];
  // By thread and result slot: the source elements it combines (flat, row-major).
  std::vector<std::map<int64_t, std::vector<int64_t>>> parts(threads);
  for (size_t i = 0; i < threads; ++i) {
    if (!holds[i]) continue;
    for (const FragmentSlot& s : src.slots) {
      int64_t flat = 0;
      for (size_t d = 0; d < st.staticShape.size(); ++d) flat = flat * st.staticShape[d] + (*sc)[i][d] + s.offset[d];
      parts[i][into[static_cast<size_t>(s.m)]].push_back(flat);
    }
  }
  auto rowOf = [&](size_t i, const FragmentSlot& s) {
    std::vector<int64_t> c = (*dc)[i];
    for (size_t d = 0; d < c.size(); ++d) c[d] += s.offset[d];
    return c;
  };
  const size_t group = size_t{1} << masks.size();
  for (size_t i = 0; i < threads; ++i) {
    if (!holds[i]) continue;
    for (const FragmentSlot& s : dst.slots) {
      const std::vector<int64_t> row = rowOf(i, s);
      std::vector<int64_t> seen;
      for (size_t x = 0; x < group; ++x) {
        size_t lane = i;
        for (size_t b = 0; b < masks.size(); ++b)
          if ((x >> b) & 1) lane ^= static_cast<size_t>(masks[b]);
        if (lane >= threads || !holds[lane] || rowOf(lane, s) != row) {
          diags_.report(kReduceLanes, loc,
                        fmt::format("thread {} combines row {} of {} with thread {}, which {}", i, coordText(row),
                                    dt.ref(), lane,
                                    lane >= threads || !holds[lane] ? "holds none of it" : "holds another row in that slot"));
          return false;
        }
        const auto p = parts[lane].find(s.m);
        if (p != parts[lane].end()) seen.insert(seen.end(), p->second.begin(), p->second.end());
      }
      std::sort(seen.begin(), seen.end());
      const bool once = std::adjacent_find(seen.begin(), seen.end()) == seen.end();
      const auto distinct = static_cast<int64_t>(std::unique(seen.begin(), seen.end()) - seen.begin());
      if (distinct != rowLength || (r.op == tir::BinOp::Add && !once)) {
        diags_.report(kReduceLanes, loc,
                      fmt::format("thread {} would combine {} of row {}: a row of {} has {} elements, and the lanes "
                                  "the reduction shuffles between hold {}{}",
                                  i, distinct != rowLength ? "only part" : "some elements twice", coordText(row),
                                  st.ref(), rowLength, distinct, once ? "" : " (some twice: replicas of one element)"));
        return false;
      }
    }
  }
  return true;
}

void KernelLowering::reduce(SourceRange loc, const tile::Reduce& r) {
  const tile::Tensor& st = tk_.tensors[tile::layoutLeaf(r.src)->tensor];
  const tile::Tensor& dt = tk_.tensors[r.dst];
  const FragmentMap* src = fragment(tile::layoutLeaf(r.src)->tensor, loc);
  const FragmentMap* dst = fragment(r.dst, loc);
  if (!src || !dst) return;
  const std::optional<std::vector<int64_t>> into = rowSlots(loc, *src, st, r.dst);
  const std::optional<std::vector<int>> masks = into ? reductionLanes(loc, st, r.dims) : std::nullopt;
  if (!masks || !checkButterfly(loc, r, *src, *dst, *into, *masks)) return;
  const Type type = tile::toTir(dt.dtype);
  // In each thread: the slots of each row combined, in slot order.
  std::vector<MemoryOperand> operands = memoryOperands(loc, r.src, *src, st);
  tir::Block body;
  out_.push_back(&body);
  readMemoryOperands(loc, operands, *src, 0, src->slots.size());
  std::vector<ExprRef> partial(static_cast<size_t>(dt.slots));
  for (const FragmentSlot& s : src->slots) {
    ExprRef& p = partial[static_cast<size_t>(into->at(static_cast<size_t>(s.m)))];
    const ExprRef v = fragValue(r.src, s.m, type);
    p = p ? tir::binary(r.op, p, v) : v;
  }
  for (const FragmentSlot& s : dst->slots) {
    TYL_CHECK(partial[static_cast<size_t>(s.m)], "a row of a reduction with no element in its thread");
    emit(loc, tir::Assign{tir::Reg::elem(dt.array, s.m), partial[static_cast<size_t>(s.m)]});
  }
  out_.pop_back();
  emitGuarded(loc, operands.empty() ? nullptr : src->owns, std::move(body));
  if (masks->empty()) return;
  std::vector<int> lanes, warps;  // bits of the lane id, and of the thread id from 32 up
  for (int mask : *masks) (mask < 32 ? lanes : warps).push_back(mask);
  if (!lanes.empty()) shuffleLanes(loc, r, *src, *dst, lanes);
  if (!warps.empty()) combineWarps(loc, r, *src, *dst, warps);
}

// Across lanes: a butterfly, whose every step leaves both lanes with their combined value
// (a + b in one, b + a in the other: the same, so every lane ends with the same total).
// Shuffles take whole warps: the warps that hold none of the fragment skip them.
void KernelLowering::shuffleLanes(SourceRange loc, const tile::Reduce& r, const FragmentMap& src,
                                  const FragmentMap& dst, const std::vector<int>& masks) {
  const tile::Tensor& st = tk_.tensors[tile::layoutLeaf(r.src)->tensor];
  const tile::Tensor& dt = tk_.tensors[r.dst];
  const Type type = tile::toTir(dt.dtype);
  const std::optional<std::vector<bool>> holds = holders(src);
  for (size_t w = 0; holds && w * 32 < holds->size(); ++w) {
    const auto lanes = holds->begin() + static_cast<std::ptrdiff_t>(w * 32);
    const auto end = holds->begin() + static_cast<std::ptrdiff_t>(std::min(holds->size(), w * 32 + 32));
    const auto held = std::count(lanes, end, true);
    if (held != 0 && held != 32) {
      diags_.report(kReduceLanes, loc,
                    fmt::format("warp {} holds part of {} in {} of its lanes: the shuffles of a reduction take "
                                "every lane of a warp",
                                w, st.ref(), held));
      return;
    }
  }
  tir::Block shuffles;
  out_.push_back(&shuffles);
  for (int mask : masks)
    for (const FragmentSlot& s : dst.slots) {
      const uint32_t other = tir::addVar(k_, fmt::format("lane{}", temps_++), type);
      const ExprRef mine = tir::elemRef(k_, dt.array, s.m);
      emit(loc, tir::Shfl{tir::Reg::var(other), mine, mask});
      emit(loc, tir::Assign{tir::Reg::elem(dt.array, s.m), tir::binary(r.op, mine, tir::varRef(k_, other))});
    }
  out_.pop_back();
  emitGuarded(loc, src.owns, std::move(shuffles));
}

// Across warps, through shared memory: each thread writes its partial rows to its own cells of a
// scratch buffer (warp, slot, lane), the block synchronizes, and each thread combines the
// partials of the warps that share its rows, in the order of their warp ids, so that every warp
// ends with the same value. A barrier before the writes keeps them from overtaking the reads of
// the same cells by an earlier reduction.
void KernelLowering::combineWarps(SourceRange loc, const tile::Reduce& r, const FragmentMap& src,
                                  const FragmentMap& dst, const std::vector<int>& masks) {
  const tile::Tensor& dt = tk_.tensors[r.dst];
  const Type type = tile::toTir(dt.dtype);
  const int64_t warpsInBlock = (k_.threadsPerBlock() + 31) / 32;
  const int64_t bytes = warpsInBlock * dt.slots * 32 * 4;
  // One scratch buffer per element type (the generated code addresses a buffer through a pointer
  // of its type), grown to the largest reduction's need while it is the last allocation.
  auto found = reduceScratch_.find(type);
  if (found == reduceScratch_.end() || found->second + 1 != k_.buffers.size()) {
    tir::Buffer buf;
    buf.name = fmt::format("reduce_scratch_{}", tir::typeName(type));
    buf.space = tir::Space::Shared;
    buf.elem = type;
    buf.sharedOffset = (k_.sharedBytes + 127) / 128 * 128;
    buf.alignBytes = 128;
    k_.buffers.push_back(buf);
    found = reduceScratch_.insert_or_assign(type, static_cast<uint32_t>(k_.buffers.size() - 1)).first;
  }
  const uint32_t scratchId = found->second;
  tir::Buffer& scratch = k_.buffers[scratchId];
  scratch.sharedBytes = std::max(scratch.sharedBytes, bytes);
  k_.sharedBytes = std::max(k_.sharedBytes, scratch.sharedOffset + scratch.sharedBytes);
  if (k_.sharedBytes > tir::kMaxSharedBytesPerBlock) {
    diags_.report(kReduceLanes, loc,
                  fmt::format("combining the warps of this reduction takes {} bytes of shared memory, {} in all: a "
                              "block can have at most {}",
                              bytes, k_.sharedBytes, tir::kMaxSharedBytesPerBlock));
    return;
  }
  int warpMask = 0;
  for (int m : masks) warpMask |= m >> 5;
  const ExprRef warp = tir::special(tir::Special::WarpId), lane = tir::special(tir::Special::LaneId);
  auto cell = [&](const ExprRef& w, int64_t slot) {
    return tir::MemRef{scratchId,
                       tir::add(tir::mul(tir::add(tir::mul(w, tir::intConst(dt.slots)), tir::intConst(slot)),
                                         tir::intConst(32)),
                                lane)};
  };
  auto barrier = [&]() {
    if (hasTmaStores_) emit(loc, tir::FenceProxyAsync{});
    emit(loc, tir::Barrier{false, 0, 0, "reduce() across warps"});
  };
  barrier();
  tir::Block write;
  out_.push_back(&write);
  for (const FragmentSlot& s : dst.slots) emit(loc, tir::Store{type, cell(warp, s.m), {tir::Reg::elem(dt.array, s.m)}, nullptr});
  out_.pop_back();
  emitGuarded(loc, src.owns, std::move(write));
  barrier();
  // The warps of a row: this warp with its bits of warpMask replaced by each combination, in
  // increasing order.
  tir::Block read;
  out_.push_back(&read);
  const ExprRef first = tir::binary(tir::BinOp::And, warp, tir::intConst(~static_cast<int64_t>(warpMask)));
  std::vector<int64_t> offsets;
  for (int64_t x = 0; x <= warpMask; ++x)
    if ((x & ~warpMask) == 0) offsets.push_back(x);
  for (const FragmentSlot& s : dst.slots) {
    ExprRef total;
    for (int64_t x : offsets) {
      const uint32_t v = tir::addVar(k_, fmt::format("warp{}", temps_++), type);
      emit(loc, tir::Load{type, cell(tir::binary(tir::BinOp::Or, first, tir::intConst(x)), s.m), {tir::Reg::var(v)}, nullptr});
      total = total ? tir::binary(r.op, total, tir::varRef(k_, v)) : tir::varRef(k_, v);
    }
    emit(loc, tir::Assign{tir::Reg::elem(dt.array, s.m), total});
  }
  out_.pop_back();
  emitGuarded(loc, src.owns, std::move(read));
}

}  // namespace tyl::lower
