// The tile and pipeline variants that bench/gemm_bench times (bench/CMakeLists.txt writes them
// into the build's bench/variants folder), compiled by tyloc and run on the emulator against
// the CPU reference of the examples' checks: every variant at a size that is not a multiple of
// its tiles; the grouped block orders also over more rows of tiles than a group holds (the last
// group is partial), so that every tile of C is computed once.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "examples/emulate/ExampleChecks.h"
#include "tests/support/ExampleCases.h"

using namespace tyl;
namespace fs = std::filesystem;

TEST_CASE("every gemm_bench variant matches a CPU reference on the emulator") {
  std::vector<std::string> names;
  std::istringstream list(TYLO_VARIANTS);
  for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  REQUIRE(names.size() >= 8);
  for (const std::string& name : names) {
    const std::string stem = "gemm_" + name;
    const fs::path file = fs::path(TYLO_VARIANTS_DIR) / (stem + ".tyl");
    INFO(stem);
    examples::Example ex;
    bool ok = examples::compile(file.string(), ex);
    INFO(ex.diagnostics);
    REQUIRE(ok);
    for (const test::GemmCase& gc : test::variantCases(stem)) {
      examples::Check c = examples::gemm(ex, stem, tir::Type::BF16, gc.problem, gc.relu);
      INFO(c.line);
      INFO(c.findings);
      CHECK(c.findings.empty());
      CHECK(c.ok);
    }
  }
}
