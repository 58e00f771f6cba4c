// Integer arithmetic for layout computations. Every operation detects overflow and
// reports it as a layout error instead of wrapping: a layout with huge extents or
// strides must produce a diagnostic, never a silently wrong address.
#pragma once

#include <cstdint>

#include "ir/layout/Error.h"

namespace tyl::layout {

inline int64_t checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw OverflowError("integer overflow in layout arithmetic");
  return r;
}

inline int64_t checkedSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) throw OverflowError("integer overflow in layout arithmetic");
  return r;
}

inline int64_t checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw OverflowError("integer overflow in layout arithmetic");
  return r;
}

// Floor division and modulo (Python semantics), so negative coordinates behave like
// the reference evaluator. Division by zero is a layout error.
inline int64_t floorDiv(int64_t a, int64_t b) {
  if (b == 0) throw Error("division by zero in layout arithmetic");
  if (a == INT64_MIN && b == -1) throw OverflowError("integer overflow in layout arithmetic");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

inline int64_t floorMod(int64_t a, int64_t b) {
  if (b == 0) throw Error("division by zero in layout arithmetic");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace tyl::layout
