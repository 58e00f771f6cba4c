// Reductions and broadcasts (tests/emu/kernels/reduce.tyl) on the emulator against a float64
// reference (tests/support/ReduceCases.h); a planted error in each output is seen.
#include <catch2/catch.hpp>

#include "backend/emu/Emulator.h"
#include "tests/emu/CompiledTyl.h"
#include "tests/support/ReduceCases.h"

namespace tyl {
namespace {

TEST_CASE("reduce: row and column sums, maxima and minima of the m16n8 accumulator, and x - row max") {
  auto c = test::compileKernels("reduce.tyl");
  std::vector<emu::Buffer> b = test::reduceCInputs();
  std::vector<emu::Arg> args;
  for (int i = 0; i < 5; ++i) args.push_back(emu::Arg::pointer(i));
  emu::RunResult r = emu::run(c->kernel("reduce_c"), args, b);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  CHECK(test::reduceCError(b) == "");
  struct Plant {
    size_t buffer;
    int64_t index;
    const char* seen;
  };
  for (const Plant& p : {Plant{1, 5, "row sum 5"}, Plant{1, 16 + 3, "row max 3"}, Plant{2, 7, "column sum 7"},
                         Plant{3, 0, "total"}, Plant{4, 9, "x - row max at (1, 1)"}}) {
    const double v = emu::getElement(b[p.buffer], tir::Type::F32, p.index);
    emu::setElement(b[p.buffer], tir::Type::F32, p.index, v + 0.01);
    CHECK_THAT(test::reduceCError(b), Catch::StartsWith(p.seen));
    emu::setElement(b[p.buffer], tir::Type::F32, p.index, v);
  }
}

TEST_CASE("reduce: a row softmax, one row per warp, with exp and a broadcast of the row's max and sum") {
  auto c = test::compileKernels("reduce.tyl");
  std::vector<emu::Buffer> b = test::softmaxInputs(128);
  emu::RunResult r = emu::run(c->kernel("softmax_rows"), {emu::Arg::pointer(0), emu::Arg::pointer(1)}, b);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  CHECK(test::softmaxError(b, 128) == "");
  const double v = emu::getElement(b[1], tir::Type::F32, 300);
  emu::setElement(b[1], tir::Type::F32, 300, v * (1 + 1e-5));
  CHECK_THAT(test::softmaxError(b, 128), Catch::StartsWith("softmax at (2, 44)"));
}

TEST_CASE("reduce: rows of n columns in 128-column fragments, those past n left out by where(coord < n)") {
  auto c = test::compileKernels("reduce.tyl");
  for (int n : {1, 33, 77, 128}) {
    INFO("n = " << n);
    std::vector<emu::Buffer> b = test::softmaxInputs(n);
    emu::RunResult r = emu::run(c->kernel("softmax_tail"), {emu::Arg::integer(n), emu::Arg::pointer(0), emu::Arg::pointer(1)}, b);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    CHECK(test::softmaxError(b, n) == "");
  }
}

TEST_CASE("reduce: rows over two warps combine through shared memory, twice in a loop") {
  auto c = test::compileKernels("reduce.tyl");
  std::vector<emu::Buffer> b = test::reduceWarpsInputs();
  emu::RunResult r =
      emu::run(c->kernel("reduce_warps"), {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::pointer(2)}, b);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  CHECK(test::reduceWarpsError(b) == "");
  emu::setElement(b[1], tir::Type::F32, 6, emu::getElement(b[1], tir::Type::F32, 6) + 0.01);
  CHECK_THAT(test::reduceWarpsError(b), Catch::StartsWith("row sum 6"));
}

TEST_CASE("reduce: an accumulator converted to f16 is the next mma's A operand, in registers") {
  auto c = test::compileKernels("reduce.tyl");
  std::vector<emu::Buffer> b = test::accumulatorAsAInputs();
  emu::RunResult r = emu::run(c->kernel("accumulator_as_a"),
                              {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::pointer(2), emu::Arg::pointer(3)}, b);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  CHECK(test::accumulatorAsAError(b) == "");
  emu::setElement(b[3], tir::Type::F32, 19, emu::getElement(b[3], tir::Type::F32, 19) + 0.05);
  CHECK_THAT(test::accumulatorAsAError(b), Catch::StartsWith("O(2, 3)"));
}

}  // namespace
}  // namespace tyl
