// The kernels of tests/emu/kernels/reduce.tyl, their inputs and the check of their outputs
// against a float64 reference, shared by the emulator's test (tests/emu/reduce_test.cpp) and the
// host run of the generated CUDA (tests/hostrun).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/emu/Half.h"
#include "backend/emu/HostData.h"

namespace tyl::test {

// reduce_c(X, Rows, Cols, All, Y): X random in [-1, 1).
inline std::vector<emu::Buffer> reduceCInputs() {
  std::vector<emu::Buffer> b = {emu::makeBuffer(tir::Type::F32, 16 * 8), emu::makeBuffer(tir::Type::F32, 3 * 16),
                                emu::makeBuffer(tir::Type::F32, 8), emu::makeBuffer(tir::Type::F32, 1),
                                emu::makeBuffer(tir::Type::F32, 16 * 8)};
  emu::fillRandom(b[0], tir::Type::F32, 7);
  return b;
}

// What is wrong with reduce_c's outputs, or "": sums within f32 rounding of the float64 ones,
// maxima, minima and differences exact.
inline std::string reduceCError(const std::vector<emu::Buffer>& b) {
  auto x = [&](int i, int j) { return emu::getElement(b[0], tir::Type::F32, i * 8 + j); };
  auto near = [](double got, double want, double scale) { return std::fabs(got - want) <= 1e-6 * scale; };
  double total = 0, size = 0;
  for (int i = 0; i < 16; ++i) {
    double sum = 0, mag = 0, hi = -1e30, lo = 1e30;
    for (int j = 0; j < 8; ++j) {
      sum += x(i, j), mag += std::fabs(x(i, j));
      hi = std::max(hi, x(i, j)), lo = std::min(lo, x(i, j));
    }
    total += sum, size += mag;
    const double rows[3] = {emu::getElement(b[1], tir::Type::F32, i), emu::getElement(b[1], tir::Type::F32, 16 + i),
                            emu::getElement(b[1], tir::Type::F32, 32 + i)};
    if (!near(rows[0], sum, mag + 1)) return fmt::format("row sum {}: {} instead of {}", i, rows[0], sum);
    if (rows[1] != hi) return fmt::format("row max {}: {} instead of {}", i, rows[1], hi);
    if (rows[2] != lo) return fmt::format("row min {}: {} instead of {}", i, rows[2], lo);
    for (int j = 0; j < 8; ++j)
      if (double y = emu::getElement(b[4], tir::Type::F32, i * 8 + j); y != static_cast<float>(x(i, j) - hi))
        return fmt::format("x - row max at ({}, {}): {} instead of {}", i, j, y, x(i, j) - hi);
  }
  for (int j = 0; j < 8; ++j) {
    double sum = 0, mag = 0;
    for (int i = 0; i < 16; ++i) sum += x(i, j), mag += std::fabs(x(i, j));
    if (double got = emu::getElement(b[2], tir::Type::F32, j); !near(got, sum, mag + 1))
      return fmt::format("column sum {}: {} instead of {}", j, got, sum);
  }
  if (double got = emu::getElement(b[3], tir::Type::F32, 0); !near(got, total, size + 1))
    return fmt::format("total: {} instead of {}", got, total);
  return "";
}

// softmax_rows(X, Y) and softmax_tail(n, X, Y): 4 rows of n columns, X random in [-1, 1) times 8
// for a spread of exponents.
inline std::vector<emu::Buffer> softmaxInputs(int n) {
  std::vector<emu::Buffer> b = {emu::makeBuffer(tir::Type::F32, 4 * n), emu::makeBuffer(tir::Type::F32, 4 * n)};
  emu::fillRandom(b[0], tir::Type::F32, 11);
  for (int64_t i = 0; i < 4 * n; ++i) emu::setElement(b[0], tir::Type::F32, i, 8 * emu::getElement(b[0], tir::Type::F32, i));
  return b;
}

// Each element within 4e-6 relative of the float64 softmax of its row (exp within 2 ulp, a sum
// of at most 128 terms and a division).
inline std::string softmaxError(const std::vector<emu::Buffer>& b, int n) {
  auto x = [&](int i, int j) { return emu::getElement(b[0], tir::Type::F32, i * n + j); };
  for (int i = 0; i < 4; ++i) {
    double hi = -1e30, sum = 0;
    for (int j = 0; j < n; ++j) hi = std::max(hi, x(i, j));
    for (int j = 0; j < n; ++j) sum += std::exp(x(i, j) - hi);
    for (int j = 0; j < n; ++j) {
      const double want = std::exp(x(i, j) - hi) / sum;
      const double got = emu::getElement(b[1], tir::Type::F32, i * n + j);
      if (std::fabs(got - want) > 4e-6 * want) return fmt::format("softmax at ({}, {}): {} instead of {}", i, j, got, want);
    }
  }
  return "";
}

// reduce_warps(X, Sums, Y): X random in [-1, 1).
inline std::vector<emu::Buffer> reduceWarpsInputs() {
  std::vector<emu::Buffer> b = {emu::makeBuffer(tir::Type::F32, 8 * 256), emu::makeBuffer(tir::Type::F32, 8),
                                emu::makeBuffer(tir::Type::F32, 8 * 256)};
  emu::fillRandom(b[0], tir::Type::F32, 23);
  return b;
}

// Row sums within f32 rounding of float64 (a relative 1e-6 of the sum of magnitudes), and
// x - row max exact.
inline std::string reduceWarpsError(const std::vector<emu::Buffer>& b) {
  for (int i = 0; i < 8; ++i) {
    double sum = 0, mag = 0, hi = -1e30;
    for (int j = 0; j < 256; ++j) {
      const double x = emu::getElement(b[0], tir::Type::F32, i * 256 + j);
      sum += x, mag += std::fabs(x), hi = std::max(hi, x);
    }
    if (double got = emu::getElement(b[1], tir::Type::F32, i); std::fabs(got - sum) > 1e-6 * mag)
      return fmt::format("row sum {}: {} instead of {}", i, got, sum);
    for (int j = 0; j < 256; ++j) {
      const double x = emu::getElement(b[0], tir::Type::F32, i * 256 + j);
      if (double y = emu::getElement(b[2], tir::Type::F32, i * 256 + j); y != static_cast<float>(x - hi))
        return fmt::format("x - row max at ({}, {}): {} instead of {}", i, j, y, x - hi);
    }
  }
  return "";
}

// accumulator_as_a(A, B0, B1, O): A, B0 and B1 f16, random in [-1, 1).
inline std::vector<emu::Buffer> accumulatorAsAInputs() {
  std::vector<emu::Buffer> b = {emu::makeBuffer(tir::Type::F16, 16 * 16), emu::makeBuffer(tir::Type::F16, 16 * 16),
                                emu::makeBuffer(tir::Type::F16, 16 * 8), emu::makeBuffer(tir::Type::F32, 16 * 8)};
  for (int i = 0; i < 3; ++i) emu::fillRandom(b[static_cast<size_t>(i)], tir::Type::F16, 40 + static_cast<uint64_t>(i));
  return b;
}

// O = f16(A B0) B1 against float64 with P rounded to f16 as the kernel rounds it: within 2^-10 of
// sum |P B1| (an element of P may round the other way after f32 accumulation, one f16 ulp).
inline std::string accumulatorAsAError(const std::vector<emu::Buffer>& b) {
  auto at = [&](size_t buffer, int i) { return emu::getElement(b[buffer], buffer == 3 ? tir::Type::F32 : tir::Type::F16, i); };
  double p[16][16];
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 16; ++k) {
      double s = 0;
      for (int q = 0; q < 16; ++q) s += at(0, i * 16 + q) * at(1, q * 16 + k);
      p[i][k] = emu::f16ToF32(emu::f32ToF16(static_cast<float>(s)));
    }
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      double o = 0, mag = 0;
      for (int k = 0; k < 16; ++k) o += p[i][k] * at(2, k * 8 + j), mag += std::fabs(p[i][k] * at(2, k * 8 + j));
      const double got = at(3, i * 8 + j);
      if (std::fabs(got - o) > 0x1p-10 * mag) return fmt::format("O({}, {}): {} instead of {}", i, j, got, o);
    }
  return "";
}

}  // namespace tyl::test
