// Affine views of thread IR integer expressions, used to prove facts about addresses
// that depend on run-time values: `block_id.x * 1024 + 4 * tid` is 4 * tid plus a
// multiple of 1024, whatever the block.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "ir/thread/ThreadIR.h"

namespace tyl::lower {

// What is known of an atom's divisibility: every value it takes is a multiple of the result
// (1 when nothing is known; 0 when it is always 0). A loop variable of `range(0, K, 32)` is a
// multiple of 32, whatever its form.
using AtomDivisor = std::function<int64_t(const tir::Expr& atom)>;

// m, where coeff * m stays inside 64 bits; else 1 (a term coeff * a, with a a multiple of m, is
// then known to be a multiple of coeff alone).
int64_t fittingMultiple(int64_t coeff, int64_t m);

// constant + sum of coeff * atom, where an atom is any non-affine subexpression.
struct AffineForm {
  int64_t constant = 0;
  std::vector<std::pair<tir::ExprRef, int64_t>> terms;

  // The largest d such that every value of the run-time part is a multiple of d (0 when
  // there is no run-time part), from the coefficients and, when given, what `atom` knows.
  int64_t runtimeDivisor(const AtomDivisor& atom = nullptr) const;
  // The same of the whole value, constant included.
  int64_t valueDivisor(const AtomDivisor& atom = nullptr) const;
  bool isConstant() const { return terms.empty(); }
};

AffineForm linearize(const tir::ExprRef& e);

// Values for the special registers of one concrete thread, for evaluating per-thread
// expressions at compile time.
struct ThreadPoint {
  int64_t tid[3] = {0, 0, 0};
  int64_t blockDim[3] = {1, 1, 1};
};

// Evaluates an expression built only from constants and thread ids, as the IR computes it;
// nullopt otherwise, and where the IR's value is not the exact one (an integer result outside
// its type, which the IR wraps, or a shift by the type's width or more).
std::optional<int64_t> evalAtThread(const tir::ExprRef& e, const ThreadPoint& p);

// Every thread of a block of the given shape, x fastest.
std::vector<ThreadPoint> threadPoints(const std::array<int64_t, 3>& block);

int64_t gcd64(int64_t a, int64_t b);

}  // namespace tyl::lower
