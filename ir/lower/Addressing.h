// Element offsets of tensor coordinates in memory, as thread IR expressions.
#pragma once

#include <vector>

#include "ir/tile/TileIR.h"

namespace tyl::lower {

// The element offset of `coord` (one entry per tensor dimension) in a global or shared
// tensor: the strides of a global tensor, or its static layout (swizzle included).
// Global offsets are 64-bit; shared ones 32-bit.
tir::ExprRef elementOffset(const tile::Tensor& t, const std::vector<tir::ExprRef>& coord);

// The coordinate in the tensor of view coordinate `c` (one entry per view dimension).
std::vector<tir::ExprRef> tensorCoord(const tile::View& v, const std::vector<tir::ExprRef>& c);

// Whether `coord` lies inside a global tensor (only the bounds that can fail are
// tested); null when it always does, and for shared and register tensors.
tir::ExprRef inBounds(const tile::Tensor& t, const std::vector<tir::ExprRef>& coord);

// x / d and x % d for non-negative x, with shifts and masks for powers of two.
tir::ExprRef divConst(tir::ExprRef x, int64_t d);
tir::ExprRef modConst(tir::ExprRef x, int64_t d);

}  // namespace tyl::lower
