// The random source of the layout algebra's property tests: seeded, so every failure
// reproduces. Each test file builds its own kinds of layouts from these pieces.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ir/layout/Layout.h"

namespace tyl::layout::test {

struct RandomSource {
  std::mt19937_64 rng;
  explicit RandomSource(uint64_t seed) : rng(seed) {}

  // Uniform in [lo, hi].
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

  // A uniformly chosen divisor of n (n >= 1).
  int64_t divisor(int64_t n) {
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= n; ++d)
      if (n % d == 0) divisors.push_back(d);
    return divisors[static_cast<size_t>(pick(0, static_cast<int64_t>(divisors.size()) - 1))];
  }

  // A swizzle with a field of 0..3 bits, an atom of len..4 bits and 0..maxPerElement
  // per-element bits (the inner form three times in four).
  Swizzle swizzle(int maxPerElement) {
    int len = static_cast<int>(pick(0, 3));
    int atom = static_cast<int>(pick(len, 4));
    int perElement = static_cast<int>(pick(0, maxPerElement));
    return Swizzle::make(perElement, len, atom, pick(0, 3) != 0);
  }
};

}  // namespace tyl::layout::test
