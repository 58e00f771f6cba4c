// Warpgroup MMAs (wgmma, sm_90a). Every warpgroup of the grid computes its own 64 x N tile of the
// accumulator: a wgmma.fence, then one wgmma per k16 step with the descriptors of that step's A
// and B matrices, a commit and (unless the MMA is async: wait_mmas retires it) a wait for the
// group. A descriptor is computed in the kernel, from
// the shared base address and the offset of the matrix's first element (a run-time stage index
// included), so the emulator decodes the very bits the GPU reads. The layouts decide: each shared
// operand must be in one of wgmma's canonical forms (wgmma-operand names the element that breaks
// it), and the accumulator, like an A operand in registers, must hold every element where the
// instruction's fragment puts it (mma-ownership).
#include <fmt/format.h>

#include <variant>

#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

TYL_DIAG(kWgmmaOperand, Error, "wgmma-operand",
         "a wgmma operand whose shared layout is none of wgmma's canonical forms (K- or MN-major, a swizzle of 0, 32, "
         "64 or 128 bytes)");

using tir::ExprRef;
using tir::Type;

namespace {

ExprRef i64(int64_t v) { return tir::intConst(v, Type::I64); }

}  // namespace

std::optional<layout::WgmmaOperandForm> KernelLowering::wgmmaForm(SourceRange loc, const tile::View& v, bool isA,
                                                                 int64_t atomMN) {
  const tile::Tensor& t = tk_.tensors[v.tensor];
  const char* role = isA ? "A" : "B";
  layout::WgmmaTile tile;
  tile.layout = &*t.layout;
  tile.shape = t.staticShape;
  tile.mnDim = v.dims[isA ? 0 : 1];
  tile.kDim = v.dims[isA ? 1 : 0];
  tile.extentMN = v.shape[isA ? 0 : 1];
  tile.extentK = v.shape[isA ? 1 : 0];
  tile.atomMN = atomMN;
  tile.elemBytes = tile::dtypeBytes(t.dtype);
  // Every place the tile can start: a pipeline's stage is known only at run time.
  const TileOrigins places = tileOrigins(v, t.staticShape);
  if (places.runtimeKeptDim) {
    diags_.report(kWgmmaOperand, loc,
                  fmt::format("the {} operand's window starts at a run-time offset along its dimension {}: a wgmma "
                              "tile must start at a compile-time offset in the dimensions it keeps (an unrolled "
                              "loop gives one)",
                              role, *places.runtimeKeptDim));
    return std::nullopt;
  }
  if (places.count > TileOrigins::kMaxTileOrigins) {
    diags_.report(kWgmmaOperand, loc,
                  fmt::format("the {} operand's tile can start at {} run-time places; tyloc checks at most {}", role,
                              places.count, TileOrigins::kMaxTileOrigins));
    return std::nullopt;
  }
  std::optional<layout::WgmmaOperandForm> first;
  for (const std::vector<int64_t>& origin : places.origins) {
    tile.origin = origin;
    auto r = layout::wgmmaOperandForm(tile);
    if (const auto* m = std::get_if<layout::WgmmaFormMismatch>(&r)) {
      diags_.report(kWgmmaOperand, loc,
                    fmt::format("wgmma cannot read the {} operand '{}' through a descriptor{}: {}", role, t.name,
                                places.varies ? fmt::format(" at origin {}", layout::shapeToString(origin)) : "",
                                m->message))
          .note(t.layoutLoc, fmt::format("'{}' is allocated here, with the layout {}", t.name, layout::toString(*t.layout)));
      return std::nullopt;
    }
    const auto& f = std::get<layout::WgmmaOperandForm>(r);
    if (first && (f.major != first->major || f.swizzle != first->swizzle || f.lbo != first->lbo || f.sbo != first->sbo)) {
      diags_.report(kWgmmaOperand, loc,
                    fmt::format("the {} operand '{}' takes different descriptor fields at origin {} than at the first "
                                "origin",
                                role, t.name, layout::shapeToString(origin)))
          .note(t.layoutLoc, fmt::format("'{}' is allocated here, with the layout {}", t.name, layout::toString(*t.layout)));
      return std::nullopt;
    }
    if (!first) first = f;
  }
  return first;
}

void KernelLowering::warpgroupMma(SourceRange loc, const tile::WarpgroupMma& op) {
  const tile::TiledMma& m = op.mma;
  const int64_t n = m.wgmmaN;
  const int64_t steps = op.a.shape[1] / layout::kWgmmaK;
  std::optional<layout::WgmmaOperandForm> fa;
  if (!op.aFrag) fa = wgmmaForm(loc, op.a, true, layout::kWgmmaM);
  const std::optional<layout::WgmmaOperandForm> fb = wgmmaForm(loc, op.b, false, n);
  if ((!op.aFrag && !fa) || !fb) return;
  // A from registers: per K step, the four words of this thread's warp's 16 rows, where the layout
  // of the fragment puts them (the same register in every thread, as for mma.sync).
  std::vector<std::vector<tir::Reg>> aWords;
  if (op.aFrag) {
    static const char* names[] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"};
    const uint32_t array = tk_.tensors[*op.aFrag].array;
    for (int64_t s = 0; s < steps; ++s) {
      std::optional<std::vector<int64_t>> words = mmaWords(
          *op.aFrag, "A operand", 4,
          [&](int64_t w, int lane, int slot) {
            const layout::RowCol e = layout::mmaAtomA(lane, slot);
            return layout::RowCol{(w / 4 / m.groupsN) * layout::kWgmmaM + 16 * (w % 4) + e.row,
                                  s * layout::kWgmmaK + e.col};
          },
          names, loc, "wgmma", m.threads() / 32);
      if (!words) return;
      std::vector<tir::Reg>& regs = aWords.emplace_back();
      for (int64_t word : *words) regs.push_back(tir::Reg::elem(array, word));
    }
  }

  // The accumulator's slots: register r of every thread must be one slot of the fragment.
  std::vector<tir::Reg> dRegs;
  const uint32_t dArray = tk_.tensors[op.d].array;
  for (int r = 0; r < n / 2; ++r) {
    const std::string name = fmt::format("d{}", r);
    std::optional<int64_t> slot = uniformSlot(
        op.d, "accumulator",
        [&](int64_t w, int lane) {
          const int64_t g = w / 4;
          const layout::RowCol rc = layout::wgmmaAtomD(static_cast<int>(w % 4 * 32 + lane), r);
          return layout::RowCol{(g / m.groupsN) * layout::kWgmmaM + rc.row, (g % m.groupsN) * n + rc.col};
        },
        name.c_str(), loc, "wgmma", m.threads() / 32);
    if (!slot) return;
    dRegs.push_back(tir::Reg::elem(dArray, *slot));
  }
  if (op.c != op.d) {
    // d = c, then d += a * b.
    auto leaf = std::make_shared<tile::FragExpr>();
    leaf->kind = tile::FragExpr::Kind::Tensor;
    leaf->dtype = tile::DType::F32;
    leaf->tensor = op.c;
    fragAssign(loc, op.d, leaf);
  }

  // This thread's warpgroup row and column in the grid.
  const ExprRef group = tir::binary(tir::BinOp::Div, tir::special(tir::Special::WarpId), tir::intConst(4, Type::I32));
  const ExprRef groupRow = tir::binary(tir::BinOp::Div, group, tir::intConst(m.groupsN, Type::I32));
  const ExprRef groupCol = tir::binary(tir::BinOp::Rem, group, tir::intConst(m.groupsN, Type::I32));
  // The descriptor of the matrix whose first element is view element (row, col) of `v`. The first
  // k16 step's is computed from the address; a later step's, whose matrix lies a constant number
  // of 16-byte units further (the start address field's unit), is the first's plus that number, so
  // that the address arithmetic is done once per MMA and not once per step. (The field cannot carry:
  // a shared address is below 2^18, so its 16-byte units fit the field's 14 bits.)
  struct Descriptor {
    ExprRef offset, value;
  };
  auto descriptor = [&](const tile::View& v, const layout::WgmmaOperandForm& f, ExprRef row, ExprRef col,
                        std::optional<Descriptor>& first) {
    const tile::Tensor& t = tk_.tensors[v.tensor];
    const tir::MemRef at = memRef(t, tensorCoord(v, {std::move(row), std::move(col)}));
    const int64_t bytes = tile::dtypeBytes(t.dtype);
    if (first) {
      const AffineForm d = linearize(tir::sub(tir::cast(Type::I64, at.offset), tir::cast(Type::I64, first->offset)));
      if (d.isConstant() && d.constant >= 0 && d.constant * bytes % 16 == 0)
        return tir::add(first->value, i64(d.constant * bytes / 16));
    }
    const uint64_t fields = layout::WgmmaDescriptor{0, f.lbo, f.sbo, f.swizzle}.encode();
    ExprRef address = tir::add(tir::cast(Type::I64, tir::special(tir::Special::SharedBase)),
                               i64(k_.buffers[t.buffer].sharedOffset));
    address = tir::add(address, tir::binary(tir::BinOp::Mul, tir::cast(Type::I64, at.offset), i64(bytes)));
    const ExprRef encoded = tir::binary(tir::BinOp::Shr, tir::binary(tir::BinOp::And, address, i64(0x3FFFF)), i64(4));
    ExprRef value = tir::binary(tir::BinOp::Or, encoded, i64(static_cast<int64_t>(fields)));
    if (!first) first = Descriptor{at.offset, value};
    return value;
  };
  std::optional<Descriptor> firstA, firstB;
  const ExprRef aRow = tir::binary(tir::BinOp::Mul, groupRow, tir::intConst(layout::kWgmmaM, Type::I32));
  const ExprRef bCol = tir::binary(tir::BinOp::Mul, groupCol, tir::intConst(n, Type::I32));
  tir::Block body;
  auto add = [&](decltype(tir::Stmt::node) node) { body.push_back(tir::Stmt{loc, std::move(node)}); };
  add(tir::WgmmaFence{});
  for (int64_t s = 0; s < steps; ++s) {
    const ExprRef k = tir::intConst(s * layout::kWgmmaK, Type::I32);
    tir::Wgmma w{tile::toTir(m.ab), static_cast<int>(n), nullptr, descriptor(op.b, *fb, k, bCol, firstB), false,
                 fb->major == layout::WgmmaMajor::MN, nullptr, dRegs, {}};
    if (op.aFrag) {
      w.a = aWords[static_cast<size_t>(s)];
    } else {
      w.descA = descriptor(op.a, *fa, aRow, k, firstA);
      w.transA = fa->major == layout::WgmmaMajor::MN;
    }
    add(std::move(w));
  }
  add(tir::WgmmaCommit{});
  if (!op.async) add(tir::WgmmaWait{0});
  // In a block with more warpgroups than the MMA (a producer's), the others hold no part of the
  // accumulator and skip it.
  const int64_t groups = m.groupsM * m.groupsN;
  ExprRef mine;
  if (k_.threadsPerBlock() > m.threads()) mine = tir::lt(group, tir::intConst(groups, Type::I32));
  emitGuarded(loc, mine, std::move(body));
}

}  // namespace tyl::lower
