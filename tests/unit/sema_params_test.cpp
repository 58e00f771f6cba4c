// A kernel's parameters against CUDA's limit of 32764 bytes of parameters per kernel, each
// at its natural alignment.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "frontend/Parse.h"
#include "frontend/Sema.h"

using namespace tyl;

namespace {

// Analyzes a kernel with `longs` i64 scalars, then the parameters `tail`; the rendered
// diagnostics (empty when it is accepted).
std::string analyzeParams(int longs, const std::string& tail) {
  std::string source = "kernel k(";
  for (int i = 0; i < longs; ++i) source += "p" + std::to_string(i) + ": i64, ";
  source += tail + ") launch(grid = 1, block = 32) { }\n";
  SourceManager sources;
  FileId file = sources.add("k.tyl", source);
  DiagnosticEngine diags(sources);
  std::optional<ast::Module> module = parseModule(file, diags);
  REQUIRE(module);
  const bool ok = analyze(*module, diags).has_value();
  std::ostringstream os;
  diags.renderText(os);
  CHECK(ok == os.str().empty());
  return os.str();
}

}  // namespace

TEST_CASE("a kernel's parameters fit CUDA's 32764 bytes") {
  // 4095 * 8 + 4 = 32764: the most there is room for.
  CHECK(analyzeParams(4095, "q: i32").empty());
  CHECK(analyzeParams(4095, "q: f16, r: f16").empty());
  CHECK(analyzeParams(4093, "q: bool, A: global f32[4]").empty());  // the pointer at 32752
  // One byte more; an i32 after a bool is aligned to 4 bytes.
  CHECK_THAT(analyzeParams(4095, "q: i32, r: bool"),
             Catch::Contains("the parameters up to 'r' take 32765 bytes, more than the 32764 bytes CUDA passes to a "
                             "kernel [too-large]"));
  CHECK_THAT(analyzeParams(4094, "q: bool, r: i32, A: global f32[4]"),
             Catch::Contains("up to 'A' take 32768 bytes"));
}
