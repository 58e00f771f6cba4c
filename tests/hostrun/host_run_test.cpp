// The CUDA C++ that tyloc generates for the examples (and for gemm_bench's tile variants),
// compiled as host C++ and run by the host-thread harness against the CPU references of the
// examples' checks: the generated text itself, as nvcc gets it, computes the right results
// and stays inside its tensors, which the emulator (it runs the thread IR the text is printed
// from) cannot show. See tests/hostrun/README.md.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "add_one.cuh"
#include "async_semantics.cuh"
#include "examples/emulate/ExampleChecks.h"
#include "gemm.cuh"
#include "gemm_stages.cuh"
#include "gemm_sm90.cuh"
#include "launch_grid.cuh"
#include "mbarrier_handoff.cuh"
#include "named_barrier.cuh"
#include "tests/hostrun/HostRunner.h"
#include "tests/support/AsyncSemanticsCases.h"
#include "tests/support/MathCases.h"
#include "tests/support/ReduceCases.h"
#include "tests/support/StmatrixEpilogue.h"
#include "tests/support/TmaTiles.h"
#include "tests/support/WgmmaTiles.h"
#include "tests/support/ExampleCases.h"
#include "tma_tiles.cuh"
#include "ws_gemm.cuh"
#include "cluster_gemm.cuh"
#include "copy_orientations.cuh"
#include "stmatrix.cuh"
#include "math.cuh"
#include "reduce.cuh"
#include "tma_batched.cuh"
#include "wgmma_tiles.cuh"
#include "wide_elements.cuh"
#ifdef TYLO_HOST_RUN_VARIANTS
#include "host_variants.h"
#endif

using namespace tyl;
using tir::Type;

namespace {

const std::map<std::string, examples::Runner>& launchers() {
  static const std::map<std::string, examples::Runner> all = [] {
    std::map<std::string, examples::Runner> m{
        {"add_one", tylo_host::runner(add_one)},
        {"add_one_n", tylo_host::runner(add_one_n)},
        {"gemm_f16", tylo_host::runner(gemm_f16)},
        {"gemm_bf16", tylo_host::runner(gemm_bf16)},
        {"gemm_any_f16", tylo_host::runner(gemm_any_f16)},
        {"gemm_bt_f16", tylo_host::runner(gemm_bt_f16)},
        {"gemm_bt_bf16", tylo_host::runner(gemm_bt_bf16)},
        {"gemm_at_f16", tylo_host::runner(gemm_at_f16)},
        {"gemm_at_bf16", tylo_host::runner(gemm_at_bf16)},
        {"gemm_any_bf16", tylo_host::runner(gemm_any_bf16)},
        {"gemm_beta_f16", tylo_host::runner(gemm_beta_f16)},
        {"gemm_beta_bf16", tylo_host::runner(gemm_beta_bf16)},
        {"gemm_one_stage_f16", tylo_host::runner(gemm_one_stage_f16)},
        {"gemm_one_stage_bf16", tylo_host::runner(gemm_one_stage_bf16)},
        {"gemm_two_stage_f16", tylo_host::runner(gemm_two_stage_f16)},
        {"gemm_two_stage_bf16", tylo_host::runner(gemm_two_stage_bf16)},
        {"gemm_prefetch_f16", tylo_host::runner(gemm_prefetch_f16)},
        {"gemm_prefetch_bf16", tylo_host::runner(gemm_prefetch_bf16)},
        {"gemm_sm90_f16", tylo_host::runner(gemm_sm90_f16)},
        {"gemm_sm90_bf16", tylo_host::runner(gemm_sm90_bf16)},
        {"gemm_sm90_beta_f16", tylo_host::runner(gemm_sm90_beta_f16)},
        {"gemm_sm90_beta_bf16", tylo_host::runner(gemm_sm90_beta_bf16)},
        {"gemm_sm90_bt_f16", tylo_host::runner(gemm_sm90_bt_f16)},
        {"gemm_sm90_bt_bf16", tylo_host::runner(gemm_sm90_bt_bf16)},
    };
#ifdef TYLO_HOST_RUN_VARIANTS
#define TYLO_ADD_VARIANT(name, description) m.emplace("gemm_" #name "_bf16", tylo_host::runner(gemm_##name##_bf16));
    TYLO_HOST_VARIANTS(TYLO_ADD_VARIANT)
#undef TYLO_ADD_VARIANT
#endif
    return m;
  }();
  return all;
}

std::unique_ptr<examples::Example> compileForHost(const std::string& path) {
  auto ex = std::make_unique<examples::Example>();
  bool ok = examples::compile(path, *ex);
  INFO(ex->diagnostics);
  REQUIRE(ok);
  ex->where = "generated CUDA on the host";
  ex->runner = [](const tir::Kernel& k, const std::vector<emu::Arg>& args, std::vector<emu::Buffer>& buffers,
                  std::string& problems) {
    auto it = launchers().find(k.name);
    if (it == launchers().end()) {
      problems += k.name + ": no generated launcher of that name is linked into this test\n";
      return false;
    }
    return it->second(k, args, buffers, problems);
  };
  return ex;
}

std::unique_ptr<examples::Example> example(const std::string& relPath) {
  return compileForHost(std::string(TYLO_SOURCE_DIR) + "/" + relPath);
}

}  // namespace

TEST_CASE("generated add_one adds one to every element, run on the host") {
  auto ex = example("examples/add_one/add_one.tyl");
  test::requireClean(examples::addOne(*ex));
  test::requireClean(examples::addOneN(*ex, test::kAddOneSizes));
}

TEST_CASE("generated gemm matches a CPU reference at several sizes for f16 and bf16, run on the host") {
  auto ex = example("examples/gemm/gemm.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::GemmCase& c : test::kGemmCases) test::requireClean(examples::gemm(*ex, "gemm", t, c.problem, c.relu));
}

TEST_CASE("generated gemm_bt and gemm_at match a CPU reference for f16 and bf16, run on the host") {
  auto ex = example("examples/gemm/gemm.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::GemmCase& c : test::kGemmTransposedCases) {
      test::requireClean(examples::gemm(*ex, "gemm_bt", t, c.problem, c.relu, examples::Stored::BNxK));
      test::requireClean(examples::gemm(*ex, "gemm_at", t, c.problem, c.relu, examples::Stored::AKxM));
    }
}

TEST_CASE("generated gemm_sm90 matches a CPU reference for f16 and bf16, persistent, run on the host") {
  auto ex = example("examples/gemm/gemm_sm90.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::Sm90Case& c : test::kSm90Cases) {
      tylo_host::set_sm_count(c.sms ? c.sms : 132);
      test::requireClean(examples::gemm(*ex, "gemm_sm90", t, c.gemm.problem, c.gemm.relu));
    }
  tylo_host::set_sm_count(132);
}

TEST_CASE("generated gemm_sm90_beta matches a CPU reference within 16-bit rounding, run on the host") {
  auto ex = example("examples/gemm/gemm_sm90.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::Sm90BetaCase& c : test::kSm90BetaCases) {
      tylo_host::set_sm_count(c.sms ? c.sms : 132);
      test::requireClean(examples::gemmBeta(*ex, t, c.problem, c.beta, "gemm_sm90_beta"));
    }
  tylo_host::set_sm_count(132);
}

TEST_CASE("generated gemm_sm90_bt (B stored N x K) matches a CPU reference, run on the host") {
  auto ex = example("examples/gemm/gemm_sm90.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::Sm90Case& c : test::kSm90Cases) {
      tylo_host::set_sm_count(c.sms ? c.sms : 132);
      test::requireClean(examples::gemm(*ex, "gemm_sm90_bt", t, c.gemm.problem, false, examples::Stored::BNxK));
    }
  tylo_host::set_sm_count(132);
}

TEST_CASE("generated gemm_any matches a CPU reference at sizes that are not multiples of 8, run on the host") {
  auto ex = example("examples/gemm/gemm.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const test::GemmCase& c : test::kGemmAnyCases)
      test::requireClean(examples::gemm(*ex, "gemm_any", t, c.problem, c.relu));
}

TEST_CASE("generated gemm_beta matches a CPU reference within 16-bit rounding, run on the host") {
  auto ex = example("examples/gemm/gemm.tyl");
  for (Type t : {Type::F16, Type::BF16})
    for (const examples::Problem& p : test::kGemmBetaProblems)
      for (double beta : test::kGemmBetas) test::requireClean(examples::gemmBeta(*ex, t, p, beta));
}

TEST_CASE("generated hand-written pipelines match a CPU reference, run on the host") {
  auto ex = example("examples/gemm/gemm_stages.tyl");
  for (const char* base : {"gemm_one_stage", "gemm_two_stage", "gemm_prefetch"})
    for (Type t : {Type::F16, Type::BF16})
      for (const test::GemmCase& c : test::kPipelineCases)
        test::requireClean(examples::gemm(*ex, base, t, c.problem, c.relu));
}

#ifdef TYLO_HOST_RUN_VARIANTS
TEST_CASE("the generated gemm_bench variants match a CPU reference, run on the host") {
  int count = 0;
#define TYLO_CHECK_VARIANT(name, description)                                                              \
  {                                                                                                        \
    INFO("gemm_" #name ": " description);                                                                  \
    auto ex = compileForHost(std::string(TYLO_VARIANTS_DIR) + "/gemm_" #name ".tyl");                      \
    for (const test::GemmCase& c : test::variantCases(#name))                                              \
      test::requireClean(examples::gemm(*ex, "gemm_" #name, Type::BF16, c.problem, c.relu));               \
    ++count;                                                                                               \
  }
  TYLO_HOST_VARIANTS(TYLO_CHECK_VARIANT)
#undef TYLO_CHECK_VARIANT
  CHECK(count >= 8);
}
#endif

TEST_CASE("last_launch_error describes the last launcher called, and only it") {
  std::vector<float> a(1024, 1.0f), b(1024, 0.0f);
  CHECK(add_one_n(-1, a.data(), b.data()) == cudaErrorInvalidValue);
  REQUIRE(tylo::last_launch_error() != nullptr);
  CHECK(std::string(tylo::last_launch_error()) == "add_one_n: dimension 0 of A must not be negative (n = -1)");
  CHECK(add_one_n(0, a.data(), b.data()) == cudaSuccess);  // nothing to launch, and no error left behind
  CHECK(tylo::last_launch_error() == nullptr);
  CHECK(add_one_n(1, a.data() + 1, b.data()) == cudaErrorInvalidValue);
  REQUIRE(tylo::last_launch_error() != nullptr);
  CHECK(std::string(tylo::last_launch_error()) ==
        "add_one_n: A must be aligned to 16 bytes (declared 'align 16'); A is 4 bytes past a multiple of 16");
}

// CUDA keeps a failed call's error until cudaGetLastError() takes it: a launcher called after
// one reports its own launch, not that error.
void notAKernel(int) {}

TEST_CASE("a launcher does not report an error an earlier call left behind") {
  std::vector<float> a(1024, 1.0f), b(1024, 0.0f);
  REQUIRE(cudaFuncSetAttribute(notAKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, -1) ==
          cudaErrorInvalidValue);
  CHECK(add_one_n(1024, a.data(), b.data()) == cudaSuccess);
  CHECK(tylo::last_launch_error() == nullptr);
  CHECK(b[1023] == 2.0f);
}

// The emulator refuses the same launches (the checks are the kernel's LaunchChecks, and the
// grid's limits are checked before an empty grid returns).
TEST_CASE("launchers refuse a grid that divides by zero or is too large along any axis") {
  std::vector<int32_t> out(32, 0);
  const int before = tylo_host::launches();
  CHECK(divided_grid(out.data(), 64, 0) == cudaErrorInvalidValue);
  REQUIRE(tylo::last_launch_error() != nullptr);
  CHECK(std::string(tylo::last_launch_error()) == "divided_grid: grid dimension x divides by zero (d = 0)");
  CHECK(two_axes(out.data(), 0, 70000) == cudaErrorInvalidValue);
  REQUIRE(tylo::last_launch_error() != nullptr);
  CHECK(std::string(tylo::last_launch_error()) == "two_axes: the grid is larger than CUDA allows");
  CHECK(tylo_host::launches() == before);
  CHECK(two_axes(out.data(), 0, 65535) == cudaSuccess);  // empty: nothing to launch
  CHECK(divided_grid(out.data(), 64, 32) == cudaSuccess);
  CHECK(out[31] == 64);
}

// Extents and strides near 2^63 take the bytes a tensor covers past 128 bits; the launcher
// holds them at a bound beyond any address (with the sanitizer build, an overflow there fails).
TEST_CASE("a tensor whose bytes reach past any address overlaps every other") {
  std::vector<int64_t> buf(64, 5);
  const int64_t big = INT64_MAX;
  CHECK(strided(big, big, buf.data(), buf.data() + 32) == cudaErrorInvalidValue);        // B above A
  CHECK(strided(int64_t{1} << 62, -big, buf.data() + 40, buf.data()) == cudaErrorInvalidValue);  // B below A
  REQUIRE(tylo::last_launch_error() != nullptr);
  CHECK(std::string(tylo::last_launch_error()) == "strided: A and B must not overlap (the kernel writes B)");
  CHECK(strided(1, 1, buf.data() + 40, buf.data()) == cudaSuccess);
  CHECK(buf[31] == 5);
}

TEST_CASE("launchers refuse a tensor the kernel writes that overlaps another, and only then") {
  std::vector<float> a(4096, 1.0f);
  CHECK(add_one_n(1024, a.data(), a.data()) == cudaErrorInvalidValue);
  REQUIRE(tylo::last_launch_error() != nullptr);
  CHECK(std::string(tylo::last_launch_error()) == "add_one_n: A and B must not overlap (the kernel writes B)");
  CHECK(add_one_n(1024, a.data() + 1024, a.data() + 4) == cudaErrorInvalidValue);  // B's end reaches into A
  CHECK(add_one_n(1024, a.data(), a.data() + 1024) == cudaSuccess);                 // adjacent: disjoint
  CHECK(tylo::last_launch_error() == nullptr);
  for (int i = 1024; i < 2048; ++i) CHECK(a[static_cast<size_t>(i)] == 2.0f);
}

TEST_CASE("8-byte elements keep all their bits in 16-byte vector loads and stores") {
  // Values whose two words differ, negative ones included: a word lost or swapped shows.
  auto value = [](int64_t i) { return (i % 2 ? -1 : 1) * ((i << 33) + 0x12345 + i); };
  std::vector<int64_t> a(512), b(512, 0);
  for (int64_t i = 0; i < 512; ++i) a[static_cast<size_t>(i)] = value(i);
  REQUIRE(i64_through_shared(a.data(), b.data()) == cudaSuccess);
  CHECK(tylo_host::take_problems().empty());
  for (size_t i = 0; i < 256; ++i) CHECK(b[i] == a[i]);
  REQUIRE(i64_fragment(a.data(), b.data()) == cudaSuccess);
  CHECK(tylo_host::take_problems().empty());
  for (size_t i = 0; i < 512; ++i) CHECK(b[i] == a[i] + 1);
}

TEST_CASE("the generated code follows the written semantics of asynchronous copies") {
  // The cases of tests/support/AsyncSemanticsCases.h, which the emulator runs too.
  // A launcher takes `const float*` for a tensor its kernel only reads.
  const std::map<std::string, std::function<cudaError_t(float*, float*)>> launchers = {
      {"source_read_at_issue", [](float* a, float* b) { return source_read_at_issue(a, b); }},
      {"oldest_group_first", [](float* a, float* b) { return oldest_group_first(a, b); }},
      {"in_flight_at_exit", [](float* a, float* b) { return in_flight_at_exit(a, b); }},
  };
  for (const tyl::test::AsyncCase& c : tyl::test::kAsyncCases) {
    INFO(c.kernel << ": " << c.rule);
    auto launcher = launchers.find(c.kernel);
    REQUIRE(launcher != launchers.end());
    std::vector<float> a(tyl::test::kAsyncElements), b(tyl::test::kAsyncElements, 0.0f);
    for (int64_t i = 0; i < tyl::test::kAsyncElements; ++i) a[static_cast<size_t>(i)] = tyl::test::asyncInput(i);
    (void)tylo_host::take_async_bytes_landed();
    REQUIRE(launcher->second(a.data(), b.data()) == cudaSuccess);
    CHECK(tylo_host::take_problems().empty());
    CHECK(tylo_host::take_async_bytes_landed() == c.bytesLanded);
    for (int64_t i = 0; i < tyl::test::kAsyncElements; ++i)
      CHECK(b[static_cast<size_t>(i)] == (c.bCopiesA ? tyl::test::asyncInput(i) : 0.0f));
  }
}

TEST_CASE("the generated wgmma code computes the GEMM tiles of wgmma_tiles.tyl") {
  // The cases of tests/support/WgmmaTiles.h, which the emulator runs too.
  const std::map<std::string, tyl::examples::Runner> runners = {
      {"k128_mn128_f16", tylo_host::runner(k128_mn128_f16)}, {"k128_mn128_bf16", tylo_host::runner(k128_mn128_bf16)},
      {"k64_k64", tylo_host::runner(k64_k64)},               {"k32_none", tylo_host::runner(k32_none)},
      {"groups_m", tylo_host::runner(groups_m)},             {"groups_n_stage", tylo_host::runner(groups_n_stage)},
      {"a_regs", tylo_host::runner(a_regs)},                 {"a_regs_groups", tylo_host::runner(a_regs_groups)},
      {"k64_bt", tylo_host::runner(k64_bt)},
  };
  tyl::examples::Example ex;
  REQUIRE(tyl::examples::compile(std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/wgmma_tiles.tyl", ex));
  for (const tyl::test::WgmmaTile& c : tyl::test::kWgmmaTiles) {
    INFO(c.kernel);
    const tyl::tir::Kernel* kernel = nullptr;
    for (const tyl::tir::Kernel& k : ex.module->kernels)
      if (k.name == c.kernel) kernel = &k;
    REQUIRE(kernel);
    auto runner = runners.find(c.kernel);
    REQUIRE(runner != runners.end());
    std::vector<tyl::emu::Buffer> buffers = tyl::test::wgmmaTileInputs(c);
    std::vector<tyl::emu::Arg> args = {tyl::emu::Arg::pointer(0), tyl::emu::Arg::pointer(1), tyl::emu::Arg::pointer(2)};
    if (c.stage >= 0) args.push_back(tyl::emu::Arg::integer(c.stage));
    std::string problems;
    CHECK(runner->second(*kernel, args, buffers, problems));
    CHECK(problems == "");
    CHECK(tyl::test::wgmmaTileError(c, buffers) == "");
  }
}

TEST_CASE("the generated math functions lie within their bounds on the host") {
  // tests/emu/kernels/math.tyl, which tests/emu/math_test.cpp runs on the emulator too; the host
  // runtime computes every form in double and rounds once.
  tyl::examples::Example ex;
  REQUIRE(tyl::examples::compile(std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/math.tyl", ex));
  std::vector<tyl::emu::Buffer> b = tyl::test::mathInputs();
  std::string problems;
  CHECK(tylo_host::runner(math_functions)(ex.module->kernels.at(0),
                                          {tyl::emu::Arg::real(tyl::test::kMathScalar), tyl::emu::Arg::pointer(0),
                                           tyl::emu::Arg::pointer(1), tyl::emu::Arg::pointer(2)},
                                          b, problems));
  CHECK(problems == "");
  CHECK(tyl::test::mathError(b) == "");
  // The fast exponentials flush subnormal results, as ex2.approx.ftz does on the GPU.
  CHECK(tylo::fast_exp2(-130.0f) == 0.0f);
  CHECK(tylo::exp2(-130.0f) == 0x1p-130f);
  CHECK(tylo::fast_exp2(-126.0f) == 0x1p-126f);
  CHECK(tylo::fast_exp(-100.0f) == 0.0f);
}

TEST_CASE("the generated reductions shuffle across lanes and warps and broadcast back, and an accumulator feeds the next mma, run on the host") {
  // tests/emu/kernels/reduce.tyl, which tests/emu/reduce_test.cpp runs on the emulator too.
  tyl::examples::Example ex;
  REQUIRE(tyl::examples::compile(std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/reduce.tyl", ex));
  std::vector<tyl::emu::Buffer> b = tyl::test::reduceCInputs();
  std::vector<tyl::emu::Arg> args;
  for (int i = 0; i < 5; ++i) args.push_back(tyl::emu::Arg::pointer(i));
  std::string problems;
  CHECK(tylo_host::runner(reduce_c)(ex.module->kernels.at(0), args, b, problems));
  CHECK(problems == "");
  CHECK(tyl::test::reduceCError(b) == "");
  b = tyl::test::softmaxInputs(128);
  CHECK(tylo_host::runner(softmax_rows)(ex.module->kernels.at(1), {tyl::emu::Arg::pointer(0), tyl::emu::Arg::pointer(1)},
                                        b, problems));
  CHECK(problems == "");
  CHECK(tyl::test::softmaxError(b, 128) == "");
  b = tyl::test::softmaxInputs(33);
  CHECK(tylo_host::runner(softmax_tail)(ex.module->kernels.at(2),
                                        {tyl::emu::Arg::integer(33), tyl::emu::Arg::pointer(0), tyl::emu::Arg::pointer(1)},
                                        b, problems));
  CHECK(problems == "");
  CHECK(tyl::test::softmaxError(b, 33) == "");
  b = tyl::test::reduceWarpsInputs();
  CHECK(tylo_host::runner(reduce_warps)(ex.module->kernels.at(4),
                                        {tyl::emu::Arg::pointer(0), tyl::emu::Arg::pointer(1), tyl::emu::Arg::pointer(2)},
                                        b, problems));
  CHECK(problems == "");
  CHECK(tyl::test::reduceWarpsError(b) == "");
  b = tyl::test::accumulatorAsAInputs();
  CHECK(tylo_host::runner(accumulator_as_a)(
      ex.module->kernels.at(3),
      {tyl::emu::Arg::pointer(0), tyl::emu::Arg::pointer(1), tyl::emu::Arg::pointer(2), tyl::emu::Arg::pointer(3)}, b,
      problems));
  CHECK(problems == "");
  CHECK(tyl::test::accumulatorAsAError(b) == "");
}

TEST_CASE("the generated stmatrix stores put the accumulator in shared memory, plain and transposed") {
  // tests/emu/kernels/stmatrix.tyl compiled for sm_90a, which tests/emu/stmatrix_test.cpp runs on the
  // emulator too.
  tyl::examples::Example ex;
  REQUIRE(tyl::examples::compile(std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/stmatrix.tyl", ex));
  std::vector<tyl::emu::Buffer> b = tyl::test::stmatrixEpilogueInputs();
  std::string problems;
  CHECK(tylo_host::runner(stmatrix_epilogue)(
      ex.module->kernels.at(0),
      {tyl::emu::Arg::pointer(0), tyl::emu::Arg::pointer(1), tyl::emu::Arg::pointer(2), tyl::emu::Arg::pointer(3)}, b,
      problems));
  CHECK(problems == "");
  CHECK(tyl::test::stmatrixEpilogueError(b) == "");
}

TEST_CASE("the generated copies run along the dimension both layouts make contiguous, run on the host") {
  // tests/emu/kernels/copy_orientations.tyl, which tests/emu/copy_orientation_test.cpp runs on the
  // emulator: a K-major view of an N x K tensor in 16-byte vectors along K, and a transpose.
  tyl::examples::Example ex;
  REQUIRE(tyl::examples::compile(std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/copy_orientations.tyl", ex));
  auto kernel = [&](const std::string& name) -> const tyl::tir::Kernel& {
    for (const tyl::tir::Kernel& k : ex.module->kernels)
      if (k.name == name) return k;
    FAIL("no kernel " << name);
    throw;
  };
  for (auto [K, N] : {std::pair<int64_t, int64_t>{40, 72}, {8, 5}, {96, 130}}) {
    INFO("kmajor K = " << K << " N = " << N);
    std::vector<tyl::emu::Buffer> b{tyl::emu::makeBuffer(Type::F16, K * N), tyl::emu::makeBuffer(Type::F16, K * N, false)};
    tyl::emu::fillRandom(b[0], Type::F16, static_cast<uint64_t>(K + N));
    std::string problems;
    CHECK(tylo_host::runner(kmajor)(kernel("kmajor"),
                                    {tyl::emu::Arg::integer(K), tyl::emu::Arg::integer(N), tyl::emu::Arg::pointer(0),
                                     tyl::emu::Arg::pointer(1)},
                                    b, problems));
    CHECK(problems == "");
    CHECK(b[1].bytes == b[0].bytes);
  }
  for (auto [M, N] : {std::pair<int64_t, int64_t>{12, 70}, {20, 5}}) {
    INFO("colfrag M = " << M << " N = " << N);
    std::vector<tyl::emu::Buffer> b{tyl::emu::makeBuffer(Type::F32, M * N), tyl::emu::makeBuffer(Type::F32, M * N, false)};
    tyl::emu::fillRandom(b[0], Type::F32, static_cast<uint64_t>(M + N));
    std::string problems;
    CHECK(tylo_host::runner(colfrag)(kernel("colfrag"),
                                     {tyl::emu::Arg::integer(M), tyl::emu::Arg::integer(N), tyl::emu::Arg::pointer(0),
                                      tyl::emu::Arg::pointer(1)},
                                     b, problems));
    CHECK(problems == "");
    for (int64_t i = 0; i < M * N; ++i)
      CHECK(tyl::emu::getElement(b[1], Type::F32, i) == 2 * tyl::emu::getElement(b[0], Type::F32, i));
  }
  std::vector<tyl::emu::Buffer> b{tyl::emu::makeBuffer(Type::F32, 1024), tyl::emu::makeBuffer(Type::F32, 1024, false)};
  tyl::emu::fillRandom(b[0], Type::F32, 3);
  std::string problems;
  CHECK(tylo_host::runner(transpose)(kernel("transpose"), {tyl::emu::Arg::pointer(0), tyl::emu::Arg::pointer(1)}, b,
                                     problems));
  CHECK(problems == "");
  CHECK(b[1].bytes == b[0].bytes);
}

TEST_CASE("the generated TMA code copies tiles and feeds wgmma, with zeros past the edges") {
  // The cases of tests/support/TmaTiles.h, which the emulator runs too: the launcher encodes the
  // tensor maps (the harness keeps what it was given and refuses what the driver refuses), the
  // kernel's cp.async.bulk.tensor writes the boxes as TMA does.
  const std::map<std::string, tyl::examples::Runner> runners = {
      {"tma_b128", tylo_host::runner(tma_b128)},       {"tma_b64_panels", tylo_host::runner(tma_b64_panels)},
      {"tma_f32_b32", tylo_host::runner(tma_f32_b32)}, {"tma_tall", tylo_host::runner(tma_tall)},
      {"tma_stage", tylo_host::runner(tma_stage)},     {"tma_gemm", tylo_host::runner(tma_gemm)},
      {"tma_store_b128", tylo_host::runner(tma_store_b128)},
      {"tma_transposed", tylo_host::runner(tma_transposed)}, {"tma_store_transposed", tylo_host::runner(tma_store_transposed)},
  };
  tyl::examples::Example ex;
  REQUIRE(tyl::examples::compile(std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/tma_tiles.tyl", ex));
  auto kernel = [&](const std::string& name) -> const tyl::tir::Kernel& {
    for (const tyl::tir::Kernel& k : ex.module->kernels)
      if (k.name == name) return k;
    FAIL("no kernel " << name);
    throw;
  };
  for (const tyl::test::TmaCopyCase& c : tyl::test::kTmaCopyCases) {
    INFO(c.kernel << " M = " << c.m << " N = " << c.n);
    std::vector<tyl::emu::Buffer> buffers = tyl::test::tmaCopyInputs(c);
    std::string problems;
    CHECK(runners.at(c.kernel)(kernel(c.kernel), tyl::test::tmaCopyArgs(c), buffers, problems));
    CHECK(problems == "");
    CHECK(tyl::test::tmaCopyError(c, buffers) == "");
  }
  for (const tyl::test::TmaGemmCase& g : tyl::test::kTmaGemmCases) {
    INFO("tma_gemm M = " << g.m << " N = " << g.n << " K = " << g.k);
    std::vector<tyl::emu::Buffer> buffers = tyl::test::tmaGemmInputs(g);
    std::string problems;
    CHECK(runners.at("tma_gemm")(kernel("tma_gemm"), tyl::test::tmaGemmArgs(g), buffers, problems));
    CHECK(problems == "");
    CHECK(tyl::test::tmaGemmError(g, buffers) == "");
  }
  tyl::examples::Example ws;
  REQUIRE(tyl::examples::compile(std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/ws_gemm.tyl", ws));
  for (const tyl::test::TmaGemmCase& g : tyl::test::kWsGemmCases) {
    INFO("ws_gemm M = " << g.m << " N = " << g.n << " K = " << g.k);
    std::vector<tyl::emu::Buffer> buffers = tyl::test::tmaGemmInputs(g);
    std::string problems;
    CHECK(tylo_host::runner(ws_gemm)(ws.module->kernels.at(0), tyl::test::wsGemmArgs(g), buffers, problems));
    CHECK(problems == "");
    CHECK(tyl::test::tmaGemmError(g, buffers) == "");
    std::vector<tyl::emu::Buffer> flat = tyl::test::tmaGemmInputs(g);
    CHECK(tylo_host::runner(ws_flat)(ws.module->kernels.at(4), tyl::test::tmaGemmArgs(g), flat, problems));
    CHECK(problems == "");
    CHECK(tyl::test::tmaGemmError(g, flat) == "");
  }
  // MMAs left in flight: performed at the wait that retires them, so a stage handed back before
  // that is refilled under them and the result is wrong.
  for (const tyl::test::TmaGemmCase& g : tyl::test::kWsAsyncCases) {
    INFO("ws_async M = " << g.m << " N = " << g.n << " K = " << g.k);
    std::vector<tyl::emu::Buffer> buffers = tyl::test::tmaGemmInputs(g);
    std::string problems;
    CHECK(tylo_host::runner(ws_async)(ws.module->kernels.at(3), tyl::test::wsGemmArgs(g), buffers, problems));
    CHECK(problems == "");
    CHECK(tyl::test::tmaGemmError(g, buffers) == "");
  }
  {
    const tyl::test::TmaGemmCase g = tyl::test::kWsAsyncCases[0];
    std::vector<tyl::emu::Buffer> buffers = tyl::test::tmaGemmInputs(g);
    std::string problems;
    CHECK(tylo_host::runner(ws_async)(ws.module->kernels.at(3), tyl::test::wsGemmArgs(g, 1), buffers, problems));
    CHECK(tyl::test::tmaGemmError(g, buffers) != "");
  }
  // Windows of 3-D and 4-D tensors: tensor maps of that rank.
  tyl::examples::Example batched;
  REQUIRE(tyl::examples::compile(std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/tma_batched.tyl", batched));
  const std::map<std::string, std::pair<tyl::examples::Runner, size_t>> batchedRunners = {
      {"tma_batched", {tylo_host::runner(tma_batched), 0}},
      {"tma_store_4d", {tylo_host::runner(tma_store_4d), 1}},
      {"tma_box3d", {tylo_host::runner(tma_box3d), 2}},
      {"tma_store_box3d", {tylo_host::runner(tma_store_box3d), 3}},
  };
  for (const tyl::test::TmaBatchedCase& t : tyl::test::kTmaBatchedCases) {
    INFO(t.kernel << " M = " << t.m << " N = " << t.n);
    std::vector<tyl::emu::Buffer> buffers = tyl::test::tmaBatchedInputs(t);
    std::string problems;
    const auto& [run, index] = batchedRunners.at(t.kernel);
    CHECK(run(batched.module->kernels.at(index), tyl::test::tmaBatchedArgs(t), buffers, problems));
    CHECK(problems == "");
    CHECK(tyl::test::tmaBatchedError(t, buffers) == "");
  }
  // The warp-specialized pipeline construct (the second kernel of ws_gemm.tyl), persistent on two SMs.
  tylo_host::set_sm_count(2);
  for (const tyl::test::TmaGemmCase& g : tyl::test::kWsPipelineCases) {
    INFO("ws_pipeline M = " << g.m << " N = " << g.n << " K = " << g.k);
    std::vector<tyl::emu::Buffer> buffers = tyl::test::tmaGemmInputs(g);
    std::string problems;
    CHECK(tylo_host::runner(ws_pipeline)(ws.module->kernels.at(1), tyl::test::tmaGemmArgs(g), buffers, problems));
    CHECK(problems == "");
    CHECK(tyl::test::tmaGemmError(g, buffers) == "");
  }
  tylo_host::set_sm_count(132);
  // Clusters of two, at a few SMs, so that each cluster takes several units of work; without the
  // cluster barrier at its end, a block exits while its peer still arrives on its barriers.
  tyl::examples::Example clustered;
  REQUIRE(tyl::examples::compile(std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/cluster_gemm.tyl", clustered));
  for (const tyl::test::ClusterGemmCase& g : tyl::test::kClusterGemmCases) {
    INFO("cluster_gemm M = " << g.size.m << " N = " << g.size.n << " K = " << g.size.k << " on " << g.sms << " SMs");
    tylo_host::set_sm_count(g.sms);
    std::vector<tyl::emu::Buffer> buffers = tyl::test::tmaGemmInputs(g.size);
    std::string problems;
    CHECK(tylo_host::runner(cluster_gemm)(clustered.module->kernels.at(0), tyl::test::clusterGemmArgs(g), buffers,
                                          problems));
    CHECK(problems == "");
    CHECK(tyl::test::tmaGemmError(g.size, buffers) == "");
  }
  {
    const tyl::test::ClusterGemmCase g = tyl::test::kClusterGemmCases[0];
    tylo_host::set_sm_count(g.sms);
    std::vector<tyl::emu::Buffer> buffers = tyl::test::tmaGemmInputs(g.size);
    std::string problems;
    CHECK_FALSE(tylo_host::runner(cluster_gemm)(clustered.module->kernels.at(0), tyl::test::clusterGemmArgs(g, 1),
                                                buffers, problems));
    CHECK_THAT(problems, Catch::Contains("has exited, and its shared memory with it"));
    tylo_host::set_sm_count(132);
  }
  // What cuTensorMapEncodeTiled refuses, the launcher reports: rows not 16 bytes apart are caught
  // by its own check first.
  std::vector<tyl::emu::Buffer> odd = tyl::test::tmaCopyInputs({"tma_b128", Type::BF16, 32, 64, 32, 60, -1});
  std::string problems;
  CHECK_FALSE(runners.at("tma_b128")(kernel("tma_b128"),
                                     tyl::test::tmaCopyArgs({"tma_b128", Type::BF16, 32, 64, 32, 60, -1}), odd,
                                     problems));
  CHECK_THAT(problems, Catch::Contains("the rows of A must be a multiple of 16 bytes apart"));
}

TEST_CASE("the generated mbarrier code hands data from warp to warp, and a phase that never completes hangs") {
  // tests/emu/kernels/mbarrier_handoff.tyl, as the emulator runs it in findings_tyl_test.cpp.
  std::vector<float> a(32), b(32, 0.0f);
  for (int i = 0; i < 32; ++i) a[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i) - 3.0f;
  REQUIRE(handoff(a.data(), b.data(), 0, 0) == cudaSuccess);
  CHECK(tylo_host::take_problems().empty());
  for (size_t i = 0; i < 32; ++i) CHECK(b[i] == 2 * a[i]);
  CHECK(handoff(a.data(), b.data(), 0, 1024) != cudaSuccess);
  CHECK_THAT(tylo_host::take_problems(), Catch::Contains("deadlock"));
}

TEST_CASE("the generated named barriers synchronise the warps that reach them, and a wrong count fails") {
  // tests/emu/kernels/named_barrier.tyl, as the emulator runs it in findings_tyl_test.cpp.
  std::vector<float> a(128), b(128, 0.0f);
  for (int i = 0; i < 128; ++i) a[static_cast<size_t>(i)] = 0.25f * static_cast<float>(i) - 7.0f;
  REQUIRE(named_exchange(2, a.data(), b.data(), 0) == cudaSuccess);
  CHECK(tylo_host::take_problems().empty());
  for (size_t i = 0; i < 128; ++i) CHECK(b[i] == a[i < 64 ? 63 - i : 191 - i]);
  CHECK(named_exchange(1, a.data(), b.data(), 0) != cudaSuccess);
  CHECK_THAT(tylo_host::take_problems(), Catch::Contains("deadlock"));
  CHECK(named_exchange(4, a.data(), b.data(), 0) != cudaSuccess);
  CHECK_THAT(tylo_host::take_problems(), Catch::Contains("bar.sync 1 reached by 128 threads"));
}
