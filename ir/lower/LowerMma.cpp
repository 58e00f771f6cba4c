// Tiled mma.sync: one m16n8k16 instruction per atom position and K block. The register
// of every operand element comes from the fragments' own layouts, checked against the
// atom's ownership tables, so a fragment laid out differently from what the instruction
// expects is a diagnostic rather than a wrong result.
#include <fmt/format.h>

#include "ir/layout/MmaAtom.h"
#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

TYL_DIAG(kMmaOwnership, Error, "mma-ownership",
         "an MMA fragment whose layout does not put elements where mma.sync expects them");

using layout::Axis;
using layout::RowCol;

// The register slot that holds, in every thread, the element `element(warp, lane)`; it
// must be the same slot in all threads (register indices are compile-time constants).
std::optional<int64_t> KernelLowering::uniformSlot(uint32_t tensor, const char* role,
                                                   const std::function<RowCol(int64_t, int)>& element,
                                                   const char* atomReg, SourceRange loc, const char* instruction,
                                                   int64_t warps) {
  const tile::Tensor& t = tk_.tensors[tensor];
  const OwnerTable* table = owners(tensor);
  if (!table) return std::nullopt;
  std::optional<int64_t> slot;
  // The warps that run the instruction: the block's unless given.
  if (warps < 0) warps = k_.threadsPerBlock() / 32;
  for (int64_t w = 0; w < warps; ++w) {
    for (int lane = 0; lane < 32; ++lane) {
      RowCol rc = element(w, lane);
      int64_t tid = w * 32 + lane;
      std::optional<int64_t> found;
      if (rc.row >= 0 && rc.col >= 0 && rc.row < t.staticShape[0] && rc.col < t.staticShape[1]) {
        for (const auto& [holder, m] : table->holders[static_cast<size_t>(rc.row * t.staticShape[1] + rc.col)])
          if (holder == tid) found = m;
      }
      auto fail = [&](const std::string& what) {
        diags_.report(kMmaOwnership, loc,
                      fmt::format("{} needs element ({}, {}) of the {} in warp {} lane {} as {}, but {}", instruction,
                                  rc.row, rc.col, role, w, lane, atomReg, what))
            .note(t.layoutLoc, fmt::format("the {}'s layout is {}", role, layout::toString(*t.layout)));
        return std::nullopt;
      };
      if (!found) return fail("that thread does not hold it");
      if (slot && *found != *slot)
        return fail(fmt::format("it is in slot {} there and in slot {} in warp 0 lane 0", *found, *slot));
      slot = found;
    }
  }
  return slot;
}

std::optional<std::vector<int64_t>> KernelLowering::mmaWords(
    uint32_t id, const char* role, int count, const std::function<RowCol(int64_t, int, int)>& element,
    const char* const* names, SourceRange loc, const char* instruction, int64_t warps) {
  const tile::Tensor& t = tk_.tensors[id];
  std::vector<int64_t> out;
  for (int j = 0; j < count; ++j) {
    std::optional<int64_t> lo = uniformSlot(
        id, role, [&](int64_t w, int lane) { return element(w, lane, 2 * j); }, names[2 * j], loc, instruction,
        warps);
    if (!lo) return std::nullopt;
    std::optional<int64_t> hi = uniformSlot(
        id, role, [&](int64_t w, int lane) { return element(w, lane, 2 * j + 1); }, names[2 * j + 1], loc,
        instruction, warps);
    if (!hi) return std::nullopt;
    if (*lo % 2 != 0 || *hi != *lo + 1) {
      diags_.report(kMmaOwnership, loc,
                    fmt::format("{} takes {} and {} of the {} as one 32-bit register, but they are in slots {} and {} "
                                "rather than an even slot and the next",
                                instruction, names[2 * j], names[2 * j + 1], role, *lo, *hi))
          .note(t.layoutLoc, fmt::format("the {}'s layout is {}", role, layout::toString(*t.layout)));
      return std::nullopt;
    }
    out.push_back(*lo / 2);
  }
  return out;
}

void KernelLowering::mma(SourceRange loc, const tile::Mma& op) {
  const layout::TiledMmaShape& s = op.mma.shape;
  const tile::Tensor& A = tk_.tensors[op.a];
  int64_t kBlocks = A.staticShape[1] / 16;
  auto rowOff = [&](int64_t w, int64_t rm) { return (w / s.warpsN) * s.repeatM * 16 + rm * 16; };
  auto colOff = [&](int64_t w, int64_t rn) { return (w % s.warpsN) * s.repeatN * 8 + rn * 8; };
  static const char* aRegs[] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"};
  static const char* bRegs[] = {"b0", "b1", "b2", "b3"};
  static const char* cRegs[] = {"c0", "c1", "c2", "c3"};

  auto emitAll = [&](const std::vector<LayoutTables::MmaRegs>& all) {
    auto regs = [](uint32_t array, const auto& slots) {
      std::vector<tir::Reg> out;
      for (int64_t slot : slots) out.push_back(tir::Reg::elem(array, slot));
      return out;
    };
    const uint32_t dArray = tk_.tensors[op.d].array, cArray = tk_.tensors[op.c].array;
    for (const LayoutTables::MmaRegs& r : all)
      emit(loc, tir::Mma{tile::toTir(op.mma.ab), regs(dArray, r.d), regs(tk_.tensors[op.a].array, r.a),
                         regs(tk_.tensors[op.b].array, r.b), regs(r.cFromD ? dArray : cArray, r.c)});
  };
  // The operands' tables stand for their layouts, shapes and the launch (LayoutTables shares
  // them), so an mma with the same tables and tiling has the same registers.
  const OwnerTable *ta = owners(op.a), *tb = owners(op.b), *tc = owners(op.c), *td = owners(op.d);
  if (!ta || !tb || !tc || !td) return;
  const LayoutTables::MmaKey key{ta, tb, op.c != op.d ? tc : nullptr, td, s.warpsM, s.warpsN, s.repeatM, s.repeatN,
                                 kBlocks};
  if (auto known = tables_.mmaRegs.find(key); known != tables_.mmaRegs.end()) {
    emitAll(known->second);
    return;
  }

  auto floats = [&](uint32_t id, const char* role, int64_t rm, int64_t rn) -> std::optional<std::vector<int64_t>> {
    std::vector<int64_t> out;
    for (int j = 0; j < 4; ++j) {
      std::optional<int64_t> m = uniformSlot(
          id, role,
          [&](int64_t w, int lane) {
            RowCol a = layout::mmaAtomC(lane, j);
            return RowCol{rowOff(w, rm) + a.row, colOff(w, rn) + a.col};
          },
          cRegs[j], loc);
      if (!m) return std::nullopt;
      out.push_back(*m);
    }
    return out;
  };
  auto copyTo = [](auto& slots, const std::vector<int64_t>& from) { std::copy(from.begin(), from.end(), slots.begin()); };

  std::vector<LayoutTables::MmaRegs> all;
  for (int64_t kb = 0; kb < kBlocks; ++kb) {
    // B's words depend on the column of atoms only: worked out once per K block, when
    // first needed (so the first problem reported stays the first one met).
    std::vector<std::optional<std::vector<int64_t>>> bWords(static_cast<size_t>(s.repeatN));
    for (int64_t rm = 0; rm < s.repeatM; ++rm) {
      std::optional<std::vector<int64_t>> a = mmaWords(
          op.a, "A operand", 4,
          [&](int64_t w, int lane, int slot) {
            RowCol e = layout::mmaAtomA(lane, slot);
            return RowCol{rowOff(w, rm) + e.row, kb * 16 + e.col};
          },
          aRegs, loc);
      if (!a) return;
      for (int64_t rn = 0; rn < s.repeatN; ++rn) {
        std::optional<std::vector<int64_t>>& b = bWords[static_cast<size_t>(rn)];
        if (!b) {
          b = mmaWords(
              op.b, "B operand", 2,
              [&](int64_t w, int lane, int slot) {
                RowCol e = layout::mmaAtomB(lane, slot);
                return RowCol{kb * 16 + e.row, colOff(w, rn) + e.col};
              },
              bRegs, loc);
          if (!b) return;
        }
        std::optional<std::vector<int64_t>> d = floats(op.d, "accumulator", rm, rn);
        if (!d) return;
        // The first K block adds to c (acc = mma(acc, ...) reads and writes the same
        // registers); later ones accumulate into d.
        const bool cFromD = !(kb == 0 && op.c != op.d);
        std::optional<std::vector<int64_t>> c = cFromD ? d : floats(op.c, "accumulator", rm, rn);
        if (!c) return;
        LayoutTables::MmaRegs& r = all.emplace_back();
        copyTo(r.d, *d);
        copyTo(r.a, *a);
        copyTo(r.b, *b);
        copyTo(r.c, *c);
        r.cFromD = cFromD;
      }
    }
  }
  emitAll(all);
  tables_.mmaRegs.emplace(key, std::move(all));
}

}  // namespace tyl::lower
