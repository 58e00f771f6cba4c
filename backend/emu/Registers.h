// A warp's registers: every variable and register array of the kernel, for all 32 lanes.
//
// Storage is one 64-bit slot per lane per variable, per 32/64-bit array element, and per
// word of a 16-bit array (two elements packed, element 2w in the low half), which is how
// ldmatrix and mma.sync see them. Slots hold canonical values (Values.h).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "backend/emu/Values.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::emu {

// Where each variable and array starts among a warp's slots, and among its elements (one
// each, for knowing which have been written); computed once per kernel.
struct RegisterLayout {
  explicit RegisterLayout(const tir::Kernel& kernel);

  std::vector<uint32_t> arrayBase;  // variables occupy slots [0, vars)
  uint32_t slots = 0;
  std::vector<uint32_t> arrayElementBase;  // variables are elements [0, vars)
  uint32_t elements = 0;
};

class RegisterFile {
 public:
  RegisterFile(const tir::Kernel& kernel, const RegisterLayout& layout);

  tir::Type type(const tir::Reg& reg) const;
  // Values of a variable or array element for all lanes.
  Lanes read(const tir::Reg& reg) const;
  // Writes the lanes of `mask`; `values` must be canonical for the register's type. Written
  // lanes count as defined.
  void write(const tir::Reg& reg, const Lanes& values, Mask mask);
  // The lanes where the register has been written (with a value not computed from unwritten
  // registers); `words` for the 32-bit words of instruction operands (both halves of a
  // 16-bit pair).
  Mask defined(const tir::Reg& reg) const;
  Mask definedWord(const tir::Reg& reg) const;
  // Marks the lanes of `lanes` undefined again: their value came from unwritten registers,
  // the first of them `origin` (for the diagnostics).
  void undefine(const tir::Reg& reg, Mask lanes, const std::optional<tir::Reg>& origin = std::nullopt);
  void undefineWord(const tir::Reg& reg, Mask lanes);
  // The register never written that the undefined lanes of `reg` were computed from: `reg`
  // itself when it was simply never written.
  tir::Reg origin(const tir::Reg& reg) const;
  uint64_t readLane(const tir::Reg& reg, int lane) const;
  void writeLane(const tir::Reg& reg, int lane, uint64_t value);

  // The 32-bit word an instruction operand names (Reg.index is a word index for 16-bit
  // arrays): a packed pair, or a 32-bit variable or element.
  uint32_t readWord(const tir::Reg& reg, int lane) const;
  void writeWord(const tir::Reg& reg, int lane, uint32_t word);

 private:
  // The slot holding `reg`, and for 16-bit arrays the bit offset of the element in it.
  uint32_t slot(const tir::Reg& reg, int* shift) const;
  uint32_t wordSlot(const tir::Reg& reg) const;
  uint32_t element(const tir::Reg& reg) const;  // index into defined_
  // The elements of an instruction operand word: [first, first + count) of defined_.
  std::pair<uint32_t, uint32_t> wordElements(const tir::Reg& reg) const;
  void store(const tir::Reg& reg, int lane, uint64_t value);  // the value only

  const tir::Kernel& kernel_;
  const RegisterLayout& layout_;
  std::vector<uint64_t> values_;  // [slot * 32 + lane]
  std::vector<Mask> defined_;     // [element]: lanes that have written it
  std::vector<std::optional<tir::Reg>> origin_;  // [element]: see origin()
};

}  // namespace tyl::emu
