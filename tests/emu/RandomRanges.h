// Random integer types and value ranges for the property tests of value ranges
// (value_range_test.cpp, kernel_ranges_test.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>

#include "ir/thread/ValueRange.h"

namespace tyl::test {

inline tir::Type randomIntType(std::mt19937_64& rng) {
  const tir::Type types[] = {tir::Type::I32, tir::Type::I64, tir::Type::U32};
  return types[rng() % 3];
}

// A range inside `t`'s: sometimes all of it, sometimes small, around zero, or near either end
// of the type (where sums wrap, and the smallest value divided by -1 does).
inline tir::Range randomRange(tir::Type t, std::mt19937_64& rng) {
  const tir::Range all = tir::typeRange(t);
  switch (rng() % 5) {
    case 0: return all;
    case 1: {
      const int64_t lo = std::uniform_int_distribution<int64_t>(0, 1000)(rng);
      return tir::Range{lo, lo + static_cast<int64_t>(rng() % 5000)};
    }
    case 2: {
      const int64_t lo = std::uniform_int_distribution<int64_t>(std::max<int64_t>(all.lo, -100000), 0)(rng);
      return tir::Range{lo, std::min<int64_t>(all.hi, lo + static_cast<int64_t>(rng() % 200000))};
    }
    case 3: {
      const int64_t hi = all.hi - static_cast<int64_t>(rng() % 64);
      return tir::Range{hi - static_cast<int64_t>(rng() % 4096), hi};
    }
    default: {
      const int64_t lo = all.lo + static_cast<int64_t>(rng() % 64);
      return tir::Range{lo, lo + static_cast<int64_t>(rng() % 100000)};
    }
  }
}

}  // namespace tyl::test
