// The kernels of tests/emu/kernels/tma_tiles.tyl and ws_gemm.tyl, their arguments and the checks of their
// outputs, shared by the emulator's test (tests/emu/tma_tyl_test.cpp) and the host run of the
// generated CUDA (tests/hostrun/host_run_test.cpp). A copy kernel's B must be A padded with
// zeros to whole tiles; the GEMM's C must be A @ B in double precision, to f32 accuracy.
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/emu/HostData.h"
#include "backend/emu/Values.h"

namespace tyl::test {

struct TmaCopyCase {
  const char* kernel;
  tir::Type type;
  int64_t tileRows, tileCols;
  int64_t m, n;
  int64_t stage;  // the kernel's `stage` argument; -1: it has none
  bool store = false;  // a TMA store: A is the padded one (MP x NP), B (M x N) must be its corner
};

// Sizes that are tile multiples and sizes that are not, so TMA's zero fill is exercised.
inline constexpr TmaCopyCase kTmaCopyCases[] = {
    {"tma_b128", tir::Type::BF16, 32, 64, 64, 128, -1},
    {"tma_b128", tir::Type::BF16, 32, 64, 50, 72, -1},
    {"tma_b64_panels", tir::Type::F16, 32, 64, 37, 120, -1},
    {"tma_f32_b32", tir::Type::F32, 16, 16, 33, 20, -1},
    {"tma_tall", tir::Type::BF16, 512, 16, 600, 24, -1},
    {"tma_stage", tir::Type::BF16, 64, 64, 100, 72, 4},
    {"tma_transposed", tir::Type::BF16, 32, 64, 50, 72, -1},
    {"tma_transposed", tir::Type::BF16, 32, 64, 64, 128, -1},
    {"tma_store_transposed", tir::Type::BF16, 32, 64, 50, 72, -1, true},
    {"tma_store_b128", tir::Type::BF16, 32, 64, 50, 72, -1, true},
    {"tma_store_b128", tir::Type::BF16, 32, 64, 64, 128, -1, true},
};

inline int64_t roundUp(int64_t x, int64_t tile) { return (x + tile - 1) / tile * tile; }

// A random, B not yet written.
inline std::vector<emu::Buffer> tmaCopyInputs(const TmaCopyCase& c) {
  const int64_t small = c.m * c.n, padded = roundUp(c.m, c.tileRows) * roundUp(c.n, c.tileCols);
  std::vector<emu::Buffer> b = {emu::makeBuffer(c.type, c.store ? padded : small),
                                emu::makeBuffer(c.type, c.store ? small : padded, false)};
  emu::fillRandom(b[0], c.type, static_cast<uint64_t>(c.m * 1000 + c.n));
  return b;
}

// M, N, MP, NP, A, B[, stage].
inline std::vector<emu::Arg> tmaCopyArgs(const TmaCopyCase& c) {
  std::vector<emu::Arg> a = {emu::Arg::integer(c.m), emu::Arg::integer(c.n), emu::Arg::integer(roundUp(c.m, c.tileRows)),
                             emu::Arg::integer(roundUp(c.n, c.tileCols)), emu::Arg::pointer(0), emu::Arg::pointer(1)};
  if (c.stage >= 0) a.push_back(emu::Arg::integer(c.stage));
  return a;
}

// "" when B is A with zeros past its edges (a store: B is A's corner), else the first element that
// is not.
inline std::string tmaCopyError(const TmaCopyCase& c, const std::vector<emu::Buffer>& b) {
  const int64_t np = roundUp(c.n, c.tileCols), mp = roundUp(c.m, c.tileRows);
  const size_t bytes = static_cast<size_t>(tir::typeBytes(c.type));
  if (c.store) {
    for (int64_t r = 0; r < c.m; ++r)
      for (int64_t col = 0; col < c.n; ++col)
        if (std::memcmp(b[1].bytes.data() + (r * c.n + col) * static_cast<int64_t>(bytes),
                        b[0].bytes.data() + (r * np + col) * static_cast<int64_t>(bytes), bytes) != 0)
          return "B(" + std::to_string(r) + ", " + std::to_string(col) + ") is not A's element";
    return "";
  }
  const std::vector<std::byte> zero(bytes);
  for (int64_t r = 0; r < mp; ++r)
    for (int64_t col = 0; col < np; ++col) {
      const std::byte* got = b[1].bytes.data() + (r * np + col) * static_cast<int64_t>(bytes);
      const std::byte* want =
          r < c.m && col < c.n ? b[0].bytes.data() + (r * c.n + col) * static_cast<int64_t>(bytes) : zero.data();
      if (std::memcmp(got, want, bytes) != 0)
        return "B(" + std::to_string(r) + ", " + std::to_string(col) + ") is not " +
               (r < c.m && col < c.n ? "A's element" : "zero");
    }
  return "";
}

// tma_gemm: C (M x N, f32) = A (M x K) @ B (K x N), bf16.
struct TmaGemmCase {
  int64_t m, n, k;
};

inline constexpr TmaGemmCase kTmaGemmCases[] = {{64, 128, 128}, {100, 136, 200}, {64, 128, 16}};

inline std::vector<emu::Buffer> tmaGemmInputs(const TmaGemmCase& c) {
  std::vector<emu::Buffer> b = {emu::makeBuffer(tir::Type::BF16, c.m * c.k),
                                emu::makeBuffer(tir::Type::BF16, c.k * c.n),
                                emu::makeBuffer(tir::Type::F32, c.m * c.n, false)};
  emu::fillRandom(b[0], tir::Type::BF16, static_cast<uint64_t>(c.m * 1000 + c.k));
  emu::fillRandom(b[1], tir::Type::BF16, static_cast<uint64_t>(c.n * 1000 + c.k + 7));
  return b;
}

inline std::vector<emu::Arg> tmaGemmArgs(const TmaGemmCase& c) {
  return {emu::Arg::integer(c.m), emu::Arg::integer(c.n), emu::Arg::integer(c.k),
          emu::Arg::pointer(0),   emu::Arg::pointer(1),   emu::Arg::pointer(2)};
}

// The kernels of tma_batched.tyl: `outer` matrices (L, or H x L) of M x N; the padded side has
// whole 32 x 64 tiles (and, for the boxes of three dimensions, no padding along L). A random, B not yet written; B must be A padded with zeros
// (a store: A's corner).
struct TmaBatchedCase {
  const char* kernel;
  std::vector<int64_t> outer;
  int64_t m, n;
  bool store = false;
};

inline std::vector<emu::Buffer> tmaBatchedInputs(const TmaBatchedCase& c) {
  int64_t count = 1;
  for (int64_t o : c.outer) count *= o;
  const int64_t small = count * c.m * c.n, padded = count * roundUp(c.m, 32) * roundUp(c.n, 64);
  std::vector<emu::Buffer> b = {emu::makeBuffer(tir::Type::BF16, c.store ? padded : small),
                                emu::makeBuffer(tir::Type::BF16, c.store ? small : padded, false)};
  emu::fillRandom(b[0], tir::Type::BF16, static_cast<uint64_t>(c.m * 100 + c.n));
  return b;
}

// The outer extents, M, N, MP, NP, A, B.
inline std::vector<emu::Arg> tmaBatchedArgs(const TmaBatchedCase& c) {
  std::vector<emu::Arg> a;
  for (int64_t o : c.outer) a.push_back(emu::Arg::integer(o));
  for (int64_t v : {c.m, c.n, roundUp(c.m, 32), roundUp(c.n, 64)}) a.push_back(emu::Arg::integer(v));
  a.push_back(emu::Arg::pointer(0));
  a.push_back(emu::Arg::pointer(1));
  return a;
}

inline std::string tmaBatchedError(const TmaBatchedCase& c, const std::vector<emu::Buffer>& b) {
  int64_t count = 1;
  for (int64_t o : c.outer) count *= o;
  const int64_t mp = roundUp(c.m, 32), np = roundUp(c.n, 64);
  for (int64_t i = 0; i < count; ++i)
    for (int64_t r = 0; r < (c.store ? c.m : mp); ++r)
      for (int64_t col = 0; col < (c.store ? c.n : np); ++col) {
        const bool inside = r < c.m && col < c.n;
        const double want = !inside ? 0.0
                            : c.store ? emu::getElement(b[0], tir::Type::BF16, (i * mp + r) * np + col)
                                      : emu::getElement(b[0], tir::Type::BF16, (i * c.m + r) * c.n + col);
        const double got = c.store ? emu::getElement(b[1], tir::Type::BF16, (i * c.m + r) * c.n + col)
                                   : emu::getElement(b[1], tir::Type::BF16, (i * mp + r) * np + col);
        if (got != want)
          return "matrix " + std::to_string(i) + " element (" + std::to_string(r) + ", " + std::to_string(col) +
                 ") is " + std::to_string(got) + ", expected " + std::to_string(want);
      }
  return "";
}

inline const TmaBatchedCase kTmaBatchedCases[] = {
    {"tma_batched", {3}, 50, 72},
    {"tma_batched", {2}, 64, 128},
    {"tma_store_4d", {2, 3}, 40, 104, true},
    {"tma_box3d", {3}, 50, 72},
    {"tma_box3d", {4}, 64, 128},
    {"tma_store_box3d", {3}, 40, 104, true},
};

// ws_gemm of ws_gemm.tyl (128 x 128 tiles, a three-stage ring) takes the same inputs and the
// consumers' parity flip (0: right).
inline constexpr TmaGemmCase kWsGemmCases[] = {{128, 128, 192}, {100, 136, 328}, {200, 72, 64}};

// ws_pipeline (persistent, the pipeline construct) on two SMs: more tiles than blocks.
inline constexpr TmaGemmCase kWsPipelineCases[] = {{128, 128, 192}, {260, 264, 136}, {200, 72, 64}};

// ws_async (the consumers' MMAs in flight, one group queued behind another) takes ws_gemm's
// arguments, the last one the planted early release (0: right); K long enough to reuse stages.
inline constexpr TmaGemmCase kWsAsyncCases[] = {{128, 128, 640}, {100, 136, 328}, {200, 72, 64}};

inline std::vector<emu::Arg> wsGemmArgs(const TmaGemmCase& c, int64_t consumerParity = 0) {
  std::vector<emu::Arg> a = tmaGemmArgs(c);
  a.push_back(emu::Arg::integer(consumerParity));
  return a;
}

// cluster_gemm of cluster_gemm.tyl (pairs of 128 x 128 tiles, multicast B, a persistent grid of
// min(SMs / 2, pairs of tiles) clusters), at `sms` SMs: fewer than the tiles, so that each cluster
// takes several units of work. Its last argument, `hold`, is 0 (right) or 1 (no cluster barrier at
// the end: a planted bug).
struct ClusterGemmCase {
  TmaGemmCase size;
  int sms;
};
inline constexpr ClusterGemmCase kClusterGemmCases[] = {{{512, 128, 128}, 2}, {{300, 264, 136}, 4}, {{130, 392, 72}, 2}};

inline std::vector<emu::Arg> clusterGemmArgs(const ClusterGemmCase& c, int64_t hold = 0) {
  std::vector<emu::Arg> a = tmaGemmArgs(c.size);
  a.push_back(emu::Arg::integer(hold));
  return a;
}

inline std::string tmaGemmError(const TmaGemmCase& c, const std::vector<emu::Buffer>& b) {
  for (int64_t r = 0; r < c.m; ++r)
    for (int64_t col = 0; col < c.n; ++col) {
      double sum = 0, scale = 0;
      for (int64_t k = 0; k < c.k; ++k) {
        const double p = emu::getElement(b[0], tir::Type::BF16, r * c.k + k) *
                         emu::getElement(b[1], tir::Type::BF16, k * c.n + col);
        sum += p;
        scale += std::fabs(p);
      }
      const double got = emu::getElement(b[2], tir::Type::F32, r * c.n + col);
      if (!(std::fabs(got - sum) <= 1e-5 * (scale + 1e-30)))
        return "C(" + std::to_string(r) + ", " + std::to_string(col) + ") = " + std::to_string(got) + ", expected " +
               std::to_string(sum);
    }
  return "";
}

}  // namespace tyl::test
