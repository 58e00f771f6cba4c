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

// A TMA box of one tensor map, evaluated for a warp: its element size and count, and each lane's
// coordinates, extents and strides, from which the global byte of every box element follows.
struct Interpreter::TmaBox {
  const tir::TensorMap* map = nullptr;
  const tir::Param* param = nullptr;
  const PointerBinding* pointer = nullptr;
  int e = 0;
  int64_t elems = 1, bytes = 0;
  std::vector<Lanes> coords, dims, strides;

  // The global byte of the element at `index` (innermost dimension first) for `lane`, and
  // whether it lies inside the tensor.
  std::pair<int64_t, bool> globalByte(int lane, const std::vector<int64_t>& index) const {
    bool inside = true;
    int64_t byte = pointer->offset;
    for (size_t dim = 0; dim < index.size(); ++dim) {
      const int64_t g = static_cast<int64_t>(static_cast<int32_t>(coords[dim][static_cast<size_t>(lane)])) + index[dim];
      inside = inside && g >= 0 && g < static_cast<int64_t>(dims[dim][static_cast<size_t>(lane)]);
      byte += dim == 0 ? g * e : g * static_cast<int64_t>(strides[dim - 1][static_cast<size_t>(lane)]);
    }
    return {byte, inside};
  }
  // The tensor dimension that is empty for `lane`, if one is: the launcher leaves the map of a
  // tensor without elements unencoded (runtime/tylo/runtime.cuh), and TMA cannot use it.
  std::optional<size_t> emptyDim(int lane) const {
    for (size_t dim = 0; dim < dims.size(); ++dim)
      if (dims[dim][static_cast<size_t>(lane)] == 0) return dims.size() - 1 - dim;
    return std::nullopt;
  }
  // The next element, innermost dimension fastest.
  void next(std::vector<int64_t>& index) const {
    for (size_t dim = 0; dim < index.size() && ++index[dim] == map->box[dim]; ++dim) index[dim] = 0;
  }
};

Interpreter::TmaBox Interpreter::tmaBox(Warp& w, uint32_t mapId, const std::vector<tir::ExprRef>& coords, Mask mask) {
  TmaBox b;
  b.map = &ctx_.kernel.tensorMaps.at(mapId);
  b.param = &ctx_.kernel.params.at(static_cast<size_t>(b.map->param));
  b.pointer = &ctx_.pointers.at(static_cast<size_t>(b.map->param));
  b.e = tir::typeBytes(b.param->type);
  for (int64_t x : b.map->box) b.elems *= x;
  b.bytes = b.elems * b.e;
  for (const tir::ExprRef& c : coords) b.coords.push_back(eval(w, c, mask));
  for (const tir::ExprRef& d : b.map->dims) b.dims.push_back(eval(w, d, mask));
  for (const tir::ExprRef& st : b.map->strides) b.strides.push_back(eval(w, st, mask));
  return b;
}

// False (reported) when `lane`'s box is of a tensor with an empty dimension, whose map the
// launcher does not encode: a GPU faults on it.
bool Interpreter::tmaMapEncoded(Warp& w, const TmaBox& box, int lane, const char* what) {
  const std::optional<size_t> d = box.emptyDim(lane);
  if (!d) return true;
  report(FindingKind::InvalidOperand, w, lane,
         fmt::format("{} uses the tensor map of '{}', whose dimension {} is empty: a tensor without elements has no "
                     "tensor map (the launcher leaves it unencoded, and a GPU faults on it); a kernel must not issue "
                     "TMA copies of it (by {})",
                     what, box.param->name, *d, describe(threadRef(w, lane))));
  return false;
}

// With a multicast mask, the box lands at the same offset in the shared memory of each block of
// the mask, and completes on the barrier at the same offset in each.
void Interpreter::execTmaLoad(Warp& w, const tir::TmaLoad& op, Mask mask) {
  const TmaBox box = tmaBox(w, op.map, op.coords, mask);
  const tir::TensorMap& map = *box.map;
  const tir::Param& param = *box.param;
  const tir::MemRef global{static_cast<uint32_t>(param.buffer), nullptr};
  const int e = box.e;
  const int64_t boxElems = box.elems, boxBytes = box.bytes;
  const Lanes dst = eval(w, op.dst.offset, mask), bar = eval(w, op.bar.offset, mask);
  Lanes ctaMask{};
  if (op.multicast) ctaMask = eval(w, op.multicast, mask);
  const PointerBinding& pointer = *box.pointer;
  std::vector<std::byte> data(static_cast<size_t>(boxBytes));
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(mask, l) || !tmaMapEncoded(w, box, l, "a TMA load")) continue;
    Place d;
    if (!place(w, op.dst, static_cast<int64_t>(dst[l]), static_cast<int>(boxBytes), 16, l, "TMA write", &d)) continue;
    std::optional<int64_t> barByte = mbarrierByte(w, op.bar, bar[l], l);
    if (!barByte) continue;
    // Every element of the box, innermost dimension fastest.
    std::vector<int64_t> index(map.dims.size(), 0);
    std::fill(data.begin(), data.end(), std::byte{0});
    bool ok = true;
    for (int64_t i = 0; i < boxElems && ok; ++i, box.next(index)) {
      const auto [byte, inside] = box.globalByte(l, index);
      if (!inside) continue;
      if (byte < 0 || byte > ctx_.global.size(pointer.buffer) - e) {
        report(FindingKind::OutOfBounds, w, l,
               fmt::format("TMA reads byte {} of global buffer '{}', outside its {} bytes: the tensor map's extents "
                           "or strides do not fit the buffer (by {})",
                           byte, param.name, ctx_.global.size(pointer.buffer), describe(threadRef(w, l))));
        ok = false;
        break;
      }
      readBytes(w, global, Place{false, pointer.buffer, byte}, e, l, data.data() + i * e);
    }
    std::vector<BlockState*> targets;
    if (!op.multicast) {
      targets.push_back(&block_);
    } else {
      const uint64_t ranks = ctaMask[static_cast<size_t>(l)] & 0xffff;
      for (uint64_t r = 0; r < 16; ++r)
        if (ranks >> r & 1)
          if (BlockState* t = clusterBlock(w, l, r, "a TMA multicast")) targets.push_back(t);
    }
    for (BlockState* t : targets) {
      for (int64_t i = 0; i < boxElems; ++i) {
        const int64_t address = layout::tmaElementAddress(map.swizzle, kSharedWindowBase + d.byte, map.box[0], e,
                                                          i / map.box[0], i % map.box[0]);
        writeShared(w, op.dst, *t->shared, address - kSharedWindowBase, e, l, data.data() + i * e);
        t->shared->asyncProxyWrote(address - kSharedWindowBase, e);
      }
      ctx_.stats.tmaBytes += boxBytes;
      // The transaction completes on the barrier, releasing the writes.
      signalMbarrier(w, l, *t, *barByte, Signal::CompleteTx, boxBytes);
    }
  }
}

// TMA stores: the box read from shared memory where TMA reads it (as a load writes it) when the
// store is issued, its elements inside the tensor written through the tensor map, those outside
// skipped. The bytes must be visible to the async proxy: every generic write to them fenced by
// its thread (fence.proxy.async) before the store.
void Interpreter::execTmaStore(Warp& w, const tir::TmaStore& op, Mask mask) {
  const TmaBox box = tmaBox(w, op.map, op.coords, mask);
  const tir::TensorMap& map = *box.map;
  const tir::Param& param = *box.param;
  const tir::MemRef global{static_cast<uint32_t>(param.buffer), nullptr};
  const int e = box.e;
  const int64_t boxElems = box.elems, boxBytes = box.bytes;
  const Lanes src = eval(w, op.src.offset, mask);
  const PointerBinding& pointer = *box.pointer;
  for (int l = 0; l < kWarpSize; ++l) {
    if (!laneOn(mask, l) || !tmaMapEncoded(w, box, l, "a TMA store")) continue;
    Place from;
    if (!place(w, op.src, static_cast<int64_t>(src[l]), static_cast<int>(boxBytes), 128, l, "TMA store read", &from))
      continue;
    std::vector<int64_t> index(map.dims.size(), 0);
    std::vector<std::byte> value(static_cast<size_t>(e));
    for (int64_t i = 0; i < boxElems; ++i) {
      const int64_t address = layout::tmaElementAddress(map.swizzle, kSharedWindowBase + from.byte, map.box[0], e,
                                                        i / map.box[0], i % map.box[0]);
      const int64_t byte = address - kSharedWindowBase;
      if (auto bad = shared().unfenced(byte, e)) {
        report(FindingKind::AsyncProxy, w, l,
               fmt::format("a TMA store reads shared byte {}, which thread {} wrote without a fence.proxy.async "
                           "after it: the async proxy may not see the write (by {})",
                           bad->first, bad->second.thread, describe(threadRef(w, l))));
        return;
      }
      readBytes(w, op.src, Place{true, -1, byte}, e, l, value.data());
      const auto [to, inside] = box.globalByte(l, index);
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
      box.next(index);
    }
    ctx_.stats.tmaBytes += boxBytes;
    // The store may read its box until a wait retires its group.
    shared().beginAsyncRead(from.byte, boxBytes, site(w, l));
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
      for (const auto& [addr, n] : g.committed.front()) shared().endAsyncRead(addr, n);
      g.committed.pop_front();
    }
  }
}

}  // namespace tyl::emu
