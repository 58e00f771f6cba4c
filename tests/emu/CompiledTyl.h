// A .tyl file of tests/emu/kernels compiled to thread IR by the pipeline, as tyloc does, for
// the tests that run its kernels on the emulator.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>

#include "tools/tyloc/Pipeline.h"

namespace tyl::test {

struct CompiledTyl {
  SourceManager sources;
  std::optional<tir::Module> module;
  const tir::Kernel& kernel(const std::string& name) const {
    for (const tir::Kernel& k : module->kernels)
      if (k.name == name) return k;
    FAIL("no kernel " << name);
    throw;
  }
};

// tests/emu/kernels/<file>, which must compile, lowered for `arch`.
inline std::unique_ptr<CompiledTyl> compileKernels(const std::string& file, cuda::Arch arch = cuda::Arch::Sm80) {
  auto c = std::make_unique<CompiledTyl>();
  std::optional<FileId> id = driver::loadInput(c->sources, std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/" + file);
  REQUIRE(id);
  DiagnosticEngine diags(c->sources);
  c->module = driver::compileToThreadIR(c->sources, *id, diags, arch);
  REQUIRE(c->module);
  return c;
}

}  // namespace tyl::test
