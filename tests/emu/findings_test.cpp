// Every kind of finding, from small kernels with one bug each, plus the fixed versions
// that must run clean.
#include <catch2/catch.hpp>

#include "TestKernel.h"

using namespace tyl;
using namespace tyl::emu;
using namespace tyl::emu::test;
using tir::BinOp;
using tir::Reg;
using tir::Type;

namespace {

tir::ExprRef tidIs(int64_t t) { return bin(BinOp::Eq, tid(), i32(t)); }

// Thread `writer` stores to s[0]; thread `reader` then loads s[0], with or without a barrier.
TestKernel writeThenRead(int64_t threads, int64_t writer, int64_t reader, bool barrier) {
  TestKernel t("race", threads);
  uint32_t s = t.sharedBuffer("s", Type::I32, 4);
  uint32_t v = t.var("v", Type::I32);
  t.k.body = {at(9, tir::Assign{Reg::var(v), i32(7)}),
              at(10, when(tidIs(writer), {at(11, store(Type::I32, mem(s, i32(0)), {Reg::var(v)}))}))};
  if (barrier) t.k.body.push_back(at(12, tir::Barrier{}));
  t.k.body.push_back(at(13, when(tidIs(reader), {at(14, load(Type::I32, mem(s, i32(0)), {Reg::var(v)}))})));
  return t;
}

RunResult runNoArgs(const TestKernel& t) {
  std::vector<Buffer> none;
  return run(t.k, {}, none);
}

}  // namespace

TEST_CASE("a shared write and a read by another thread without a barrier race", "[findings]") {
  for (auto [threads, reader] : {std::pair{32, 1}, std::pair{64, 33}}) {
    RunResult r = runNoArgs(writeThenRead(threads, 0, reader, false));
    INFO(describe(r));
    REQUIRE(r.findings.size() == 1);
    const Finding& f = r.findings[0];
    CHECK(f.kind == FindingKind::SharedRace);
    CHECK(lineOf(f.loc) == 14);
    CHECK(lineOf(f.otherLoc) == 11);
    CHECK(f.thread.thread == reader);
    CHECK(f.otherThread.thread == 0);
    std::string text = renderFindings(r.findings, sources());
    CHECK(text.find("kernel.tyl:14:1: error: shared-memory race") != std::string::npos);
    CHECK(text.find("[emu-shared-race]") != std::string::npos);
    CHECK(text.find("kernel.tyl:11:1: note: the conflicting write by thread 0") != std::string::npos);
  }
}

TEST_CASE("a barrier between the write and the read removes the race", "[findings]") {
  RunResult r = runNoArgs(writeThenRead(64, 0, 33, true));
  INFO(describe(r));
  CHECK(r.ok());
}

TEST_CASE("accesses by the same thread never race", "[findings]") {
  RunResult r = runNoArgs(writeThenRead(32, 5, 5, false));
  INFO(describe(r));
  CHECK(r.ok());
}

TEST_CASE("a read then a write by another thread race", "[findings]") {
  TestKernel t("war", 32);
  uint32_t s = t.sharedBuffer("s", Type::I32, 1);
  uint32_t v = t.var("v", Type::I32);
  t.k.body = {
      at(20, tir::Assign{Reg::var(v), i32(7)}),
      at(1, when(tidIs(0), {at(2, store(Type::I32, mem(s, i32(0)), {Reg::var(v)}))})),
      at(3, tir::Barrier{}),
      at(4, when(tidIs(3), {at(5, load(Type::I32, mem(s, i32(0)), {Reg::var(v)}))})),
      at(6, when(tidIs(0), {at(7, store(Type::I32, mem(s, i32(0)), {Reg::var(v)}))})),
  };
  RunResult r = runNoArgs(t);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::SharedRace);
  CHECK(lineOf(r.findings[0].loc) == 7);
  CHECK(lineOf(r.findings[0].otherLoc) == 5);
  CHECK(r.findings[0].otherThread.thread == 3);
}

TEST_CASE("two lanes storing to one address in one instruction race", "[findings]") {
  TestKernel t("same", 32);
  uint32_t s = t.sharedBuffer("s", Type::I32, 32);
  uint32_t v = t.var("v", Type::I32);
  t.k.body = {at(1, tir::Assign{Reg::var(v), tid()}),
              at(2, store(Type::I32, mem(s, bin(BinOp::Div, tid(), i32(2))), {Reg::var(v)}))};
  RunResult r = runNoArgs(t);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::SharedRace);
  CHECK(lineOf(r.findings[0].loc) == 2);
  CHECK(lineOf(r.findings[0].otherLoc) == 2);
  CHECK(r.findings[0].thread.thread == 1);
  CHECK(r.findings[0].otherThread.thread == 0);
  CHECK(r.findings[0].count == 16);  // pairs (0,1), (2,3), ... folded into one finding
}

TEST_CASE("out-of-bounds global reads are reported and skipped", "[findings]") {
  TestKernel t("oob", 32);
  uint32_t x = t.globalBuffer("x", Type::F32);
  uint32_t v = t.var("v", Type::F32);
  t.k.body = {at(3, load(Type::F32, mem(x, tid()), {Reg::var(v)}))};
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 16)};
  RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  const Finding& f = r.findings[0];
  CHECK(f.kind == FindingKind::OutOfBounds);
  CHECK(lineOf(f.loc) == 3);
  CHECK(f.thread.thread == 16);
  CHECK(f.count == 16);
  CHECK(f.message.find("byte 64 of a 64-byte buffer") != std::string::npos);
  CHECK(r.completed);
}

TEST_CASE("shared accesses outside the allocation are reported", "[findings]") {
  TestKernel t("oob_shared", 32);
  uint32_t a = t.sharedBuffer("a", Type::I32, 32), b = t.sharedBuffer("b", Type::I32, 32);
  (void)b;
  uint32_t v = t.var("v", Type::I32);
  t.k.body = {at(1, tir::Assign{Reg::var(v), i32(0)}),
              // Runs into buffer b: inside the block's shared memory, outside a.
              at(2, store(Type::I32, mem(a, tir::add(tid(), i32(32))), {Reg::var(v)})),
              // Past the end of shared memory altogether.
              at(3, store(Type::I32, mem(a, tir::add(tid(), i32(1000))), {Reg::var(v)}))};
  RunResult r = runNoArgs(t);
  INFO(describe(r));
  std::vector<Finding> f = findingsOf(r, FindingKind::OutOfBounds);
  REQUIRE(f.size() == 2);
  CHECK(lineOf(f[0].loc) == 2);
  CHECK(f[0].message.find("outside the buffer's bytes [0, 128)") != std::string::npos);
  CHECK(lineOf(f[1].loc) == 3);
}

TEST_CASE("reads of never-written memory are reported", "[findings]") {
  TestKernel t("uninit", 32);
  uint32_t out = t.globalBuffer("out", Type::F32);
  uint32_t s = t.sharedBuffer("s", Type::F32, 32);
  uint32_t v = t.var("v", Type::F32);
  t.k.body = {at(1, load(Type::F32, mem(s, tid()), {Reg::var(v)})),
              at(2, load(Type::F32, mem(out, tid()), {Reg::var(v)}))};
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 32, false)};
  RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
  INFO(describe(r));
  std::vector<Finding> f = findingsOf(r, FindingKind::UninitializedRead);
  REQUIRE(f.size() == 2);
  CHECK(lineOf(f[0].loc) == 1);
  CHECK(f[0].message.find("shared byte 0") != std::string::npos);
  CHECK(lineOf(f[1].loc) == 2);
  CHECK(f[1].message.find("global buffer 'out'") != std::string::npos);
}

TEST_CASE("misaligned vector accesses are reported", "[findings]") {
  TestKernel t("misaligned", 32);
  uint32_t s = t.sharedBuffer("s", Type::F32, 256);
  uint32_t v = t.array("v", Type::F32, 4);
  t.k.body = {at(1, store(Type::F32, mem(s, tir::add(tir::mul(tid(), i32(4)), i32(2))), elems(v, 0, 4)))};
  RunResult r = runNoArgs(t);
  std::vector<Finding> f = findingsOf(r, FindingKind::Misaligned);
  REQUIRE(f.size() == 1);
  CHECK(f[0].message.find("is not a multiple of 16") != std::string::npos);
}

namespace {

// 32 threads copy 16 bytes each with cp.async from g into s, commit, then `after` runs.
TestKernel cpAsyncKernel(tir::Block after, uint32_t* s, uint32_t* v) {
  TestKernel t("cp_async", 32);
  uint32_t g = t.globalBuffer("g", Type::F32);
  *s = t.sharedBuffer("s", Type::F32, 128);
  *v = t.var("v", Type::F32);
  tir::ExprRef off = tir::mul(tid(), i32(4));
  t.k.body = {at(1, tir::CpAsync{mem(*s, off), mem(g, off), 16, nullptr}), at(2, tir::CpAsyncCommit{})};
  for (tir::Stmt& st : after) t.k.body.push_back(std::move(st));
  return t;
}

RunResult runCopy(const TestKernel& t, std::vector<Buffer>& buffers) {
  buffers = {makeBuffer(Type::F32, 128)};
  fillRandom(buffers[0], Type::F32, 3);
  return run(t.k, {Arg::pointer(0)}, buffers);
}

}  // namespace

TEST_CASE("reading a cp.async destination before the wait is reported", "[findings][cp.async]") {
  uint32_t s = 0, v = 0;
  TestKernel t = cpAsyncKernel({}, &s, &v);
  t.k.body.push_back(at(3, load(Type::F32, mem(s, tir::mul(tid(), i32(4))), {Reg::var(v)})));
  std::vector<Buffer> buffers;
  RunResult r = runCopy(t, buffers);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  const Finding& f = r.findings[0];
  CHECK(f.kind == FindingKind::AsyncReadBeforeWait);
  CHECK(lineOf(f.loc) == 3);
  CHECK(lineOf(f.otherLoc) == 1);
  CHECK(f.otherThread.thread == 0);
  CHECK(renderFindings(r.findings, sources()).find("[emu-async-read-before-wait]") != std::string::npos);
}

TEST_CASE("cp.async then wait then barrier lets every thread read the copy", "[findings][cp.async]") {
  uint32_t s = 0, v = 0;
  TestKernel t = cpAsyncKernel({}, &s, &v);
  uint32_t out = t.globalBuffer("out", Type::F32);
  // Each thread reads what its neighbour copied.
  tir::ExprRef other = tir::mul(bin(BinOp::Rem, tir::add(tid(), i32(1)), i32(32)), i32(4));
  t.k.body.push_back(at(3, tir::CpAsyncWait{0}));
  t.k.body.push_back(at(4, tir::Barrier{}));
  t.k.body.push_back(at(5, load(Type::F32, mem(s, other), {Reg::var(v)})));
  t.k.body.push_back(at(6, store(Type::F32, mem(out, other), {Reg::var(v)})));
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 128), makeBuffer(Type::F32, 128)};
  fillRandom(buffers[0], Type::F32, 3);
  RunResult r = run(t.k, {Arg::pointer(0), Arg::pointer(1)}, buffers);
  INFO(describe(r));
  REQUIRE(r.ok());
  for (int i = 0; i < 32; ++i)
    CHECK(getElement(buffers[1], Type::F32, i * 4) == getElement(buffers[0], Type::F32, i * 4));
}

TEST_CASE("cp.async then wait without a barrier races with other threads", "[findings][cp.async]") {
  uint32_t s = 0, v = 0;
  TestKernel t = cpAsyncKernel({}, &s, &v);
  tir::ExprRef other = tir::mul(bin(BinOp::Rem, tir::add(tid(), i32(1)), i32(32)), i32(4));
  t.k.body.push_back(at(3, tir::CpAsyncWait{0}));
  t.k.body.push_back(at(5, load(Type::F32, mem(s, other), {Reg::var(v)})));
  std::vector<Buffer> buffers;
  RunResult r = runCopy(t, buffers);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::SharedRace);
  CHECK(lineOf(r.findings[0].otherLoc) == 1);
  CHECK(r.findings[0].message.find("cp.async") != std::string::npos);
}

TEST_CASE("wait_group 1 leaves the newest group in flight", "[findings][cp.async]") {
  uint32_t s = 0, v = 0;
  TestKernel t = cpAsyncKernel({}, &s, &v);
  uint32_t g = 0;  // cpAsyncKernel's source buffer
  // A second group copies into s[64 + ...] for threads < 16 (each 16 bytes).
  tir::ExprRef off2 = tir::add(i32(64), tir::mul(bin(BinOp::Rem, tid(), i32(16)), i32(4)));
  t.k.body = {
      at(1, when(bin(BinOp::Lt, tid(), i32(16)),
                 {at(2, tir::CpAsync{mem(s, tir::mul(tid(), i32(4))), mem(g, tir::mul(tid(), i32(4))), 16,
                                     nullptr})})),
      at(3, tir::CpAsyncCommit{}),
      at(4, when(bin(BinOp::Lt, tid(), i32(16)),
                 {at(5, tir::CpAsync{mem(s, off2), mem(g, off2), 16, nullptr})})),
      at(6, tir::CpAsyncCommit{}),
      at(7, tir::CpAsyncWait{1}),
      at(8, when(bin(BinOp::Lt, tid(), i32(16)),
                 {at(9, load(Type::F32, mem(s, tir::mul(tid(), i32(4))), {Reg::var(v)})),  // landed
                  at(10, load(Type::F32, mem(s, off2), {Reg::var(v)}))})),                 // in flight
  };
  std::vector<Buffer> buffers;
  RunResult r = runCopy(t, buffers);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::AsyncReadBeforeWait);
  CHECK(lineOf(r.findings[0].loc) == 10);
  CHECK(lineOf(r.findings[0].otherLoc) == 5);
}

TEST_CASE("cp.async zero-fills past the source size and reads nothing for size 0", "[findings][cp.async]") {
  TestKernel t("zfill", 32);
  uint32_t g = t.globalBuffer("g", Type::F32), out = t.globalBuffer("out", Type::F32);
  uint32_t s = t.sharedBuffer("s", Type::F32, 128);
  uint32_t row = t.array("row", Type::F32, 4);
  tir::ExprRef off = tir::mul(tid(), i32(4));
  // Thread t copies min(max(16 - 4 * (t - 16), 0), 16) bytes: threads >= 20 read nothing, even
  // though their source addresses run past the end of g (80 elements).
  tir::ExprRef size =
      bin(BinOp::Min, bin(BinOp::Max, tir::sub(i32(16), tir::mul(tir::sub(tid(), i32(16)), i32(4))), i32(0)),
          i32(16));
  t.k.body = {at(1, tir::CpAsync{mem(s, off), mem(g, off), 16, size}), at(2, tir::CpAsyncCommit{}),
              at(3, tir::CpAsyncWait{0}), at(4, load(Type::F32, mem(s, off), elems(row, 0, 4))),
              at(5, store(Type::F32, mem(out, off), elems(row, 0, 4)))};
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 80), makeBuffer(Type::F32, 128, false)};
  fillRandom(buffers[0], Type::F32, 5);
  RunResult r = run(t.k, {Arg::pointer(0), Arg::pointer(1)}, buffers);
  INFO(describe(r));
  REQUIRE(r.ok());
  for (int th = 0; th < 32; ++th) {
    int copied = std::min(std::max(16 - 4 * (th - 16), 0), 16) / 4;
    for (int e = 0; e < 4; ++e) {
      double expect = e < copied ? getElement(buffers[0], Type::F32, th * 4 + e) : 0.0;
      REQUIRE(getElement(buffers[1], Type::F32, th * 4 + e) == expect);
    }
  }
}

TEST_CASE("a cp.async source size above the copy size is an invalid operand", "[findings][cp.async]") {
  TestKernel t("bad_size", 32);
  uint32_t g = t.globalBuffer("g", Type::F32);
  uint32_t s = t.sharedBuffer("s", Type::F32, 128);
  tir::ExprRef off = tir::mul(tid(), i32(4));
  t.k.body = {at(1, tir::CpAsync{mem(s, off), mem(g, off), 16, i32(20)})};
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 128)};
  RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
  CHECK(findingsOf(r, FindingKind::InvalidOperand).size() == 1);
}

TEST_CASE("a cp.async into bytes another thread read in the same interval races", "[findings][cp.async]") {
  TestKernel t("war_async", 32);
  uint32_t g = t.globalBuffer("g", Type::F32);
  uint32_t s = t.sharedBuffer("s", Type::F32, 128);
  uint32_t v = t.var("v", Type::F32);
  t.k.body = {
      at(20, tir::Assign{Reg::var(v), f32(1)}),
      at(1, store(Type::F32, mem(s, tid()), {Reg::var(v)})),
      at(2, tir::Barrier{}),
      at(3, when(tidIs(1), {at(4, load(Type::F32, mem(s, i32(0)), {Reg::var(v)}))})),
      at(5, when(tidIs(0), {at(6, tir::CpAsync{mem(s, i32(0)), mem(g, i32(0)), 16, nullptr})})),
      at(7, tir::CpAsyncCommit{}),
      at(8, tir::CpAsyncWait{0}),
  };
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 128)};
  RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::SharedRace);
  CHECK(lineOf(r.findings[0].loc) == 6);
  CHECK(lineOf(r.findings[0].otherLoc) == 4);
}

TEST_CASE("mma.sync executed by half a warp is reported", "[findings]") {
  TestKernel t("half_mma", 32);
  uint32_t a = t.array("a", Type::F16, 8), b = t.array("b", Type::F16, 4), c = t.array("c", Type::F32, 4);
  t.k.body = {at(
      1, when(bin(BinOp::Lt, laneId(), i32(16)),
              {at(2, tir::Mma{Type::F16, elems(c, 0, 4), elems(a, 0, 4), elems(b, 0, 2), elems(c, 0, 4)})}))};
  RunResult r = runNoArgs(t);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::PartialCollective);
  CHECK(lineOf(r.findings[0].loc) == 2);
  CHECK(r.findings[0].message.find("thread 16") != std::string::npos);
}

TEST_CASE("ldmatrix in a partial warp is reported", "[findings]") {
  TestKernel t("partial_ldmatrix", 48);  // warp 1 has 16 threads
  uint32_t s = t.sharedBuffer("s", Type::F16, 64);
  uint32_t R = t.array("R", Type::F16, 2);
  uint32_t h = t.var("h", Type::F16);
  tir::ExprRef row = tir::mul(bin(BinOp::Rem, laneId(), i32(8)), i32(8));
  t.k.body = {at(1, tir::Assign{Reg::var(h), tir::cast(Type::F16, f32(1))}),
              at(2, when(bin(BinOp::Lt, tid(), i32(64)),
                         {at(3, store(Type::F16, mem(s, bin(BinOp::Rem, tid(), i32(64))), {Reg::var(h)}))})),
              at(4, tir::Barrier{}), at(5, tir::Ldmatrix{1, false, {Reg::elem(R, 0)}, mem(s, row)})};
  RunResult r = runNoArgs(t);
  std::vector<Finding> f = findingsOf(r, FindingKind::PartialCollective);
  INFO(describe(r));
  REQUIRE(f.size() == 1);
  CHECK(f[0].message.find("no thread for lane 16") != std::string::npos);
}

TEST_CASE("a barrier inside divergent code is reported and stops the run", "[findings]") {
  TestKernel t("divergent", 32);
  t.k.body = {at(1, when(bin(BinOp::Lt, tid(), i32(16)), {at(2, tir::Barrier{})}))};
  RunResult r = runNoArgs(t);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::DivergentBarrier);
  CHECK(lineOf(r.findings[0].loc) == 2);
  CHECK_FALSE(r.completed);
}

TEST_CASE("warps waiting at a barrier others never reach deadlock", "[findings]") {
  TestKernel t("deadlock", 64);
  t.k.body = {
      at(1, when(bin(BinOp::Eq, tir::special(tir::Special::WarpId), i32(0)), {at(2, tir::Barrier{})}))};
  RunResult r = runNoArgs(t);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::Deadlock);
  CHECK(lineOf(r.findings[0].loc) == 2);
  CHECK(r.findings[0].message.find("warps 0 wait at a barrier that warps 1 never reach") !=
        std::string::npos);
  CHECK_FALSE(r.completed);
}

TEST_CASE("integer division by zero is reported", "[findings]") {
  TestKernel t("div0", 32);
  uint32_t v = t.var("v", Type::I32);
  t.k.body = {at(1, tir::Assign{Reg::var(v), bin(BinOp::Div, i32(10), tir::sub(tid(), i32(5)))})};
  RunResult r = runNoArgs(t);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::DivisionByZero);
  CHECK(r.findings[0].thread.thread == 5);
}

TEST_CASE("failed launch checks stop the launch", "[findings]") {
  TestKernel t("checked", 32);
  uint32_t x = t.globalBuffer("x", Type::F32);
  (void)x;
  int n = t.scalar("n", Type::I32);
  tir::LaunchCheck divisible;
  divisible.cond = bin(BinOp::Eq, bin(BinOp::Rem, t.param(n), i32(4)), i32(0));
  divisible.message = "n must be a multiple of 4";
  divisible.loc = line(20);
  tir::LaunchCheck aligned;
  aligned.kind = tir::LaunchCheck::Kind::PointerAlignment;
  aligned.param = 0;
  aligned.alignBytes = 16;
  aligned.message = "x must be 16-byte aligned";
  aligned.loc = line(21);
  t.k.checks = {divisible, aligned};
  t.k.body = {at(1, tir::Barrier{})};
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 64)};
  RunResult good = run(t.k, {Arg::pointer(0), Arg::integer(8)}, buffers);
  CHECK(good.ok());
  RunResult bad = run(t.k, {Arg::pointer(0, 4), Arg::integer(6)}, buffers);
  INFO(describe(bad));
  REQUIRE(bad.findings.size() == 2);
  CHECK(bad.findings[0].kind == FindingKind::LaunchFailure);
  // Each message ends with the values the check read, as the generated launcher's does.
  CHECK(bad.findings[0].message == "n must be a multiple of 4 (n = 6)");
  CHECK(lineOf(bad.findings[1].loc) == 21);
  CHECK(bad.findings[1].message == "x must be 16-byte aligned; x is 4 bytes past a multiple of 16");
  CHECK(bad.stats.blocks == 0);
  CHECK_FALSE(bad.completed);
}

TEST_CASE("an empty grid launches nothing and succeeds as the launcher does", "[findings]") {
  TestKernel t("empty", 32);
  int n = t.scalar("n", Type::I32);
  t.k.grid[0] = bin(BinOp::Div, t.param(n), i32(32));
  std::vector<Buffer> none;
  RunResult r = run(t.k, {Arg::integer(0)}, none);
  CHECK(r.findings.empty());
  CHECK(r.completed);
  CHECK(r.stats.blocks == 0);
}

TEST_CASE("a negative grid is a launch failure", "[findings]") {
  TestKernel t("negative", 32);
  int n = t.scalar("n", Type::I32);
  t.k.grid[0] = bin(BinOp::Div, t.param(n), i32(32));
  std::vector<Buffer> none;
  RunResult r = run(t.k, {Arg::integer(-64)}, none);
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::LaunchFailure);
  CHECK_FALSE(r.completed);
}

TEST_CASE("the run stops after the finding limit", "[findings]") {
  TestKernel t("many", 32);
  uint32_t x = t.globalBuffer("x", Type::F32);
  uint32_t v = t.var("v", Type::F32);
  for (int i = 0; i < 10; ++i)
    t.k.body.push_back(at(i + 1, load(Type::F32, mem(x, i32(100 + i)), {Reg::var(v)})));
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 4)};
  Options options;
  options.maxFindings = 3;
  RunResult r = run(t.k, {Arg::pointer(0)}, buffers, options);
  CHECK(r.findings.size() == 3);
  CHECK_FALSE(r.completed);
}

TEST_CASE("an endless loop hits the instruction budget", "[findings]") {
  for (bool emptyBody : {false, true}) {
    TestKernel t("endless", 32);
    uint32_t i = t.var("i", Type::I32);
    tir::Block body;
    if (!emptyBody) body.push_back(at(2, tir::Comment{"spin"}));
    t.k.body = {at(1, loop(i, i32(0), i32(10), i32(0), body))};
    Options options;
    options.maxWarpInstructions = 10000;
    std::vector<Buffer> none;
    RunResult r = run(t.k, {}, none, options);
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].kind == FindingKind::StepLimit);
    CHECK((lineOf(r.findings[0].loc) == 1 || lineOf(r.findings[0].loc) == 2));  // the loop or its body
  }
}

TEST_CASE("arguments that do not match the parameters throw invalid_argument", "[findings]") {
  TestKernel t("args", 32);
  t.globalBuffer("x", Type::F32);
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 4)};
  CHECK_THROWS_AS(run(t.k, {}, buffers), std::invalid_argument);
  CHECK_THROWS_AS(run(t.k, {Arg::integer(3)}, buffers), std::invalid_argument);
  CHECK_THROWS_AS(run(t.k, {Arg::pointer(1)}, buffers), std::invalid_argument);
}

// ---- Registers never written ------------------------------------------------------

namespace {

// y[tid] = <value of register u after `body`>, where x is written and w never is.
struct Unwritten {
  TestKernel t{"unwritten", 32};
  uint32_t y = t.globalBuffer("y", Type::F32);
  uint32_t x = t.var("x", Type::F32);
  uint32_t w = t.var("w", Type::F32);
  uint32_t u = t.var("u", Type::F32);

  RunResult run(tir::Block body, tir::ExprRef storePred = nullptr) {
    t.k.body = {at(1, tir::Assign{Reg::var(x), f32(2)})};
    for (tir::Stmt& s : body) t.k.body.push_back(std::move(s));
    t.k.body.push_back(at(9, store(Type::F32, mem(y, tid()), {Reg::var(u)}, std::move(storePred))));
    std::vector<Buffer> buffers = {makeBuffer(Type::F32, 32, false)};
    return emu::run(t.k, {Arg::pointer(0)}, buffers);
  }
  tir::ExprRef var(uint32_t v) const { return t.v(v); }
};

}  // namespace

TEST_CASE("a value computed from a register never written is reported where it is stored", "[findings]") {
  Unwritten k;
  RunResult r = k.run({at(2, tir::Assign{Reg::var(k.u), tir::add(k.var(k.x), k.var(k.w))})});
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::UninitializedRegister);
  CHECK(lineOf(r.findings[0].loc) == 9);
  CHECK(r.findings[0].message.find("register 'u'") != std::string::npos);
  CHECK(std::string(findingId(r.findings[0].kind)) == "emu-uninitialized-register");
}

TEST_CASE("arithmetic on written registers, a select of a written side and a predicated-off store are clean",
          "[findings]") {
  SECTION("written") {
    Unwritten k;
    RunResult r = k.run({at(2, tir::Assign{Reg::var(k.u), tir::add(k.var(k.x), f32(1))})});
    INFO(describe(r));
    CHECK(r.ok());
  }
  SECTION("a select whose lanes all take the written side") {
    Unwritten k;
    tir::ExprRef always = bin(BinOp::Ge, tid(), i32(0));
    RunResult r = k.run({at(2, tir::Assign{Reg::var(k.u), tir::select(always, k.var(k.x), k.var(k.w))})});
    INFO(describe(r));
    CHECK(r.ok());
  }
  SECTION("lanes that take the unwritten side are reported, the others not") {
    Unwritten k;
    RunResult r = k.run({at(2, tir::Assign{Reg::var(k.u), tir::select(tidIs(5), k.var(k.w), k.var(k.x))})});
    INFO(describe(r));
    REQUIRE(r.findings.size() == 1);
    CHECK(r.findings[0].thread.thread == 5);
  }
  SECTION("the store skips the lanes whose value is unwritten") {
    Unwritten k;
    tir::Block body = {at(2, when(tidIs(3), {at(3, tir::Assign{Reg::var(k.u), k.var(k.x)})}))};
    RunResult r = k.run(std::move(body), tidIs(3));
    INFO(describe(r));
    CHECK(r.ok());
  }
  SECTION("overwriting with a written value makes it written again") {
    Unwritten k;
    RunResult r = k.run({at(2, tir::Assign{Reg::var(k.u), k.var(k.w)}), at(3, tir::Assign{Reg::var(k.u), f32(0)})});
    INFO(describe(r));
    CHECK(r.ok());
  }
}

TEST_CASE("an address or a condition computed from a register never written is reported", "[findings]") {
  TestKernel t("unwritten_address", 32);
  uint32_t y = t.globalBuffer("y", Type::F32);
  uint32_t i = t.var("i", Type::I32), v = t.var("v", Type::F32);
  t.k.body = {at(1, tir::Assign{Reg::var(v), f32(1)}),
              at(2, when(bin(BinOp::Lt, t.v(i), i32(0)), {})),
              // Clamped to 0 whatever i holds, so the store itself stays in bounds.
              at(3, store(Type::F32, mem(y, bin(BinOp::Min, bin(BinOp::Max, t.v(i), i32(0)), i32(0))),
                          {Reg::var(v)}))};
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 32, false)};
  RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
  INFO(describe(r));
  std::vector<Finding> f = findingsOf(r, FindingKind::UninitializedRegister);
  REQUIRE(f.size() == 2);
  CHECK(lineOf(f[0].loc) == 2);
  CHECK(lineOf(f[1].loc) == 3);
  CHECK(f[0].message.find("register 'i'") != std::string::npos);
}

TEST_CASE("an mma.sync with an operand never written leaves its whole result unwritten", "[findings]") {
  TestKernel t("unwritten_mma", 32);
  uint32_t y = t.globalBuffer("y", Type::F32);
  uint32_t a = t.array("a", Type::F16, 8), b = t.array("b", Type::F16, 4), c = t.array("c", Type::F32, 4);
  tir::Block body;
  for (int i = 0; i < 8; ++i) body.push_back(at(1, tir::Assign{Reg::elem(a, i), tir::cast(Type::F16, f32(1))}));
  for (int i = 0; i < 4; ++i) body.push_back(at(1, tir::Assign{Reg::elem(c, i), f32(0)}));
  // b[3] (half of B's second word) is never written, and only in lane 7.
  for (int i = 0; i < 4; ++i) {
    tir::Stmt s = at(2, tir::Assign{Reg::elem(b, i), tir::cast(Type::F16, f32(1))});
    body.push_back(i == 3 ? at(2, when(bin(BinOp::Ne, laneId(), i32(7)), {std::move(s)})) : std::move(s));
  }
  body.push_back(at(3, tir::Mma{Type::F16, elems(c, 0, 4), elems(a, 0, 4), elems(b, 0, 2), elems(c, 0, 4)}));
  body.push_back(at(4, store(Type::F32, mem(y, tid()), elems(c, 0, 1))));
  t.k.body = std::move(body);
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 32, false)};
  RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 1);
  CHECK(r.findings[0].kind == FindingKind::UninitializedRegister);
  CHECK(lineOf(r.findings[0].loc) == 4);
  CHECK(r.findings[0].thread.thread == 0);  // every lane's result, not only lane 7's
}
