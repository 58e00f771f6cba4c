// The wgmma GEMM tiles of tests/emu/kernels/wgmma_tiles.tyl, compiled by the pipeline and run on
// the emulator against A @ B in double precision: every operand form, one and two warpgroups, a
// stage chosen at run time. tests/hostrun runs the same kernels as generated CUDA.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "backend/emu/Emulator.h"
#include "backend/emu/Values.h"
#include "tests/support/WgmmaTiles.h"
#include "tools/tyloc/Pipeline.h"

namespace tyl {
namespace {

TEST_CASE("emu.wgmma: the GEMM tiles of wgmma_tiles.tyl compute A @ B in every operand form", "[wgmma]") {
  SourceManager sources;
  std::optional<FileId> file =
      driver::loadInput(sources, std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/wgmma_tiles.tyl");
  REQUIRE(file);
  DiagnosticEngine diags(sources);
  std::optional<tir::Module> module = driver::compileToThreadIR(sources, *file, diags);
  REQUIRE(module);
  for (const test::WgmmaTile& c : test::kWgmmaTiles) {
    INFO(c.kernel);
    const tir::Kernel* kernel = nullptr;
    for (const tir::Kernel& k : module->kernels)
      if (k.name == c.kernel) kernel = &k;
    REQUIRE(kernel);
    std::vector<emu::Buffer> buffers = test::wgmmaTileInputs(c);
    std::vector<emu::Arg> args = {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::pointer(2)};
    if (c.stage >= 0) args.push_back(emu::Arg::integer(c.stage));
    emu::RunResult r = emu::run(*kernel, args, buffers);
    INFO(emu::renderFindings(r.findings, sources));
    REQUIRE(r.ok());
    CHECK(r.stats.wgmmas == c.wgmmasPerWarp * kernel->threadsPerBlock() / 32);
    CHECK(test::wgmmaTileError(c, buffers) == "");
  }
}

}  // namespace
}  // namespace tyl
