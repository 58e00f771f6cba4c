// Whole kernels against CPU references: add-one with vector loads and a predicated tail,
// thread and block indices, divergent loops, and a check that the interpreter is fast.
#include <catch2/catch.hpp>
#include <chrono>

#include "TestKernel.h"
#include "backend/emu/Digest.h"

using namespace tyl;
using namespace tyl::emu;
using namespace tyl::emu::test;
using tir::BinOp;
using tir::Reg;
using tir::Type;

namespace {

// y[i] = x[i] + 1: each thread takes 4 consecutive elements with one 16-byte load and store,
// or, at the ragged end, element-wise predicated accesses.
TestKernel addOneKernel() {
  TestKernel t("add_one", 128);
  uint32_t x = t.globalBuffer("x", Type::F32), y = t.globalBuffer("y", Type::F32);
  tir::ExprRef n = t.param(t.scalar("n", Type::I32));
  t.k.grid[0] = bin(BinOp::Div, tir::add(n, i32(511)), i32(512));
  uint32_t base = t.var("base", Type::I32);
  uint32_t v = t.array("v", Type::F32, 4);
  tir::ExprRef b = t.v(base);
  tir::Block vector = {at(3, load(Type::F32, mem(x, b), elems(v, 0, 4)))};
  tir::Block tail;
  for (int i = 0; i < 4; ++i) {
    tir::ExprRef in = tir::lt(tir::add(b, i32(i)), n);
    vector.push_back(at(4, tir::Assign{Reg::elem(v, i), tir::add(t.elem(v, i), f32(1))}));
    tail.push_back(at(6, load(Type::F32, mem(x, tir::add(b, i32(i))), elems(v, i, 1), in)));
    tail.push_back(at(7, tir::Assign{Reg::elem(v, i), tir::add(t.elem(v, i), f32(1))}));
    tail.push_back(at(8, store(Type::F32, mem(y, tir::add(b, i32(i))), elems(v, i, 1), in)));
  }
  vector.push_back(at(5, store(Type::F32, mem(y, b), elems(v, 0, 4))));
  tir::ExprRef first =
      tir::mul(tir::add(tir::mul(tir::special(tir::Special::CtaidX), i32(128)), tid()), i32(4));
  t.k.body = {
      at(1, tir::Assign{Reg::var(base), first}),
      at(2, when(bin(BinOp::Le, tir::add(b, i32(4)), n), vector, tail)),
  };
  return t;
}

}  // namespace

TEST_CASE("add-one matches the CPU reference at several sizes", "[run]") {
  TestKernel t = addOneKernel();
  for (int64_t n : {1, 3, 4, 511, 512, 1000, 2053}) {
    std::vector<Buffer> buffers = {makeBuffer(Type::F32, n), makeBuffer(Type::F32, n, false)};
    fillRandom(buffers[0], Type::F32, static_cast<uint64_t>(n));
    RunResult r = run(t.k, {Arg::pointer(0), Arg::pointer(1), Arg::integer(n)}, buffers);
    INFO("n = " << n << "\n" << describe(r));
    REQUIRE(r.ok());
    CHECK(r.stats.blocks == (n + 511) / 512);
    for (int64_t i = 0; i < n; ++i)
      REQUIRE(getElement(buffers[1], Type::F32, i) ==
              static_cast<float>(getElement(buffers[0], Type::F32, i)) + 1.0f);
  }
}

TEST_CASE("a register stored before it is written is reported, and does not pass for a zero", "[run]") {
  // y[t] = v[1] and y[t + 32] = f32(h[1]): neither was ever written.
  TestKernel t("unwritten", 32);
  uint32_t y = t.globalBuffer("y", Type::F32);
  uint32_t v = t.array("v", Type::F32, 2);
  uint32_t h = t.array("h", Type::F16, 2);
  t.k.body = {at(1, store(Type::F32, mem(y, tid()), elems(v, 1, 1))),
              at(2, tir::Assign{Reg::elem(v, 0), tir::cast(Type::F32, t.elem(h, 1))}),
              at(3, store(Type::F32, mem(y, tir::add(tid(), i32(32))), elems(v, 0, 1)))};
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 64, false)};
  RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
  INFO(describe(r));
  REQUIRE(r.findings.size() == 2);
  for (const Finding& f : r.findings) CHECK(f.kind == FindingKind::UninitializedRegister);
  CHECK(lineOf(r.findings[0].loc) == 1);
  CHECK(lineOf(r.findings[1].loc) == 3);  // v[0] holds what h[1] held: nothing written
  // The emulator's registers start from a non-zero pattern, as a GPU's hold whatever was there.
  for (int64_t i = 0; i < 64; ++i) CHECK(getElement(buffers[0], Type::F32, i) != 0.0);
}

TEST_CASE("add-one is deterministic", "[run]") {
  TestKernel t = addOneKernel();
  auto once = [&] {
    std::vector<Buffer> buffers = {makeBuffer(Type::F32, 777), makeBuffer(Type::F32, 777, false)};
    fillRandom(buffers[0], Type::F32, 42);
    run(t.k, {Arg::pointer(0), Arg::pointer(1), Arg::integer(777)}, buffers);
    return digest(buffers[1].bytes);
  };
  CHECK(once() == once());
}

TEST_CASE("a misaligned pointer makes the vector accesses misaligned", "[run]") {
  TestKernel t = addOneKernel();
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 65), makeBuffer(Type::F32, 64, false)};
  RunResult r = run(t.k, {Arg::pointer(0, 4), Arg::pointer(1), Arg::integer(64)}, buffers);
  std::vector<Finding> f = findingsOf(r, FindingKind::Misaligned);
  REQUIRE(f.size() == 1);
  CHECK(lineOf(f[0].loc) == 3);
  CHECK(f[0].message.find("byte 4 of global buffer 'x'") != std::string::npos);
}

TEST_CASE("special registers follow the thread and block layout", "[run]") {
  // Block (8, 4, 2), grid (2, 3, 1): out[block][thread] = tid.x + 10 tid.y + 100 tid.z + 1000 lane
  // + 100000 warp + 1000000 (ctaid.x + 2 ctaid.y).
  TestKernel t("ids", 8, 4, 2);
  uint32_t out = t.globalBuffer("out", Type::I32);
  t.k.grid = {i32(2), i32(3), i32(1)};
  auto s = [](tir::Special x) { return tir::special(x); };
  using tir::Special;
  tir::ExprRef linear = tir::add(tir::add(s(Special::TidX), tir::mul(s(Special::TidY), i32(8))),
                                 tir::mul(s(Special::TidZ), i32(32)));
  tir::ExprRef block = tir::add(s(Special::CtaidX), tir::mul(s(Special::CtaidY), s(Special::NctaidX)));
  tir::ExprRef value = tir::add(
      tir::add(tir::add(s(Special::TidX), tir::mul(s(Special::TidY), i32(10))),
               tir::mul(s(Special::TidZ), i32(100))),
      tir::add(tir::add(tir::mul(s(Special::LaneId), i32(1000)), tir::mul(s(Special::WarpId), i32(100000))),
               tir::mul(block, i32(1000000))));
  uint32_t v = t.var("v", Type::I32);
  t.k.body = {at(1, tir::Assign{Reg::var(v), value}),
              at(2, store(Type::I32, mem(out, tir::add(tir::mul(block, i32(64)), linear)), {Reg::var(v)}))};
  std::vector<Buffer> buffers = {makeBuffer(Type::I32, 6 * 64, false)};
  RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
  INFO(describe(r));
  REQUIRE(r.ok());
  for (int blk = 0; blk < 6; ++blk)
    for (int th = 0; th < 64; ++th) {
      int x = th % 8, y = (th / 8) % 4, z = th / 32;
      double expect = x + 10 * y + 100 * z + 1000 * (th % 32) + 100000 * (th / 32) + 1000000 * blk;
      REQUIRE(getElement(buffers[0], Type::I32, blk * 64 + th) == expect);
    }
}

TEST_CASE("loops with per-lane trip counts and divergent branches", "[run]") {
  // Thread t sums 0..t-1, then odd threads negate: out[t] = (t odd ? -1 : 1) * t(t-1)/2.
  // A partial last warp (40 threads) exercises the live mask.
  TestKernel t("triangle", 40);
  uint32_t out = t.globalBuffer("out", Type::I32);
  uint32_t i = t.var("i", Type::I32), sum = t.var("sum", Type::I32);
  t.k.body = {
      at(1, tir::Assign{Reg::var(sum), i32(0)}),
      at(2, loop(i, i32(0), tid(), i32(1), {at(3, tir::Assign{Reg::var(sum), tir::add(t.v(sum), t.v(i))})})),
      at(4, when(bin(BinOp::Eq, bin(BinOp::Rem, tid(), i32(2)), i32(1)),
                 {at(5, tir::Assign{Reg::var(sum), tir::unary(tir::UnOp::Neg, t.v(sum))})},
                 {at(6, tir::Assign{Reg::var(sum), tir::add(t.v(sum), i32(0))})})),
      at(7, store(Type::I32, mem(out, tid()), {Reg::var(sum)})),
  };
  std::vector<Buffer> buffers = {makeBuffer(Type::I32, 40, false)};
  RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
  INFO(describe(r));
  REQUIRE(r.ok());
  for (int th = 0; th < 40; ++th)
    REQUIRE(getElement(buffers[0], Type::I32, th) == (th % 2 ? -1.0 : 1.0) * th * (th - 1) / 2);
}

TEST_CASE("shared memory with barriers between phases has no findings", "[run]") {
  // Reverse 256 values through shared memory, twice, with barriers between the phases.
  TestKernel t("reverse", 256);
  uint32_t in = t.globalBuffer("in", Type::F32), out = t.globalBuffer("out", Type::F32);
  uint32_t s = t.sharedBuffer("s", Type::F32, 256);
  uint32_t v = t.var("v", Type::F32);
  tir::ExprRef rev = tir::sub(i32(255), tid());
  t.k.body = {
      at(1, load(Type::F32, mem(in, tid()), {Reg::var(v)})),
      at(2, store(Type::F32, mem(s, tid()), {Reg::var(v)})),
      at(3, tir::Barrier{}),
      at(4, load(Type::F32, mem(s, rev), {Reg::var(v)})),
      at(5, tir::Barrier{}),
      at(6, store(Type::F32, mem(s, tid()), {Reg::var(v)})),
      at(7, tir::Barrier{}),
      at(8, load(Type::F32, mem(s, rev), {Reg::var(v)})),
      at(9, store(Type::F32, mem(out, tid()), {Reg::var(v)})),
  };
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 256), makeBuffer(Type::F32, 256, false)};
  fillRandom(buffers[0], Type::F32, 7);
  RunResult r = run(t.k, {Arg::pointer(0), Arg::pointer(1)}, buffers);
  INFO(describe(r));
  REQUIRE(r.ok());
  CHECK(r.stats.barriers == 3);
  CHECK(buffers[1].bytes == buffers[0].bytes);
}

TEST_CASE("the interpreter runs 256 threads times 1000 iterations quickly", "[run]") {
  // Not a timing test (the ctest timeout is the guard); the time is printed for reference.
  TestKernel t("busy", 256);
  uint32_t out = t.globalBuffer("out", Type::F32);
  uint32_t i = t.var("i", Type::I32), acc = t.var("acc", Type::F32), k = t.var("k", Type::I32);
  tir::ExprRef fi = tir::cast(Type::F32, t.v(i));
  t.k.body = {
      at(1, tir::Assign{Reg::var(acc), f32(0)}),
      at(2, tir::Assign{Reg::var(k), tid()}),
      at(3, loop(i, i32(0), i32(1000), i32(1),
                 {
                     at(4, tir::Assign{Reg::var(acc), tir::add(t.v(acc), tir::mul(fi, f32(0.5)))}),
                     at(5, tir::Assign{Reg::var(k), bin(BinOp::Xor, tir::mul(t.v(k), i32(3)), t.v(i))}),
                     at(6, tir::Assign{Reg::var(k), bin(BinOp::And, t.v(k), i32(1023))}),
                 })),
      at(7, tir::Assign{Reg::var(acc), tir::add(t.v(acc), tir::cast(Type::F32, t.v(k)))}),
      at(8, store(Type::F32, mem(out, tid()), {Reg::var(acc)})),
  };
  std::vector<Buffer> buffers = {makeBuffer(Type::F32, 256, false)};
  auto start = std::chrono::steady_clock::now();
  RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN("256 threads x 1000 iterations: " << seconds << " s, " << r.stats.warpInstructions
                                         << " warp instructions");
  REQUIRE(r.ok());
  CHECK(r.stats.warpInstructions > 8 * 3000);
}

TEST_CASE("a tensor parameter's extent at given arguments", "[run]") {
  TestKernel t("extent", 32);
  const int n = t.scalar("n", Type::I32), ld = t.scalar("ld", Type::I64);
  t.globalBuffer("A", Type::F32);
  tir::Param& a = t.k.params.back();
  const tir::ExprRef N = t.param(n), LD = t.param(ld);
  a.shape = {N, i32(4)};
  a.strides = {LD, i32(1)};
  auto at = [&](int64_t nv, int64_t ldv) {
    return tensorExtent(a, {Arg::integer(nv), Arg::integer(ldv), Arg::pointer(0)});
  };
  // 1 + (n - 1) * ld + 3, checked against the brute-force largest offset.
  for (int64_t nv = 1; nv <= 5; ++nv)
    for (int64_t ldv = 0; ldv <= 9; ++ldv) {
      int64_t reach = 0;
      for (int64_t i = 0; i < nv; ++i)
        for (int64_t j = 0; j < 4; ++j) reach = std::max(reach, i * ldv + j);
      std::optional<TensorExtent> e = at(nv, ldv);
      REQUIRE(e);
      CHECK(e->shape == std::vector<int64_t>{nv, 4});
      CHECK(e->strides == std::vector<int64_t>{ldv, 1});
      CHECK(e->span == reach + 1);
    }
  CHECK(at(0, 8)->span == 0);   // no rows: no elements
  CHECK(at(-3, 8)->span == 0);  // refused at launch; nothing to allocate
  CHECK(at(3, int64_t{1} << 62)->span == INT64_MAX);  // past 64 bits
  a.strides[0] = tir::mul(LD, LD);
  CHECK_FALSE(at(2, int64_t{1} << 40));  // the stride itself leaves 64 bits
}

TEST_CASE("extents and strides are computed as the launcher computes them", "[run]") {
  // Every operation a launcher may compute from integer parameters, evaluated by hostValue
  // and by the IR's constant folding (the hardware's arithmetic) at values where nothing wraps.
  TestKernel t("extent_ops", 32);
  const int n = t.scalar("n", Type::I64), m = t.scalar("m", Type::I64);
  const tir::ExprRef N = t.param(n), M = t.param(m);
  std::vector<tir::ExprRef> exprs;
  for (BinOp op : {BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Rem, BinOp::Min, BinOp::Max, BinOp::And,
                   BinOp::Or, BinOp::Xor, BinOp::Lt, BinOp::Le, BinOp::Gt, BinOp::Ge, BinOp::Eq, BinOp::Ne})
    exprs.push_back(tir::cast(Type::I64, tir::binary(op, N, M)));
  const tir::ExprRef positive = tir::binary(BinOp::Gt, N, tir::intConst(0, Type::I64));
  for (BinOp op : {BinOp::LAnd, BinOp::LOr})
    exprs.push_back(tir::cast(Type::I64, tir::binary(op, tir::binary(BinOp::Lt, N, M), positive)));
  exprs.push_back(tir::unary(tir::UnOp::Neg, N));
  exprs.push_back(tir::cast(Type::I64, tir::unary(tir::UnOp::Not, tir::binary(BinOp::Lt, N, M))));
  exprs.push_back(tir::select(tir::binary(BinOp::Gt, tir::binary(BinOp::Rem, N, M), tir::intConst(0, Type::I64)),
                              tir::add(tir::binary(BinOp::Div, N, M), tir::intConst(1, Type::I64)),
                              tir::binary(BinOp::Div, N, M)));  // cdiv(n, m)
  for (int64_t nv : {-7, -1, 0, 1, 5, 12})
    for (int64_t mv : {-3, 1, 2, 5}) {
      for (const tir::ExprRef& e : exprs) {
        const tir::ExprRef folded = tir::substitute(e, [&](const tir::Expr& atom) -> tir::ExprRef {
          if (atom.kind != tir::ExprKind::ParamRef) return nullptr;
          return tir::intConst(atom.id == static_cast<uint32_t>(n) ? nv : mv, Type::I64);
        });
        // A comparison folds to a bool constant, which a cast to i64 keeps as it is.
        const tir::ExprRef constant = folded->kind == tir::ExprKind::Cast ? folded->args[0] : folded;
        REQUIRE(constant->kind == tir::ExprKind::IntConst);
        const int64_t want = constant->value;
        std::string why;
        std::optional<int64_t> got = hostValue(e, {Arg::integer(nv), Arg::integer(mv)}, &why);
        INFO("n = " << nv << ", m = " << mv << ": " << why);
        REQUIRE(got);
        CHECK(*got == want);
      }
    }
  std::string why;
  CHECK_FALSE(hostValue(tir::unary(tir::UnOp::Neg, N), {Arg::integer(INT64_MIN), Arg::integer(1)}, &why));
  CHECK(why == "a result leaves 64 bits");
}
