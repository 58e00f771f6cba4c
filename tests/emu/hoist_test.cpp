// Naming thread-invariant values (ir/thread/HoistInvariants): where definitions go, what
// is never moved, and that the rewritten kernel computes exactly what the original did
// (both run on the emulator with the same inputs).
#include <catch2/catch.hpp>

#include <functional>

#include "TestKernel.h"
#include "ir/thread/HoistInvariants.h"

using namespace tyl;
using namespace tyl::emu;
using namespace tyl::emu::test;
using tir::BinOp;
using tir::Reg;
using tir::Type;

namespace {

// Definitions of single-assignment variables in `b` (not nested), by statement index.
std::vector<size_t> definitionsIn(const tir::Kernel& k, const tir::Block& b) {
  std::vector<size_t> at;
  for (size_t i = 0; i < b.size(); ++i)
    if (const auto* a = std::get_if<tir::Assign>(&b[i].node); a && a->dst.isVar && k.vars[a->dst.id].single)
      at.push_back(i);
  return at;
}

int countSingles(const tir::Kernel& k) {
  int n = 0;
  for (const tir::Var& v : k.vars) n += v.single;
  return n;
}

bool mentions(const tir::ExprRef& e, const std::function<bool(const tir::Expr&)>& pred) {
  if (!e) return false;
  if (pred(*e)) return true;
  for (const tir::ExprRef& a : e->args)
    if (mentions(a, pred)) return true;
  return false;
}

}  // namespace

TEST_CASE("a value repeated in a branch is defined once, in that branch, before its first use", "[hoist]") {
  TestKernel t("k", 64);
  uint32_t out = t.globalBuffer("out", Type::I32);
  int s = t.scalar("s", Type::I32);
  uint32_t x = t.var("x", Type::I32);
  tir::ExprRef row = tir::add(tir::mul(tid(), i32(4)), i32(3));  // used three times below
  tir::Block then = {
      at(2, tir::Assign{Reg::var(x), tir::mul(row, t.param(s))}),
      at(3, store(Type::I32, mem(out, tir::add(row, i32(0))), {Reg::var(x)})),
      at(4, tir::Assign{Reg::var(x), tir::add(row, t.param(s))}),
  };
  t.k.body = {at(1, when(tir::lt(tid(), i32(16)), then))};
  tir::Kernel before = t.k;
  tir::hoistInvariants(t.k);

  // Nothing is defined outside the branch: the condition is a single comparison of leaves
  // used once, and the row is only used inside.
  CHECK(definitionsIn(t.k, t.k.body).size() == 1);  // tid < 16
  const auto& branch = std::get<tir::If>(t.k.body.back().node).then;
  std::vector<size_t> defs = definitionsIn(t.k, branch);
  REQUIRE(!defs.empty());
  CHECK(defs.front() == 0);
  // tid * 4 + 3 has one variable, whatever the number of uses.
  int rows = 0;
  for (size_t i : defs) {
    const auto& a = std::get<tir::Assign>(branch[i].node);
    rows += mentions(a.value, [](const tir::Expr& e) { return e.kind == tir::ExprKind::SpecialReg; });
  }
  CHECK(rows == 1);
  CHECK(runIntOutput(t.k, 64, 5) == runIntOutput(before, 64, 5));
}

TEST_CASE("a value used before and inside a loop is defined once, before the first use", "[hoist]") {
  TestKernel t("k", 32);
  uint32_t out = t.globalBuffer("out", Type::I32);
  int s = t.scalar("s", Type::I32);
  uint32_t i = t.var("i", Type::I32), x = t.var("x", Type::I32);
  tir::ExprRef base = tir::mul(tir::add(tid(), t.param(s)), i32(8));
  tir::Block body = {
      at(4, tir::Assign{Reg::var(x), tir::add(base, t.v(i))}),
      at(5, store(Type::I32, mem(out, tir::add(tir::mul(tid(), i32(8)), t.v(i))), {Reg::var(x)})),
  };
  t.k.body = {
      at(1, tir::Assign{Reg::var(x), base}),
      at(2, store(Type::I32, mem(out, tir::mul(tid(), i32(8))), {Reg::var(x)})),
      at(3, loop(i, i32(1), i32(8), i32(1), body)),
  };
  tir::Kernel before = t.k;
  tir::hoistInvariants(t.k);
  // (tid + s) * 8 and tid * 8: one definition each, right before its first use, and
  // none in the loop.
  CHECK(definitionsIn(t.k, t.k.body) == std::vector<size_t>{0, 2});
  const auto& loopBody = std::get<tir::For>(t.k.body.back().node).body;
  CHECK(definitionsIn(t.k, loopBody).empty());
  CHECK(runIntOutput(t.k, 32 * 8, 3) == runIntOutput(before, 32 * 8, 3));
}

TEST_CASE("a value used only inside a loop stays inside it", "[hoist]") {
  TestKernel t("k", 32);
  uint32_t out = t.globalBuffer("out", Type::I32);
  t.scalar("s", Type::I32);
  uint32_t i = t.var("i", Type::I32);
  tir::ExprRef off = tir::add(tir::mul(tid(), i32(4)), t.v(i));
  uint32_t x = t.var("x", Type::I32);
  tir::Block body = {
      at(3, tir::Assign{Reg::var(x), tir::mul(tir::binary(BinOp::Xor, tid(), i32(5)), i32(3))}),
      at(4, store(Type::I32, mem(out, off), {Reg::var(x)})),
  };
  t.k.body = {at(2, loop(i, i32(0), i32(4), i32(1), body))};
  tir::Kernel before = t.k;
  tir::hoistInvariants(t.k);
  CHECK(definitionsIn(t.k, t.k.body).empty());
  const auto& loopBody = std::get<tir::For>(t.k.body.back().node).body;
  CHECK(definitionsIn(t.k, loopBody).size() == 2);  // (tid ^ 5) * 3 and tid * 4
  CHECK(runIntOutput(t.k, 128, 0) == runIntOutput(before, 128, 0));
}

TEST_CASE("a division by a run-time value is never evaluated ahead of its guard", "[hoist]") {
  TestKernel t("k", 32);
  uint32_t out = t.globalBuffer("out", Type::I32);
  int s = t.scalar("s", Type::I32);
  uint32_t x = t.var("x", Type::I32);
  tir::ExprRef q = bin(BinOp::Div, tir::mul(tid(), i32(7)), t.param(s));
  t.k.body = {
      at(1, when(bin(BinOp::Ne, t.param(s), i32(0)),
                 {at(2, tir::Assign{Reg::var(x), q}), at(3, store(Type::I32, mem(out, tid()), {Reg::var(x)}))},
                 {at(4, tir::Assign{Reg::var(x), tir::mul(tid(), i32(7))}),
                  at(5, store(Type::I32, mem(out, tid()), {Reg::var(x)}))})),
  };
  tir::Kernel before = t.k;
  tir::hoistInvariants(t.k);
  // No definition holds the division: it stays in the statements, where the emulator
  // reports the division by zero only on the path that really divides.
  std::function<void(const tir::Block&)> check = [&](const tir::Block& b) {
    for (size_t i : definitionsIn(t.k, b)) {
      const auto& a = std::get<tir::Assign>(b[i].node);
      CHECK_FALSE(mentions(a.value, [](const tir::Expr& e) {
        return e.kind == tir::ExprKind::Binary && e.bin == BinOp::Div;
      }));
    }
    for (const tir::Stmt& st : b)
      if (const auto* n = std::get_if<tir::If>(&st.node)) {
        check(n->then);
        check(n->otherwise);
      }
  };
  check(t.k.body);
  CHECK(runIntOutput(t.k, 32, 3) == runIntOutput(before, 32, 3));
  // With s = 0 the division runs on no path, before or after.
  for (const tir::Kernel* k : {&before, &t.k}) {
    std::vector<Buffer> buffers = {makeBuffer(Type::I32, 32, false)};
    RunResult r = run(*k, {Arg::pointer(0), Arg::integer(0)}, buffers);
    CHECK(findingsOf(r, FindingKind::DivisionByZero).empty());
  }
}

TEST_CASE("uses far apart get their own definitions", "[hoist]") {
  TestKernel t("k", 32);
  uint32_t out = t.globalBuffer("out", Type::I32);
  t.scalar("s", Type::I32);
  uint32_t x = t.var("x", Type::I32);
  tir::ExprRef v = tir::binary(BinOp::Xor, tir::mul(tid(), i32(3)), i32(1));
  tir::Block& b = t.k.body;
  b.push_back(at(1, tir::Assign{Reg::var(x), v}));
  for (int i = 0; i < 40; ++i) b.push_back(at(2, tir::Assign{Reg::var(x), tir::add(t.v(x), i32(i))}));
  b.push_back(at(3, tir::Assign{Reg::var(x), tir::add(t.v(x), v)}));
  b.push_back(at(4, store(Type::I32, mem(out, tid()), {Reg::var(x)})));
  tir::Kernel before = t.k;
  tir::hoistInvariants(t.k);
  CHECK(countSingles(t.k) == 2);
  CHECK(definitionsIn(t.k, t.k.body).size() == 2);
  CHECK(runIntOutput(t.k, 32, 0) == runIntOutput(before, 32, 0));
}
