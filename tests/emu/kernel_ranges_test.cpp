// Which integer operations the CUDA backend may print as plain C++ (ir/thread/KernelRanges):
// against brute force, no operation it calls plain may overflow, shift too far or divide by 0
// (or the smallest value by -1) for any values of its operands' variables; and the ranges it
// knows of loop variables, counters and ids, on hand-built kernels.
#include <catch2/catch.hpp>

#include <random>

#include "backend/emu/Values.h"
#include "ir/thread/Builder.h"
#include "ir/thread/KernelRanges.h"
#include "ir/thread/LoopRemainders.h"
#include "ir/thread/Print.h"
#include "tests/emu/RandomRanges.h"

using namespace tyl;
using tir::BinOp;
using tir::ExprRef;
using tir::Range;
using tir::Type;

namespace {

using Wide = __int128;

// Variables v_i = min(max(p_i, lo), hi) of parameters p_i: KernelRanges learns [lo, hi] from
// the single assignment, and every value in it can occur.
struct Setup {
  tir::Kernel k;
  std::vector<Range> ranges;  // per variable
  std::vector<uint32_t> vars;

  void add(Type t, Range r) {
    const int p = static_cast<int>(k.params.size());
    k.params.push_back(tir::Param{"p" + std::to_string(p), false, t, -1, {}, {}});
    const uint32_t v = tir::addVar(k, "v" + std::to_string(p), t);
    ExprRef clamp = tir::binary(BinOp::Min, tir::binary(BinOp::Max, tir::paramRef(k, p), tir::intConst(r.lo, t)),
                                tir::intConst(r.hi, t));
    k.body.push_back(tir::Stmt{{}, tir::Assign{tir::Reg::var(v), clamp}});
    ranges.push_back(r);
    vars.push_back(v);
  }
};

using test::randomIntType;
using test::randomRange;

ExprRef randomExpr(const Setup& s, Type t, int depth, std::mt19937_64& rng) {
  auto leaf = [&]() -> ExprRef {
    if (rng() % 3 == 0) {
      const int64_t consts[] = {0, 1, 2, 3, 5, 31, 32, 64, 1000, -1, -2, 1 << 20};
      return tir::intConst(consts[rng() % std::size(consts)], t);
    }
    const size_t v = rng() % s.vars.size();
    return tir::cast(t, tir::varRef(s.k, s.vars[v]));
  };
  if (depth == 0 || rng() % 6 == 0) return leaf();
  auto sub = [&] { return randomExpr(s, t, depth - 1, rng); };
  switch (rng() % 12) {
    case 0: return tir::add(sub(), sub());
    case 1: return tir::sub(sub(), sub());
    case 2: return tir::mul(sub(), sub());
    case 3: return tir::binary(BinOp::Div, sub(), sub());
    case 4: return tir::binary(BinOp::Rem, sub(), sub());
    case 5: return tir::binary(BinOp::Shl, sub(), sub());
    case 6: return tir::binary(BinOp::Shr, sub(), sub());
    case 7: return tir::unary(tir::UnOp::Neg, sub());
    case 8: return tir::binary(BinOp::And, sub(), sub());
    case 9: return tir::binary(BinOp::Min, sub(), sub());
    case 10: return tir::select(tir::lt(sub(), sub()), sub(), sub());
    default: return tir::cast(t, randomExpr(s, randomIntType(rng), depth - 1, rng));
  }
}

emu::Lanes splat(uint64_t v) {
  emu::Lanes r;
  r.fill(v);
  return r;
}

// The IR's value of `e` (the emulator's arithmetic) with variable values `env` (canonical).
uint64_t eval(const ExprRef& e, const std::vector<uint64_t>& env) {
  switch (e->kind) {
    case tir::ExprKind::IntConst: return emu::canonical(e->type, static_cast<uint64_t>(e->value));
    case tir::ExprKind::VarRef: return env.at(static_cast<size_t>(e->id));
    case tir::ExprKind::Cast: return emu::convert(e->type, e->args[0]->type, eval(e->args[0], env));
    case tir::ExprKind::Unary: return emu::unaryOp(e->un, e->type, splat(eval(e->args[0], env)))[0];
    case tir::ExprKind::Select: return eval(e->args[0], env) ? eval(e->args[1], env) : eval(e->args[2], env);
    case tir::ExprKind::Binary: {
      emu::Mask dz = 0;
      return emu::binaryOp(e->bin, e->args[0]->type, e->args[1]->type, splat(eval(e->args[0], env)),
                           splat(eval(e->args[1], env)), emu::kFullMask, &dz)[0];
    }
    default: FAIL("unexpected expression kind"); return 0;
  }
}

bool fits(Wide v, Type t) {
  const Range all = tir::typeRange(t);
  return v >= all.lo && v <= all.hi;
}

// Whether C++ computes `e` (a Binary or Unary node) at these operand values without
// undefined behaviour. Canonical values read as int64 are the values themselves.
bool definedInCpp(const tir::Expr& e, uint64_t ua, uint64_t ub) {
  const Type t = e.type;
  const bool isSigned = t != Type::U32;
  const Wide a = static_cast<int64_t>(ua), b = static_cast<int64_t>(ub);
  const int width = t == Type::I64 ? 64 : 32;
  if (e.kind == tir::ExprKind::Unary) return !isSigned || e.un != tir::UnOp::Neg || fits(-a, t);
  switch (e.bin) {
    case BinOp::Add: return !isSigned || fits(a + b, t);
    case BinOp::Sub: return !isSigned || fits(a - b, t);
    case BinOp::Mul: return !isSigned || fits(a * b, t);
    case BinOp::Shl:
      if (b < 0 || b >= width) return false;
      return !isSigned || (a >= 0 && fits(a << static_cast<int>(b), t));
    case BinOp::Shr: return b >= 0 && b < width;
    case BinOp::Div:
    case BinOp::Rem: return b != 0 && !(isSigned && b == -1 && a == tir::typeRange(t).lo);
    default: return true;
  }
}

void collect(const ExprRef& e, std::vector<const tir::Expr*>& ops) {
  if (e->kind == tir::ExprKind::Binary || e->kind == tir::ExprKind::Unary) ops.push_back(e.get());
  for (const ExprRef& a : e->args)
    if (a) collect(a, ops);
}

}  // namespace

TEST_CASE("no operation KernelRanges prints as plain C++ is undefined there", "[kernel-ranges]") {
  std::mt19937_64 rng(20261202);
  int plainRisky = 0, helped = 0;
  for (int round = 0; round < 300; ++round) {
    Setup s;
    for (int i = 0; i < 3; ++i) {
      const Type t = randomIntType(rng);
      s.add(t, randomRange(t, rng));
    }
    std::vector<ExprRef> exprs;
    for (int i = 0; i < 8; ++i) exprs.push_back(randomExpr(s, randomIntType(rng), 4, rng));
    const tir::KernelRanges ranges(s.k);
    std::vector<uint64_t> env(s.k.vars.size());
    for (const ExprRef& x : exprs) {
      std::vector<const tir::Expr*> ops;
      collect(x, ops);
      for (const tir::Expr* op : ops) {
        if (!tir::isInt(op->type)) continue;
        const bool plain = ranges.plainInCpp(*op);
        const bool risky = op->kind == tir::ExprKind::Unary || op->bin == BinOp::Add || op->bin == BinOp::Sub ||
                           op->bin == BinOp::Mul || op->bin == BinOp::Shl || op->bin == BinOp::Shr ||
                           op->bin == BinOp::Div || op->bin == BinOp::Rem;
        if (!risky) continue;
        if (!plain) {
          ++helped;
          continue;
        }
        ++plainRisky;
        for (int sample = 0; sample < 40; ++sample) {
          for (size_t v = 0; v < s.vars.size(); ++v) {
            const Range& r = s.ranges[v];
            const int64_t value = sample == 0   ? r.lo
                                  : sample == 1 ? r.hi
                                                : std::uniform_int_distribution<int64_t>(r.lo, r.hi)(rng);
            env[s.vars[v]] = emu::canonical(s.k.vars[s.vars[v]].type, static_cast<uint64_t>(value));
          }
          const uint64_t a = eval(op->args[0], env);
          const uint64_t b = op->kind == tir::ExprKind::Binary ? eval(op->args[1], env) : 0;
          INFO("round " << round << ": " << tir::print(s.k, ExprRef(x)) << " in " << tir::print(s.k));
          INFO("operands " << static_cast<int64_t>(a) << ", " << static_cast<int64_t>(b));
          REQUIRE(definedInCpp(*op, a, b));
        }
      }
    }
  }
  // Meaningful only if both answers are common.
  CHECK(plainRisky > 1000);
  CHECK(helped > 1000);
}

TEST_CASE("loop variables, counters and ids have the ranges their definitions give", "[kernel-ranges]") {
  tir::Kernel k;
  k.block = {128, 1, 1};
  k.grid = {tir::intConst(64), nullptr, nullptr};
  k.params.push_back(tir::Param{"K", false, Type::I32, -1, {}, {}});
  k.params.push_back(tir::Param{"n", false, Type::I32, -1, {}, {}});
  const ExprRef K = tir::paramRef(k, 0), n = tir::paramRef(k, 1);
  const uint32_t kv = tir::addVar(k, "k", Type::I32), j = tir::addVar(k, "j", Type::I32);
  const uint32_t c = tir::addVar(k, "c", Type::I32);
  k.vars[c].known = Range{0, 2};
  // for k in range(0, K / 32): k * 32 + 31 cannot overflow; for j in range(0, n, 2): the step
  // may pass the largest i32, so j may be anything.
  tir::For tiles{kv, tir::intConst(0), tir::binary(BinOp::Div, K, tir::intConst(32)), tir::intConst(1), false, {}};
  tir::For strided{j, tir::intConst(0), n, tir::intConst(2), false, {}};
  k.body.push_back(tir::Stmt{{}, tir::Assign{tir::Reg::var(c), tir::intConst(0)}});
  k.body.push_back(tir::Stmt{{}, std::move(tiles)});
  k.body.push_back(tir::Stmt{{}, std::move(strided)});
  const tir::KernelRanges ranges(k);
  const auto& loops = k.body;
  const tir::For& t = std::get<tir::For>(loops[1].node);
  const tir::For& st = std::get<tir::For>(loops[2].node);
  CHECK_FALSE(ranges.stepMayOverflow(t));
  CHECK(ranges.stepMayOverflow(st));
  auto plain = [&](const ExprRef& e) { return ranges.plainInCpp(*e); };
  const ExprRef kr = tir::varRef(k, kv), jr = tir::varRef(k, j), cr = tir::varRef(k, c);
  CHECK(plain(tir::add(tir::mul(kr, tir::intConst(32)), tir::intConst(31))));
  CHECK_FALSE(plain(tir::mul(kr, tir::intConst(1 << 6))));  // k < 2^26: * 64 may reach 2^32
  CHECK_FALSE(plain(tir::mul(jr, tir::intConst(2))));
  CHECK(plain(tir::mul(cr, tir::intConst(8192))));  // the counter's known range: multi-assigned
  // Thread and block ids from the launch: tid < 128, block < 64.
  const ExprRef tid = tir::special(tir::Special::TidX), bid = tir::special(tir::Special::CtaidX);
  CHECK(plain(tir::add(tir::mul(bid, tir::intConst(1 << 20)), tir::mul(tid, tir::intConst(4)))));
  CHECK_FALSE(plain(tir::mul(bid, tir::intConst(1 << 26))));
  CHECK(plain(tir::binary(BinOp::Shl, tid, tir::intConst(24))));
  CHECK_FALSE(plain(tir::binary(BinOp::Shl, tid, tir::intConst(25))));  // 127 << 25 reaches the sign
  CHECK_FALSE(plain(tir::binary(BinOp::Shl, tid, n)));                  // any amount
  CHECK(plain(tir::binary(BinOp::Div, K, tir::intConst(32))));
  CHECK_FALSE(plain(tir::binary(BinOp::Div, K, n)));
  CHECK(plain(tir::binary(BinOp::Div, K, tir::add(tid, tir::intConst(1)))));  // 1..128
  CHECK_FALSE(plain(tir::binary(BinOp::Div, K, tir::sub(tid, tir::intConst(1)))));  // -1..126
  CHECK_FALSE(plain(tir::add(K, tir::intConst(1))));
  CHECK(plain(tir::add(tir::cast(Type::I64, K), tir::intConst(1, Type::I64))));
}

TEST_CASE("a loop variable read after its loop may hold the value that ended it", "[kernel-ranges]") {
  for (bool readAfter : {false, true}) {
    tir::Kernel k;
    k.params.push_back(tir::Param{"n", false, Type::I32, -1, {}, {}});
    const uint32_t kv = tir::addVar(k, "k", Type::I32), y = tir::addVar(k, "y", Type::I32);
    const ExprRef next = tir::add(tir::varRef(k, kv), tir::intConst(1));
    tir::For loop{kv, tir::intConst(0), tir::paramRef(k, 0), tir::intConst(1), false, {}};
    loop.body.push_back(tir::Stmt{{}, tir::Assign{tir::Reg::var(y), next}});
    k.body.push_back(tir::Stmt{{}, std::move(loop)});
    // After `for k in range(0, n)` k is n, or 0 if n <= 0: k + 1 may overflow there.
    if (readAfter) k.body.push_back(tir::Stmt{{}, tir::Assign{tir::Reg::var(y), next}});
    INFO("read after the loop: " << readAfter);
    CHECK(tir::KernelRanges(k).plainInCpp(*next) == !readAfter);
  }
}

TEST_CASE("loop counters made by the remainder pass are known to stay below their modulus", "[kernel-ranges]") {
  tir::Kernel k;
  k.params.push_back(tir::Param{"n", false, Type::I32, -1, {}, {}});
  const uint32_t kv = tir::addVar(k, "k", Type::I32), x = tir::addVar(k, "x", Type::I32);
  tir::For loop{kv, tir::intConst(0), tir::paramRef(k, 0), tir::intConst(1), false, {}};
  loop.body.push_back(tir::Stmt{
      {}, tir::Assign{tir::Reg::var(x), tir::binary(BinOp::Rem, tir::varRef(k, kv), tir::intConst(3))}});
  k.body.push_back(tir::Stmt{{}, std::move(loop)});
  tir::countLoopRemainders(k);
  REQUIRE(k.vars.size() == 3);
  REQUIRE(k.vars[2].known);
  CHECK(k.vars[2].known->lo == 0);
  CHECK(k.vars[2].known->hi == 2);
}
