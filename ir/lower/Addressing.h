// Element offsets of tensor coordinates in memory, as thread IR expressions.
#pragma once

#include <functional>
#include <vector>

#include "ir/lower/Affine.h"
#include "ir/thread/ValueRange.h"
#include "ir/tile/TileIR.h"

namespace tyl::lower {

// The element offset of `coord` (one entry per tensor dimension) in a global or shared
// tensor: the strides of a global tensor, or its static layout (swizzle included).
// Global offsets are 64-bit; shared ones 32-bit. `divisors` says what run-time atoms are known
// to be multiples of, so that a loop variable stepping by whole periods of a swizzle moves
// offsets without being swizzled.
tir::ExprRef elementOffset(const tile::Tensor& t, const std::vector<tir::ExprRef>& coord,
                           const AtomDivisor& divisors = nullptr);

// The coordinate in the tensor of view coordinate `c` (one entry per view dimension).
std::vector<tir::ExprRef> tensorCoord(const tile::View& v, const std::vector<tir::ExprRef>& c);

// Whether `coord` lies inside a global tensor (only the bounds that can fail are
// tested); null when it always does, and for shared and register tensors.
// `atoms` tells what is known of the values of variables, parameters and special registers:
// terms known to be >= 0 need no test of their lower bound (thread and block ids never do),
// and a coordinate that fits in 32 bits is tested with one 32-bit comparison.
tir::ExprRef inBounds(const tile::Tensor& t, const std::vector<tir::ExprRef>& coord,
                      const tir::AtomRange& atoms = {});

// Whether `test`, a conjunction of bounds tests made by inBounds, implies `cond`, of the
// form a < cdiv(E, s) (s a positive constant; `definition` gives the expression a scalar
// variable set once holds, to see through `let steps = cdiv(K, BK)`): true when a conjunct
// tests x < E for x = s * a + r with r >= 0, all computed without wrapping. A pipeline's
// producer is enabled by k < cdiv(K, BK) and reads column k * BK + r of a tensor K wide;
// its bounds test then makes the enable redundant.
bool boundsImply(const tir::ExprRef& test, const tir::ExprRef& cond, const tir::AtomRange& atoms,
                 const std::function<tir::ExprRef(const tir::Expr&)>& definition);

// Whether moving coordinate `d` by multiples of `step` shifts every offset of the layout
// by the same amount (the move then needs no swizzle or decomposition).
bool translationInvariant(const layout::Layout& l, const layout::Shape& shape, int d, int64_t step);
// How far such a step moves every offset (also where it leaves the tensor).
int64_t translationShift(const layout::Layout& l, const layout::Shape& shape, int d, int64_t step);

// x / d and x % d for non-negative x, with shifts and masks for powers of two.
tir::ExprRef divConst(tir::ExprRef x, int64_t d);
tir::ExprRef modConst(tir::ExprRef x, int64_t d);

}  // namespace tyl::lower
