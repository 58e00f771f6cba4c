// The accumulator stored to shared memory with stmatrix (tests/emu/kernels/stmatrix.tyl): lowered
// for sm_90a the stores are stmatrix.x4 and stmatrix.x4.trans, for sm_80 element pairs and single
// elements; both give C = A @ B and CT = (A @ B)^T against a float64 reference
// (tests/support/StmatrixEpilogue.h).
#include <catch2/catch.hpp>

#include <string>

#include "backend/emu/Emulator.h"
#include "tests/emu/CompiledTyl.h"
#include "tests/emu/CountOps.h"
#include "tests/support/StmatrixEpilogue.h"

namespace tyl {
namespace {

void checkEpilogue(cuda::Arch arch, int64_t plain, int64_t trans) {
  auto c = test::compileKernels("stmatrix.tyl", arch);
  const tir::Kernel& k = c->kernel("stmatrix_epilogue");
  CHECK(emu::test::countStmts<tir::Stmatrix>(k.body, [](const tir::Stmatrix& s) { return !s.trans; }) == plain);
  CHECK(emu::test::countStmts<tir::Stmatrix>(k.body, [](const tir::Stmatrix& s) { return s.trans; }) == trans);
  std::vector<emu::Buffer> b = test::stmatrixEpilogueInputs();
  emu::RunResult r = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::pointer(2), emu::Arg::pointer(3)}, b);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  CHECK(test::stmatrixEpilogueError(b) == "");
}

TEST_CASE("stmatrix: the accumulator goes to shared memory by stmatrix.x4 and .trans for sm_90a") {
  checkEpilogue(cuda::Arch::Sm90a, 4, 4);
}

TEST_CASE("stmatrix: for sm_80 the same stores are plain, with the same results") {
  checkEpilogue(cuda::Arch::Sm80, 0, 0);
}

}  // namespace
}  // namespace tyl
