// The examples, compiled by tyloc and run on the emulator against CPU references: the
// same thread IR the CUDA backend prints, so this checks the layout lowering end to end
// without a GPU. The checks are the main job's (examples/emulate/ExampleChecks.h); here at
// more sizes.
#include <catch2/catch.hpp>

#include "examples/emulate/ExampleChecks.h"

using namespace tyl;
using tir::Type;

namespace {

std::unique_ptr<examples::Example> compileExample(const std::string& relPath) {
  auto ex = std::make_unique<examples::Example>();
  bool ok = examples::compile(std::string(TYLO_SOURCE_DIR) + "/" + relPath, *ex);
  INFO(ex->diagnostics);
  REQUIRE(ok);
  return ex;
}

void require(const examples::Check& c) {
  INFO(c.line);
  INFO(c.findings);
  REQUIRE(c.findings.empty());
  REQUIRE(c.ok);
}

}  // namespace

TEST_CASE("add_one runs on the emulator and adds one to every element") {
  auto ex = compileExample("examples/add_one/add_one.tyl");
  require(examples::addOne(*ex));
}

TEST_CASE("add_one_n handles sizes that are not multiples of the block tile") {
  auto ex = compileExample("examples/add_one/add_one.tyl");
  require(examples::addOneN(*ex, {0, 1, 3, 1023, 1024, 1025, 4096 + 5}));
}

TEST_CASE("gemm matches a CPU reference at several sizes for f16 and bf16") {
  auto ex = compileExample("examples/gemm/gemm.tyl");
  for (Type t : {Type::F16, Type::BF16}) {
    require(examples::gemm(*ex, "gemm", t, {64, 64, 32}, false));
    require(examples::gemm(*ex, "gemm", t, {128, 256, 64}, true));
    require(examples::gemm(*ex, "gemm", t, {200, 136, 72}, false));
    require(examples::gemm(*ex, "gemm", t, {200, 136, 72}, true));
  }
}

TEST_CASE("gemm_beta matches a CPU reference within 16-bit rounding, at tile multiples and not") {
  auto ex = compileExample("examples/gemm/gemm.tyl");
  for (Type t : {Type::F16, Type::BF16}) {
    require(examples::gemmBeta(*ex, t, {128, 128, 64}));
    require(examples::gemmBeta(*ex, t, {200, 136, 72}));
  }
}
