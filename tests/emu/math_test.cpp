// The math functions (tests/emu/kernels/math.tyl) on the emulator: every result of the fragment
// and the scalar forms within the bound docs/language.md states (tests/support/MathCases.h); and
// a planted error, a result one part in 2^20 off, is outside them.
#include <catch2/catch.hpp>

#include <string>

#include "backend/emu/Emulator.h"
#include "tests/emu/CompiledTyl.h"
#include "tests/support/MathCases.h"

namespace tyl {
namespace {

TEST_CASE("math: abs, sqrt, rsqrt, exp2, exp, log2, log and their fast forms lie within their bounds") {
  auto c = test::compileKernels("math.tyl");
  std::vector<emu::Buffer> b = test::mathInputs();
  emu::RunResult r = emu::run(c->kernel("math_functions"), {emu::Arg::real(test::kMathScalar), emu::Arg::pointer(0),
                                                  emu::Arg::pointer(1), emu::Arg::pointer(2)},
                              b);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  CHECK(test::mathError(b) == "");
  // The check sees an error of 2^-20: exp2 of element 17, then log of the scalar.
  const double y = emu::getElement(b[1], tir::Type::F32, 3 * 256 + 17);
  emu::setElement(b[1], tir::Type::F32, 3 * 256 + 17, y * (1 + 0x1p-20));
  CHECK_THAT(test::mathError(b), Catch::StartsWith("Y: exp2("));
  emu::setElement(b[1], tir::Type::F32, 3 * 256 + 17, y);
  emu::setElement(b[2], tir::Type::F32, 6, emu::getElement(b[2], tir::Type::F32, 6) * (1 + 0x1p-20));
  CHECK_THAT(test::mathError(b), Catch::StartsWith("Z: log("));
}

}  // namespace
}  // namespace tyl
