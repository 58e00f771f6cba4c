// The examples, compiled by tyloc and run on the emulator against CPU references: the
// same thread IR the CUDA backend prints, so this checks the layout lowering end to end
// without a GPU. The checks are the main job's (examples/emulate/ExampleChecks.h); here at
// more sizes.
#include <catch2/catch.hpp>

#include "examples/emulate/ExampleChecks.h"
#include "tests/support/ExampleCases.h"

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

void require(const examples::Check& c) { test::requireClean(c); }

}  // namespace

TEST_CASE("add_one runs on the emulator and adds one to every element") {
  auto ex = compileExample("examples/add_one/add_one.tyl");
  require(examples::addOne(*ex));
}

TEST_CASE("add_one_n handles sizes that are not multiples of the block tile") {
  auto ex = compileExample("examples/add_one/add_one.tyl");
  std::vector<int64_t> sizes = test::kAddOneSizes;
  sizes.insert(sizes.begin(), 0);  // an empty grid: nothing is launched
  require(examples::addOneN(*ex, sizes));
}

TEST_CASE("gemm matches a CPU reference at several sizes for f16 and bf16") {
  auto ex = compileExample("examples/gemm/gemm.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::GemmCase& c : test::kGemmCases) require(examples::gemm(*ex, "gemm", t, c.problem, c.relu));
}

TEST_CASE("gemm_bt (B stored N x K) and gemm_at (A stored K x M) match a CPU reference for f16 and bf16") {
  auto ex = compileExample("examples/gemm/gemm.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::GemmCase& c : test::kGemmTransposedCases) {
      require(examples::gemm(*ex, "gemm_bt", t, c.problem, c.relu, examples::Stored::BNxK));
      require(examples::gemm(*ex, "gemm_at", t, c.problem, c.relu, examples::Stored::AKxM));
    }
}

TEST_CASE("gemm_sm90 matches a CPU reference for f16 and bf16, persistent with more tiles than blocks") {
  auto ex = compileExample("examples/gemm/gemm_sm90.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::Sm90Case& c : test::kSm90Cases) {
      ex->smCount = c.sms ? c.sms : 132;
      require(examples::gemm(*ex, "gemm_sm90", t, c.gemm.problem, c.gemm.relu));
    }
}

TEST_CASE("gemm_sm90_beta matches a CPU reference within 16-bit rounding, with and without reading C") {
  auto ex = compileExample("examples/gemm/gemm_sm90.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::Sm90BetaCase& c : test::kSm90BetaCases) {
      ex->smCount = c.sms ? c.sms : 132;
      require(examples::gemmBeta(*ex, t, c.problem, c.beta, "gemm_sm90_beta"));
    }
}

TEST_CASE("gemm_sm90_bt (B stored N x K) matches a CPU reference for f16 and bf16") {
  auto ex = compileExample("examples/gemm/gemm_sm90.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::Sm90Case& c : test::kSm90Cases) {
      ex->smCount = c.sms ? c.sms : 132;
      require(examples::gemm(*ex, "gemm_sm90_bt", t, c.gemm.problem, false, examples::Stored::BNxK));
    }
}

TEST_CASE("gemm_any matches a CPU reference at sizes that are not multiples of 8, for f16 and bf16") {
  auto ex = compileExample("examples/gemm/gemm.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::GemmCase& c : test::kGemmAnyCases)
      require(examples::gemm(*ex, "gemm_any", t, c.problem, c.relu));
}

TEST_CASE("gemm_beta matches a CPU reference within 16-bit rounding, at tile multiples and not") {
  auto ex = compileExample("examples/gemm/gemm.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const examples::Problem& p : test::kGemmBetaProblems)
      for (double beta : test::kGemmBetas) require(examples::gemmBeta(*ex, t, p, beta));
}

TEST_CASE("softmax matches a float64 row softmax and log-sum-exp, for N = 1, 33, 1000 and 4097, f32 and f16") {
  auto ex = compileExample("examples/softmax/softmax.tyl");
  for (Type t : {Type::F32, Type::F16}) {
    for (int64_t n : {1, 33, 1000, 4097}) require(examples::softmax(*ex, "softmax", t, 11, n));
    // 16-byte vectors: N a multiple of 4, rows past the last block's (M = 11 of 16).
    for (int64_t n : {4, 132, 1000}) require(examples::softmax(*ex, "softmax_v4", t, 11, n));
  }
}

TEST_CASE("softmax_block, one block a row, matches float64 for rows of part of a chunk and of several, f32 and f16") {
  auto ex = compileExample("examples/softmax/softmax.tyl");
  for (Type t : {Type::F32, Type::F16})
    for (int64_t n : {4, 1024, 3000}) require(examples::softmax(*ex, "softmax_block", t, 3, n));
}

TEST_CASE("attention at head dimension 64 matches a float64 softmax(Q Kᵀ scale) V and its log-sum-exp, f16 and bf16, causal and not") {
  auto ex = compileExample("examples/attention/attention.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (bool causal : {false, true})
      for (int64_t n : {1, 77, 256, 300}) require(examples::attention(*ex, t, 64, 1, 2, n, causal));
}

TEST_CASE("attention at head dimension 128 matches the float64 reference, f16 and bf16, causal and not") {
  auto ex = compileExample("examples/attention/attention.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (bool causal : {false, true})
      for (int64_t n : {1, 200}) require(examples::attention(*ex, t, 128, 1, 2, n, causal));
}
