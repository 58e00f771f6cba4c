// The written semantics of asynchronous copies on the emulator: the cases of
// tests/support/AsyncSemanticsCases.h, which the host-run tests run on the generated CUDA too.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "backend/emu/Emulator.h"
#include "base/Source.h"
#include "tests/support/AsyncSemanticsCases.h"
#include "tools/tyloc/Pipeline.h"

namespace tyl {
namespace {

TEST_CASE("emu.async: the emulator follows the written semantics of asynchronous copies") {
  SourceManager sources;
  std::optional<FileId> file =
      driver::loadInput(sources, std::string(TYLO_SOURCE_DIR) + "/tests/support/async_semantics.tyl");
  REQUIRE(file);
  DiagnosticEngine diags(sources);
  std::optional<tir::Module> module = driver::compileToThreadIR(sources, *file, diags);
  REQUIRE(module);
  for (const test::AsyncCase& c : test::kAsyncCases) {
    INFO(c.kernel << ": " << c.rule);
    const tir::Kernel* kernel = nullptr;
    for (const tir::Kernel& k : module->kernels)
      if (k.name == c.kernel) kernel = &k;
    REQUIRE(kernel);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(tir::Type::F32, test::kAsyncElements),
                                        emu::makeBuffer(tir::Type::F32, test::kAsyncElements)};
    for (int64_t i = 0; i < test::kAsyncElements; ++i) {
      const float a = test::asyncInput(i), zero = 0;
      std::memcpy(buffers[0].bytes.data() + 4 * i, &a, 4);
      std::memcpy(buffers[1].bytes.data() + 4 * i, &zero, 4);
    }
    emu::RunResult r = emu::run(*kernel, {emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
    CHECK(r.ok());
    CHECK(r.stats.asyncBytesLanded == c.bytesLanded);
    for (int64_t i = 0; i < test::kAsyncElements; ++i) {
      float b = 0;
      std::memcpy(&b, buffers[1].bytes.data() + 4 * i, 4);
      CHECK(b == (c.bCopiesA ? test::asyncInput(i) : 0.0f));
    }
  }
}

}  // namespace
}  // namespace tyl
