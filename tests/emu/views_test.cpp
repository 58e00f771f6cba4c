// Transposed and permuted views (tests/emu/kernels/views.tyl) on the emulator: each kernel's
// output is checked element by element against the permutation it computes, at sizes that are
// not tile multiples, and the vectors the views allow are counted.
#include <catch2/catch.hpp>

#include <string>

#include "backend/emu/Emulator.h"
#include "backend/emu/HostData.h"
#include "backend/emu/Values.h"
#include "tests/emu/CompiledTyl.h"
#include "tests/emu/CountOps.h"

namespace tyl {
namespace {

std::unique_ptr<test::CompiledTyl> compile() { return test::compileKernels("views.tyl"); }

double element(const emu::Buffer& b, tir::Type t, int64_t i) { return emu::getElement(b, t, i); }

TEST_CASE("views: A.T is read in vectors along its dimension 0 and written out transposed") {
  auto c = compile();
  const tir::Kernel& k = c->kernel("transpose");
  CHECK(emu::test::countStmts<tir::Load>(k.body, [](const tir::Load& l) { return l.dst.size() == 4; }) > 0);
  for (auto [M, N] : {std::pair<int64_t, int64_t>{32, 32}, {40, 72}, {4, 100}, {65, 36}}) {
    INFO("M = " << M << " N = " << N);
    std::vector<emu::Buffer> b{emu::makeBuffer(tir::Type::F32, M * N), emu::makeBuffer(tir::Type::F32, M * N, false)};
    emu::fillRandom(b[0], tir::Type::F32, static_cast<uint64_t>(M * 100 + N));
    emu::RunResult r = emu::run(k, {emu::Arg::integer(M), emu::Arg::integer(N), emu::Arg::pointer(0), emu::Arg::pointer(1)}, b);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    int64_t wrong = 0;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        wrong += element(b[1], tir::Type::F32, j * M + i) != element(b[0], tir::Type::F32, i * N + j);
    CHECK(wrong == 0);
  }
}

TEST_CASE("views: B stored N x K goes through B.T into a K-major tile by 16-byte cp.async and back") {
  auto c = compile();
  const tir::Kernel& k = c->kernel("weights");
  CHECK(emu::test::countStmts<tir::CpAsync>(k.body, [](const tir::CpAsync& cp) { return cp.bytes == 16; }) > 0);
  for (auto [K, N] : {std::pair<int64_t, int64_t>{32, 64}, {40, 72}, {8, 5}, {96, 130}}) {
    INFO("K = " << K << " N = " << N);
    std::vector<emu::Buffer> b{emu::makeBuffer(tir::Type::F16, K * N), emu::makeBuffer(tir::Type::F16, K * N, false)};
    emu::fillRandom(b[0], tir::Type::F16, static_cast<uint64_t>(K * 1000 + N));
    emu::RunResult r = emu::run(k, {emu::Arg::integer(K), emu::Arg::integer(N), emu::Arg::pointer(0), emu::Arg::pointer(1)}, b);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    int64_t wrong = 0;
    for (int64_t i = 0; i < K * N; ++i) wrong += element(b[1], tir::Type::F16, i) != element(b[0], tir::Type::F16, i);
    CHECK(wrong == 0);
  }
}

TEST_CASE("views: a permuted 3-D view is copied and indexed in its own order") {
  auto c = compile();
  std::vector<emu::Buffer> b{emu::makeBuffer(tir::Type::F32, 24), emu::makeBuffer(tir::Type::F32, 24, false),
                             emu::makeBuffer(tir::Type::F32, 24)};
  emu::fillRandom(b[0], tir::Type::F32, 3);
  for (int64_t i = 0; i < 24; ++i) emu::setElement(b[2], tir::Type::F32, i, -1.0);
  emu::RunResult r = emu::run(c->kernel("permute3"), {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::pointer(2)}, b);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  // Q[a, b, c] = P[b, c, a]; W holds the window of origin (1, 0, 1) and shape (3, 2, 2) of the
  // same view at its place, and -1 elsewhere.
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t bb = 0; bb < 2; ++bb)
      for (int64_t cc = 0; cc < 3; ++cc) {
        INFO("a = " << a << " b = " << bb << " c = " << cc);
        const double p = element(b[0], tir::Type::F32, bb * 12 + cc * 4 + a);
        CHECK(element(b[1], tir::Type::F32, a * 6 + bb * 3 + cc) == p);
        const bool inWindow = a >= 1 && cc >= 1;
        CHECK(element(b[2], tir::Type::F32, a * 6 + bb * 3 + cc) == (inWindow ? p : -1.0));
      }
}

TEST_CASE("views: a column fragment loads A.T's columns, A's rows, as 16-byte vectors") {
  auto c = compile();
  const tir::Kernel& k = c->kernel("fragment");
  CHECK(emu::test::countStmts<tir::Load>(k.body, [](const tir::Load& l) { return l.dst.size() == 4; }) == 1);
  std::vector<emu::Buffer> b{emu::makeBuffer(tir::Type::F32, 128), emu::makeBuffer(tir::Type::F32, 128, false)};
  emu::fillRandom(b[0], tir::Type::F32, 9);
  emu::RunResult r = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1)}, b);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 32; ++j) CHECK(element(b[1], tir::Type::F32, i * 32 + j) == 2 * element(b[0], tir::Type::F32, j * 4 + i));
}

}  // namespace
}  // namespace tyl
