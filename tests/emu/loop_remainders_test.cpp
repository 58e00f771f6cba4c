// Counting remainders of loop variables (ir/thread/LoopRemainders): which remainders become
// counters, which are left alone, and that the rewritten kernel stores exactly what the
// original did (both run on the emulator with the same inputs), over every small loop shape.
#include <catch2/catch.hpp>

#include <functional>

#include "CountOps.h"
#include "TestKernel.h"
#include "ir/thread/LoopRemainders.h"

using namespace tyl;
using namespace tyl::emu;
using namespace tyl::emu::test;
using tir::BinOp;
using tir::Reg;
using tir::Type;

namespace {

// Remainders anywhere in the expressions of `b` (nested blocks included).
int remainders(const tir::Block& b) { return countBinary(b, BinOp::Rem); }

const tir::For& onlyLoop(const tir::Kernel& k) {
  for (const tir::Stmt& s : k.body)
    if (const auto* f = std::get_if<tir::For>(&s.node)) return *f;
  FAIL("no loop");
  throw;
}

// Output slots of the runs compared.
constexpr int64_t kSlots = 64;

// for (i = begin; i < end; i += step) { out[j] = ((i + offset) / divisor) % modulus * 100 + j; j += 1 }
// (j counts the iterations; divisor 1: no division), with `s` the kernel's one scalar parameter.
// `twoSteps` writes i + offset as (i + (offset + 3)) - 3.
struct Shape {
  tir::ExprRef begin, end;
  int64_t step, offset, modulus;
  int64_t divisor = 1;
  bool twoSteps = false;
  bool widened = false;  // ((i64(i) + offset) / divisor) % modulus, as an index computes it
};

tir::Kernel sequence(const Shape& sh, const std::function<tir::ExprRef(const TestKernel&, int)>& bound = {}) {
  TestKernel t("k", 1);
  uint32_t out = t.globalBuffer("out", Type::I32);
  int s = t.scalar("s", Type::I32);
  uint32_t i = t.var("i", Type::I32), j = t.var("j", Type::I32), x = t.var("x", Type::I32);
  tir::ExprRef shifted = sh.offset == 0 ? t.v(i) : tir::add(t.v(i), i32(sh.offset));
  if (sh.twoSteps) shifted = tir::sub(tir::add(t.v(i), i32(sh.offset + 3)), i32(3));
  auto constant = [&](int64_t c) { return sh.widened ? tir::intConst(c, Type::I64) : i32(c); };
  if (sh.widened) shifted = tir::add(tir::cast(Type::I64, t.v(i)), constant(sh.offset));
  if (sh.divisor != 1) shifted = bin(BinOp::Div, shifted, constant(sh.divisor));
  tir::ExprRef rem = tir::cast(Type::I32, bin(BinOp::Rem, shifted, constant(sh.modulus)));
  tir::Block body = {
      at(3, tir::Assign{Reg::var(x), tir::add(tir::mul(rem, i32(100)), t.v(j))}),
      at(4, store(Type::I32, mem(out, t.v(j)), {Reg::var(x)})),
      at(5, tir::Assign{Reg::var(j), tir::add(t.v(j), i32(1))}),
  };
  tir::ExprRef end = bound ? bound(t, s) : sh.end;
  t.k.body = {
      at(1, tir::Assign{Reg::var(j), i32(0)}),
      at(2, loop(i, sh.begin, end, i32(sh.step), body)),
  };
  return t.k;
}

}  // namespace

TEST_CASE("every remainder of a loop variable becomes a counter that takes the same values", "[remainders]") {
  // Every combination of a few begins, ends, steps, offsets and moduli: the loop is short
  // enough to store each value, and the stores are compared slot by slot.
  for (int64_t begin : {0, 1, 5})
    for (int64_t end : {0, 1, 7, 20})
      for (int64_t step : {1, 2, 3, 5})
        for (int64_t offset : {-1, 0, 1, 2, 7})
          for (int64_t modulus : {2, 3, 4, 8}) {
            if (begin + offset < 0) continue;  // left alone (next test)
            CAPTURE(begin, end, step, offset, modulus);
            tir::Kernel k = sequence(Shape{i32(begin), i32(end), step, offset, modulus});
            tir::Kernel before = k;
            tir::countLoopRemainders(k);
            CHECK(remainders(onlyLoop(k).body) == 0);
            CHECK(runIntOutput(k, kSlots, 0) == runIntOutput(before, kSlots, 0));
          }
}

TEST_CASE("a remainder of a quotient by a divisor of the step is counted too", "[remainders]") {
  // A pipeline over range(a, b, step) computes its stage as ((k - a) / step) % S; and
  // ((k + c) / d) % S advances by step / d when d divides the step. The partial sums of
  // (k + (c + 3)) - 3 are followed as well.
  for (int64_t begin : {0, 1, 4})
    for (int64_t step : {1, 2, 3, 4, 6})
      for (int64_t divisor : {2, 3, 4})
        for (int64_t offset : {-1, 0, 2, 5})
          for (int64_t modulus : {2, 3})
            for (bool twoSteps : {false, true}) {
              if (begin + offset < 0) continue;
              CAPTURE(begin, step, divisor, offset, modulus, twoSteps);
              tir::Kernel k = sequence(Shape{i32(begin), i32(23), step, offset, modulus, divisor, twoSteps});
              tir::Kernel before = k;
              tir::countLoopRemainders(k);
              CHECK(remainders(onlyLoop(k).body) == (step % divisor == 0 ? 0 : 1));
              CHECK(runIntOutput(k, kSlots, 0) == runIntOutput(before, kSlots, 0));
            }
}

TEST_CASE("a loop bounded by a run-time value counts remainders when its range is known", "[remainders]") {
  // end = s / 4 + 3 lies in [-2^29 + 3, 2^29 + 3]: i + 7 cannot wrap.
  auto quarter = [](const TestKernel& t, int s) { return tir::add(bin(BinOp::Div, t.param(s), i32(4)), i32(3)); };
  tir::Kernel k = sequence(Shape{i32(0), nullptr, 1, 7, 3}, quarter);
  tir::Kernel before = k;
  tir::countLoopRemainders(k);
  CHECK(remainders(onlyLoop(k).body) == 0);
  for (int64_t s : {-12, 0, 1, 37, 200}) CHECK(runIntOutput(k, kSlots, s) == runIntOutput(before, kSlots, s));

  // end = s itself may be 2^31 - 1: i + 1 cannot wrap, i + 2 can, and is left alone.
  auto whole = [](const TestKernel& t, int s) { return t.param(s); };
  for (int64_t offset : {0, 1, 2}) {
    CAPTURE(offset);
    tir::Kernel w = sequence(Shape{i32(0), nullptr, 1, offset, 3}, whole);
    tir::Kernel original = w;
    tir::countLoopRemainders(w);
    CHECK(remainders(onlyLoop(w).body) == (offset >= 2 ? 1 : 0));
    CHECK(runIntOutput(w, kSlots, 40) == runIntOutput(original, kSlots, 40));
  }
}

TEST_CASE("a remainder of a widened loop variable is counted too", "[remainders]") {
  // Indices compute (k + 1) % 2 in 64 bits: (i64(k) + 1) % 2. The counter keeps the loop
  // variable's type; the sums must not leave it (the counter's first value is computed there).
  for (int64_t begin : {0, 3})
    for (int64_t step : {1, 2, 4})
      for (int64_t divisor : {1, 2})
        for (int64_t offset : {0, 1, 5}) {
          CAPTURE(begin, step, divisor, offset);
          Shape sh{i32(begin), i32(19), step, offset, 3, divisor};
          sh.widened = true;
          tir::Kernel k = sequence(sh);
          tir::Kernel before = k;
          tir::countLoopRemainders(k);
          CHECK(remainders(onlyLoop(k).body) == (step % divisor == 0 ? 0 : 1));
          CHECK(runIntOutput(k, kSlots, 0) == runIntOutput(before, kSlots, 0));
        }
  // Up to end = s, which may be 2^31 - 1: i + 1 fits an i32, i + 2 may not, so its counter's
  // first value could wrap, and it is left alone (in 64 bits the remainder itself is exact).
  auto whole = [](const TestKernel& t, int s) { return t.param(s); };
  for (int64_t offset : {1, 2}) {
    CAPTURE(offset);
    Shape sh{i32(0), nullptr, 1, offset, 3};
    sh.widened = true;
    tir::Kernel w = sequence(sh, whole);
    tir::Kernel original = w;
    tir::countLoopRemainders(w);
    CHECK(remainders(onlyLoop(w).body) == (offset >= 2 ? 1 : 0));
    CHECK(runIntOutput(w, kSlots, 40) == runIntOutput(original, kSlots, 40));
  }
}

TEST_CASE("remainders that could differ from a counter are left alone", "[remainders]") {
  SECTION("a value below zero: C++ remainders keep the sign") {
    tir::Kernel k = sequence(Shape{i32(0), i32(9), 1, -1, 4});
    tir::countLoopRemainders(k);
    CHECK(remainders(onlyLoop(k).body) == 1);
  }
  SECTION("a begin that may be negative") {
    TestKernel t("k", 1);
    uint32_t out = t.globalBuffer("out", Type::I32);
    int s = t.scalar("s", Type::I32);
    uint32_t i = t.var("i", Type::I32), x = t.var("x", Type::I32);
    t.k.body = {at(1, loop(i, t.param(s), i32(8), i32(1),
                           {at(2, tir::Assign{Reg::var(x), bin(BinOp::Rem, t.v(i), i32(3))}),
                            at(3, store(Type::I32, mem(out, i32(0)), {Reg::var(x)}))}))};
    tir::Kernel before = t.k;
    tir::countLoopRemainders(t.k);
    CHECK(remainders(onlyLoop(t.k).body) == 1);
  }
  SECTION("the loop variable assigned in the body") {
    TestKernel t("k", 1);
    uint32_t out = t.globalBuffer("out", Type::I32);
    t.scalar("s", Type::I32);
    uint32_t i = t.var("i", Type::I32), x = t.var("x", Type::I32);
    t.k.body = {at(1, loop(i, i32(0), i32(8), i32(1),
                           {at(2, tir::Assign{Reg::var(x), bin(BinOp::Rem, t.v(i), i32(3))}),
                            at(3, store(Type::I32, mem(out, i32(0)), {Reg::var(x)})),
                            at(4, tir::Assign{Reg::var(i), tir::add(t.v(i), i32(1))})}))};
    tir::countLoopRemainders(t.k);
    CHECK(remainders(onlyLoop(t.k).body) == 1);
  }
  SECTION("an unrolled loop, a run-time step, or a remainder of another value") {
    TestKernel t("k", 1);
    uint32_t out = t.globalBuffer("out", Type::I32);
    int s = t.scalar("s", Type::I32);
    uint32_t i = t.var("i", Type::I32), x = t.var("x", Type::I32);
    tir::Block body = {
        at(2, tir::Assign{Reg::var(x), bin(BinOp::Rem, t.v(i), i32(3))}),
        at(3, store(Type::I32, mem(out, i32(0)), {Reg::var(x)})),
    };
    tir::For unrolled = loop(i, i32(0), i32(8), i32(1), body);
    unrolled.unroll = true;
    tir::Block other = {
        at(5, tir::Assign{Reg::var(x), bin(BinOp::Rem, tir::mul(t.v(i), i32(2)), i32(3))}),
        at(6, store(Type::I32, mem(out, i32(0)), {Reg::var(x)})),
    };
    t.k.body = {at(1, unrolled), at(4, loop(i, i32(0), i32(8), t.param(s), body)),
                at(7, loop(i, i32(0), i32(8), i32(1), other))};
    tir::countLoopRemainders(t.k);
    CHECK(remainders(t.k.body) == 3);
  }
}

TEST_CASE("remainders of an outer loop's variable are counted across an inner loop", "[remainders]") {
  // for (i = 0; i < 6; ++i) for (q = 1; q < 9; q += 2) out[8 i + q / 2] = (i + 1) % 3 * 10 + (q + 2) % 4
  TestKernel t("k", 1);
  uint32_t out = t.globalBuffer("out", Type::I32);
  t.scalar("s", Type::I32);
  uint32_t i = t.var("i", Type::I32), q = t.var("q", Type::I32), x = t.var("x", Type::I32);
  tir::ExprRef value = tir::add(tir::mul(bin(BinOp::Rem, tir::add(t.v(i), i32(1)), i32(3)), i32(10)),
                                bin(BinOp::Rem, tir::add(t.v(q), i32(2)), i32(4)));
  tir::ExprRef slot = tir::add(tir::mul(t.v(i), i32(8)), bin(BinOp::Div, t.v(q), i32(2)));
  tir::Block inner = {at(3, tir::Assign{Reg::var(x), value}), at(4, store(Type::I32, mem(out, slot), {Reg::var(x)}))};
  t.k.body = {at(1, loop(i, i32(0), i32(6), i32(1), {at(2, loop(q, i32(1), i32(9), i32(2), inner))}))};
  tir::Kernel before = t.k;
  tir::countLoopRemainders(t.k);
  CHECK(remainders(t.k.body) == 0);
  // One counter per loop, each set before its loop: the outer one at the top, the inner
  // one at the top of the outer loop's body.
  CHECK(t.k.body.size() == 2);
  CHECK(std::get<tir::For>(t.k.body.back().node).body.size() == 3);  // set, inner loop, advance
  CHECK(runIntOutput(t.k, kSlots, 0) == runIntOutput(before, kSlots, 0));
}

TEST_CASE("equal remainders share one counter, however their constants are grouped", "[remainders]") {
  // (i + 3) % 4 and ((i + 4) - 1) % 4 hold the same value: one counter serves both.
  TestKernel t("k", 1);
  uint32_t out = t.globalBuffer("out", Type::I32);
  t.scalar("s", Type::I32);
  uint32_t i = t.var("i", Type::I32), x = t.var("x", Type::I32);
  tir::ExprRef a = bin(BinOp::Rem, tir::add(t.v(i), i32(3)), i32(4));
  tir::ExprRef b = bin(BinOp::Rem, tir::sub(tir::add(t.v(i), i32(4)), i32(1)), i32(4));
  tir::Block body = {at(2, tir::Assign{Reg::var(x), tir::add(tir::mul(a, i32(10)), b)}),
                     at(3, store(Type::I32, mem(out, t.v(i)), {Reg::var(x)}))};
  t.k.body = {at(1, loop(i, i32(0), i32(13), i32(1), body))};
  tir::Kernel before = t.k;
  const size_t vars = t.k.vars.size();
  tir::countLoopRemainders(t.k);
  CHECK(remainders(t.k.body) == 0);
  CHECK(t.k.vars.size() == vars + 1);
  CHECK(runIntOutput(t.k, kSlots, 0) == runIntOutput(before, kSlots, 0));
}
