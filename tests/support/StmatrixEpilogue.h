// The kernel of tests/emu/kernels/stmatrix.tyl, its inputs and the check of its outputs, shared by
// the emulator's test (tests/emu/stmatrix_test.cpp) and the host run of the generated CUDA
// (tests/hostrun/host_run_test.cpp): C (64 x 64, f16) = A (64 x 32) @ B (32 x 64), f16, and CT = C^T.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "backend/emu/HostData.h"
#include "backend/emu/Values.h"

namespace tyl::test {

// A and B random, C and CT not yet written.
inline std::vector<emu::Buffer> stmatrixEpilogueInputs() {
  std::vector<emu::Buffer> b{emu::makeBuffer(tir::Type::F16, 64 * 32), emu::makeBuffer(tir::Type::F16, 32 * 64),
                             emu::makeBuffer(tir::Type::F16, 64 * 64, false),
                             emu::makeBuffer(tir::Type::F16, 64 * 64, false)};
  emu::fillRandom(b[0], tir::Type::F16, 11);
  emu::fillRandom(b[1], tir::Type::F16, 12);
  return b;
}

// "" when C is A @ B rounded once to f16 from an f32-accurate sum, and CT its transpose, else the
// first element that is not.
inline std::string stmatrixEpilogueError(const std::vector<emu::Buffer>& b) {
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 64; ++j) {
      double sum = 0, scale = 0;
      for (int64_t k = 0; k < 32; ++k) {
        const double p = emu::getElement(b[0], tir::Type::F16, i * 32 + k) * emu::getElement(b[1], tir::Type::F16, k * 64 + j);
        sum += p;
        scale += std::fabs(p);
      }
      // Half an f16 ulp of the sum, and the f32 error of the products summed.
      const double tol = std::ldexp(std::fabs(sum), -11) + 1e-5 * scale + 1e-7;
      const double got = emu::getElement(b[2], tir::Type::F16, i * 64 + j);
      const double gotT = emu::getElement(b[3], tir::Type::F16, j * 64 + i);
      if (!(std::fabs(got - sum) <= tol) || gotT != got)
        return "C(" + std::to_string(i) + ", " + std::to_string(j) + ") = " + std::to_string(got) + ", CT(" +
               std::to_string(j) + ", " + std::to_string(i) + ") = " + std::to_string(gotT) + ", expected " +
               std::to_string(sum);
    }
  return "";
}

}  // namespace tyl::test
