// TMA loads (cp.async.bulk.tensor): the box read from the global tensor as its tensor map
// describes it (the map's dimensions and strides evaluated from the launch's parameters, as the
// launcher encodes them), zeros outside the tensor, written into shared memory as
// ir/layout/Tma.h places it (the swizzle on absolute shared addresses), then the box's bytes
// completed on the mbarrier. The copy lands when it is issued; its writes are the issuing
// thread's, released into the barrier's phase with the transaction.
#include <fmt/format.h>

#include <cstring>

#include "backend/emu/Interpreter.h"
#include "ir/layout/Tma.h"

namespace tyl::emu {

void Interpreter::execTmaLoad(Warp& w, const tir::TmaLoad& op, Mask mask) {
  const tir::TensorMap& map = ctx_.kernel.tensorMaps.at(op.map);
  const tir::Param& param = ctx_.kernel.params.at(static_cast<size_t>(map.param));
  const tir::MemRef global{static_cast<uint32_t>(param.buffer), nullptr};
  const int e = tir::typeBytes(param.type);
  const size_t rank = map.dims.size();
  int64_t boxElems = 1;
  for (int64_t b : map.box) boxElems *= b;
  const int64_t boxBytes = boxElems * e;
  const Lanes dst = eval(w, op.dst.offset, mask), bar = eval(w, op.bar.offset, mask);
  std::vector<Lanes> coords, dims, strides;
  for (const tir::ExprRef& c : op.coords) coords.push_back(eval(w, c, mask));
  for (const tir::ExprRef& d : map.dims) dims.push_back(eval(w, d, mask));
  for (const tir::ExprRef& s : map.strides) strides.push_back(eval(w, s, mask));
  const PointerBinding& pointer = ctx_.pointers.at(static_cast<size_t>(map.param));
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(mask, l)) continue;
    Place d;
    if (!place(w, op.dst, static_cast<int64_t>(dst[l]), static_cast<int>(boxBytes), 16, l, "TMA write", &d)) continue;
    std::optional<int64_t> barByte = mbarrierByte(w, op.bar, bar[l], l);
    if (!barByte) continue;
    // Every element of the box, innermost dimension fastest.
    std::vector<int64_t> index(rank, 0);
    std::vector<std::byte> value(static_cast<size_t>(e));
    for (int64_t i = 0; i < boxElems; ++i) {
      bool inside = true;
      int64_t byte = pointer.offset;
      for (size_t dim = 0; dim < rank; ++dim) {
        const int64_t g = static_cast<int64_t>(static_cast<int32_t>(coords[dim][l])) + index[dim];
        inside = inside && g >= 0 && g < static_cast<int64_t>(dims[dim][l]);
        byte += dim == 0 ? g * e : g * static_cast<int64_t>(strides[dim - 1][l]);
      }
      std::fill(value.begin(), value.end(), std::byte{0});
      if (inside) {
        if (byte < 0 || byte > ctx_.global.size(pointer.buffer) - e) {
          report(FindingKind::OutOfBounds, w, l,
                 fmt::format("TMA reads byte {} of global buffer '{}', outside its {} bytes: the tensor map's extents "
                             "or strides do not fit the buffer (by {})",
                             byte, param.name, ctx_.global.size(pointer.buffer), describe(threadRef(w, l))));
          break;
        }
        readBytes(w, global, Place{false, pointer.buffer, byte}, e, l, value.data());
      }
      const int64_t address =
          layout::tmaElementAddress(map.swizzle, kSharedWindowBase + d.byte, map.box[0], e, i / map.box[0], i % map.box[0]);
      writeBytes(w, op.dst, Place{true, -1, address - kSharedWindowBase}, e, l, value.data());
      ctx_.shared.asyncProxyWrote(address - kSharedWindowBase, e);
      for (size_t dim = 0; dim < rank && ++index[dim] == map.box[dim]; ++dim) index[dim] = 0;
    }
    ctx_.stats.tmaBytes += boxBytes;
    // The transaction completes on the barrier, releasing the writes.
    MbarrierState& s = block_.mbarriers[*barByte];
    if (!s.barrier.initialized()) {
      report(FindingKind::InvalidOperand, w, l,
             fmt::format("a TMA completes on an mbarrier that was never initialized (by {})", describe(threadRef(w, l))));
      continue;
    }
    const int64_t phase = s.barrier.phase();
    ctx_.shared.release(static_cast<int32_t>(w.thread(l)), s.current);
    if (Mbarrier::Problem p = s.barrier.completeTx(boxBytes); !p.empty())
      report(FindingKind::InvalidOperand, w, l, fmt::format("{} (by {})", p, describe(threadRef(w, l))));
    if (s.barrier.phase() != phase) {
      s.completed = std::move(s.current);
      s.current.clear();
    }
    ++block_.mbarrierChanges;
  }
}

// TMA stores: the box read from shared memory where TMA reads it (as a load writes it) when the
// store is issued, its elements inside the tensor written through the tensor map, those outside
// skipped. The bytes must be visible to the async proxy: every generic write to them fenced by
// its thread (fence.proxy.async) before the store.
void Interpreter::execTmaStore(Warp& w, const tir::TmaStore& op, Mask mask) {
  const tir::TensorMap& map = ctx_.kernel.tensorMaps.at(op.map);
  const tir::Param& param = ctx_.kernel.params.at(static_cast<size_t>(map.param));
  const tir::MemRef global{static_cast<uint32_t>(param.buffer), nullptr};
  const int e = tir::typeBytes(param.type);
  const size_t rank = map.dims.size();
  int64_t boxElems = 1;
  for (int64_t b : map.box) boxElems *= b;
  const int64_t boxBytes = boxElems * e;
  const Lanes src = eval(w, op.src.offset, mask);
  std::vector<Lanes> coords, dims, strides;
  for (const tir::ExprRef& c : op.coords) coords.push_back(eval(w, c, mask));
  for (const tir::ExprRef& d : map.dims) dims.push_back(eval(w, d, mask));
  for (const tir::ExprRef& s : map.strides) strides.push_back(eval(w, s, mask));
  const PointerBinding& pointer = ctx_.pointers.at(static_cast<size_t>(map.param));
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(mask, l)) continue;
    Place from;
    if (!place(w, op.src, static_cast<int64_t>(src[l]), static_cast<int>(boxBytes), 128, l, "TMA store read", &from))
      continue;
    std::vector<int64_t> index(rank, 0);
    std::vector<std::byte> value(static_cast<size_t>(e));
    for (int64_t i = 0; i < boxElems; ++i) {
      const int64_t address = layout::tmaElementAddress(map.swizzle, kSharedWindowBase + from.byte, map.box[0], e,
                                                        i / map.box[0], i % map.box[0]);
      const int64_t byte = address - kSharedWindowBase;
      if (auto bad = ctx_.shared.unfenced(byte, e)) {
        report(FindingKind::AsyncProxy, w, l,
               fmt::format("a TMA store reads shared byte {}, which thread {} wrote without a fence.proxy.async "
                           "after it: the async proxy may not see the write (by {})",
                           bad->first, bad->second.thread, describe(threadRef(w, l))));
        return;
      }
      readBytes(w, op.src, Place{true, -1, byte}, e, l, value.data());
      bool inside = true;
      int64_t to = pointer.offset;
      for (size_t dim = 0; dim < rank; ++dim) {
        const int64_t g = static_cast<int64_t>(static_cast<int32_t>(coords[dim][l])) + index[dim];
        inside = inside && g >= 0 && g < static_cast<int64_t>(dims[dim][l]);
        to += dim == 0 ? g * e : g * static_cast<int64_t>(strides[dim - 1][l]);
      }
      if (inside) {
        if (to < 0 || to > ctx_.global.size(pointer.buffer) - e) {
          report(FindingKind::OutOfBounds, w, l,
                 fmt::format("TMA writes byte {} of global buffer '{}', outside its {} bytes: the tensor map's "
                             "extents or strides do not fit the buffer (by {})",
                             to, param.name, ctx_.global.size(pointer.buffer), describe(threadRef(w, l))));
          return;
        }
        writeBytes(w, global, Place{false, pointer.buffer, to}, e, l, value.data());
      }
      for (size_t dim = 0; dim < rank && ++index[dim] == map.box[dim]; ++dim) index[dim] = 0;
    }
    ctx_.stats.tmaBytes += boxBytes;
    // The store may read its box until a wait retires its group.
    ctx_.shared.beginStoreRead(from.byte, boxBytes, Site{stmt_, static_cast<int32_t>(w.thread(l))});
    block_.bulk[static_cast<size_t>(w.thread(l))].open.emplace_back(from.byte, boxBytes);
  }
}

void Interpreter::execBulkGroup(Warp& w, bool commit, int pending, Mask mask) {
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(mask, l)) continue;
    BulkGroups& g = block_.bulk[static_cast<size_t>(w.thread(l))];
    if (commit) {
      g.committed.push_back(std::move(g.open));
      g.open.clear();
      continue;
    }
    while (g.committed.size() > static_cast<size_t>(pending)) {
      for (const auto& [addr, n] : g.committed.front()) ctx_.shared.endStoreRead(addr, n);
      g.committed.pop_front();
    }
  }
}

}  // namespace tyl::emu
