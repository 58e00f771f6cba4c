// The one pipeline (tools/tyloc/Pipeline.h) and the IR verifiers it runs between stages
// (ir/tile/Verify.h, ir/thread/Verify.h): defects planted in correct IR must be reported as
// internal errors, with exit code 3 from the driver, and never reach a backend.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <variant>

#include "backend/emu/Emulator.h"
#include "base/InternalError.h"
#include "ir/thread/Builder.h"
#include "ir/thread/Verify.h"
#include "ir/tile/Verify.h"
#include "tools/tyloc/Pipeline.h"

namespace tyl {
namespace {

const std::string kGemm = std::string(TYLO_SOURCE_DIR) + "/examples/gemm/gemm.tyl";
const std::string kAddOne = std::string(TYLO_SOURCE_DIR) + "/examples/add_one/add_one.tyl";

struct Compiled {
  SourceManager sources;
  std::unique_ptr<DiagnosticEngine> diags;
  driver::PipelineResult result;
};

std::unique_ptr<Compiled> run(const std::string& path, driver::Stage stopAfter,
                              std::function<void(tir::Module&)> change = nullptr) {
  auto c = std::make_unique<Compiled>();
  std::optional<FileId> file = driver::loadInput(c->sources, path);
  REQUIRE(file);
  c->diags = std::make_unique<DiagnosticEngine>(c->sources);
  driver::PipelineOptions o;
  o.stopAfter = stopAfter;
  o.changeThreadIR = std::move(change);
  c->result = driver::runPipeline(c->sources, *file, *c->diags, o);
  return c;
}

// The first statement of kind T in `b` or the blocks nested in it, or null.
template <typename T>
T* first(tir::Block& b) {
  for (tir::Stmt& s : b) {
    if (auto* n = std::get_if<T>(&s.node)) return n;
    if (auto* loop = std::get_if<tir::For>(&s.node))
      if (T* n = first<T>(loop->body)) return n;
    if (auto* branch = std::get_if<tir::If>(&s.node)) {
      if (T* n = first<T>(branch->then)) return n;
      if (T* n = first<T>(branch->otherwise)) return n;
    }
  }
  return nullptr;
}

tir::Kernel& kernelNamed(tir::Module& m, const std::string& name) {
  for (tir::Kernel& k : m.kernels)
    if (k.name == name) return k;
  FAIL("no kernel " << name);
  return m.kernels.front();
}

bool anyContains(const std::vector<std::string>& problems, const std::string& text) {
  for (const std::string& p : problems)
    if (p.find(text) != std::string::npos) return true;
  return false;
}

// A defect planted in a correct kernel, and what the verifier must say of it.
struct Defect {
  const char* what;
  std::function<void(tir::Kernel&)> plant;
  const char* expected;  // part of the verifier's message
};

const std::vector<Defect>& defects() {
  using tir::Type;
  static const std::vector<Defect> list = {
      {"a cp.async of 12 bytes", [](tir::Kernel& k) { first<tir::CpAsync>(k.body)->bytes = 12; }, "12 bytes"},
      {"a cp.async into global memory",
       [](tir::Kernel& k) {
         tir::CpAsync* cp = first<tir::CpAsync>(k.body);
         std::swap(cp->dst, cp->src);
       },
       "not from global to shared memory"},
      {"an ldmatrix.x4 with three registers", [](tir::Kernel& k) { first<tir::Ldmatrix>(k.body)->dst.pop_back(); },
       ".x4 with 3 registers"},
      {"an mma.sync with an f16 accumulator",
       [](tir::Kernel& k) {
         tir::Mma* mma = first<tir::Mma>(k.body);
         mma->c[0] = mma->a[0];
       },
       "an accumulator in a"},
      {"an mma.sync with one B register", [](tir::Kernel& k) { first<tir::Mma>(k.body)->b.pop_back(); },
       "4 A, 1 B"},
      {"an i32 value assigned to an f32 register",
       [](tir::Kernel& k) {
         tir::Mma* mma = first<tir::Mma>(k.body);
         k.body.insert(k.body.begin(), tir::Stmt{{}, tir::Assign{mma->d[0], tir::intConst(0, Type::I32)}});
       },
       "a value of type i32 assigned to a register of type f32"},
      {"a variable that does not exist",
       [](tir::Kernel& k) {
         k.body.push_back(tir::Stmt{{}, tir::Assign{tir::Reg::var(static_cast<uint32_t>(k.vars.size())),
                                                    tir::intConst(0, Type::I32)}});
       },
       "variable"},
      {"an access of 12 bytes",
       [](tir::Kernel& k) {
         tir::Store* st = first<tir::Store>(k.body);
         st->src.resize(3, st->src[0]);
         st->type = Type::F32;
       },
       "of 12 bytes"},
      {"a condition of type i32",
       [](tir::Kernel& k) {
         k.body.push_back(tir::Stmt{{}, tir::If{tir::intConst(1, Type::I32), {}, {}}});
       },
       "a condition of type i32"},
      {"a cooperative marker left after lowering",
       [](tir::Kernel& k) { k.body.push_back(tir::Stmt{{}, tir::Cooperative{"copy", {}, nullptr, nullptr}}); },
       "cooperative marker"},
      {"a launch check that reads a thread id",
       [](tir::Kernel& k) {
         tir::LaunchCheck c;
         c.cond = tir::binary(tir::BinOp::Lt, tir::special(tir::Special::TidX), tir::intConst(4, Type::I32));
         c.message = "planted";
         k.checks.push_back(c);
       },
       "reads a thread's registers or ids"},
      {"a single variable assigned twice",
       [](tir::Kernel& k) {
         uint32_t v = tir::addVar(k, "twice", Type::I32);
         k.vars[v].single = true;
         for (int i = 0; i < 2; ++i)
           k.body.insert(k.body.begin(), tir::Stmt{{}, tir::Assign{tir::Reg::var(v), tir::intConst(i, Type::I32)}});
       },
       "assigned 2 times"},
      {"a single variable read outside the block that assigns it",
       [](tir::Kernel& k) {
         uint32_t v = tir::addVar(k, "scoped", Type::I32);
         k.vars[v].single = true;
         tir::If branch{tir::binary(tir::BinOp::Lt, tir::special(tir::Special::TidX), tir::intConst(4, Type::I32)),
                        {tir::Stmt{{}, tir::Assign{tir::Reg::var(v), tir::intConst(1, Type::I32)}}},
                        {}};
         k.body.push_back(tir::Stmt{{}, std::move(branch)});
         uint32_t w = tir::addVar(k, "reader", Type::I32);
         k.body.push_back(tir::Stmt{{}, tir::Assign{tir::Reg::var(w), tir::varRef(k, v)}});
       },
       "where its assignment is not in scope"},
  };
  return list;
}

TEST_CASE("pipeline: the examples' IR verifies after every stage") {
  for (const std::string& path : {kGemm, kAddOne}) {
    INFO(path);
    auto c = run(path, driver::Stage::Cuda);
    REQUIRE(c->result.ok);
    for (const tile::Kernel& k : c->result.tileIR->kernels) CHECK(tile::verifyKernel(k).empty());
    for (const tir::Kernel& k : c->result.threadIR->kernels) CHECK(tir::verifyKernel(k).empty());
    CHECK(c->result.cuda);
  }
}

TEST_CASE("pipeline: every planted thread-IR defect is found by the verifier") {
  auto c = run(kGemm, driver::Stage::ThreadIR);
  REQUIRE(c->result.ok);
  const tir::Kernel& good = kernelNamed(*c->result.threadIR, "gemm_bf16");
  for (const Defect& d : defects()) {
    INFO(d.what);
    tir::Kernel bad = good;
    d.plant(bad);
    std::vector<std::string> problems = tir::verifyKernel(bad);
    INFO(fmt::format("{}", fmt::join(problems, "\n")));
    CHECK(anyContains(problems, d.expected));
    // The emulator verifies what it is given before running it.
    std::vector<emu::Buffer> buffers;
    CHECK_THROWS_AS(emu::run(bad, std::vector<emu::Arg>(bad.params.size()), buffers), InternalError);
  }
}

TEST_CASE("pipeline: a defect planted after lowering is an internal error, exit code 3") {
  const Defect& d = defects().front();
  auto plant = [&](tir::Module& m) { d.plant(kernelNamed(m, "gemm_f16")); };
  // runPipeline throws it, naming the stage and the invariant.
  try {
    (void)run(kGemm, driver::Stage::Cuda, plant);
    FAIL("the planted defect was not reported");
  } catch (const InternalError& e) {
    CHECK_THAT(e.message(), Catch::Contains("the thread IR of kernel 'gemm_f16' after lowering breaks its invariants"));
    CHECK_THAT(e.message(), Catch::Contains(d.expected));
    CHECK_THAT(e.place(), Catch::StartsWith("ir/thread/Verify.cpp:"));
  }
  // The driver prints it as a bug, with the place, and exits with 3; nothing is written.
  driver::CompileOptions o;
  o.input = kGemm;
  o.checkOnly = true;
  o.changeThreadIR = plant;
  std::ostringstream err;
  std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
  const int code = driver::compile(o);
  std::cerr.rdbuf(old);
  CHECK(code == driver::kExitInternal);
  CHECK_THAT(err.str(), Catch::StartsWith("tyloc: internal compiler error: the thread IR of kernel 'gemm_f16'"));
  CHECK_THAT(err.str(), Catch::Contains("(at ir/thread/Verify.cpp:"));
  CHECK_THAT(err.str(), Catch::Contains("This is a bug in tyloc"));
}

TEST_CASE("pipeline: the tile IR verifier finds a planted defect") {
  auto c = run(kGemm, driver::Stage::TileIR);
  REQUIRE(c->result.ok);
  tile::Kernel k = c->result.tileIR->kernels.front();
  REQUIRE(tile::verifyKernel(k).empty());
  SECTION("a copy_async from shared memory") {
    bool planted = false;
    for (tile::Stmt& s : k.body)
      if (auto* loop = std::get_if<tile::For>(&s.node))
        for (tile::Stmt& inner : loop->body)
          if (auto* cp = std::get_if<tile::Copy>(&inner.node); cp && cp->async && !planted) {
            cp->src = cp->dst;
            planted = true;
          }
    REQUIRE(planted);
    std::vector<std::string> problems = tile::verifyKernel(k);
    REQUIRE_FALSE(problems.empty());
    CHECK_THAT(problems.front(), Catch::Contains("not from global to shared memory"));
  }
  SECTION("a view with an origin missing") {
    tile::View v;
    v.tensor = 0;
    v.dims = {0};
    v.shape = {1};
    k.body.push_back(tile::Stmt{{}, tile::ElemLoad{tir::Reg::var(0), v, {tir::intConst(0, tir::Type::I64)}}});
    std::vector<std::string> problems = tile::verifyKernel(k);
    REQUIRE_FALSE(problems.empty());
    CHECK_THAT(problems.front(), Catch::Contains("origins for"));
  }
  tile::Module m;
  m.kernels.push_back(k);
  CHECK_THROWS_AS(tile::verify(m, "after analysis"), InternalError);
}

TEST_CASE("pipeline: each stage runs exactly up to the one asked for") {
  using driver::Stage;
  for (Stage s : {Stage::Tokens, Stage::Ast, Stage::TileIR, Stage::ThreadIR, Stage::Cuda}) {
    auto c = run(kAddOne, s);
    INFO(static_cast<int>(s));
    CHECK(c->result.ok);
    CHECK(c->result.tokens.empty() == (s != Stage::Tokens));
    CHECK(c->result.ast.has_value() == (s >= Stage::Ast));
    CHECK(c->result.tileIR.has_value() == (s >= Stage::TileIR));
    CHECK(c->result.threadIR.has_value() == (s >= Stage::ThreadIR));
    CHECK(c->result.cuda.has_value() == (s >= Stage::Cuda));
  }
}

TEST_CASE("pipeline: a launcher-name clash stops CUDA output, not the thread IR") {
  const std::string path = std::string(TYLO_SOURCE_DIR) + "/tests/file/fail_launcher_name.tyl";
  auto ir = run(path, driver::Stage::ThreadIR);
  CHECK(ir->result.ok);
  auto cu = run(path, driver::Stage::Cuda);
  CHECK_FALSE(cu->result.ok);
  CHECK_FALSE(cu->result.cuda);
  REQUIRE(cu->diags->hasErrors());
  CHECK(cu->diags->diagnostics().front().kind->id == "launcher-name");
}

}  // namespace
}  // namespace tyl
