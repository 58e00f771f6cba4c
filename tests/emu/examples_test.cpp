// The examples, compiled by tyloc and run on the emulator against CPU references: the
// same thread IR the CUDA backend prints, so this checks the layout lowering end to end
// without a GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

#include "backend/emu/Emulator.h"
#include "tools/tyloc/Pipeline.h"

using namespace tyl;
using tir::Type;

namespace {

struct Compiled {
  SourceManager sources;
  std::optional<tir::Module> module;
  std::string diagnostics;
};

Compiled compileExample(const std::string& relPath) {
  Compiled c;
  std::string error;
  std::optional<std::string> text = driver::readFile(std::string(TYLO_SOURCE_DIR) + "/" + relPath, error);
  REQUIRE(text);
  FileId file = c.sources.add(relPath, std::move(*text));
  DiagnosticEngine diags(c.sources);
  c.module = driver::compileToThreadIR(file, diags);
  std::ostringstream os;
  diags.renderText(os);
  c.diagnostics = os.str();
  INFO(c.diagnostics);
  REQUIRE(c.module);
  return c;
}

const tir::Kernel& kernel(const Compiled& c, const std::string& name) {
  for (const tir::Kernel& k : c.module->kernels)
    if (k.name == name) return k;
  FAIL("no kernel " << name);
  return c.module->kernels.front();
}

void requireClean(const emu::RunResult& r, const Compiled& c) {
  INFO(emu::renderFindings(r.findings, c.sources));
  REQUIRE(r.findings.empty());
  REQUIRE(r.completed);
}

}  // namespace

TEST_CASE("add_one runs on the emulator and adds one to every element") {
  Compiled c = compileExample("examples/add_one/add_one.tyl");
  std::vector<emu::Buffer> buffers{emu::makeBuffer(Type::F32, 128), emu::makeBuffer(Type::F32, 128, false)};
  emu::fillRandom(buffers[0], Type::F32, 7);
  emu::RunResult r = emu::run(kernel(c, "add_one"), {emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
  requireClean(r, c);
  for (int i = 0; i < 128; ++i) {
    float a = static_cast<float>(emu::getElement(buffers[0], Type::F32, i));
    CHECK(emu::getElement(buffers[1], Type::F32, i) == static_cast<double>(a + 1.0f));
  }
}

TEST_CASE("add_one_n handles sizes that are not multiples of the block tile") {
  Compiled c = compileExample("examples/add_one/add_one.tyl");
  for (int64_t n : {0, 1, 3, 1023, 1024, 1025, 4096 + 5}) {
    INFO("n = " << n);
    std::vector<emu::Buffer> buffers{emu::makeBuffer(Type::F32, n), emu::makeBuffer(Type::F32, n, false)};
    emu::fillRandom(buffers[0], Type::F32, 11 + n);
    emu::RunResult r = emu::run(kernel(c, "add_one_n"),
                                {emu::Arg::integer(n), emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
    requireClean(r, c);
    for (int64_t i = 0; i < n; ++i) {
      float a = static_cast<float>(emu::getElement(buffers[0], Type::F32, i));
      REQUIRE(emu::getElement(buffers[1], Type::F32, i) == static_cast<double>(a + 1.0f));
    }
  }
}

namespace {

void checkGemm(const Compiled& c, Type t, int64_t M, int64_t N, int64_t K, bool relu) {
  INFO("gemm " << tir::typeName(t) << " " << M << "x" << N << "x" << K << (relu ? " relu" : ""));
  std::string name = std::string("gemm_") + tir::typeName(t);
  std::vector<emu::Buffer> buffers{emu::makeBuffer(t, M * K), emu::makeBuffer(t, K * N),
                                   emu::makeBuffer(Type::F32, M * N, false)};
  emu::fillRandom(buffers[0], t, 100 + M);
  emu::fillRandom(buffers[1], t, 200 + N);
  const double alpha = 1.5;
  emu::RunResult r = emu::run(kernel(c, name),
                              {emu::Arg::integer(M), emu::Arg::integer(N), emu::Arg::integer(K), emu::Arg::pointer(0),
                               emu::Arg::pointer(1), emu::Arg::pointer(2), emu::Arg::real(alpha),
                               emu::Arg::integer(relu ? 1 : 0)},
                              buffers);
  requireClean(r, c);
  double errSq = 0, refSq = 0, worst = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k)
        ref += emu::getElement(buffers[0], t, i * K + k) * emu::getElement(buffers[1], t, k * N + j);
      ref *= alpha;
      if (relu) ref = std::max(ref, 0.0);
      double got = emu::getElement(buffers[2], Type::F32, i * N + j);
      errSq += (got - ref) * (got - ref);
      refSq += ref * ref;
      worst = std::max(worst, std::abs(got - ref));
    }
  }
  // f32 accumulation of exactly representable products: only summation rounding.
  CHECK(std::sqrt(errSq / std::max(refSq, 1e-30)) < 1e-5);
  CHECK(worst < 1e-3);
}

}  // namespace

TEST_CASE("gemm matches a CPU reference at several sizes for f16 and bf16") {
  Compiled c = compileExample("examples/gemm/gemm.tyl");
  for (Type t : {Type::F16, Type::BF16}) {
    checkGemm(c, t, 64, 64, 32, false);
    checkGemm(c, t, 128, 256, 64, true);
    checkGemm(c, t, 200, 136, 72, false);
    checkGemm(c, t, 200, 136, 72, true);
  }
}
