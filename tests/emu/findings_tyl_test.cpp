// Kernels written in .tyl and run on the emulator. Bugs it catches: a missing barrier is a
// race reported at both sites, a shared window past the allocation is an out-of-bounds
// access, a cp.async destination read before a wait is reported, and so is a fragment stored
// with slots nothing was copied into. Behaviour it checks: a
// disabled copy_async zero-fills; memory operands of fragment arithmetic read the elements
// of each thread's slots, zero outside the tensor; `x = load_a(...)` loads into x itself;
// ldmatrix from windows moving at run time in a swizzled tile; cdiv of sizes near the largest
// i32; pipelines over loops that start past 0 and step by more than 1; shared windows whose
// run-time origin is never 0; integer operations C++ leaves undefined compute the shared
// table's results; arithmetic on i32 fragments stays in i32. Also `tyloc run` as a process.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

#include "CountOps.h"
#include "backend/emu/Emulator.h"
#include "base/Source.h"
#include "ir/thread/Print.h"
#include "tests/support/IntSemanticsCases.h"
#include "tests/support/Process.h"
#include "tools/tyloc/Pipeline.h"

using namespace tyl;
using tir::Type;

namespace {

struct Compiled {
  SourceManager sources;
  std::optional<tir::Module> module;
};

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

std::unique_ptr<Compiled> compile(const std::string& name) {
  std::string error, path = std::string(TYLO_SOURCE_DIR) + "/tests/emu/kernels/" + name;
  std::optional<std::string> text = readSourceText(path, error);
  REQUIRE(text);
  return compileText(name, std::move(*text));
}

uint32_t lineOf(const Compiled& c, SourceRange r) { return r.valid() ? c.sources.lineCol(r.begin).line : 0; }

emu::RunResult runWith(const Compiled& c, std::vector<emu::Arg> scalars, Type elem, int64_t count) {
  const tir::Kernel& k = c.module->kernels.at(0);
  std::vector<emu::Buffer> buffers;
  std::vector<emu::Arg> args;
  size_t next = 0;
  for (const tir::Param& p : k.params) {
    if (p.isPointer) {
      buffers.push_back(emu::makeBuffer(elem, count));
      emu::fillRandom(buffers.back(), elem, buffers.size());
      args.push_back(emu::Arg::pointer(static_cast<int>(buffers.size() - 1)));
    } else {
      args.push_back(scalars.at(next++));
    }
  }
  return emu::run(k, args, buffers);
}

}  // namespace

TEST_CASE("a missing barrier is reported as a shared-memory race with both locations") {
  auto c = compile("race_missing_barrier.tyl");
  emu::RunResult bad = runWith(*c, {emu::Arg::integer(0)}, Type::F32, 256);
  REQUIRE(bad.findings.size() == 1);
  const emu::Finding& f = bad.findings[0];
  CHECK(f.kind == emu::FindingKind::SharedRace);
  CHECK(lineOf(*c, f.loc) == 11);       // the read: copy(f, s)
  CHECK(lineOf(*c, f.otherLoc) == 7);   // the write: copy(s, A)
  CHECK(f.thread.thread != f.otherThread.thread);
  emu::RunResult good = runWith(*c, {emu::Arg::integer(1)}, Type::F32, 256);
  CHECK(good.ok());
}

TEST_CASE("an mbarrier hands shared data from a producer warp to a consumer warp, and its misuse is reported") {
  auto c = compile("mbarrier_handoff.tyl");
  const tir::Kernel& k = c->module->kernels.at(0);
  auto handoff = [&](int64_t parity, int64_t tx, std::vector<emu::Buffer>& buffers) {
    buffers = {emu::makeBuffer(Type::F32, 32), emu::makeBuffer(Type::F32, 32, false)};
    emu::fillRandom(buffers[0], Type::F32, 3);
    return emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::integer(parity), emu::Arg::integer(tx)},
                    buffers);
  };
  std::vector<emu::Buffer> buffers;
  emu::RunResult good = handoff(0, 0, buffers);
  REQUIRE(good.ok());
  for (int64_t i = 0; i < 32; ++i)
    CHECK(emu::getElement(buffers[1], Type::F32, i) == static_cast<float>(2 * emu::getElement(buffers[0], Type::F32, i)));
  // The wrong parity: the wait returns at once and the consumer reads before the producer writes.
  emu::RunResult early = handoff(1, 0, buffers);
  REQUIRE_FALSE(early.findings.empty());
  CHECK(early.findings[0].kind == emu::FindingKind::UninitializedRead);
  CHECK(lineOf(*c, early.findings[0].loc) == 14);
  // Transaction bytes that nothing completes: the consumer waits forever.
  emu::RunResult stuck = handoff(0, 1024, buffers);
  REQUIRE(stuck.findings.size() == 1);
  CHECK(stuck.findings[0].kind == emu::FindingKind::Deadlock);
  CHECK(lineOf(*c, stuck.findings[0].loc) == 13);
  CHECK_THAT(stuck.findings[0].message, Catch::Contains("in phase 0 with 0 arrivals and 32768 transaction bytes pending"));
}

TEST_CASE("a shared window past the allocation is an out-of-bounds access") {
  auto c = compile("oob_window.tyl");
  emu::RunResult bad = runWith(*c, {emu::Arg::integer(16)}, Type::F32, 256);
  REQUIRE_FALSE(bad.findings.empty());
  CHECK(bad.findings[0].kind == emu::FindingKind::OutOfBounds);
  CHECK(lineOf(*c, bad.findings[0].loc) == 11);
  CHECK(runWith(*c, {emu::Arg::integer(0)}, Type::F32, 256).ok());
}

TEST_CASE("a shared window whose origin is a parameter is checked at launch") {
  auto c = compile("window_launch_check.tyl");
  for (int64_t offset : {-1, 1, 16}) {
    emu::RunResult bad = runWith(*c, {emu::Arg::integer(offset)}, Type::F32, 256);
    INFO("offset = " << offset);
    REQUIRE(bad.findings.size() == 1);
    CHECK(bad.findings[0].kind == emu::FindingKind::LaunchFailure);
    CHECK(bad.findings[0].message == fmt::format("the window of 's' leaves dimension 0 of extent 256 at "
                                                 "window_launch_check.tyl:9 (offset = {})",
                                                 offset));
    CHECK(lineOf(*c, bad.findings[0].loc) == 9);
    CHECK(bad.stats.blocks == 0);
  }
  CHECK(runWith(*c, {emu::Arg::integer(0)}, Type::F32, 256).ok());
}

TEST_CASE("launch checks take each axis of the block and the grid at its first and last value") {
  auto block2d = compile("launch_corners_block2d.tyl");
  for (int64_t m = 0; m <= 300; ++m) {
    INFO("m = " << m);
    emu::RunResult r = runWith(*block2d, {emu::Arg::integer(m)}, Type::I32, 1);
    if (m >= 96 && m <= 224) {
      CHECK(r.ok());
      continue;
    }
    REQUIRE_FALSE(r.findings.empty());
    CHECK(r.findings[0].kind == emu::FindingKind::LaunchFailure);
    CHECK(r.stats.blocks == 0);
  }
  CHECK(runWith(*block2d, {emu::Arg::integer(255)}, Type::I32, 1).findings.at(0).message ==
        "index 0 into 's' leaves [0, 256) at launch_corners_block2d.tyl:6 for thread (31, 0, 0) (m = 255)");
  CHECK(runWith(*block2d, {emu::Arg::integer(95)}, Type::I32, 1).findings.at(0).message ==
        "index 0 into 's' leaves [0, 256) at launch_corners_block2d.tyl:6 for thread (0, 3, 0) (m = 95)");
  auto grid2d = compile("launch_corners_grid2d.tyl");
  for (int64_t n = 1; n <= 12; ++n) {
    INFO("n = " << n);
    emu::RunResult r = runWith(*grid2d, {emu::Arg::integer(n)}, Type::I32, 1);
    if (n <= 7) {
      CHECK(r.ok());
      continue;
    }
    REQUIRE_FALSE(r.findings.empty());
    CHECK(r.findings[0].kind == emu::FindingKind::LaunchFailure);
    CHECK(r.findings[0].message ==
          fmt::format("index 0 into 's' leaves [0, 256) at launch_corners_grid2d.tyl:5 for thread 0 and block "
                      "(last, 0, 0) (n = {})",
                      n));
  }
}

TEST_CASE("launch checks take the extremes of indices that mix thread_id, lane_id() and warp_id()") {
  auto c = compile("launch_corners_lanes.tyl");
  const struct {
    const char* kernel;
    int64_t low, high;  // the m that keep every thread's index inside
  } cases[] = {{"tiles", 15, 39}, {"staircase", 0, 24}};
  for (const auto& k : cases) {
    const tir::Kernel* kernel = nullptr;
    for (const tir::Kernel& each : c->module->kernels)
      if (each.name == k.kernel) kernel = &each;
    REQUIRE(kernel);
    for (int64_t m = -20; m <= 80; ++m) {
      INFO(k.kernel << ", m = " << m);
      std::vector<emu::Buffer> none;
      emu::RunResult r = emu::run(*kernel, {emu::Arg::integer(m)}, none);
      if (m >= k.low && m <= k.high) {
        CHECK(r.ok());
        continue;
      }
      REQUIRE_FALSE(r.findings.empty());
      CHECK(r.findings[0].kind == emu::FindingKind::LaunchFailure);
      CHECK(r.stats.blocks == 0);
    }
  }
}

TEST_CASE("launch checks take the extremes of random forms in thread_id, lane_id() and warp_id()") {
  // Blocks whose cuts (x, x * y, 32) divide one another and the thread count, where the corners
  // are exact, and one-dimensional blocks with a partial last warp. The valid m are worked out
  // over every thread; the launch must be refused just outside them and run just inside.
  const std::array<int64_t, 3> blocks[] = {{8, 8, 1},  {4, 16, 2}, {64, 2, 1}, {32, 4, 1}, {2, 64, 1},
                                           {16, 4, 2}, {80, 1, 1}, {40, 1, 1}, {100, 1, 1}, {7, 1, 1}};
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> coef(-3, 3);
  for (int round = 0; round < 40; ++round) {
    const std::array<int64_t, 3> b = blocks[round % std::size(blocks)];
    const int64_t threads = b[0] * b[1] * b[2];
    const int a = coef(rng), bb = coef(rng), cl = coef(rng), dw = coef(rng);
    int64_t low = INT64_MAX, high = INT64_MIN;
    for (int64_t t = 0; t < threads; ++t) {
      const int64_t f = a * (t % b[0]) + bb * (t / b[0] % b[1]) + cl * (t % 32) + dw * (t / 32);
      low = std::min(low, f);
      high = std::max(high, f);
    }
    const int64_t rows = high - low + 4;
    const std::string text =
        fmt::format("kernel k(m: i32) launch(grid = 1, block = ({}, {}, {})) {{\n"
                    "    let s = alloc_shared(i32[{}, {}]);\n"
                    "    s[m + {} * thread_id.x + {} * thread_id.y + {} * lane_id() + {} * warp_id(), thread_index()] = m;\n"
                    "}}\n",
                    b[0], b[1], b[2], rows, threads, a, bb, cl, dw);
    INFO(text);
    auto c = compileText("random_corners.tyl", text);
    const int64_t first = -low, last = rows - 1 - high;  // the valid m
    for (int64_t m : {first - 1, first, last, last + 1}) {
      INFO("m = " << m);
      std::vector<emu::Buffer> none;
      emu::RunResult r = emu::run(c->module->kernels.at(0), {emu::Arg::integer(m)}, none);
      if (m >= first && m <= last) {
        CHECK(r.ok());
      } else {
        REQUIRE_FALSE(r.findings.empty());
        CHECK(r.findings[0].kind == emu::FindingKind::LaunchFailure);
      }
    }
  }
}

TEST_CASE("launch checks compute the corners without wrapping") {
  auto c = compile("launch_wrap.tyl");
  for (int64_t n : {0, 1, 8}) CHECK(runWith(*c, {emu::Arg::integer(n)}, Type::I32, 1).ok());
  for (int64_t n : {int64_t{9}, (int64_t{1} << 27) + 1, (int64_t{1} << 31) - 1}) {
    INFO("n = " << n);
    emu::RunResult r = runWith(*c, {emu::Arg::integer(n)}, Type::I32, 1);
    REQUIRE_FALSE(r.findings.empty());
    CHECK(r.findings[0].kind == emu::FindingKind::LaunchFailure);
    CHECK(r.findings[0].message ==
          fmt::format("index 0 into 's' leaves [0, 256) at launch_wrap.tyl:7 for the last value of 'k' and thread 0 "
                      "(n = {})",
                      n));
    CHECK(r.stats.blocks == 0);
  }
}

TEST_CASE("the launch is refused when a tensor the kernel writes overlaps another") {
  auto c = compile("overlap.tyl");
  const tir::Kernel& k = c->module->kernels.at(0);
  std::vector<emu::Buffer> buffers{emu::makeBuffer(Type::F32, 64)};
  emu::fillRandom(buffers[0], Type::F32, 5);
  // n = 8: A covers elements [0, 15) from its pointer, B [0, 8).
  auto launch = [&](int64_t n, int64_t aAt, int64_t bAt) {
    return emu::run(k, {emu::Arg::integer(n), emu::Arg::pointer(0, aAt * 4), emu::Arg::pointer(0, bAt * 4)}, buffers);
  };
  for (auto [aAt, bAt] : {std::pair{0, 0}, std::pair{0, 14}, std::pair{20, 13}}) {
    emu::RunResult bad = launch(8, aAt, bAt);
    INFO("A at " << aAt << ", B at " << bAt);
    REQUIRE(bad.findings.size() == 1);
    CHECK(bad.findings[0].kind == emu::FindingKind::LaunchFailure);
    CHECK(bad.findings[0].message == "A and B must not overlap (the kernel writes B)");
    CHECK(bad.stats.blocks == 0);
  }
  for (auto [aAt, bAt] : {std::pair{0, 15}, std::pair{20, 12}, std::pair{40, 0}}) {
    INFO("A at " << aAt << ", B at " << bAt);
    CHECK(launch(8, aAt, bAt).ok());
  }
  CHECK(launch(0, 0, 0).ok());  // no elements, nothing shared
}

TEST_CASE("reading a cp.async destination before a wait is reported") {
  auto c = compile("cp_async_early_read.tyl");
  emu::RunResult bad = runWith(*c, {emu::Arg::integer(0)}, Type::F16, 64 * 64);
  REQUIRE_FALSE(bad.findings.empty());
  CHECK(bad.findings[0].kind == emu::FindingKind::AsyncReadBeforeWait);
  CHECK(lineOf(*c, bad.findings[0].loc) == 12);
  CHECK(lineOf(*c, bad.findings[0].otherLoc) == 6);
  CHECK(runWith(*c, {emu::Arg::integer(1)}, Type::F16, 64 * 64).ok());
}

TEST_CASE("a disabled copy_async reads nothing and writes zeros") {
  auto c = compile("copy_async_enable.tyl");
  const tir::Kernel& k = c->module->kernels.at(0);
  for (int64_t first : {0, 64, 128}) {
    // With every thread disabled A is left uninitialized: reading any of it would be reported.
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F16, 64 * 64, first < 128),
                                        emu::makeBuffer(Type::F16, 64 * 64)};
    if (first < 128) emu::fillRandom(buffers[0], Type::F16, 7);
    emu::RunResult r = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::integer(first)}, buffers);
    INFO("first = " << first);
    REQUIRE(r.ok());
    // 128 threads, 512 vectors of 8: thread t copies vectors t, t + 128, ... (elements 8v..8v+7).
    for (int64_t i = 0; i < 64 * 64; ++i) {
      int64_t thread = (i / 8) % 128;
      double want = thread >= first ? emu::getElement(buffers[0], Type::F16, i) : 0.0;
      REQUIRE(emu::getElement(buffers[1], Type::F16, i) == want);
    }
  }
}

TEST_CASE("a fragment stored with slots nothing was copied into is reported at the store") {
  auto c = compile("unwritten_fragment.tyl");
  {
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 32 * 4, false)};
    emu::RunResult r = emu::run(c->module->kernels.at(0), {emu::Arg::pointer(0)}, buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].kind == emu::FindingKind::UninitializedRegister);
    CHECK(lineOf(*c, r.findings[0].loc) == 8);
  }
  for (int64_t n : {32, 20}) {
    INFO("n = " << n);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, n * 4), emu::makeBuffer(Type::F32, 32 * 4, false)};
    emu::fillRandom(buffers[0], Type::F32, 3);
    emu::RunResult r = emu::run(c->module->kernels.at(1), {emu::Arg::integer(n), emu::Arg::pointer(0), emu::Arg::pointer(1)},
                                buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    if (n == 32) {
      CHECK(r.ok());
    } else {
      REQUIRE(r.findings.size() == 1);
      CHECK(r.findings[0].kind == emu::FindingKind::UninitializedRegister);
      CHECK(lineOf(*c, r.findings[0].loc) == 15);
      CHECK(r.findings[0].thread.thread == n);  // the first lane whose row is past A's edge
    }
  }
}

TEST_CASE("a value computed from a register never written names that register, not only the last one") {
  auto c = compile("unwritten_fragment.tyl");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 32, false)};
  emu::RunResult r = emu::run(c->module->kernels.at(2), {emu::Arg::pointer(0)}, buffers);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(!r.findings.empty());
  CHECK(r.findings[0].kind == emu::FindingKind::UninitializedRegister);
  CHECK(lineOf(*c, r.findings[0].loc) == 22);
  CHECK_THAT(r.findings[0].message, Catch::Contains("computed from register 'x[0]', which thread 0 (warp 0, lane 0)"));
}

TEST_CASE("memory operands of fragment arithmetic read each slot's element, zero outside the tensor") {
  auto c = compile("memory_operands.tyl");
  const tir::Kernel& k = c->module->kernels.at(0);
  // C has Mc rows (read in 16-byte vectors, each wholly in or out); E has Nc columns (read
  // element by element). Uninitialized inputs: reading outside what is written is reported.
  for (auto [mc, nc] : {std::pair<int64_t, int64_t>{32, 8}, {0, 0}, {17, 5}, {31, 1}}) {
    INFO("Mc = " << mc << ", Nc = " << nc);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 32 * 8), emu::makeBuffer(Type::F32, mc * 8),
                                        emu::makeBuffer(Type::F32, 32 * nc), emu::makeBuffer(Type::F32, 32 * 8, false)};
    for (int i = 0; i < 3; ++i) emu::fillRandom(buffers[i], Type::F32, 40 + i);
    emu::RunResult r = emu::run(k,
                                {emu::Arg::integer(mc), emu::Arg::integer(nc), emu::Arg::pointer(0),
                                 emu::Arg::pointer(1), emu::Arg::pointer(2), emu::Arg::pointer(3)},
                                buffers);
    INFO(emu::renderFindings(r.findings, c->sources));
    REQUIRE(r.ok());
    for (int64_t i = 0; i < 32; ++i)
      for (int64_t j = 0; j < 8; ++j) {
        float want = 2.0f * static_cast<float>(emu::getElement(buffers[0], Type::F32, i * 8 + j));
        want += i < mc ? static_cast<float>(emu::getElement(buffers[1], Type::F32, i * 8 + j)) : 0.0f;
        want += j < nc ? static_cast<float>(emu::getElement(buffers[2], Type::F32, i * nc + j)) : 0.0f;
        REQUIRE(emu::getElement(buffers[3], Type::F32, i * 8 + j) == static_cast<double>(want));
      }
  }
}

TEST_CASE("a fragment assigned from shared and global operands, replicated over warps") {
  auto c = compile("memory_operands.tyl");
  const tir::Kernel& k = c->module->kernels.at(1);
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F16, 32 * 8), emu::makeBuffer(Type::F32, 32 * 8, false)};
  emu::fillRandom(buffers[0], Type::F16, 5);
  emu::RunResult r = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
  INFO(emu::renderFindings(r.findings, c->sources));
  REQUIRE(r.ok());
  for (int64_t i = 0; i < 32 * 8; ++i) {
    float a = static_cast<float>(emu::getElement(buffers[0], Type::F16, i));
    REQUIRE(emu::getElement(buffers[1], Type::F32, i) == static_cast<double>(std::max(0.5f * a + a, 0.0f)));
  }
}

namespace {

// Runs a kernel (A: f16[32, 64], B: f16[64, 32], C: f32[32, 32]) computing C = A @ B on random
// inputs and checks it cleanly computes every element.
void checkMatmul32x64x32(const Compiled& c, const tir::Kernel& k, uint64_t seed) {
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F16, 32 * 64), emu::makeBuffer(Type::F16, 64 * 32),
                                      emu::makeBuffer(Type::F32, 32 * 32, false)};
  emu::fillRandom(buffers[0], Type::F16, seed);
  emu::fillRandom(buffers[1], Type::F16, seed + 1);
  emu::RunResult r = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::pointer(2)}, buffers);
  INFO(emu::renderFindings(r.findings, c.sources));
  REQUIRE(r.ok());
  for (int64_t i = 0; i < 32; ++i)
    for (int64_t j = 0; j < 32; ++j) {
      double want = 0;
      for (int64_t kk = 0; kk < 64; ++kk)
        want += emu::getElement(buffers[0], Type::F16, i * 64 + kk) * emu::getElement(buffers[1], Type::F16, kk * 32 + j);
      REQUIRE(std::abs(emu::getElement(buffers[2], Type::F32, i * 32 + j) - want) <= 1e-4 * (1 + std::abs(want)));
    }
}

}  // namespace

TEST_CASE("assigning load_a and load_b to a fragment of their layout loads into it, across loop steps") {
  auto c = compile("load_into.tyl");
  const tir::Kernel& k = c->module->kernels.at(0);
  // Only acc, a and b: no temporary per reload, and every ldmatrix writes a or b.
  std::vector<std::string> arrays;
  for (const tir::Array& a : k.arrays) arrays.push_back(a.name);
  CHECK(arrays == std::vector<std::string>{"acc", "a", "b"});
  const std::string ir = tir::print(k);
  size_t loads = 0;
  for (size_t at = ir.find("ldmatrix"); at != std::string::npos; at = ir.find("ldmatrix", at + 1)) {
    ++loads;
    CHECK((ir.compare(ir.find('{', at), 3, "{a[") == 0 || ir.compare(ir.find('{', at), 3, "{b[") == 0));
  }
  CHECK(loads == 4);  // A and B before the loop, and in it

  checkMatmul32x64x32(*c, k, 11);
}

TEST_CASE("ldmatrix from windows that move at run time inside a swizzled tile reads the right elements") {
  auto c = compile("runtime_origin.tyl");
  // Origins 16 k with k counting iterations, and k itself with k stepping by 16.
  for (size_t i : {0, 1}) {
    const tir::Kernel& k = c->module->kernels.at(i);
    INFO(k.name);
    const std::string ir = tir::print(k);
    const size_t loop = ir.find("for %k");
    REQUIRE(loop != std::string::npos);
    CHECK(ir.find("ldmatrix.x4 ", loop) != std::string::npos);
    CHECK(ir.find("ldmatrix.x4.trans ", loop) != std::string::npos);
    CHECK(ir.find("ld.shared", loop) == std::string::npos);

    checkMatmul32x64x32(*c, k, 21);
  }
}

TEST_CASE("cdiv at run time counts tiles for every size, up to the largest i32") {
  auto c = compile("cdiv_runtime.tyl");
  const tir::Kernel& k = c->module->kernels.at(0);
  const int64_t max = (int64_t{1} << 31) - 1;
  for (int64_t K : {int64_t{0}, int64_t{1}, int64_t{31}, int64_t{32}, int64_t{33}, int64_t{1000}, max - 32, max - 31,
                    max - 30, max - 1, max}) {
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::I32, 32)};
    emu::RunResult r = emu::run(k, {emu::Arg::integer(K), emu::Arg::pointer(0)}, buffers);
    INFO("K = " << K);
    REQUIRE(r.ok());
    auto ceilDiv = [&](int64_t d) { return (K + d - 1) / d; };  // exact in 64 bits
    CHECK(static_cast<int64_t>(emu::getElement(buffers[0], Type::I32, 0)) == ceilDiv(32));
    for (int64_t t = 1; t < 32; ++t) {
      INFO("divisor " << t + 1);
      CHECK(static_cast<int64_t>(emu::getElement(buffers[0], Type::I32, t)) == ceilDiv(t + 1));
    }
  }
}

namespace {

// Remainders in the expressions of `b` and the blocks nested in it.
int remainders(const tir::Block& b) { return emu::test::countBinary(b, tir::BinOp::Rem); }

}  // namespace

TEST_CASE("a shared window whose run-time origin is never 0 is checked where it fits") {
  // Before, the vectors were checked with the run-time part at 0, where the window starts
  // outside the tile, and the copies were refused.
  auto c = compile("window_origin_past_zero.tyl");
  for (const tir::Kernel& k : c->module->kernels) {
    INFO(k.name);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F16, 256 * 64), emu::makeBuffer(Type::F16, 256 * 64, false)};
    emu::fillRandom(buffers[0], Type::F16, 3);
    emu::RunResult r = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
    REQUIRE(r.ok());
    CHECK(buffers[1].bytes == buffers[0].bytes);
  }
}

TEST_CASE("pipelines over loops that start past 0 and step by more than 1 count their stages") {
  auto c = compile("pipeline_strided.tyl");
  struct Loop {
    int64_t begin, step;
  };
  const Loop loops[] = {{1, 2}, {2, 3}};  // the kernels' range(begin, cdiv(n, 32), step)
  for (size_t i = 0; i < 2; ++i) {
    const tir::Kernel& k = c->module->kernels.at(i);
    INFO(k.name);
    for (const tir::Stmt& s : k.body)
      if (const auto* f = std::get_if<tir::For>(&s.node)) CHECK(remainders(f->body) == 0);
    for (int64_t n : {0, 4, 32, 64, 100, 224, 300, 644}) {  // rows of 16-byte vectors
      INFO("n = " << n);
      std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 64 * std::max<int64_t>(n, 1)),
                                          emu::makeBuffer(Type::F32, 64 * 32, false)};
      emu::fillRandom(buffers[0], Type::F32, 7);
      emu::RunResult r = emu::run(k, {emu::Arg::integer(n), emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
      REQUIRE(r.ok());
      for (int64_t row = 0; row < 64; ++row)
        for (int64_t col = 0; col < 32; ++col) {
          float sum = 0;  // in the kernel's order
          for (int64_t kk = loops[i].begin; kk < (n + 31) / 32; kk += loops[i].step)
            if (32 * kk + col < n) sum += static_cast<float>(emu::getElement(buffers[0], Type::F32, row * n + 32 * kk + col));
          CHECK(emu::getElement(buffers[1], Type::F32, row * 32 + col) == sum);
        }
    }
  }
}

namespace {

test::ProcessResult tyloc(std::vector<std::string> args) {
  args.insert(args.begin(), TYLOC_PATH);
  return test::run(args);
}

std::string kernelPath(const std::string& name) { return std::string(TYLO_SOURCE_DIR) + "/" + name; }

}  // namespace

TEST_CASE("tyloc run prints digests and exits 0 for a clean kernel") {
  auto r = tyloc({"run", kernelPath("examples/add_one/add_one.tyl"), "--kernel", "add_one_n", "--set", "n=1500"});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  CHECK(r.out.find("A: f32[1500] digest ") != std::string::npos);
  CHECK(r.out.find("B: f32[1500] digest ") != std::string::npos);
  // The same seed gives the same digests; another seed different inputs.
  auto again = tyloc({"run", kernelPath("examples/add_one/add_one.tyl"), "--kernel", "add_one_n", "--set", "n=1500"});
  CHECK(again.out == r.out);
  auto other = tyloc({"run", kernelPath("examples/add_one/add_one.tyl"), "--kernel", "add_one_n", "--set", "n=1500",
                      "--seed", "9"});
  CHECK(other.out != r.out);
}

TEST_CASE("tyloc run compiles only the kernel it runs, with the SM count --sm-count gives") {
  const std::string file = std::filesystem::temp_directory_path() / "tyloc-run-only.tyl";
  std::ofstream(file) << "kernel good(A: global f32[32]) launch(grid = persistent_grid(1000), block = 32) {\n"
                         "    for t in tiles(1000) { A[thread_id.x] = 1.0; }\n"
                         "}\n"
                         "kernel bad(A: global f32[32]) launch(grid = 1, block = 32) {\n"
                         "    A[thread_id.x] = undefined_name;\n"
                         "}\n";
  auto good = tyloc({"run", file, "--kernel", "good", "--sm-count", "5"});
  INFO(good.err);
  CHECK(good.exitCode == 0);
  CHECK(good.err == "");  // nothing of the other kernel
  CHECK(good.out.find("good: 5 blocks,") != std::string::npos);
  auto bad = tyloc({"run", file, "--kernel", "bad"});
  CHECK(bad.exitCode == 1);
  CHECK(bad.err.find("unknown name 'undefined_name'") != std::string::npos);
  auto none = tyloc({"run", file, "--kernel", "nope"});
  CHECK(none.exitCode == 2);
  CHECK(none.err.find("no kernel 'nope'") != std::string::npos);
  CHECK(tyloc({"run", file, "--kernel", "good", "--sm-count", "0"}).exitCode == 2);
  std::filesystem::remove(file);
}

TEST_CASE("tyloc run exits 1 with located findings for a racy kernel") {
  auto r = tyloc({"run", kernelPath("tests/emu/kernels/race_missing_barrier.tyl"), "--kernel", "race", "--set",
                  "with_barrier=false"});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find("race_missing_barrier.tyl:11:5: error: shared-memory race") != std::string::npos);
  CHECK(r.err.find("race_missing_barrier.tyl:7:5: note:") != std::string::npos);
}

TEST_CASE("tyloc run dumps tensors as npy and reads them back as inputs") {
  std::string dir = std::filesystem::temp_directory_path() / "tyloc-run-dump";
  std::filesystem::remove_all(dir);
  auto r = tyloc({"run", kernelPath("examples/add_one/add_one.tyl"), "--kernel", "add_one", "--dump", dir});
  REQUIRE(r.exitCode == 0);
  REQUIRE(std::filesystem::exists(dir + "/B.npy"));
  // Feeding B (= A + 1) back as A gives A + 2: a different digest for B.
  auto again = tyloc({"run", kernelPath("examples/add_one/add_one.tyl"), "--kernel", "add_one", "--input",
                      "A=" + dir + "/B.npy", "--dump", dir + "/2"});
  REQUIRE(again.exitCode == 0);
  CHECK(test::readFile(dir + "/2/A.npy") == test::readFile(dir + "/B.npy"));
  std::filesystem::remove_all(dir);
}

const std::string kRunFlags = kernelPath("tests/emu/kernels/run_flags.tyl");

TEST_CASE("tyloc run --set rounds a decimal to an f32 parameter once") {
  // 1 + 2^-24 + 2^-60: just above the midpoint between 1 and the next f32, so 1 + 2^-23; via a
  // double it would land on the midpoint itself and round to even, 1.
  const std::string dir = std::filesystem::temp_directory_path() / "tyloc-run-f32";
  std::filesystem::remove_all(dir);
  auto r = tyloc({"run", kRunFlags, "--kernel", "real", "--set",
                  "x=1.000000059604644776257986737988403547205962240695953369140625", "--dump", dir});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  const std::string npy = test::readFile(dir + "/A.npy");
  REQUIRE(npy.size() >= 4);
  uint32_t bits = 0;
  std::memcpy(&bits, npy.data() + npy.size() - 4, 4);
  CHECK(bits == 0x3f800001u);
  std::filesystem::remove_all(dir);
  // Past the largest f32 is refused; below the smallest subnormal is 0.
  auto big = tyloc({"run", kRunFlags, "--kernel", "real", "--set", "x=1e39"});
  CHECK(big.exitCode == 2);
  CHECK(big.err.find("--set x=1e39: out of range for f32") != std::string::npos);
  CHECK(tyloc({"run", kRunFlags, "--kernel", "real", "--set", "x=1e-50"}).exitCode == 0);
  CHECK(tyloc({"run", kRunFlags, "--kernel", "real", "--set", "x=1.5f"}).exitCode == 2);
}

TEST_CASE("tyloc run --set takes a bool as the language spells it") {
  const std::string dir = std::filesystem::temp_directory_path() / "tyloc-run-bool";
  for (const auto& [text, value] : std::vector<std::pair<std::string, int32_t>>{
           {"true", 1}, {"True", 1}, {"1", 1}, {"false", 0}, {"False", 0}, {"0", 0}}) {
    std::filesystem::remove_all(dir);
    auto r = tyloc({"run", kRunFlags, "--kernel", "flag", "--set", "b=" + text, "--dump", dir});
    INFO(text << "\n" << r.err);
    REQUIRE(r.exitCode == 0);
    const std::string npy = test::readFile(dir + "/A.npy");
    REQUIRE(npy.size() >= 4);
    int32_t got = -1;
    std::memcpy(&got, npy.data() + npy.size() - 4, 4);
    CHECK(got == value);
  }
  std::filesystem::remove_all(dir);
  for (const std::string text : {"TRUE", "2", "yes", ""}) {
    auto r = tyloc({"run", kRunFlags, "--kernel", "flag", "--set", "b=" + text});
    INFO(text << "\n" << r.err);
    CHECK(r.exitCode == 2);
    CHECK(r.err.find("expected true or false") != std::string::npos);
  }
}

TEST_CASE("tyloc run --set rounds a decimal to an f16 or bf16 parameter once") {
  // Decimals just past the tie between 1 and the next 16-bit value (1 + 2^-11 for f16, 1 + 2^-8
  // for bf16) round up; through a double or an f32 they land on the tie and round to even, 1.
  const std::string dir = std::filesystem::temp_directory_path() / "tyloc-run-16";
  auto stored = [&](const char* kernel, const std::string& value) -> std::optional<uint16_t> {
    std::filesystem::remove_all(dir);
    auto r = tyloc({"run", kRunFlags, "--kernel", kernel, "--set", "x=" + value, "--dump", dir});
    INFO(kernel << " x=" << value << ": " << r.err);
    if (r.exitCode != 0) return std::nullopt;
    const std::string npy = test::readFile(dir + "/A.npy");
    REQUIRE(npy.size() >= 2);
    uint16_t bits = 0;
    std::memcpy(&bits, npy.data() + npy.size() - 2, 2);
    return bits;
  };
  CHECK(stored("half", "1.000488281250000000867361737988403547205962240695953369140625") == 0x3c01);  // + 2^-60
  CHECK(stored("half", "1.000488282181322574615478515625") == 0x3c01);  // + 2^-30, lost in an f32
  CHECK(stored("half", "1.00048828125") == 0x3c00);                     // the tie itself: to even
  CHECK(stored("half", "1.00146484375") == 0x3c02);                     // 1 + 3 * 2^-11: to even, up
  CHECK(stored("half", "-1.000488281250000000867361737988403547205962240695953369140625") == 0xbc01);
  CHECK(stored("half", "65519.99") == 0x7bff);  // below the overflow threshold, the largest f16
  CHECK(stored("half", "6e-8") == 0x0001);      // the smallest subnormal, 2^-24
  CHECK(stored("half", "inf") == 0x7c00);
  CHECK(stored("half", "-infinity") == 0xfc00);
  CHECK(stored("brain", "1.003906250000000000867361737988403547205962240695953369140625") == 0x3f81);
  CHECK(stored("brain", "1.00390625") == 0x3f80);
  CHECK(stored("brain", "3.3895313892515355e38") == 0x7f7f);  // the largest bf16
  // Values that round past the largest finite one are refused, as for f32.
  for (auto [kernel, value] : {std::pair{"half", "65520"}, std::pair{"half", "1e6"}, std::pair{"half", "1e309"},
                               std::pair{"half", "-1e400"}, std::pair{"brain", "3.4e38"}, std::pair{"brain", "0x1p2000"}}) {
    auto r = tyloc({"run", kRunFlags, "--kernel", kernel, "--set", std::string("x=") + value});
    CHECK(r.exitCode == 2);
    CHECK(r.err.find(std::string("--set x=") + value + ": out of range for") != std::string::npos);
  }
  CHECK(tyloc({"run", kRunFlags, "--kernel", "half", "--set", "x=1.5h"}).exitCode == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("tyloc run misuse is one clear line and exit 2") {
  std::string file = kernelPath("examples/add_one/add_one.tyl");
  const std::string& flags = kRunFlags;
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"run", file, "--kernel", "nope"},
           {"run", file, "--kernel", "add_one_n"},
           {"run", file, "--kernel", "add_one_n", "--set", "n=abc"},
           {"run", file, "--kernel", "add_one_n", "--set", "n=4", "--set", "m=2"},
           {"run", file, "--kernel", "add_one", "--input", "A=/nonexistent.npy"},
           {"run", file, "--kernel", "add_one", "--input", "A=/tmp"},
           {"run", file, "--kernel", "add_one", "--input", "A=/dev/zero"},
           {"run", file, "--kernel", "add_one_n", "--set", "n=9223372036854775807"},
           {"run", kernelPath("tests/emu/kernels/huge_tensor.tyl"), "--kernel", "square", "--set", "n=4294967296"},
           {"run", kernelPath("tests/emu/kernels/huge_tensor.tyl"), "--kernel", "doubled",
            "--set", "n=4611686018427387904"},
           {"run", file},
           // Values the parameter cannot hold, names given twice, seeds that are not 0..2^64-1.
           {"run", flags, "--kernel", "store", "--set", "n=2147483648"},
           {"run", flags, "--kernel", "store", "--set", "n=-2147483649"},
           {"run", flags, "--kernel", "store", "--set", "n=99999999999999999999"},
           {"run", flags, "--kernel", "store", "--set", "n=1", "--set", "n=2"},
           {"run", file, "--kernel", "add_one", "--input", "A=a.npy", "--input", "A=b.npy"},
           {"run", flags, "--kernel", "store", "--set", "n=1", "--seed", "-1"},
           {"run", flags, "--kernel", "store", "--set", "n=1", "--seed", "18446744073709551616"},
           {"run", flags, "--kernel", "spin", "--set", "n=1", "--max-steps", "0"},
           {"run", flags, "--kernel", "spin", "--set", "n=1", "--max-steps", "9223372036854775808"}}) {
    auto r = tyloc(args);
    std::string cmd;
    for (const std::string& a : args) cmd += " " + a;
    INFO(cmd << "\n" << r.err);
    CHECK(r.exitCode == 2);
    CHECK(r.err.find("tyloc: error:") != std::string::npos);
    CHECK(r.out.empty());
  }
  // The extremes are accepted.
  CHECK(tyloc({"run", flags, "--kernel", "store", "--set", "n=-2147483648", "--seed", "18446744073709551615"})
            .exitCode == 0);
}

TEST_CASE("tyloc run says why a tensor's shape cannot be computed") {
  const std::string file = kernelPath("tests/emu/kernels/huge_tensor.tyl");
  const struct {
    std::vector<std::string> args;
    std::string why;
  } cases[] = {
      {{"--kernel", "split", "--set", "n=8", "--set", "d=0"}, "tensor 'A' cannot be computed from these scalar values "
                                                               "(dimension 0: it divides by zero)"},
      {{"--kernel", "doubled", "--set", "n=4611686018427387904"}, "(dimension 0: a result leaves 64 bits)"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"run", file};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = tyloc(args);
    INFO(r.err);
    CHECK(r.exitCode == 2);
    CHECK(r.err.find(c.why) != std::string::npos);
  }
  // With d = 2 the kernel runs.
  CHECK(tyloc({"run", file, "--kernel", "split", "--set", "n=8", "--set", "d=2"}).exitCode == 0);
}

TEST_CASE("tyloc run: a negative size is the launch's failure, and the step limit is a flag") {
  auto r = tyloc({"run", kernelPath("examples/add_one/add_one.tyl"), "--kernel", "add_one_n", "--set", "n=-5"});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find("dimension 0 of A must not be negative (n = -5) [emu-launch-failure]") != std::string::npos);
  r = tyloc({"run", kRunFlags, "--kernel", "spin", "--set", "n=9223372036854775807", "--max-steps", "100000"});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find("the run exceeded 100000 steps (warp instructions, and one per block): an endless loop? "
                    "[emu-step-limit]") != std::string::npos);
  // A grid of blocks that run nothing ends too: each block is a step.
  r = tyloc({"run", kRunFlags, "--kernel", "idle", "--set", "n=2147483647", "--max-steps", "100000"});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find("the run exceeded 100000 steps (warp instructions, and one per block) after 100000 blocks of "
                   "the grid [emu-step-limit]") != std::string::npos);
  CHECK(tyloc({"run", kRunFlags, "--kernel", "idle", "--set", "n=10", "--max-steps", "100000"}).exitCode == 0);
  CHECK(tyloc({"run", kRunFlags, "--kernel", "spin", "--set", "n=1000", "--max-steps", "100000"}).exitCode == 0);
}

TEST_CASE("tyloc run --arch: the stmatrix stores of sm_90a give what sm_80's plain stores give") {
  const std::string file = kernelPath("tests/emu/kernels/stmatrix.tyl");
  auto plain = tyloc({"run", file, "--kernel", "stmatrix_epilogue"});
  auto matrix = tyloc({"run", file, "--kernel", "stmatrix_epilogue", "--arch", "sm_90a"});
  INFO(plain.err << matrix.err);
  CHECK(plain.exitCode == 0);
  CHECK(matrix.exitCode == 0);
  CHECK(plain.out.find("C: f16[64, 64] digest") != std::string::npos);
  // The same digests; the counts of warp instructions differ.
  auto digests = [](const std::string& out) { return out.substr(0, out.find("stmatrix_epilogue:")); };
  CHECK(digests(matrix.out) == digests(plain.out));
  CHECK(matrix.out.find("1628 warp instructions") != std::string::npos);
  CHECK(plain.out.find("1628 warp instructions") == std::string::npos);
  // With memory read by the stored arithmetic.
  auto beta = tyloc({"run", file, "--kernel", "stmatrix_beta"});
  auto betaMatrix = tyloc({"run", file, "--kernel", "stmatrix_beta", "--arch", "sm_90a"});
  CHECK(beta.exitCode == 0);
  CHECK(betaMatrix.exitCode == 0);
  auto betaDigests = [](const std::string& out) { return out.substr(0, out.find("stmatrix_beta:")); };
  CHECK(betaDigests(betaMatrix.out) == betaDigests(beta.out));
  CHECK(betaMatrix.out != beta.out);  // different instructions
  auto wrong = tyloc({"run", file, "--kernel", "stmatrix_epilogue", "--arch", "sm_70"});
  CHECK(wrong.exitCode == 2);
  CHECK(wrong.err.find("--arch") != std::string::npos);
}

TEST_CASE("tyloc run --dump: checked before the run, written also when problems were found") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tyloc-run-dump-checks";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string notFolder = (dir / "file").string();
  std::ofstream(notFolder) << "x";
  auto r = tyloc({"run", kRunFlags, "--kernel", "store", "--set", "n=7", "--dump", notFolder});
  CHECK(r.exitCode == 2);
  CHECK(r.out.empty());  // nothing ran
  CHECK(r.err.find("--dump " + notFolder) != std::string::npos);
  // A run that hits the step limit still leaves its tensors for inspection.
  r = tyloc({"run", kRunFlags, "--kernel", "spin", "--set", "n=100000", "--max-steps", "1000", "--dump",
             (dir / "out").string()});
  CHECK(r.exitCode == 1);
  CHECK(std::filesystem::exists(dir / "out" / "A.npy"));
  // A refused launch ran nothing: nothing is written, and the note says why.
  r = tyloc({"run", kernelPath("examples/add_one/add_one.tyl"), "--kernel", "add_one_n", "--set", "n=-3", "--dump",
             (dir / "refused").string()});
  CHECK(r.exitCode == 1);
  CHECK(std::filesystem::is_empty(dir / "refused"));
  CHECK(r.err.find("nothing written to " + (dir / "refused").string() + ": the launch was refused") !=
        std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("tyloc run: a refused launch names the values of the parameters its check read") {
  // gemm stores C in 8-byte vectors, which the launcher allows only for an even row stride N.
  auto r = tyloc({"run", kernelPath("examples/gemm/gemm.tyl"), "--kernel", "gemm_f16", "--set", "M=64", "N=7", "K=16",
                  "alpha=1", "apply_relu=false"});
  INFO(r.err);
  CHECK(r.exitCode == 1);
  CHECK(r.err.find("error: the stride of dimension 0 of C must be a multiple of 2 elements for 8-byte accesses "
                   "(N = 7) [emu-launch-failure]") != std::string::npos);
  // One --set takes several values: the same run with N even has nothing to refuse.
  r = tyloc({"run", kernelPath("examples/gemm/gemm.tyl"), "--kernel", "gemm_f16", "--set", "M=64", "N=8", "K=16",
             "alpha=1", "apply_relu=false"});
  CHECK(r.exitCode == 0);
}

namespace {

const tir::Kernel& kernelNamed(const Compiled& c, const std::string& name) {
  for (const tir::Kernel& k : c.module->kernels)
    if (k.name == name) return k;
  FAIL("no kernel " << name);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("integer operations C++ leaves undefined give the shared table's results in a .tyl kernel") {
  // tests/support/IntSemanticsCases.h; tests/gpu/int_semantics_test.cu runs the same kernels
  // compiled to CUDA on a GPU against the same table.
  auto c = compile("int_semantics.tyl");
  int checked = 0;
  for (const test::IntCase& tc : test::kIntCases) {
    if (tc.type == test::IntType::U32) continue;  // not a .tyl type
    const bool wide = tc.type == test::IntType::I64;
    INFO("case " << (&tc - test::kIntCases) << ": a = " << tc.a << ", b = " << tc.b);
    if (tc.op == test::IntOp::LoopNext) continue;  // below, as whole loops
    const Type t = wide ? Type::I64 : Type::I32;
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(t, 8)};
    emu::RunResult r = emu::run(kernelNamed(*c, wide ? "ops64" : "ops32"),
                                {emu::Arg::pointer(0), emu::Arg::integer(tc.a), emu::Arg::integer(tc.b)}, buffers);
    // The kernel divides by b whatever the case's operation: by zero that is reported (and
    // gives 0); nothing else is.
    if (tc.b == 0) {
      REQUIRE(r.findings.size() >= 1);
      CHECK(r.findings[0].kind == emu::FindingKind::DivisionByZero);
    } else {
      REQUIRE(r.ok());
    }
    const int slot = tc.op == test::IntOp::Add   ? 0
                     : tc.op == test::IntOp::Sub ? 1
                     : tc.op == test::IntOp::Mul ? 2
                     : tc.op == test::IntOp::Neg ? 3
                     : tc.op == test::IntOp::Div ? 4
                     : tc.op == test::IntOp::Rem ? 5
                     : tc.op == test::IntOp::Shl ? 6
                                                 : 7;
    int64_t got = 0;
    std::memcpy(&got, buffers[0].bytes.data() + slot * (wide ? 8 : 4), wide ? 8 : 4);
    if (!wide) got = static_cast<int32_t>(got);
    CHECK(got == tc.expected);
    ++checked;
  }
  CHECK(checked > 40);
  // range(a, 2^31 - 1, 3) near the end: the step saturates there and the loop ends, after the
  // iterations an exact count gives.
  const int64_t end = test::kI32Max;
  for (int64_t a : {end - 10, end - 9, end - 8, end - 2, end - 1, end}) {
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::I32, 1)};
    emu::RunResult r = emu::run(kernelNamed(*c, "trips"),
                                {emu::Arg::pointer(0), emu::Arg::integer(a), emu::Arg::integer(end)}, buffers);
    INFO("a = " << a);
    REQUIRE(r.ok());
    CHECK(static_cast<int64_t>(emu::getElement(buffers[0], Type::I32, 0)) == (end - a + 2) / 3);
  }
  for (const test::FloatToIntCase& tc : test::kFloatToIntCases) {
    if (tc.to == test::IntType::U32) continue;
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::I32, 1), emu::makeBuffer(Type::I64, 1)};
    const double x = tc.nan ? std::nan("") : static_cast<double>(tc.value);
    emu::RunResult r = emu::run(kernelNamed(*c, "to_int"), {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::real(x)},
                                buffers);
    REQUIRE(r.ok());
    int32_t got32 = 0;
    int64_t got64 = 0;
    std::memcpy(&got32, buffers[0].bytes.data(), 4);
    std::memcpy(&got64, buffers[1].bytes.data(), 8);
    INFO("x = " << x);
    CHECK((tc.to == test::IntType::I32 ? int64_t{got32} : got64) == tc.expected);
  }
  for (const test::MinMaxCase& tc : test::kMinMaxCases) {
    float a, b;
    std::memcpy(&a, &tc.a, 4);
    std::memcpy(&b, &tc.b, 4);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 4)};
    emu::RunResult r = emu::run(kernelNamed(*c, "minmax"), {emu::Arg::pointer(0), emu::Arg::real(a), emu::Arg::real(b)},
                                buffers);
    REQUIRE(r.ok());
    uint32_t got[4];
    std::memcpy(got, buffers[0].bytes.data(), 16);
    INFO("a = " << a << " (" << tc.a << "), b = " << b << " (" << tc.b << ")");
    CHECK(got[0] == tc.min);
    CHECK(got[1] == tc.max);
    CHECK(got[2] == tc.reluA);
    CHECK(got[3] == tc.reluB);
  }
}

TEST_CASE("negating a bool gives the i32 -1 or 0, and a 16-bit float is negated in f32") {
  // tests/hostrun/random_test.cpp found -(a > b) typed bool: the emulator computed 1 where the
  // generated C++ computed -1.
  auto c = compile("negation.tyl");
  for (auto [a, b] : {std::pair{3, 1}, std::pair{1, 1}}) {
    INFO("a = " << a << ", b = " << b);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::I32, 3), emu::makeBuffer(Type::F16, 1)};
    emu::RunResult r = emu::run(kernelNamed(*c, "negate"),
                                {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::integer(a), emu::Arg::integer(b),
                                 emu::Arg::real(1.5)},
                                buffers);
    REQUIRE(r.ok());
    const int32_t gt = a > b ? -1 : 0, eq = a == b ? -1 : 0;
    CHECK(emu::getElement(buffers[0], Type::I32, 0) == gt);
    CHECK(emu::getElement(buffers[0], Type::I32, 1) == gt * 5 + 1);
    CHECK(emu::getElement(buffers[0], Type::I32, 2) == (eq >> 1));
    CHECK(emu::getElement(buffers[1], Type::F16, 0) == -1.5);
  }
}

TEST_CASE("a type parameter converts to the type of each instantiation") {
  auto c = compile("type_param_conversion.tyl");
  // 1/3 rounded to f16 (11 significant bits) and to bf16 (8).
  for (auto [name, rounded] : {std::pair{"round_to_f16", 0.333251953125}, std::pair{"round_to_bf16", 0.333984375}}) {
    INFO(name);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 2)};
    emu::RunResult r = emu::run(kernelNamed(*c, name), {emu::Arg::pointer(0), emu::Arg::real(1.0 / 3.0)}, buffers);
    REQUIRE(r.ok());
    CHECK(emu::getElement(buffers[0], Type::F32, 0) == rounded);
    CHECK(emu::getElement(buffers[0], Type::F32, 1) == 2 * rounded);
  }
}

TEST_CASE("an integer constant in f32 arithmetic is rounded to f32 once") {
  auto c = compile("int_constant_f32.tyl");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 2)};
  emu::RunResult r = emu::run(kernelNamed(*c, "scale"), {emu::Arg::pointer(0), emu::Arg::real(1.0)}, buffers);
  REQUIRE(r.ok());
  const double nearest = std::ldexp(1.0, 60) + std::ldexp(1.0, 37);
  CHECK(emu::getElement(buffers[0], Type::F32, 0) == nearest);
  CHECK(emu::getElement(buffers[0], Type::F32, 1) == nearest);
}

TEST_CASE("an integer stored to bf16 is rounded to bf16 once") {
  auto c = compile("int_constant_f32.tyl");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::BF16, 5)};
  emu::RunResult r = emu::run(kernelNamed(*c, "to_bf16"),
                              {emu::Arg::pointer(0), emu::Arg::integer(16842753), emu::Arg::integer(16842753)}, buffers);
  REQUIRE(r.ok());
  const double nearest = std::ldexp(1.0, 24) + std::ldexp(1.0, 17);
  CHECK(emu::getElement(buffers[0], Type::BF16, 0) == nearest);
  CHECK(emu::getElement(buffers[0], Type::BF16, 1) == nearest);
  CHECK(emu::getElement(buffers[0], Type::BF16, 2) == nearest);
  CHECK(emu::getElement(buffers[0], Type::BF16, 3) == -nearest);
  CHECK(emu::getElement(buffers[0], Type::BF16, 4) == std::ldexp(1.0, 24));
}

TEST_CASE("a shared row split by a non-power of two is read right at an origin below a known multiple") {
  auto c = compile("negative_remainder.tyl");
  for (const char* name : {"stepped", "counted"}) {
    INFO(name);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 96), emu::makeBuffer(Type::F32, 48)};
    for (int64_t i = 0; i < 96; ++i) emu::setElement(buffers[0], Type::F32, i, static_cast<double>(i));
    emu::RunResult r = emu::run(kernelNamed(*c, name), {emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
    REQUIRE(r.ok());
    for (int64_t i = 0; i < 48; ++i) CHECK(emu::getElement(buffers[1], Type::F32, i) == static_cast<double>(i));
  }
  // Rows 2..5 and 8..11.
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 96), emu::makeBuffer(Type::F32, 96)};
  for (int64_t i = 0; i < 96; ++i) {
    emu::setElement(buffers[0], Type::F32, i, static_cast<double>(i));
    emu::setElement(buffers[1], Type::F32, i, -1.0);
  }
  emu::RunResult r = emu::run(kernelNamed(*c, "wide"), {emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
  REQUIRE(r.ok());
  for (int64_t i = 0; i < 96; ++i) {
    const int64_t row = i / 8;
    const bool copied = (row >= 2 && row < 6) || row >= 8;
    CHECK(emu::getElement(buffers[1], Type::F32, i) == (copied ? static_cast<double>(i) : -1.0));
  }
}

TEST_CASE("block_dim's fields are constants inside expressions") {
  auto c = compile("block_dim_const.tyl");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::I32, 128)};
  emu::RunResult r = emu::run(kernelNamed(*c, "block_dims"), {emu::Arg::pointer(0)}, buffers);
  REQUIRE(r.ok());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 64; ++t) CHECK(emu::getElement(buffers[0], Type::I32, b * 64 + 63 - t) == t * 4 + 1000);
}

TEST_CASE("the grid can use block_dim") {
  auto c = compile("block_dim_const.tyl");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::I32, 4)};
  emu::RunResult r = emu::run(kernelNamed(*c, "grid_of_block_dim"), {emu::Arg::pointer(0)}, buffers);
  REQUIRE(r.ok());
  CHECK(r.stats.blocks == 4);
  for (int64_t b = 0; b < 4; ++b) CHECK(emu::getElement(buffers[0], Type::I32, b) == 4);
}

TEST_CASE("tuple constants stand for the tuples they name") {
  auto c = compile("tuple_constants.tyl");
  const tir::Kernel& k = kernelNamed(*c, "tiles");
  CHECK(k.block == std::array<int64_t, 3>{16, 4, 1});
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 8 * 96), emu::makeBuffer(Type::F32, 8 * 48)};
  emu::fillRandom(buffers[0], Type::F32, 3);
  emu::RunResult r = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
  REQUIRE(r.ok());
  CHECK(r.stats.blocks == 6);
  for (int64_t row = 0; row < 8; ++row)
    for (int64_t col = 0; col < 48; ++col)
      REQUIRE(emu::getElement(buffers[1], Type::F32, col * 8 + row) ==
              emu::getElement(buffers[0], Type::F32, row * 96 + col / 16 * 32 + 16 + col % 16));
}

TEST_CASE("a copy into a window of a fragment fills only the window") {
  auto c = compile("fragment_window.tyl");
  const tir::Kernel& k = kernelNamed(*c, "windows");
  for (int64_t r : {0, 3, 20, 30}) {
    INFO("r = " << r);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 32 * 8), emu::makeBuffer(Type::F16, 40 * 8),
                                        emu::makeBuffer(Type::F32, 32 * 8)};
    emu::fillRandom(buffers[0], Type::F32, 1);
    emu::fillRandom(buffers[1], Type::F16, 2);
    emu::RunResult run = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::pointer(2),
                                      emu::Arg::integer(r)}, buffers);
    REQUIRE(run.ok());
    auto a = [&](int64_t i, int64_t j) { return emu::getElement(buffers[0], Type::F32, i * 8 + j); };
    for (int64_t i = 0; i < 32; ++i)
      for (int64_t j = 0; j < 8; ++j) {
        double want = a(i, j);
        if (j >= 4 && r + i < 40) want = emu::getElement(buffers[1], Type::F16, (r + i) * 8 + (j - 4));
        if (i >= r && i < r + 2 && j < 2) want = a(i - r, 6 + j);
        if (i == 31) want = a(0, j);
        INFO("C[" << i << ", " << j << "]");
        REQUIRE(emu::getElement(buffers[2], Type::F32, i * 8 + j) == want);
      }
  }
}

TEST_CASE("a converting copy into a whole fragment keeps the slots past the edge of the source") {
  auto c = compile("fragment_window.tyl");
  const tir::Kernel& k = kernelNamed(*c, "convert_edge");
  for (int64_t M : {32, 20, 0}) {
    INFO("M = " << M);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F16, M * 8), emu::makeBuffer(Type::F32, 32 * 8)};
    emu::fillRandom(buffers[0], Type::F16, 3);
    emu::RunResult run =
        emu::run(k, {emu::Arg::integer(M), emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
    REQUIRE(run.ok());
    for (int64_t i = 0; i < 32; ++i)
      for (int64_t j = 0; j < 8; ++j) {
        INFO("C[" << i << ", " << j << "]");
        REQUIRE(emu::getElement(buffers[1], Type::F32, i * 8 + j) ==
                (i < M ? emu::getElement(buffers[0], Type::F16, i * 8 + j) : -1.0));
      }
  }
}

TEST_CASE("a window of a replicated fragment is filled from shared memory, converting") {
  auto c = compile("fragment_window.tyl");
  const tir::Kernel& k = kernelNamed(*c, "shared_window");
  for (int64_t r : {0, 5, 28}) {
    INFO("r = " << r);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F16, 32 * 8), emu::makeBuffer(Type::F32, 32 * 8)};
    emu::fillRandom(buffers[0], Type::F16, 4);
    emu::RunResult run =
        emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::integer(r)}, buffers);
    REQUIRE(run.ok());
    for (int64_t i = 0; i < 32; ++i)
      for (int64_t j = 0; j < 8; ++j) {
        double want = 2.0;
        if (i >= r && i < r + 4 && j >= 2 && j < 6) want = emu::getElement(buffers[0], Type::F16, (i - r) * 8 + j - 2);
        INFO("C[" << i << ", " << j << "]");
        REQUIRE(emu::getElement(buffers[1], Type::F32, i * 8 + j) == want);
      }
  }
}

TEST_CASE("a window of a fragment at an origin read from memory is reported where it reaches outside") {
  auto c = compile("fragment_window.tyl");
  const tir::Kernel& k = kernelNamed(*c, "origin_from_memory");
  for (int32_t r : {0, 28, 29, -1}) {
    INFO("r = " << r);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::I32, 1), emu::makeBuffer(Type::F32, 32 * 8),
                                        emu::makeBuffer(Type::F32, 32 * 8)};
    emu::setElement(buffers[0], Type::I32, 0, r);
    emu::fillRandom(buffers[1], Type::F32, 6);
    emu::RunResult run = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::pointer(2)}, buffers);
    INFO(emu::renderFindings(run.findings, c->sources));
    // The part of the window inside the fragment is filled either way.
    for (int64_t i = 0; i < 32; ++i)
      for (int64_t j = 0; j < 8; ++j)
        REQUIRE(emu::getElement(buffers[2], Type::F32, i * 8 + j) ==
                (i >= r && i < r + 4 ? emu::getElement(buffers[1], Type::F32, (i - r) * 8 + j) : 0.0));
    if (r >= 0 && r <= 28) {
      REQUIRE(run.ok());
      continue;
    }
    REQUIRE(run.findings.size() == 1);
    CHECK(run.findings[0].kind == emu::FindingKind::OutOfBounds);
    CHECK(lineOf(*c, run.findings[0].loc) == 41);
    CHECK(run.findings[0].message ==
          fmt::format("a copy into a (4, 8) window of register fragment 'x' (32, 8) reaches outside it (only the part "
                      "inside is filled), at origin ({}, 0), by thread 0 (warp 0, lane 0) of block (0, 0, 0)",
                      r));
  }
}

TEST_CASE("an index that leaves out only dimensions of extent 1 fills the whole fragment at once") {
  auto c = compile("fragment_window.tyl");
  const tir::Kernel& k = kernelNamed(*c, "unit_dims");
  // x[0]: two 16-byte vectors, each with its element-by-element edge path (8 loads), the
  // shared tile one 16-byte vector; b[0]: one ldmatrix.x4 instead of 8 element loads.
  CHECK(emu::test::countStmts<tir::Ldmatrix>(k.body) == 1);
  CHECK(emu::test::countStmts<tir::Load>(k.body) == 11);
  for (int64_t M : {32, 20}) {
    INFO("M = " << M);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, M * 8), emu::makeBuffer(Type::F16, 16 * 16),
                                        emu::makeBuffer(Type::F32, 32 * 8), emu::makeBuffer(Type::F16, 16 * 16)};
    emu::fillRandom(buffers[0], Type::F32, 7);
    emu::fillRandom(buffers[1], Type::F16, 8);
    emu::RunResult run = emu::run(k, {emu::Arg::integer(M), emu::Arg::pointer(0), emu::Arg::pointer(1),
                                      emu::Arg::pointer(2), emu::Arg::pointer(3)}, buffers);
    REQUIRE(run.ok());
    for (int64_t i = 0; i < 32 * 8; ++i) {
      INFO("C[0, " << i / 8 << ", " << i % 8 << "]");
      REQUIRE(emu::getElement(buffers[2], Type::F32, i) == (i / 8 < M ? emu::getElement(buffers[0], Type::F32, i) : -1.0));
    }
    for (int64_t i = 0; i < 16 * 16; ++i) {
      INFO("D[0, " << i / 16 << ", " << i % 16 << "]");
      REQUIRE(emu::getElement(buffers[3], Type::F16, i) == emu::getElement(buffers[1], Type::F16, i));
    }
  }
}

TEST_CASE("a copy into shared memory one element at a time reads each element once, zero outside") {
  auto c = compile("element_copy.tyl");
  const tir::Kernel& k = kernelNamed(*c, "stage");
  // 64 x 32 elements over 128 threads: 16 loads of A and 16 of the shared tile, each element
  // tested once (no second, element-wise path for a vector of one element).
  CHECK(emu::test::countStmts<tir::Load>(k.body) == 32);
  for (auto [M, K] : {std::pair{64, 32}, std::pair{50, 20}, std::pair{100, 37}}) {
    INFO("M = " << M << ", K = " << K);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F16, M * K), emu::makeBuffer(Type::F16, 64 * 32)};
    emu::fillRandom(buffers[0], Type::F16, 5);
    emu::RunResult r =
        emu::run(k, {emu::Arg::integer(M), emu::Arg::integer(K), emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
    REQUIRE(r.ok());
    for (int64_t i = 0; i < 64; ++i)
      for (int64_t j = 0; j < 32; ++j)
        REQUIRE(emu::getElement(buffers[1], Type::F16, i * 32 + j) ==
                (i < M && j < K ? emu::getElement(buffers[0], Type::F16, i * K + j) : 0.0));
  }
}

TEST_CASE("arithmetic on i32 fragments is exact, compound assignments and min/max included") {
  auto c = compile("int_fragments.tyl");
  const tir::Kernel& k = kernelNamed(*c, "int_fragments");
  std::vector<emu::Buffer> buffers;
  for (int i = 0; i < 6; ++i) buffers.push_back(emu::makeBuffer(Type::I32, 32));
  auto x = [](int64_t i) -> int32_t {
    // Odd values beyond f32's 24-bit mantissa, on both sides of the min/max bounds, and the extremes.
    if (i == 0) return INT32_MAX;
    if (i == 1) return INT32_MIN;
    return static_cast<int32_t>((i % 2 ? 1 : -1) * (1073741823 + 2 * i));
  };
  for (int64_t i = 0; i < 32; ++i) emu::setElement(buffers[0], Type::I32, i, x(i));
  std::vector<emu::Arg> args;
  for (int i = 0; i < 6; ++i) args.push_back(emu::Arg::pointer(i));
  REQUIRE(emu::run(k, args, buffers).ok());
  auto wrap = [](int64_t v) { return static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(v))); };
  for (int64_t i = 0; i < 32; ++i) {
    INFO("X = " << x(i));
    CHECK(emu::getElement(buffers[1], Type::I32, i) == wrap(int64_t{x(i)} + 3));
    CHECK(emu::getElement(buffers[2], Type::I32, i) == wrap(int64_t{x(i)} * 3));
    CHECK(emu::getElement(buffers[3], Type::I32, i) == -7.0);
    CHECK(emu::getElement(buffers[4], Type::I32, i) == std::min<double>(x(i), 1073741825));
    CHECK(emu::getElement(buffers[5], Type::I32, i) == std::max<double>(x(i), -1073741825));
  }
}

TEST_CASE("fragment arithmetic with an i64 operand is done in i64") {
  auto c = compile("int_fragments.tyl");
  const tir::Kernel& k = kernelNamed(*c, "i64_fragments");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::I64, 32), emu::makeBuffer(Type::I32, 32),
                                      emu::makeBuffer(Type::I64, 32), emu::makeBuffer(Type::I64, 32),
                                      emu::makeBuffer(Type::I64, 32), emu::makeBuffer(Type::I32, 32)};
  const int64_t big = int64_t{1} << 40;
  for (int64_t i = 0; i < 32; ++i) {
    emu::setElement(buffers[0], Type::I64, i, static_cast<double>(big + i));
    emu::setElement(buffers[1], Type::I32, i, static_cast<double>(i * 4096 - 65536));
  }
  std::vector<emu::Arg> args = {emu::Arg::integer(big)};
  for (int i = 0; i < 6; ++i) args.push_back(emu::Arg::pointer(i));
  REQUIRE(emu::run(k, args, buffers).ok());
  for (int64_t i = 0; i < 32; ++i) {
    const int64_t x = i * 4096 - 65536;
    INFO("i = " << i);
    CHECK(emu::getElement(buffers[2], Type::I64, i) == static_cast<double>(2 * big + i));
    CHECK(emu::getElement(buffers[3], Type::I64, i) == static_cast<double>(2 * (big + i)));
    CHECK(emu::getElement(buffers[4], Type::I64, i) == static_cast<double>(x * 262144));
    CHECK(emu::getElement(buffers[5], Type::I32, i) ==
          static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(x * 262144))));
  }
}

TEST_CASE("an index written in place is computed in 64 bits, a let-bound i32 wraps first") {
  auto c = compile("index_width.tyl");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 100), emu::makeBuffer(Type::F32, 2)};
  emu::fillRandom(buffers[0], Type::F32, 4);
  emu::RunResult run = emu::run(kernelNamed(*c, "index_width"),
                                {emu::Arg::integer(int64_t{1} << 28), emu::Arg::pointer(0), emu::Arg::pointer(1)},
                                buffers);
  REQUIRE(run.ok());
  CHECK(emu::getElement(buffers[1], Type::F32, 0) == emu::getElement(buffers[0], Type::F32, 6));
  CHECK(emu::getElement(buffers[1], Type::F32, 1) == emu::getElement(buffers[0], Type::F32, 6));
}

TEST_CASE("compile-time shifts of negative values and the remainder by -1 are exact") {
  auto c = compile("constant_folding.tyl");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::I64, 4)};
  REQUIRE(emu::run(kernelNamed(*c, "constants"), {emu::Arg::pointer(0)}, buffers).ok());
  CHECK(emu::getElement(buffers[0], Type::I64, 0) == -16.0);
  CHECK(emu::getElement(buffers[0], Type::I64, 1) == static_cast<double>(INT64_MIN));
  CHECK(emu::getElement(buffers[0], Type::I64, 2) == 0.0);
  CHECK(emu::getElement(buffers[0], Type::I64, 3) == -7.0);
}

TEST_CASE("min and max of compile-time floats follow the run-time rules") {
  auto c = compile("constant_folding.tyl");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 8), emu::makeBuffer(Type::I64, 1)};
  REQUIRE(emu::run(kernelNamed(*c, "min_max"), {emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers).ok());
  const double expected[8] = {0.0, -0.0, 2.0, 1.0, 0.5, 1.5, 0.0, -0.0};
  for (int i = 0; i < 8; ++i) {
    INFO("F[" << i << "]");
    const double got = emu::getElement(buffers[0], Type::F32, i);
    CHECK(got == expected[i]);
    CHECK(std::signbit(got) == std::signbit(expected[i]));
  }
  CHECK(emu::getElement(buffers[1], Type::I64, 0) == 3.0);
}

TEST_CASE("indices and origins written in place are computed in 64 bits in every operation; i32() truncates") {
  auto c = compile("index_in_64_bits.tyl");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 70000), emu::makeBuffer(Type::F32, 13)};
  for (int64_t i = 0; i < 70000; ++i) emu::setElement(buffers[0], Type::F32, i, static_cast<double>(i));
  emu::RunResult r = emu::run(kernelNamed(*c, "index64"),
                              {emu::Arg::integer(65537), emu::Arg::integer(65536), emu::Arg::pointer(0),
                               emu::Arg::pointer(1)},
                              buffers);
  REQUIRE(r.ok());
  const std::vector<double> expected = {65537, 16912, 65537, 69999, 65537, 65537, 65537,
                                        65537, 65537, 65538, 65541, 65541, 65542};
  for (size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(emu::getElement(buffers[1], Type::F32, static_cast<int64_t>(i)) == expected[i]);
  }
}

TEST_CASE("the right side of && and || reads memory only where the left does not decide") {
  auto c = compile("short_circuit.tyl");
  for (int64_t n : {0, 1, 17, 64}) {
    CAPTURE(n);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, n), emu::makeBuffer(Type::I32, 64)};
    auto a = [](int64_t i) { return i % 3 == 0 ? -1.0 : 1.0; };
    for (int64_t i = 0; i < n; ++i) emu::setElement(buffers[0], Type::F32, i, a(i));
    emu::RunResult r = emu::run(kernelNamed(*c, "guard"), {emu::Arg::integer(n), emu::Arg::pointer(0), emu::Arg::pointer(1)},
                                buffers);
    REQUIRE(r.ok());
    for (int64_t i = 0; i < 64; ++i) {
      CAPTURE(i);
      int64_t expected = 0;
      if (i < n && a(i) > 0) expected += 1;
      if (i >= n || a(i) < 0) expected += 2;
      if (i < n && a(i) > 0 && i + 1 < n && a(i + 1) > 0) expected += 4;
      CHECK(emu::getElement(buffers[1], Type::I32, i) == static_cast<double>(expected));
    }
  }
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::I32, 128)};
  emu::RunResult r = emu::run(kernelNamed(*c, "guard_shared"), {emu::Arg::pointer(0)}, buffers);
  REQUIRE(r.ok());
  for (int64_t i = 0; i < 128; ++i) CHECK(emu::getElement(buffers[0], Type::I32, i) == (i > 3 && i < 64 ? 1.0 : 0.0));

  std::vector<emu::Buffer> unrolled = {emu::makeBuffer(Type::F32, 4), emu::makeBuffer(Type::I32, 4)};
  for (int64_t i = 0; i < 4; ++i) emu::setElement(unrolled[0], Type::F32, i, i == 1 ? -1.0 : 1.0);
  r = emu::run(kernelNamed(*c, "guard_unrolled"), {emu::Arg::pointer(0), emu::Arg::pointer(1)}, unrolled);
  REQUIRE(r.ok());
  const std::vector<double> expected = {0, 1, 0, 1};
  for (int64_t i = 0; i < 4; ++i) CHECK(emu::getElement(unrolled[1], Type::I32, i) == expected[static_cast<size_t>(i)]);
}

TEST_CASE("named barriers synchronise the warps that reach them, and a wrong count is reported") {
  auto c = compile("named_barrier.tyl");
  const tir::Kernel& k = kernelNamed(*c, "named_exchange");
  std::vector<emu::Buffer> buffers;
  auto exchange = [&](int64_t w) {
    buffers = {emu::makeBuffer(Type::F32, 128), emu::makeBuffer(Type::F32, 128, false)};
    emu::fillRandom(buffers[0], Type::F32, 5);
    return emu::run(k, {emu::Arg::integer(w), emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
  };
  emu::RunResult good = exchange(2);
  INFO(emu::renderFindings(good.findings, c->sources));
  REQUIRE(good.ok());
  CHECK(good.stats.barriers == 2);
  for (int64_t i = 0; i < 128; ++i)
    CHECK(emu::getElement(buffers[1], Type::F32, i) ==
          emu::getElement(buffers[0], Type::F32, i < 64 ? 63 - i : 191 - i));
  // Without barrier 1 the first pair reads what the other warp of the pair writes: a race, while
  // the second pair's barrier still orders its own reads.
  emu::RunResult race = exchange(0);
  auto raced = std::find_if(race.findings.begin(), race.findings.end(),
                            [](const emu::Finding& f) { return f.kind == emu::FindingKind::SharedRace; });
  REQUIRE(raced != race.findings.end());
  CHECK(lineOf(*c, raced->loc) == 9);  // warp 1's write, after warp 0 read the byte
  // 32 threads at a barrier that waits for 64: warp 0 waits forever (and warp 1, which passes by,
  // reads what warp 0 wrote unordered).
  emu::RunResult stuck = exchange(1);
  auto deadlock = std::find_if(stuck.findings.begin(), stuck.findings.end(),
                               [](const emu::Finding& f) { return f.kind == emu::FindingKind::Deadlock; });
  REQUIRE(deadlock != stuck.findings.end());
  CHECK_THAT(deadlock->message, Catch::Contains("warp 0 waits at named barrier 1 (bar.sync 1, 64)"));
  // 128 threads at a barrier that counts 64.
  emu::RunResult over = exchange(4);
  REQUIRE(over.findings.size() == 1);
  CHECK(over.findings[0].kind == emu::FindingKind::DivergentBarrier);
  CHECK_THAT(over.findings[0].message, Catch::Contains("128 threads reach named barrier 1, which counts 64"));
  // A one-warp barrier that every warp reaches: each passes alone, and orders its own lanes.
  const tir::Kernel& one = kernelNamed(*c, "one_warp");
  buffers = {emu::makeBuffer(Type::F32, 128), emu::makeBuffer(Type::F32, 128, false)};
  emu::fillRandom(buffers[0], Type::F32, 9);
  emu::RunResult alone = emu::run(one, {emu::Arg::pointer(0), emu::Arg::pointer(1)}, buffers);
  INFO(emu::renderFindings(alone.findings, c->sources));
  REQUIRE(alone.ok());
  for (int64_t i = 0; i < 128; ++i)
    CHECK(emu::getElement(buffers[1], Type::F32, i) == emu::getElement(buffers[0], Type::F32, i ^ 31));
}

TEST_CASE("parts of a fragment are stored, alone and in arithmetic, from the slots that hold them") {
  auto c = compile("fragment_window.tyl");
  const tir::Kernel& k = kernelNamed(*c, "store_parts");
  std::vector<emu::Buffer> buffers = {emu::makeBuffer(Type::F32, 32 * 8), emu::makeBuffer(Type::F32, 32 * 8),
                                      emu::makeBuffer(Type::F32, 32 * 8)};
  emu::fillRandom(buffers[0], Type::F32, 6);
  emu::fillRandom(buffers[1], Type::F32, 7);
  emu::fillRandom(buffers[2], Type::F32, 8);
  const std::vector<emu::Buffer> before = buffers;
  emu::RunResult run = emu::run(k, {emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::pointer(2)}, buffers);
  INFO(emu::renderFindings(run.findings, c->sources));
  REQUIRE(run.ok());
  auto at = [](const emu::Buffer& b, int64_t i, int64_t j) { return emu::getElement(b, Type::F32, i * 8 + j); };
  for (int64_t i = 0; i < 32; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      INFO("B, C[" << i << ", " << j << "]");
      CHECK(at(buffers[1], i, j) == (j < 4 ? static_cast<float>(2 * at(buffers[0], i, j + 4)) : at(before[1], i, j)));
      const float x = static_cast<float>(at(buffers[0], i + 8 < 32 ? i + 8 : 0, j));
      const float sum = x + static_cast<float>(3.0f * x) + static_cast<float>(at(buffers[0], i, j));
      CHECK(at(buffers[2], i, j) == (i < 8 ? sum : at(before[2], i, j)));
    }
}
