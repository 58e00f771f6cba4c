// TMA copies: copy_async(dst, src, barrier = b) from a window of 2 to 5 dimensions of a global
// tensor of as many or more (at most 5; the window's columns along the last dimension) into a
// shared tile becomes one cp.async.bulk.tensor per box of the tile (a box of extent 1 in the
// dimensions the window leaves out), and store_async(dst, src) the other way one TMA store per box. The shared tile's layout
// must be where TMA writes the boxes (ir/layout/Tma.h; tma-layout names the element that is
// not), for every value of a run-time stage index; the global tensor's rows must be contiguous,
// and its pointer and row stride 16-byte aligned (checked at launch where they are known only
// then). The launcher encodes one tensor map per tensor and box (Kernel::tensorMaps); box
// elements past the tensor's edges read as zeros.
#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <variant>

#include "ir/layout/Tma.h"
#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

TYL_DIAG(kTmaLayout, Error, "tma-layout",
         "a TMA copy whose shared tile is not laid out as TMA writes boxes, or whose global tensor TMA cannot read");

using tir::ExprRef;
using tir::Type;

namespace {

// TMA's rows run along the global tensor's unit-stride dimension, its innermost, and its box lists
// the tensor's dimensions in their order. The copy is the same, element for element, with the
// tensor's dimensions reordered so that the unit-stride one is last (when the window keeps it: a
// K-major view of an N x K matrix, say), and with the two views' positions reordered alike so that
// the window keeps the tensor's dimensions in ascending order (a transposed view, `B.T`, lists
// them the other way).
struct TmaOperands {
  tile::Tensor global;
  tile::View gv, sv;
  std::optional<int> unitDim;  // the tensor dimension moved last, if one was
  std::vector<int> order;      // the tensor's dimension at each place of the new order
  bool reordered = false;      // the views' positions are not the ones written

  // The dimension the user wrote for dimension d of `global`.
  int written(size_t d) const { return order.empty() ? static_cast<int>(d) : order[d]; }
};

TmaOperands tmaOperands(const tile::Tensor& gt, const tile::View& gv, const tile::View& sv) {
  TmaOperands o{gt, gv, sv, std::nullopt, {}, false};
  const int rank = static_cast<int>(gt.shape.size());
  if (gv.dims.size() != sv.dims.size()) return o;
  std::vector<int> moved(static_cast<size_t>(rank));  // where each of the tensor's dimensions goes
  std::iota(moved.begin(), moved.end(), 0);
  int64_t stride = 0;
  int unit = -1;
  if (rank >= 2 && !(tir::isIntConst(gt.strides[static_cast<size_t>(rank - 1)], &stride) && stride == 1))
    for (int d = 0; d < rank - 1 && unit < 0; ++d)
      if (tir::isIntConst(gt.strides[static_cast<size_t>(d)], &stride) && stride == 1) unit = d;
  if (unit >= 0 && std::find(gv.dims.begin(), gv.dims.end(), unit) != gv.dims.end()) {
    std::vector<int> order;
    for (int d = 0; d < rank; ++d)
      if (d != unit) order.push_back(d);
    order.push_back(unit);
    for (int i = 0; i < rank; ++i) {
      const auto from = static_cast<size_t>(order[static_cast<size_t>(i)]);
      moved[from] = i;
      o.global.shape[static_cast<size_t>(i)] = gt.shape[from];
      o.global.strides[static_cast<size_t>(i)] = gt.strides[from];
      o.gv.origin[static_cast<size_t>(i)] = gv.origin[from];
      if (!gt.staticShape.empty()) o.global.staticShape[static_cast<size_t>(i)] = gt.staticShape[from];
    }
    o.unitDim = unit;
    o.order = std::move(order);
  }
  // The views' positions, in the order of the tensor dimensions the window keeps there.
  std::vector<size_t> positions(gv.dims.size());
  std::iota(positions.begin(), positions.end(), size_t{0});
  std::sort(positions.begin(), positions.end(), [&](size_t a, size_t b) {
    return moved[static_cast<size_t>(gv.dims[a])] < moved[static_cast<size_t>(gv.dims[b])];
  });
  for (size_t j = 0; j < positions.size(); ++j) {
    o.reordered = o.reordered || positions[j] != j;
    o.gv.dims[j] = moved[static_cast<size_t>(gv.dims[positions[j]])];
    o.gv.shape[j] = gv.shape[positions[j]];
    o.sv.dims[j] = sv.dims[positions[j]];
    o.sv.shape[j] = sv.shape[positions[j]];
  }
  return o;
}

}  // namespace

std::optional<KernelLowering::TmaPlan> KernelLowering::tmaPlan(SourceRange loc, const tile::View& sharedView,
                                                               const tile::View& globalView, bool store) {
  const TmaOperands ops = tmaOperands(tk_.tensors[globalView.tensor], globalView, sharedView);
  const tile::View& sv = ops.sv;
  const tile::View& gv = ops.gv;
  const tile::Tensor& st = tk_.tensors[sv.tensor];  // the shared tile
  const tile::Tensor& gt = ops.global;              // the global tensor, its unit-stride dimension last
  const int e = tile::dtypeBytes(st.dtype);
  auto refuse = [&](const std::string& why) { diags_.report(kTmaLayout, loc, why); };
  const size_t rank = gt.shape.size();
  const size_t kept = gv.rank();  // the box's dimensions of extent above 1 can be these
  if (sv.rank() != kept || kept < 2 || rank < kept || rank > 5) {
    refuse(fmt::format("a TMA copy moves a tile of 2 to 5 dimensions between a shared tile and a window of a global "
                       "tensor of as many dimensions or more (at most 5); this one moves a {}-D shared tile and a "
                       "{}-D window of the {}-D tensor '{}'",
                       sv.rank(), kept, rank, gt.name));
    return std::nullopt;
  }
  if (gv.dims[kept - 1] != static_cast<int>(rank) - 1) {
    refuse(fmt::format("TMA reads rows along the last dimension of '{}', but this window's columns run along its "
                       "dimension {}",
                       gt.name, gv.dims[kept - 1]));
    return std::nullopt;
  }
  if (gt.dtype != st.dtype) {
    refuse(fmt::format("the shared tile '{}' holds {} and the global tensor '{}' {}, but TMA copies bytes as they "
                       "are, without converting",
                       st.name, tile::dtypeName(st.dtype), gt.name, tile::dtypeName(gt.dtype)));
    return std::nullopt;
  }
  int64_t unit = 0;
  if (!tir::isIntConst(gt.strides[rank - 1], &unit) || unit != 1) {
    refuse(fmt::format("TMA reads rows of contiguous elements, but the last dimension of '{}' has stride {}", gt.name,
                       tir::isIntConst(gt.strides[rank - 1], &unit) ? std::to_string(unit) : "known only at run time"));
    return std::nullopt;
  }

  // The boxes, the same for every value of a run-time origin of the tile's left-out dimensions.
  layout::TmaTile tile;
  tile.layout = &*st.layout;
  tile.shape = st.staticShape;
  tile.rowDim = sv.dims[kept - 2];
  tile.colDim = sv.dims[kept - 1];
  tile.rows = sv.shape[kept - 2];
  tile.cols = sv.shape[kept - 1];
  tile.elemBytes = e;
  tile.outerDims.assign(sv.dims.begin(), sv.dims.end() - 2);
  tile.outerExtents.assign(sv.shape.begin(), sv.shape.end() - 2);
  const TileOrigins places = tileOrigins(sv, st.staticShape);
  if (places.runtimeKeptDim) {
    refuse(fmt::format("this TMA copy writes a shared window whose origin along dimension {} is known only at run "
                       "time; a TMA destination starts at a compile-time offset in the dimensions it keeps",
                       *places.runtimeKeptDim));
    return std::nullopt;
  }
  if (places.count > TileOrigins::kMaxTileOrigins) {
    refuse(fmt::format("this TMA copy writes a tile that can start at {} run-time places; tyloc checks at most {}",
                       places.count, TileOrigins::kMaxTileOrigins));
    return std::nullopt;
  }
  std::optional<layout::TmaTileForm> form;
  for (const std::vector<int64_t>& origin : places.origins) {
    tile.origin = origin;
    auto r = layout::tmaTileForm(tile);
    if (const auto* m = std::get_if<layout::TmaFormMismatch>(&r)) {
      // Where the rows were reordered, the tile's coordinates in the message are the reordered ones.
      const std::string along =
          ops.unitDim ? fmt::format(" ('{}' is contiguous along its dimension {}, so TMA's rows run along dimension {} "
                                    "of the tile; the coordinates above list the tile's dimensions in the order ({}))",
                                    gt.name, *ops.unitDim, sv.dims[kept - 1], fmt::join(sv.dims, ", "))
          : ops.reordered ? fmt::format(" (TMA's box follows the dimensions of '{}', so the coordinates above list the "
                                        "tile's dimensions in the order ({}))",
                                        gt.name, fmt::join(sv.dims, ", "))
                          : "";
      diags_.report(kTmaLayout, loc,
                    fmt::format("TMA cannot {} the shared tile '{}'{}: {}{}", store ? "read" : "write", st.name,
                                places.varies ? fmt::format(" at origin {}", layout::shapeToString(origin)) : "",
                                m->message, along))
          .note(st.layoutLoc, fmt::format("'{}' is allocated here, with the layout {}", st.name,
                                          layout::toString(*st.layout)));
      return std::nullopt;
    }
    const auto& f = std::get<layout::TmaTileForm>(r);
    if (form && (f.swizzle != form->swizzle || f.boxRows != form->boxRows || f.boxCols != form->boxCols ||
                 f.boxOuter != form->boxOuter)) {
      refuse(fmt::format("this TMA copy writes '{}' in boxes that differ between its stages", st.name));
      return std::nullopt;
    }
    if (!form) form = f;
  }

  // The tensor map: the global tensor innermost first, the strides of its outer dimensions in
  // bytes; the box spans the window's kept dimensions, and 1 in the others.
  const int param = k_.buffers[gt.buffer].param;
  tir::TensorMap map;
  map.param = param;
  for (size_t d = rank; d-- > 0;) {
    map.dims.push_back(tir::cast(Type::I64, gt.shape[d]));
    if (d + 1 < rank)
      map.strides.push_back(tir::binary(tir::BinOp::Mul, tir::cast(Type::I64, gt.strides[d]), tir::intConst(e, Type::I64)));
    int64_t box = 1;
    for (size_t j = 0; j < kept; ++j)
      if (gv.dims[j] == static_cast<int>(d))
        box = j + 1 == kept ? form->boxCols : j + 2 == kept ? form->boxRows : form->boxOuter[j];
    map.box.push_back(static_cast<int>(box));
  }
  map.swizzle = form->swizzle;
  uint32_t mapId = 0;
  for (; mapId < k_.tensorMaps.size(); ++mapId) {
    const tir::TensorMap& m = k_.tensorMaps[mapId];
    if (m.param == map.param && m.box == map.box && m.swizzle == map.swizzle && m.dims.size() == map.dims.size() &&
        std::equal(m.dims.begin(), m.dims.end(), map.dims.begin(), tir::sameExpr) &&
        std::equal(m.strides.begin(), m.strides.end(), map.strides.begin(), tir::sameExpr))
      break;
  }
  if (mapId == k_.tensorMaps.size()) {
    map.name = fmt::format("{}_tma{}", gt.name, mapId);
    // What the driver requires of the map: a 16-byte aligned pointer and strides that are multiples
    // of 16 bytes. (A tensor with an empty dimension gets no map: the launcher leaves it zero, and
    // the emulator reports a TMA copy that uses it.)
    if (gt.alignBytes < 16) {
      tir::LaunchCheck align;
      align.kind = tir::LaunchCheck::Kind::PointerAlignment;
      align.param = param;
      align.alignBytes = 16;
      align.message = fmt::format("{} must be aligned to 16 bytes (TMA reads it)", gt.name);
      align.loc = loc;
      addLaunchCheck(std::move(align));
    }
    for (size_t i = 0; i < map.strides.size(); ++i) {
      const ExprRef& bytes = map.strides[i];
      const size_t d = rank - 2 - i;  // the tensor dimension of this stride
      const std::string what = d + 2 == rank
                                   ? fmt::format("the rows of {} must be a multiple of 16 bytes apart", gt.name)
                                   : fmt::format("the stride of dimension {} of {} must be a multiple of 16 bytes",
                                                 ops.written(d), gt.name);
      if (int64_t stride = 0; !tir::isIntConst(bytes, &stride) || stride % 16 != 0) {
        if (tir::isIntConst(bytes, &stride)) {
          refuse(fmt::format("this TMA copy reads {} {} bytes apart, but TMA needs a multiple of 16 bytes",
                             d + 2 == rank ? fmt::format("rows of '{}'", gt.name)
                                           : fmt::format("dimension {} of '{}' in steps", ops.written(d), gt.name),
                             stride));
          return std::nullopt;
        }
        tir::LaunchCheck check;
        check.cond = tir::binary(tir::BinOp::Eq, tir::binary(tir::BinOp::Rem, bytes, tir::intConst(16, Type::I64)),
                                 tir::intConst(0, Type::I64));
        check.message = what + " (TMA reads it)";
        check.loc = loc;
        addLaunchCheck(std::move(check));
      }
    }
    k_.tensorMaps.push_back(std::move(map));
  }

  return TmaPlan{*form, mapId, sv, gv};
}

// The coordinates of `box` of a window of a global tensor, innermost first: the window's origin,
// plus the box's place in the window's kept dimensions.
std::vector<ExprRef> KernelLowering::tmaCoords(const tile::View& gv, const layout::TmaBox& box) const {
  const size_t kept = gv.rank();
  std::vector<ExprRef> coords;
  for (size_t d = gv.origin.size(); d-- > 0;) {
    const ExprRef& o = gv.origin[d];
    int64_t within = 0;
    for (size_t j = 0; j < kept; ++j)
      if (gv.dims[j] == static_cast<int>(d)) within = j + 1 == kept ? box.col : j + 2 == kept ? box.row : box.outer[j];
    coords.push_back(tir::cast(Type::I32, within ? tir::add(o, tir::intConst(within, o->type)) : o));
  }
  return coords;
}

namespace {

// The shared tile's coordinate of `box`'s first element: its place along the outer dimensions, row
// and column.
std::vector<ExprRef> tmaBoxCoord(const layout::TmaBox& box) {
  std::vector<ExprRef> c;
  for (int64_t o : box.outer) c.push_back(tir::intConst(o, Type::I32));
  c.push_back(tir::intConst(box.row, Type::I32));
  c.push_back(tir::intConst(box.col, Type::I32));
  return c;
}

}  // namespace

void KernelLowering::tmaCopy(SourceRange loc, const tile::Copy& c) {
  const auto plan = tmaPlan(loc, c.dst, *c.src, false);
  if (!plan) return;
  const tir::MemRef bar = memRef(tk_.tensors[c.barrier->tensor], c.barrier->origin);
  for (const layout::TmaBox& box : plan->form.boxes) {
    const tir::MemRef to = memRef(tk_.tensors[plan->shared.tensor], tensorCoord(plan->shared, tmaBoxCoord(box)));
    emit(loc, tir::TmaLoad{plan->map, to, tmaCoords(plan->global, box), bar, c.multicast});
  }
}

void KernelLowering::tmaStore(SourceRange loc, const tile::Copy& c) {
  const auto plan = tmaPlan(loc, *c.src, c.dst, true);
  if (!plan) return;
  for (const layout::TmaBox& box : plan->form.boxes) {
    const tir::MemRef from = memRef(tk_.tensors[plan->shared.tensor], tensorCoord(plan->shared, tmaBoxCoord(box)));
    emit(loc, tir::TmaStore{plan->map, from, tmaCoords(plan->global, box)});
  }
}

bool KernelLowering::hasTmaStores(const tile::Block& b) {
  for (const tile::Stmt& s : b) {
    if (const auto* c = std::get_if<tile::Copy>(&s.node); c && c->tmaStore) return true;
    if (const auto* f = std::get_if<tile::For>(&s.node); f && hasTmaStores(f->body)) return true;
    if (const auto* i = std::get_if<tile::If>(&s.node); i && (hasTmaStores(i->then) || hasTmaStores(i->otherwise)))
      return true;
  }
  return false;
}

}  // namespace tyl::lower
