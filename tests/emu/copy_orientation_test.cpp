// Copies between memories along whichever dimension both layouts make contiguous
// (tests/emu/kernels/copy_orientations.tyl): a K-major view of an N x K tensor through a K-major
// shared tile and back, in 16-byte vectors along K, at sizes that are not tile multiples; and a
// transpose through a column-major tile, element by element; and a column-major fragment to and
// from column-major tensors in 16-byte vectors along dimension 0. Every element is checked.
#include <catch2/catch.hpp>

#include <string>

#include "backend/emu/Emulator.h"
#include "backend/emu/Values.h"
#include "tests/emu/CompiledTyl.h"
#include "tests/emu/CountOps.h"

namespace tyl {
namespace {

std::unique_ptr<test::CompiledTyl> compile() { return test::compileKernels("copy_orientations.tyl"); }

TEST_CASE("a K-major view of an N x K tensor goes through a K-major tile in vectors along K, whole") {
  auto c = compile();
  const tir::Kernel& k = c->kernel("kmajor");
  // 16-byte vectors along K: 8 f16 elements of one column of B, adjacent in memory.
  CHECK(emu::test::countStmts<tir::CpAsync>(k.body, [](const tir::CpAsync& cp) { return cp.bytes == 16; }) > 0);
  for (auto [K, N] : {std::pair<int64_t, int64_t>{32, 64}, {40, 72}, {8, 5}, {96, 130}}) {
    INFO("K = " << K << " N = " << N);
    std::vector<emu::Buffer> buffers{emu::makeBuffer(tir::Type::F16, K * N), emu::makeBuffer(tir::Type::F16, K * N, false)};
    emu::fillRandom(buffers[0], tir::Type::F16, static_cast<uint64_t>(K * 1000 + N));
    emu::RunResult r = emu::run(k, {emu::Arg::integer(K), emu::Arg::integer(N), emu::Arg::pointer(0), emu::Arg::pointer(1)},
                                buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    int64_t wrong = 0;
    for (int64_t i = 0; i < K * N; ++i)
      wrong += emu::getElement(buffers[1], tir::Type::F16, i) != emu::getElement(buffers[0], tir::Type::F16, i);
    CHECK(wrong == 0);
  }
}

TEST_CASE("a column-major fragment loads and stores its columns as vectors along dimension 0, whole") {
  auto c = compile();
  const tir::Kernel& k = c->kernel("colfrag");
  // One 16-byte load and one 16-byte store: four f32 registers each.
  CHECK(emu::test::countStmts<tir::Load>(k.body, [](const tir::Load& l) { return l.dst.size() == 4; }) +
            emu::test::countStmts<tir::Store>(k.body, [](const tir::Store& st) { return st.src.size() == 4; }) ==
        2);
  for (auto [M, N] : {std::pair<int64_t, int64_t>{4, 32}, {12, 70}, {20, 5}}) {
    INFO("M = " << M << " N = " << N);
    std::vector<emu::Buffer> buffers{emu::makeBuffer(tir::Type::F32, M * N), emu::makeBuffer(tir::Type::F32, M * N, false)};
    emu::fillRandom(buffers[0], tir::Type::F32, static_cast<uint64_t>(M * 100 + N));
    emu::RunResult r = emu::run(k, {emu::Arg::integer(M), emu::Arg::integer(N), emu::Arg::pointer(0), emu::Arg::pointer(1)},
                                buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    int64_t wrong = 0;
    for (int64_t i = 0; i < M * N; ++i)
      wrong += emu::getElement(buffers[1], tir::Type::F32, i) != 2 * emu::getElement(buffers[0], tir::Type::F32, i);
    CHECK(wrong == 0);
  }
}

TEST_CASE("a transpose through a column-major tile copies element by element, whole") {
  auto c = compile();
  std::vector<emu::Buffer> buffers{emu::makeBuffer(tir::Type::F32, 1024), emu::makeBuffer(tir::Type::F32, 1024, false)};
  emu::fillRandom(buffers[0], tir::Type::F32, 5);
  emu::RunResult r = emu::run(c->kernel("transpose"), {emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  for (int64_t i = 0; i < 1024; ++i)
    CHECK(emu::getElement(buffers[1], tir::Type::F32, i) == emu::getElement(buffers[0], tir::Type::F32, i));
}

}  // namespace
}  // namespace tyl
