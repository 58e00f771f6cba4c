// The thread IR builder's folds: each fold is checked against brute-force evaluation, and
// what must not fold is checked to stay.
#include <catch2/catch.hpp>

#include "ir/thread/Builder.h"

using namespace tyl;
using tir::BinOp;
using tir::ExprKind;
using tir::Type;

namespace {

tir::ExprRef tid() { return tir::special(tir::Special::TidX); }

bool compare(BinOp op, int64_t a, int64_t b) {
  switch (op) {
    case BinOp::Lt: return a < b;
    case BinOp::Le: return a <= b;
    case BinOp::Gt: return a > b;
    case BinOp::Ge: return a >= b;
    default: return false;
  }
}

}  // namespace

TEST_CASE("comparisons of a masked value with a constant fold only when every value agrees", "[builder]") {
  // (x & m) op c over x in [-300, 300]: where the builder folds, the answer must hold for
  // every x; where it does not, some x must disagree with some other.
  for (BinOp op : {BinOp::Lt, BinOp::Le, BinOp::Gt, BinOp::Ge}) {
    for (int64_t m : {0, 1, 7, 31, 32, 255}) {
      for (int64_t c = -3; c <= 260; ++c) {
        for (bool swap : {false, true}) {
          tir::ExprRef masked = tir::binary(BinOp::And, tid(), tir::intConst(m));
          tir::ExprRef e = swap ? tir::binary(op, tir::intConst(c), masked) : tir::binary(op, masked, tir::intConst(c));
          bool sawTrue = false, sawFalse = false;
          for (int64_t x = -300; x <= 300; ++x) {
            bool v = swap ? compare(op, c, x & m) : compare(op, x & m, c);
            (v ? sawTrue : sawFalse) = true;
          }
          INFO("op " << static_cast<int>(op) << " m " << m << " c " << c << " swapped " << swap);
          if (e->kind == ExprKind::IntConst) {
            CHECK(e->type == Type::Pred);
            CHECK((e->value ? !sawFalse : !sawTrue));
          } else {
            CHECK((sawTrue && sawFalse));
          }
        }
      }
    }
  }
}

TEST_CASE("the lane id and widened masks have known ranges; unsigned values do not fold", "[builder]") {
  tir::ExprRef lane = tir::special(tir::Special::LaneId);
  CHECK(tir::isTrue(tir::lt(lane, tir::intConst(32))));
  CHECK(!tir::isTrue(tir::lt(lane, tir::intConst(31))));
  tir::ExprRef wide = tir::cast(Type::I64, tir::binary(BinOp::And, tid(), tir::intConst(31)));
  CHECK(tir::isTrue(tir::lt(wide, tir::intConst(32, Type::I64))));
  // A U32 mask compared as unsigned: left alone.
  tir::ExprRef u = tir::binary(BinOp::And, tir::cast(Type::U32, tid()), tir::intConst(31, Type::U32));
  CHECK(tir::lt(u, tir::intConst(32, Type::U32))->kind == ExprKind::Binary);
  // The thread id itself has no known upper bound here.
  CHECK(tir::lt(tid(), tir::intConst(1024))->kind == ExprKind::Binary);
}

TEST_CASE("a conjunction or disjunction of an expression with itself is the expression", "[builder]") {
  tir::ExprRef p = tir::lt(tid(), tir::intConst(100));
  tir::ExprRef q = tir::lt(tid(), tir::intConst(100));  // equal, another node
  CHECK(tir::land(p, q) == p);
  CHECK(tir::binary(BinOp::LOr, p, q) == p);
  tir::ExprRef r = tir::lt(tid(), tir::intConst(99));
  CHECK(tir::land(p, r)->kind == ExprKind::Binary);
}

TEST_CASE("substituting constants for variables folds to the value the hardware computes", "[builder]") {
  tir::Kernel k;
  const uint32_t i = tir::addVar(k, "i", Type::I32), j = tir::addVar(k, "j", Type::I32);
  auto v = [&](uint32_t var) { return tir::varRef(k, var); };
  auto c = [](int64_t x) { return tir::intConst(x, Type::I32); };
  // ((i * 3 + j) % 4) * 2^30 + select(i < j, 1, 2), wrapping at 32 bits.
  tir::ExprRef e = tir::add(tir::mul(tir::binary(BinOp::Rem, tir::add(tir::mul(v(i), c(3)), v(j)), c(4)),
                                     c(int64_t{1} << 30)),
                            tir::select(tir::lt(v(i), v(j)), c(1), c(2)));
  for (int64_t x = -5; x <= 5; ++x)
    for (int64_t y = -5; y <= 5; ++y) {
      tir::ExprRef r = tir::substitute(e, [&](const tir::Expr& a) { return c(a.id == i ? x : y); });
      int64_t got = 0;
      REQUIRE(tir::isIntConst(r, &got));
      const int64_t want = static_cast<int32_t>(static_cast<uint32_t>(((x * 3 + y) % 4) * (int64_t{1} << 30)) +
                                                (x < y ? 1u : 2u));
      CHECK(got == want);
    }
  // Only i given: j stays, and so does what depends on it.
  tir::ExprRef partial = tir::substitute(e, [&](const tir::Expr& a) { return a.id == i ? c(1) : nullptr; });
  CHECK_FALSE(tir::isIntConst(partial));
  CHECK(tir::sameExpr(tir::substitute(partial, [&](const tir::Expr&) { return nullptr; }), partial));
  // Special registers are atoms too.
  CHECK(tir::sameExpr(tir::substitute(tir::add(tid(), c(3)), [&](const tir::Expr& a) {
          return a.kind == ExprKind::SpecialReg ? c(4) : nullptr;
        }),
        c(7)));
  // A division by zero does not fold: nothing is claimed for it.
  CHECK_FALSE(tir::isIntConst(
      tir::substitute(tir::binary(BinOp::Div, c(7), v(i)), [&](const tir::Expr&) { return c(0); })));
}

TEST_CASE("a term subtracted from a sum that holds it leaves the other terms", "[builder]") {
  tir::Kernel k;
  const uint32_t x = tir::addVar(k, "x", Type::I32), y = tir::addVar(k, "y", Type::I32);
  const uint32_t z = tir::addVar(k, "z", Type::I32);
  auto v = [&](uint32_t var) { return tir::varRef(k, var); };
  auto lane4 = [] { return tir::binary(BinOp::Shr, tir::special(tir::Special::LaneId), tir::intConst(2)); };
  // (x + lane / 4) + y - lane / 4, the second lane / 4 another node: x + y.
  tir::ExprRef e = tir::sub(tir::add(tir::add(v(x), lane4()), v(y)), lane4());
  CHECK(tir::sameExpr(e, tir::add(v(x), v(y))));
  CHECK(tir::sameExpr(tir::sub(tir::add(v(x), v(y)), v(x)), v(y)));
  // Not a term of the sum: nothing changes.
  tir::ExprRef kept = tir::sub(tir::add(v(x), tir::mul(v(y), v(z))), v(y));
  CHECK(kept->kind == ExprKind::Binary);
  CHECK(kept->bin == BinOp::Sub);
  // Exact wrapping or not: compared with the sum computed and the term taken away at i32 values
  // near the ends, where the sum wraps.
  const int64_t values[] = {INT32_MIN, -7, 0, 5, INT32_MAX};
  for (int64_t a : values)
    for (int64_t b : values)
      for (int64_t c : values) {
        auto at = [&](const tir::ExprRef& expr) {
          int64_t out = 0;
          tir::ExprRef r = tir::substitute(expr, [&](const tir::Expr& atom) {
            return tir::intConst(atom.id == x ? a : atom.id == y ? b : c, Type::I32);
          });
          REQUIRE(tir::isIntConst(r, &out));
          return out;
        };
        const int64_t wrapped = static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(c));
        CHECK(at(tir::sub(tir::add(tir::add(v(x), v(y)), v(z)), v(y))) == wrapped);
      }
}

TEST_CASE("an integer cast to f32 folds to the nearest f32, rounded once", "[builder]") {
  // 2^60 + 2^36 + 1 is just past the midpoint of 2^60 and 2^60 + 2^37; as a double it is the
  // midpoint itself, which rounds to even.
  const int64_t big = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  tir::ExprRef f = tir::cast(Type::F32, tir::intConst(big, Type::I64));
  REQUIRE(f->kind == ExprKind::FloatConst);
  CHECK(f->real == static_cast<double>((int64_t{1} << 60) + (int64_t{1} << 37)));
  CHECK(tir::cast(Type::F32, tir::intConst(-3, Type::I32))->real == -3.0);
}
