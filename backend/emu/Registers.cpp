#include "backend/emu/Registers.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/InternalError.h"

namespace tyl::emu {
namespace {

bool isPacked(tir::Type t) { return t == tir::Type::F16 || t == tir::Type::BF16; }

int64_t slotCount(const tir::Array& a) { return isPacked(a.elem) ? (a.count + 1) / 2 : a.count; }

}  // namespace

RegisterLayout::RegisterLayout(const tir::Kernel& kernel) {
  slots = static_cast<uint32_t>(kernel.vars.size());
  for (const tir::Array& a : kernel.arrays) {
    if (a.count < 0) TYL_UNREACHABLE("{}", "emulator: register array '" + a.name + "' has a negative size");
    arrayBase.push_back(slots);
    slots += static_cast<uint32_t>(slotCount(a));
  }
  elements = static_cast<uint32_t>(kernel.vars.size());
  for (const tir::Array& a : kernel.arrays) {
    arrayElementBase.push_back(elements);
    elements += static_cast<uint32_t>(a.count);
  }
}

RegisterFile::RegisterFile(const tir::Kernel& kernel, const RegisterLayout& layout)
    : kernel_(kernel),
      layout_(layout),
      values_(static_cast<size_t>(layout.slots) * kWarpSize),
      defined_(layout.elements, 0),
      origin_(layout.elements) {
  // A GPU's registers hold whatever was there before; starting from a fixed non-zero pattern
  // (about 1.5e16 as a float) rather than zero makes a value used before it is written show
  // in the results instead of passing for a zero.
  constexpr uint64_t kGarbage = 0x5a5a5a5a5a5a5a5aull;
  auto fill = [&](uint32_t slot, uint64_t value) {
    std::fill_n(values_.begin() + static_cast<ptrdiff_t>(slot) * kWarpSize, kWarpSize, value);
  };
  for (uint32_t v = 0; v < kernel.vars.size(); ++v) fill(v, canonical(kernel.vars[v].type, kGarbage));
  for (size_t a = 0; a < kernel.arrays.size(); ++a) {
    const tir::Array& arr = kernel.arrays[a];
    uint64_t value = canonical(arr.elem, kGarbage);
    if (isPacked(arr.elem)) value = (value & 0xffff) * 0x10001;
    for (int64_t i = 0; i < slotCount(arr); ++i) fill(layout.arrayBase[a] + static_cast<uint32_t>(i), value);
  }
}

tir::Type RegisterFile::type(const tir::Reg& reg) const {
  if (reg.isVar) {
    if (reg.id >= kernel_.vars.size()) TYL_UNREACHABLE("{}", "emulator: variable id out of range");
    return kernel_.vars[reg.id].type;
  }
  if (reg.id >= kernel_.arrays.size()) TYL_UNREACHABLE("{}", "emulator: register array id out of range");
  return kernel_.arrays[reg.id].elem;
}

uint32_t RegisterFile::slot(const tir::Reg& reg, int* shift) const {
  *shift = 0;
  if (reg.isVar) {
    if (reg.id >= kernel_.vars.size()) TYL_UNREACHABLE("{}", "emulator: variable id out of range");
    return reg.id;
  }
  if (reg.id >= kernel_.arrays.size()) TYL_UNREACHABLE("{}", "emulator: register array id out of range");
  const tir::Array& a = kernel_.arrays[reg.id];
  if (reg.index < 0 || reg.index >= a.count)
    TYL_UNREACHABLE("{}", 
        fmt::format("emulator: element {} of register array '{}' (size {})", reg.index, a.name, a.count));
  if (!isPacked(a.elem)) return layout_.arrayBase[reg.id] + static_cast<uint32_t>(reg.index);
  *shift = static_cast<int>(reg.index % 2) * 16;
  return layout_.arrayBase[reg.id] + static_cast<uint32_t>(reg.index / 2);
}

uint64_t RegisterFile::readLane(const tir::Reg& reg, int lane) const {
  int shift;
  uint32_t s = slot(reg, &shift);
  uint64_t v = values_[s * kWarpSize + lane];
  if (!reg.isVar && isPacked(type(reg))) v = (v >> shift) & 0xffff;
  return v;
}

uint32_t RegisterFile::element(const tir::Reg& reg) const {
  int shift;
  (void)slot(reg, &shift);  // range checks
  return reg.isVar ? reg.id : layout_.arrayElementBase[reg.id] + static_cast<uint32_t>(reg.index);
}

Mask RegisterFile::defined(const tir::Reg& reg) const { return defined_[element(reg)]; }

void RegisterFile::undefine(const tir::Reg& reg, Mask lanes, const std::optional<tir::Reg>& origin) {
  if (!lanes) return;
  defined_[element(reg)] &= ~lanes;
  origin_[element(reg)] = origin;
}

tir::Reg RegisterFile::origin(const tir::Reg& reg) const { return origin_[element(reg)].value_or(reg); }

std::pair<uint32_t, uint32_t> RegisterFile::wordElements(const tir::Reg& reg) const {
  (void)wordSlot(reg);  // range checks
  if (reg.isVar || tir::typeBytes(type(reg)) != 2) return {element(reg), 1};
  const uint32_t first = layout_.arrayElementBase[reg.id] + static_cast<uint32_t>(2 * reg.index);
  return {first, 2 * reg.index + 1 < kernel_.arrays[reg.id].count ? 2u : 1u};
}

Mask RegisterFile::definedWord(const tir::Reg& reg) const {
  auto [first, count] = wordElements(reg);
  Mask m = kFullMask;
  for (uint32_t e = first; e < first + count; ++e) m &= defined_[e];
  return m;
}

void RegisterFile::undefineWord(const tir::Reg& reg, Mask lanes) {
  auto [first, count] = wordElements(reg);
  for (uint32_t e = first; e < first + count; ++e) {
    defined_[e] &= ~lanes;
    if (lanes) origin_[e].reset();
  }
}

void RegisterFile::writeLane(const tir::Reg& reg, int lane, uint64_t value) {
  defined_[element(reg)] |= Mask{1} << lane;
  store(reg, lane, value);
}

void RegisterFile::store(const tir::Reg& reg, int lane, uint64_t value) {
  int shift;
  uint32_t s = slot(reg, &shift);
  uint64_t& v = values_[s * kWarpSize + lane];
  if (!reg.isVar && isPacked(type(reg)))
    v = (v & ~(uint64_t{0xffff} << shift)) | ((value & 0xffff) << shift);
  else
    v = value;
}

Lanes RegisterFile::read(const tir::Reg& reg) const {
  int shift;
  uint32_t s = slot(reg, &shift);
  Lanes r;
  const uint64_t* src = &values_[s * kWarpSize];
  if (!reg.isVar && isPacked(type(reg))) {
    for (int l = 0; l < kWarpSize; ++l) r[l] = (src[l] >> shift) & 0xffff;
  } else {
    for (int l = 0; l < kWarpSize; ++l) r[l] = src[l];
  }
  return r;
}

void RegisterFile::write(const tir::Reg& reg, const Lanes& values, Mask mask) {
  defined_[element(reg)] |= mask;
  for (int l = 0; l < kWarpSize; ++l)
    if (laneOn(mask, l)) store(reg, l, values[l]);
}

uint32_t RegisterFile::wordSlot(const tir::Reg& reg) const {
  tir::Type t = type(reg);
  if (tir::typeBytes(t) == 2 && !reg.isVar) {
    const tir::Array& a = kernel_.arrays[reg.id];
    if (reg.index < 0 || reg.index >= slotCount(a))
      TYL_UNREACHABLE("{}", fmt::format("emulator: word {} of register array '{}' ({} words)", reg.index,
                                         a.name, slotCount(a)));
    return layout_.arrayBase[reg.id] + static_cast<uint32_t>(reg.index);
  }
  if (tir::typeBytes(t) != 4)
    TYL_UNREACHABLE("{}", std::string("emulator: a 32-bit instruction operand of type ") + tir::typeName(t));
  int shift;
  return slot(reg, &shift);
}

uint32_t RegisterFile::readWord(const tir::Reg& reg, int lane) const {
  return static_cast<uint32_t>(values_[wordSlot(reg) * kWarpSize + lane]);
}

void RegisterFile::writeWord(const tir::Reg& reg, int lane, uint32_t word) {
  tir::Type t = type(reg);
  auto [first, count] = wordElements(reg);
  for (uint32_t e = first; e < first + count; ++e) defined_[e] |= Mask{1} << lane;
  uint64_t value = tir::typeBytes(t) == 2 ? word : canonical(t, word);
  values_[wordSlot(reg) * kWarpSize + lane] = value;
}

}  // namespace tyl::emu
