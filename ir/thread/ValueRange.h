// The values an integer thread IR expression can take: an interval, from the intervals of
// its atoms (variables, parameters, special registers). Arithmetic in the IR wraps, so an
// operation whose exact result may leave its type's range may give any value of the type.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>

#include "ir/thread/ThreadIR.h"

namespace tyl::tir {

// Every value of an integer type (Pred: 0 and 1).
Range typeRange(Type t);

// The exact value of an integer operation on a and b (comparisons, && and || give 1 or 0), or
// nullopt where it has none in 64 bits: a division by 0, a result past 64 bits (also of the
// smallest value divided by -1, or of a left shift), a left shift of a negative value, a shift
// by an amount outside 0..62 (0..63 for >>). `why`, when given, then says which.
std::optional<int64_t> exactBinary(BinOp op, int64_t a, int64_t b, const char** why = nullptr);

// What is known of an atom (VarRef, ParamRef, SpecialReg, Elem): nullopt when nothing is,
// and the atom may hold any value of its type.
using AtomRange = std::function<std::optional<Range>(const Expr& atom)>;

// The values of a special register in a launch of `block` threads per block and at most
// `grid` blocks along each axis (at least 1 each).
Range specialRange(Special s, const std::array<int64_t, 3>& block, const std::array<int64_t, 3>& grid);

// The most blocks a launch has along `axis` (0..2) for a grid expression (null: the grid is
// not known): its largest value, and never more than CUDA allows (launchers refuse more).
int64_t gridLimit(const ExprRef& grid, int axis, const AtomRange& atom);

// The values `e` (of an integer or predicate type) can take.
Range valueRange(const ExprRef& e, const AtomRange& atom);

// Whether the one sum, difference, product or shift by a constant `e` yields the exact value:
// its operands' ranges keep the result inside its type (false for other operations).
bool exactOperation(const Expr& e, const AtomRange& atom);

// Whether every sum, difference, product, shift and integer conversion in `e` yields the
// exact value (none can wrap), so that `e` equals its affine form (lower/Affine.h) over
// the integers. Other operations are atoms and are not looked into.
bool exactArithmetic(const ExprRef& e, const AtomRange& atom);

}  // namespace tyl::tir
