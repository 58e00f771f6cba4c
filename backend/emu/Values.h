// Thread IR values as the emulator holds them, and CUDA's arithmetic on them.
//
// Every value is a 64-bit pattern in one canonical form per type, so that comparing,
// widening and storing need no per-type fixups:
//   Pred: 0 or 1;  I32: sign-extended;  U32: zero-extended;  I64: as is;
//   F32: the float's bits;  F16, BF16: their 16 bits.
// Operations work on all 32 lanes of a warp at once (`Lanes`).
#pragma once

#include <array>
#include <cstdint>

#include "ir/thread/ThreadIR.h"

namespace tyl::emu {

inline constexpr int kWarpSize = 32;
using Lanes = std::array<uint64_t, kWarpSize>;
using Mask = uint32_t;  // bit l: lane l
inline constexpr Mask kFullMask = 0xffffffffu;

inline bool laneOn(Mask mask, int lane) { return (mask >> lane) & 1u; }

// The canonical form of the low bits of `bits` as a value of `type` (integers wrap).
uint64_t canonical(tir::Type type, uint64_t bits);

float toFloat(tir::Type type, uint64_t bits);     // F32, F16, BF16
uint64_t fromFloat(tir::Type type, float value);  // rounds to nearest even
double toDouble(tir::Type type, uint64_t bits);   // any type, exactly
// Floats round to nearest even (via f32 for the 16-bit formats); integers truncate toward
// zero and saturate, like cvt.rzi.
uint64_t fromDouble(tir::Type type, double value);

// Converts one value between types with CUDA's conversion rules.
uint64_t convert(tir::Type to, tir::Type from, uint64_t bits);
Lanes convert(tir::Type to, tir::Type from, const Lanes& a);

// `a op b` with operands of type `type` (for shifts, `b` has `bType`). Integer division by
// zero yields 0 and sets the lane's bit in `*divByZero` when it is in `active`.
Lanes binaryOp(tir::BinOp op, tir::Type type, tir::Type bType, const Lanes& a, const Lanes& b, Mask active,
               Mask* divByZero);
Lanes unaryOp(tir::UnOp op, tir::Type type, const Lanes& a);
// A loop variable's next value, `var + step` for a positive step, saturated at the type's
// largest value: a loop whose end lies near it ends instead of wrapping around.
Lanes loopNext(tir::Type type, const Lanes& var, const Lanes& step);

}  // namespace tyl::emu
