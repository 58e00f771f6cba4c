// Host memory and arguments handed to an emulated kernel launch, and helpers to fill and
// inspect buffers by element.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/thread/ThreadIR.h"

namespace tyl::emu {

// The memory one pointer argument points into (the emulator's cudaMalloc). Its base counts
// as 256-byte aligned, as cudaMalloc guarantees.
struct Buffer {
  std::vector<std::byte> bytes;
  // Host-provided contents count as written. An output buffer made with `false` makes the
  // kernel reading a byte before writing it a finding.
  bool initialized = true;
};

// One kernel argument: a scalar, or a pointer `offsetBytes` into buffers[buffer].
struct Arg {
  enum class Kind : uint8_t { Int, Float, Pointer };
  Kind kind = Kind::Int;
  int64_t i = 0;
  double f = 0;
  int buffer = -1;
  int64_t offsetBytes = 0;

  static Arg integer(int64_t value) { return Arg{Kind::Int, value}; }
  static Arg real(double value) { return Arg{Kind::Float, 0, value}; }
  static Arg pointer(int buffer, int64_t offsetBytes = 0) {
    return Arg{Kind::Pointer, 0, 0, buffer, offsetBytes};
  }
};

// `count` zero elements of `elem`.
Buffer makeBuffer(tir::Type elem, int64_t count, bool initialized = true);
int64_t elementCount(const Buffer& buffer, tir::Type elem);

// Element access, converting through double (floats round to nearest even; integers
// truncate toward zero and saturate). Indices are checked (std::out_of_range).
double getElement(const Buffer& buffer, tir::Type elem, int64_t index);
void setElement(Buffer& buffer, tir::Type elem, int64_t index, double value);

// Deterministic pseudo-random contents, the same on every platform for a given seed: floats
// uniform in [-1, 1) rounded to `elem`, integers uniform in [-8, 8] (U32: [0, 16]).
void fillRandom(Buffer& buffer, tir::Type elem, uint64_t seed);

}  // namespace tyl::emu
