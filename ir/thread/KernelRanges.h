// What the integer values of a finished kernel can be, and so which of its operations plain
// C++ computes as the IR defines them.
//
// The IR's integer arithmetic wraps, its shifts clamp their amount, its divisions are total
// and a loop's step saturates (the emulator's semantics, and mostly the hardware's). In C++ a signed overflow, a shift
// past the width and a division by zero or of the smallest value by -1 are undefined, and
// the optimizer may assume they never happen. The CUDA backend prints an operation as plain
// C++ where the ranges of its operands prove none of that can occur (nearly always: thread
// and block ids, tile offsets, loop counters), and through tylo:: helpers that compute the
// IR's result otherwise.
#pragma once

#include <optional>
#include <vector>

#include "ir/thread/ThreadIR.h"
#include "ir/thread/ValueRange.h"

namespace tyl::tir {

class KernelRanges {
 public:
  // Ranges of the variables from their definitions (one assignment: its value's range; a
  // loop variable: its loop's bounds; otherwise what Var::known says), of thread and block
  // ids from the launch, and of parameters: anything.
  explicit KernelRanges(const Kernel& k);
  // atoms() refers to this object.
  KernelRanges(const KernelRanges&) = delete;
  KernelRanges& operator=(const KernelRanges&) = delete;

  const AtomRange& atoms() const { return atoms_; }

  // Whether C++ computes this Binary or Unary integer operation exactly as the IR does:
  // a sum, difference, product or negation of signed integers that cannot overflow; a shift
  // by an amount within the width (of a value that stays non-negative, for a signed left
  // shift); a division or remainder whose divisor cannot be 0, nor -1 with the smallest
  // dividend. Every other operation is the same in both.
  bool plainInCpp(const Expr& e) const;

  // Whether the loop's `var + step` may pass the type's largest value (the end lies within
  // a step of it), where the IR's step saturates and C++'s `+=` would overflow.
  bool stepMayOverflow(const For& loop) const;

 private:
  void block(const Block& b);

  const Kernel& k_;
  std::array<int64_t, 3> grid_{};
  std::vector<int> writes_;                 // per variable: statements that write it
  std::vector<int> reads_;                  // per variable: references in expressions
  std::vector<std::optional<Range>> vars_;  // per variable, once known
  AtomRange atoms_;
};

}  // namespace tyl::tir
