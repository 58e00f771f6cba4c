// A small but complete tensor-core GEMM written by hand in thread IR: a two-stage cp.async
// pipeline into shared memory, ldmatrix (.x4 for A, .x4.trans for B), mma.sync, two warps
// per block. Checks the instructions working together, the absence of false findings on a
// correct pipeline, and the race a missing barrier causes.
#include <catch2/catch.hpp>
#include <cmath>

#include "TestKernel.h"

using namespace tyl;
using namespace tyl::emu;
using namespace tyl::emu::test;
using tir::BinOp;
using tir::ExprRef;
using tir::Reg;
using tir::Type;

namespace {

// Short names; tir::add and friends are found by ADL, so these must not reuse them.
ExprRef over(ExprRef a, int64_t b) { return bin(BinOp::Div, std::move(a), i32(b)); }
ExprRef mod(ExprRef a, int64_t b) { return bin(BinOp::Rem, std::move(a), i32(b)); }
ExprRef times(ExprRef a, int64_t b) { return tir::mul(std::move(a), i32(b)); }
ExprRef plus(ExprRef a, ExprRef b) { return tir::add(std::move(a), std::move(b)); }

constexpr int kLineLoadA = 10, kLineLoadB = 11, kLineLdA = 20, kLineLdB = 21, kLineTrailingBarrier = 30;

// C (MxN, f32) = A (MxK, row-major) * B (KxN, row-major), 32x16 tiles, K in steps of 16.
TestKernel gemmKernel(bool trailingBarrier) {
  TestKernel t("gemm", 64);
  uint32_t A = t.globalBuffer("A", Type::F16), B = t.globalBuffer("B", Type::F16);
  uint32_t C = t.globalBuffer("C", Type::F32);
  ExprRef N = t.param(t.scalar("N", Type::I32)), K = t.param(t.scalar("K", Type::I32));
  ExprRef M = t.param(t.scalar("M", Type::I32));
  t.k.grid = {over(N, 16), over(M, 32), i32(1)};
  uint32_t As = t.sharedBuffer("As", Type::F16, 2 * 32 * 16),
           Bs = t.sharedBuffer("Bs", Type::F16, 2 * 16 * 16);
  uint32_t kt = t.var("kt", Type::I32);
  uint32_t ra = t.array("ra", Type::F16, 8), rb = t.array("rb", Type::F16, 8),
           acc = t.array("acc", Type::F32, 8);
  ExprRef bm = tir::special(tir::Special::CtaidY), bn = tir::special(tir::Special::CtaidX);
  ExprRef warp = tir::special(tir::Special::WarpId), lane = laneId();

  // One 16-byte cp.async per thread for A (32 rows x 2 chunks), threads < 32 for B (16 x 2).
  auto loadStage = [&](ExprRef stage, ExprRef k0) {
    ExprRef row = over(tid(), 2), col = times(mod(tid(), 2), 8);
    ExprRef aSrc = plus(tir::mul(plus(times(bm, 32), row), K), plus(k0, col));
    ExprRef bSrc = plus(tir::mul(plus(k0, row), N), plus(times(bn, 16), col));
    return tir::Block{
        at(kLineLoadA, tir::CpAsync{mem(As, plus(times(stage, 512), plus(times(row, 16), col))), mem(A, aSrc),
                                    16, nullptr}),
        at(12, when(tir::lt(tid(), i32(32)),
                    {at(kLineLoadB, tir::CpAsync{mem(Bs, plus(times(stage, 256), plus(times(row, 16), col))),
                                                 mem(B, bSrc), 16, nullptr})})),
    };
  };

  tir::Block& body = t.k.body;
  for (int i = 0; i < 8; ++i) body.push_back(at(1, tir::Assign{Reg::elem(acc, i), f32(0)}));
  for (tir::Stmt& s : loadStage(i32(0), i32(0))) body.push_back(std::move(s));
  body.push_back(at(2, tir::CpAsyncCommit{}));

  ExprRef stage = mod(t.v(kt), 2), next = mod(plus(t.v(kt), i32(1)), 2);
  tir::Block iteration;
  iteration.push_back(at(3, when(tir::lt(plus(t.v(kt), i32(1)), over(K, 16)),
                                 loadStage(next, times(plus(t.v(kt), i32(1)), 16)))));
  iteration.push_back(at(4, tir::CpAsyncCommit{}));
  iteration.push_back(at(5, tir::CpAsyncWait{1}));
  iteration.push_back(at(6, tir::Barrier{}));
  // A: lane l addresses row (l % 8) + 8 ((l / 8) % 2), column 8 (l / 16) of the warp's 16x16.
  ExprRef aRow = plus(times(warp, 16), plus(mod(lane, 8), times(mod(over(lane, 8), 2), 8)));
  ExprRef aAddr = plus(times(stage, 512), plus(times(aRow, 16), times(over(lane, 16), 8)));
  iteration.push_back(at(kLineLdA, tir::Ldmatrix{4, false, elems(ra, 0, 4), mem(As, aAddr)}));
  // B (k rows, n columns): matrix i covers k 8 (i % 2).., n 8 (i / 2)..; .trans gives the
  // B fragment (k = 2t.., n = g).
  ExprRef bRow = plus(mod(lane, 8), times(mod(over(lane, 8), 2), 8));
  ExprRef bAddr = plus(times(stage, 256), plus(times(bRow, 16), times(over(lane, 16), 8)));
  iteration.push_back(at(kLineLdB, tir::Ldmatrix{4, true, elems(rb, 0, 4), mem(Bs, bAddr)}));
  for (int j = 0; j < 2; ++j)
    iteration.push_back(at(22, tir::Mma{Type::F16, elems(acc, 4 * j, 4), elems(ra, 0, 4), elems(rb, 2 * j, 2),
                                        elems(acc, 4 * j, 4)}));
  if (trailingBarrier) iteration.push_back(at(kLineTrailingBarrier, tir::Barrier{}));
  body.push_back(at(7, loop(kt, i32(0), over(K, 16), i32(1), iteration)));

  // acc[4j + e] is C element (g + 8 (e / 2), 8 j + 2 t + e % 2) of the warp's 16x16.
  ExprRef g = over(lane, 4), tq = mod(lane, 4);
  for (int j = 0; j < 2; ++j) {
    for (int q = 0; q < 4; ++q) {
      ExprRef row = plus(plus(times(bm, 32), times(warp, 16)), plus(g, i32(8 * (q / 2))));
      ExprRef col = plus(times(bn, 16), plus(i32(8 * j + q % 2), times(tq, 2)));
      body.push_back(at(40, store(Type::F32, mem(C, plus(tir::mul(row, N), col)), elems(acc, 4 * j + q, 1))));
    }
  }
  return t;
}

RunResult runGemm(const TestKernel& t, int M, int N, int K, std::vector<Buffer>& buffers) {
  buffers = {makeBuffer(Type::F16, M * K), makeBuffer(Type::F16, K * N), makeBuffer(Type::F32, M * N, false)};
  fillRandom(buffers[0], Type::F16, 1);
  fillRandom(buffers[1], Type::F16, 2);
  return run(
      t.k,
      {Arg::pointer(0), Arg::pointer(1), Arg::pointer(2), Arg::integer(N), Arg::integer(K), Arg::integer(M)},
      buffers);
}

}  // namespace

TEST_CASE("a pipelined ldmatrix and mma.sync GEMM matches the reference with no findings", "[gemm]") {
  TestKernel t = gemmKernel(true);
  const int M = 64, N = 32, K = 64;
  std::vector<Buffer> buffers;
  RunResult r = runGemm(t, M, N, K, buffers);
  INFO(describe(r));
  REQUIRE(r.ok());
  CHECK(r.stats.mmas == 2 * (M / 32) * (N / 16) * 2 * (K / 16));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0, scale = 0;
      for (int k = 0; k < K; ++k) {
        double p =
            getElement(buffers[0], Type::F16, i * K + k) * getElement(buffers[1], Type::F16, k * N + j);
        ref += p;
        scale += std::fabs(p);
      }
      INFO("C[" << i << "][" << j << "]");
      REQUIRE(std::fabs(getElement(buffers[2], Type::F32, i * N + j) - ref) <= 1e-3 * scale + 1e-6);
    }
}

TEST_CASE("without the barrier after the mma the next cp.async races with ldmatrix", "[gemm]") {
  TestKernel t = gemmKernel(false);
  std::vector<Buffer> buffers;
  RunResult r = runGemm(t, 32, 16, 48, buffers);
  INFO(describe(r));
  // The warp that runs ahead also overwrites a stage the other warp has yet to read: that
  // read then meets a cp.async in flight.
  std::vector<Finding> races = findingsOf(r, FindingKind::SharedRace);
  REQUIRE(!races.empty());
  CHECK(races.size() + findingsOf(r, FindingKind::AsyncReadBeforeWait).size() == r.findings.size());
  bool found = false;
  for (const Finding& f : races)
    if ((lineOf(f.loc) == kLineLoadA && lineOf(f.otherLoc) == kLineLdA) ||
        (lineOf(f.loc) == kLineLoadB && lineOf(f.otherLoc) == kLineLdB))
      found = true;
  CHECK(found);
  (void)kLineTrailingBarrier;
}
