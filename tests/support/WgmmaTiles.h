// The kernels of tests/emu/kernels/wgmma_tiles.tyl, their inputs and the check of their output,
// shared by the emulator's test (tests/emu/wgmma_tyl_test.cpp) and the host run of the generated
// CUDA (tests/hostrun/host_run_test.cpp). Each kernel computes C (M x N, f32) = A (M x K) @ B
// (K x N), row-major (or B^T, B stored N x K), with wgmma; the check is against the product in
// double precision.
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/emu/HostData.h"
#include "backend/emu/Values.h"

namespace tyl::test {

struct WgmmaTile {
  const char* kernel;
  int64_t m, n, k;
  tir::Type type;     // of A and B
  int64_t stage;      // the kernel's `stage` argument; -1: it has none
  int64_t wgmmasPerWarp;
  bool bStoredNK = false;  // B is stored N x K (the kernel reads it through B.T)
};

inline constexpr WgmmaTile kWgmmaTiles[] = {
    {"k128_mn128_f16", 64, 128, 64, tir::Type::F16, -1, 4},
    {"k128_mn128_bf16", 64, 128, 64, tir::Type::BF16, -1, 4},
    {"k64_k64", 64, 64, 32, tir::Type::BF16, -1, 2},
    {"k64_bt", 64, 64, 32, tir::Type::BF16, -1, 2, true},
    {"k32_none", 64, 32, 16, tir::Type::BF16, -1, 1},
    {"groups_m", 128, 64, 64, tir::Type::BF16, -1, 4},
    {"groups_n_stage", 64, 128, 64, tir::Type::BF16, 3, 4},
    {"a_regs", 64, 128, 64, tir::Type::F16, -1, 4},
    {"a_regs_groups", 128, 128, 64, tir::Type::BF16, -1, 4},
};

// A and B random (seeded by the kernel's shape), C not yet written.
inline std::vector<emu::Buffer> wgmmaTileInputs(const WgmmaTile& c) {
  std::vector<emu::Buffer> b = {emu::makeBuffer(c.type, c.m * c.k), emu::makeBuffer(c.type, c.k * c.n),
                                emu::makeBuffer(tir::Type::F32, c.m * c.n, false)};
  emu::fillRandom(b[0], c.type, static_cast<uint64_t>(c.m * 1000 + c.k));
  emu::fillRandom(b[1], c.type, static_cast<uint64_t>(c.n * 1000 + c.k + 7));
  return b;
}

// "" when C holds A @ B to f32 accuracy, else the first element that does not.
inline std::string wgmmaTileError(const WgmmaTile& c, const std::vector<emu::Buffer>& b) {
  const int bytes = tir::typeBytes(c.type);
  auto input = [&](const emu::Buffer& buf, int64_t i) {
    uint64_t bits = 0;
    std::memcpy(&bits, buf.bytes.data() + i * bytes, static_cast<size_t>(bytes));
    return static_cast<double>(emu::toFloat(c.type, bits));
  };
  for (int64_t r = 0; r < c.m; ++r)
    for (int64_t col = 0; col < c.n; ++col) {
      double sum = 0, scale = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        const double p = input(b[0], r * c.k + k) * input(b[1], c.bStoredNK ? col * c.k + k : k * c.n + col);
        sum += p;
        scale += std::fabs(p);
      }
      float got = 0;
      std::memcpy(&got, b[2].bytes.data() + 4 * (r * c.n + col), 4);
      if (!(std::fabs(got - sum) <= 1e-5 * (scale + 1e-30)))
        return "C(" + std::to_string(r) + ", " + std::to_string(col) + ") = " + std::to_string(got) + ", expected " +
               std::to_string(sum);
    }
  return "";
}

}  // namespace tyl::test
