// The GEMM pipelines of examples/gemm: gemm.tyl's `pipeline(stages = 4, prefetch_loads = true)`
// construct and gemm_stages.tyl's hand-written one-stage, two-stage and prefetching versions
// (copy_async, commit_copies,
// wait_copies, barrier), compiled by tyloc and run on the emulator. They must agree with a
// CPU reference and, since every version sums the same products in the same order, with each
// other bit for bit; the emulator's race and cp.async checks must find nothing. The
// hand-written two-stage kernel is also checked to be exactly what the construct expands to
// with two stages, and two planted pipeline bugs to be caught.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "backend/emu/Emulator.h"
#include "base/Source.h"
#include "ir/thread/Print.h"
#include "tools/tyloc/Pipeline.h"

using namespace tyl;
using tir::Type;

namespace {

std::string readExample(const std::string& relPath) {
  std::string error;
  std::optional<std::string> text = readSourceText(std::string(TYLO_SOURCE_DIR) + "/" + relPath, error);
  INFO(error);
  REQUIRE(text);
  return *text;
}

// `text` with its one occurrence of `from` replaced by `to`.
std::string replaceOnce(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  INFO("looking for: " << from);
  REQUIRE(at != std::string::npos);
  REQUIRE(text.find(from, at + 1) == std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// `text` without the kernel `name` (from "kernel name<" to the first "}" alone on a line).
std::string withoutKernel(std::string text, const std::string& name) {
  const size_t at = text.find("\nkernel " + name + "<");
  INFO("looking for kernel " << name);
  REQUIRE(at != std::string::npos);
  const size_t end = text.find("\n}\n", at);
  REQUIRE(end != std::string::npos);
  return text.erase(at + 1, end + 3 - (at + 1));
}

struct Compiled {
  SourceManager sources;
  std::optional<tir::Module> module;
};

// Compiles .tyl source text (named `name` in diagnostics) to thread IR; fails on errors.
std::unique_ptr<Compiled> compileText(const std::string& name, std::string text) {
  auto c = std::make_unique<Compiled>();
  FileId file = c->sources.add(name, std::move(text));
  DiagnosticEngine diags(c->sources);
  c->module = driver::compileToThreadIR(c->sources, file, diags);
  std::ostringstream os;
  diags.renderText(os);
  INFO(os.str());
  REQUIRE(c->module);
  return c;
}

const tir::Kernel& kernel(const Compiled& c, const std::string& name) {
  for (const tir::Kernel& k : c.module->kernels)
    if (k.name == name) return k;
  FAIL("no kernel " << name);
  return c.module->kernels.front();
}

struct Shape {
  int64_t M, N, K;
};

struct Problem {
  Type t;
  Shape s;
  bool relu;
  double alpha;
  emu::Buffer A, B;
  std::vector<double> ref;  // alpha * A @ B (relu applied), from the 16-bit inputs, in double

  Problem(Type type, Shape shape, bool applyRelu)
      : t(type),
        s(shape),
        relu(applyRelu),
        alpha(applyRelu ? -0.75 : 1.5),
        A(emu::makeBuffer(type, shape.M * shape.K)),
        B(emu::makeBuffer(type, shape.K * shape.N)) {
    emu::fillRandom(A, t, 1000 + s.M * 7 + s.K);
    emu::fillRandom(B, t, 2000 + s.N * 5 + s.K);
    ref.assign(s.M * s.N, 0.0);
    for (int64_t i = 0; i < s.M; ++i)
      for (int64_t k = 0; k < s.K; ++k) {
        const double a = emu::getElement(A, t, i * s.K + k);
        for (int64_t j = 0; j < s.N; ++j) ref[i * s.N + j] += a * emu::getElement(B, t, k * s.N + j);
      }
    for (double& r : ref) {
      r *= alpha;
      if (relu) r = std::max(r, 0.0);
    }
  }
};

// Runs `name` on the problem; checks a clean run and the result against the reference;
// returns C's bytes.
std::vector<std::byte> runGemm(const Compiled& c, const std::string& name, const Problem& p) {
  INFO(name << " " << p.s.M << "x" << p.s.N << "x" << p.s.K << (p.relu ? " relu" : ""));
  std::vector<emu::Buffer> buffers{p.A, p.B, emu::makeBuffer(Type::F32, p.s.M * p.s.N, false)};
  emu::RunResult r =
      emu::run(kernel(c, name),
               {emu::Arg::integer(p.s.M), emu::Arg::integer(p.s.N), emu::Arg::integer(p.s.K), emu::Arg::pointer(0),
                emu::Arg::pointer(1), emu::Arg::pointer(2), emu::Arg::real(p.alpha), emu::Arg::integer(p.relu ? 1 : 0)},
               buffers);
  INFO(emu::renderFindings(r.findings, c.sources));
  REQUIRE(r.findings.empty());
  REQUIRE(r.completed);
  double errSq = 0, refSq = 0, worst = 0;
  for (int64_t i = 0; i < p.s.M * p.s.N; ++i) {
    const double got = emu::getElement(buffers[2], Type::F32, i);
    const double ref = p.ref[i];
    errSq += (got - ref) * (got - ref);
    refSq += ref * ref;
    worst = std::max(worst, std::abs(got - ref));
  }
  // Products of 16-bit values are exact in f32: only the f32 summation rounds.
  CHECK(std::sqrt(errSq / std::max(refSq, 1e-30)) < 1e-5);
  CHECK(worst < 1e-3);
  return buffers[2].bytes;
}

const char* suffix(Type t) { return t == Type::F16 ? "_f16" : "_bf16"; }

}  // namespace

TEST_CASE("gemm_one_stage, gemm_two_stage, gemm_prefetch and gemm_any match the pipeline construct bit for bit") {
  auto construct = compileText("examples/gemm/gemm.tyl", readExample("examples/gemm/gemm.tyl"));
  auto byHand = compileText("examples/gemm/gemm_stages.tyl", readExample("examples/gemm/gemm_stages.tyl"));
  // K = 72: two whole steps and a partial one; K = 160: five steps, so both the two- and the
  // four-stage buffers wrap around; M = 1: one row of a 128-row tile; K = 0: C = 0.
  const Shape shapes[] = {{200, 136, 72}, {64, 256, 160}, {1, 8, 8}, {40, 16, 0}};
  for (Type t : {Type::F16, Type::BF16}) {
    for (const Shape& s : shapes) {
      const Problem p(t, s, /*applyRelu=*/s.K == 72);
      const std::vector<std::byte> three = runGemm(*construct, std::string("gemm") + suffix(t), p);
      const std::vector<std::byte> one = runGemm(*byHand, std::string("gemm_one_stage") + suffix(t), p);
      const std::vector<std::byte> two = runGemm(*byHand, std::string("gemm_two_stage") + suffix(t), p);
      const std::vector<std::byte> prefetch = runGemm(*byHand, std::string("gemm_prefetch") + suffix(t), p);
      const std::vector<std::byte> any = runGemm(*construct, std::string("gemm_any") + suffix(t), p);
      INFO(tir::typeName(t) << " " << s.M << "x" << s.N << "x" << s.K);
      CHECK(one == three);
      CHECK(two == three);
      CHECK(prefetch == three);
      CHECK(any == three);
    }
  }
}

TEST_CASE("pipeline(prefetch_loads = true) matches the plain construct bit for bit, over stages and sub-steps") {
  // gemm_any's staging layouts deal the tiles to 512 threads in runs of 8, which BK = 16 and
  // BK = 48 do not allow: the kernel and its layouts go.
  std::string prefetching = withoutKernel(readExample("examples/gemm/gemm.tyl"), "gemm_any");
  for (const char* stage : {"layout StageA = ", "layout StageB = "})
    prefetching = replaceOnce(prefetching, stage, std::string("// ") + stage);
  auto plain = compileText("examples/gemm/gemm.tyl without prefetch_loads",
                           replaceAll(prefetching, "pipeline(stages = STAGES, prefetch_loads = true) for k",
                                      "pipeline(stages = STAGES) for k"));
  // K = 200 with BK = 48: four whole steps and a partial one, three sub-steps each (an odd
  // count, so the fragment sets swap at the end of a step); BK = 16: one sub-step.
  const Shape shapes[] = {{130, 136, 200}, {1, 8, 8}, {40, 16, 0}};
  for (const char* bk : {"const BK = 16;", "const BK = 32;", "const BK = 48;"}) {
    for (const char* stages : {"const STAGES = 2;", "const STAGES = 3;", "const STAGES = 4;"}) {
      const std::string text =
          replaceOnce(replaceOnce(prefetching, "const BK = 32;", bk), "const STAGES = 4;", stages);
      auto c = compileText(std::string("prefetch ") + bk + " " + stages, text);
      for (const Shape& s : shapes) {
        INFO(bk << " " << stages << " " << s.M << "x" << s.N << "x" << s.K);
        const Problem p(Type::BF16, s, /*applyRelu=*/false);
        CHECK(runGemm(*c, "gemm_bf16", p) == runGemm(*plain, "gemm_bf16", p));
      }
    }
  }
}

TEST_CASE("gemm_two_stage is what the pipeline construct expands to with two stages") {
  const std::string source = readExample("examples/gemm/gemm.tyl");
  const std::string twoStages =
      replaceAll(replaceOnce(source, "const STAGES = 4;", "const STAGES = 2;"),
                 "pipeline(stages = STAGES, prefetch_loads = true) for k", "pipeline(stages = STAGES) for k");
  auto construct = compileText("gemm-2-stages.tyl", twoStages);
  auto byHand = compileText("examples/gemm/gemm_stages.tyl", readExample("examples/gemm/gemm_stages.tyl"));
  for (Type t : {Type::F16, Type::BF16}) {
    const std::string name = std::string("gemm") + suffix(t);
    const std::string handName = std::string("gemm_two_stage") + suffix(t);
    const std::string expanded = tir::print(kernel(*construct, name));
    const std::string written = replaceAll(tir::print(kernel(*byHand, handName)), handName, name);
    CHECK(written == expanded);
  }
}

TEST_CASE("the emulator catches a hand-written pipeline that waits too little or drops a barrier") {
  const std::string source = readExample("examples/gemm/gemm_stages.tyl");
  const Problem p(Type::F16, {128, 128, 96}, false);
  std::vector<emu::Buffer> buffers{p.A, p.B, emu::makeBuffer(Type::F32, p.s.M * p.s.N, false)};
  const std::vector<emu::Arg> args{emu::Arg::integer(p.s.M), emu::Arg::integer(p.s.N), emu::Arg::integer(p.s.K),
                                   emu::Arg::pointer(0),     emu::Arg::pointer(1),     emu::Arg::pointer(2),
                                   emu::Arg::real(p.alpha),  emu::Arg::integer(0)};
  const auto kinds = [](const emu::RunResult& r) {
    std::vector<emu::FindingKind> k;
    for (const emu::Finding& f : r.findings) k.push_back(f.kind);
    return k;
  };
  const auto has = [&](const emu::RunResult& r, emu::FindingKind kind) {
    const std::vector<emu::FindingKind> k = kinds(r);
    return std::find(k.begin(), k.end(), kind) != k.end();
  };

  SECTION("wait_copies(1) lets the compute read step k before its copies land") {
    auto c = compileText("two-stage-waits-too-little.tyl", replaceOnce(source, "wait_copies(0);       // step k's copies have landed ...",
                                                    "wait_copies(1);"));
    emu::RunResult r = emu::run(kernel(*c, "gemm_two_stage_f16"), args, buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    CHECK(has(r, emu::FindingKind::AsyncReadBeforeWait));
  }
  SECTION("without the barrier that ends a step the next copies overwrite a buffer still being read") {
    auto c = compileText(
        "two-stage-no-trailing-barrier.tyl",
        replaceOnce(source,
                    "barrier();            // ... for every thread, and every warp is done with step k - 1", ""));
    emu::RunResult r = emu::run(kernel(*c, "gemm_two_stage_f16"), args, buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    CHECK(has(r, emu::FindingKind::SharedRace));
  }
  SECTION("one stage without the barrier before the compute reads other threads' copies unsynchronized") {
    auto c = compileText("one-stage-no-barrier.tyl",
                         replaceOnce(source,
                                     "wait_copies(0);       // this thread's copies have landed ...\n"
                                     "        barrier();            // ... and every other thread's",
                                     "wait_copies(0);"));
    emu::RunResult r = emu::run(kernel(*c, "gemm_one_stage_f16"), args, buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    CHECK(has(r, emu::FindingKind::SharedRace));
  }
  SECTION("gemm_prefetch waiting for one group fewer loads the next step's fragments before they land") {
    auto c = compileText("prefetch-waits-too-little.tyl",
                         replaceOnce(source, "wait_copies(STAGES - 2);  // step k + 1 has landed ...",
                                     "wait_copies(STAGES - 1);"));
    emu::RunResult r = emu::run(kernel(*c, "gemm_prefetch_f16"), args, buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    CHECK(has(r, emu::FindingKind::AsyncReadBeforeWait));
  }
  SECTION("gemm_prefetch without its barrier reads other threads' copies unsynchronized") {
    auto c = compileText(
        "prefetch-no-barrier.tyl",
        replaceOnce(source, "barrier();                // ... for every thread, and every warp has read step k", ""));
    emu::RunResult r = emu::run(kernel(*c, "gemm_prefetch_f16"), args, buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    CHECK(has(r, emu::FindingKind::SharedRace));
  }
  SECTION("gemm_prefetch refilling the buffer of step k before its barrier overwrites what others still read") {
    // The copies moved above the barrier: step k's buffer is refilled while other warps may
    // still be loading its last fragments.
    const std::string copies =
        "                copy_async(As[k % STAGES], A.window((block_id.y * BM, (k + STAGES) * BK), (BM, BK)),\n"
        "                           enable = k + STAGES < steps);\n"
        "                copy_async(Bs[k % STAGES], B.window(((k + STAGES) * BK, block_id.x * BN), (BK, BN)),\n"
        "                           enable = k + STAGES < steps);\n"
        "                commit_copies();\n";
    const std::string wait = "                wait_copies(STAGES - 2);  // step k + 1 has landed ...\n";
    auto c = compileText("prefetch-copies-before-barrier.tyl",
                         replaceOnce(replaceOnce(source, copies, ""), wait, wait + copies));
    emu::RunResult r = emu::run(kernel(*c, "gemm_prefetch_f16"), args, buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    CHECK(has(r, emu::FindingKind::SharedRace));
  }
}
