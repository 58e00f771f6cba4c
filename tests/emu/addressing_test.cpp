// Element offsets in global tensors with run-time strides (ir/lower/Addressing.cpp): the
// offsets of a thread's rows r, r + 32, ... share one loop-invariant part and differ by a
// constant times the stride, and every offset equals coordinate times stride summed.
#include <catch2/catch.hpp>

#include <random>

#include "ir/lower/Addressing.h"
#include "ir/thread/Builder.h"

using namespace tyl;
using tir::BinOp;
using tir::ExprRef;
using tir::Type;

namespace {

// A kernel with one i32 parameter K (the row stride) and a loop variable k.
struct Fixture {
  tir::Kernel k;
  tile::Tensor a;
  uint32_t loopVar = 0;
  Fixture() {
    k.params.push_back(tir::Param{"K", false, Type::I32, -1, {}, {}});
    loopVar = tir::addVar(k, "k", Type::I32);
    a.space = tile::MemSpace::Global;
    a.dtype = tile::DType::F16;
    a.strides = {tir::cast(Type::I64, tir::paramRef(k, 0)), tir::intConst(1, Type::I64)};
  }
  ExprRef tid() const { return tir::special(tir::Special::TidX); }
  ExprRef bid() const { return tir::special(tir::Special::CtaidY); }
  ExprRef loop() const { return tir::varRef(k, loopVar); }
  // Row by * 128 + tid / 4 + c, column 32 k + 8 (tid % 4) + d, as lowering builds them.
  std::vector<ExprRef> coord(int64_t c, int64_t d) const {
    ExprRef row = tir::add(tir::mul(tir::cast(Type::I64, bid()), tir::intConst(128, Type::I64)),
                           tir::cast(Type::I64, tir::add(tir::binary(BinOp::Shr, tid(), tir::intConst(2)),
                                                         tir::intConst(c))));
    ExprRef col = tir::add(tir::add(tir::mul(tir::cast(Type::I64, loop()), tir::intConst(32, Type::I64)),
                                    tir::cast(Type::I64, tir::mul(tir::binary(BinOp::And, tid(), tir::intConst(3)),
                                                                  tir::intConst(8)))),
                           tir::intConst(d, Type::I64));
    return {row, col};
  }
};

// The value of an expression over tid, blockIdx.y, K and k.
int64_t eval(const ExprRef& e, int64_t tid, int64_t bid, int64_t K, int64_t k) {
  switch (e->kind) {
    case tir::ExprKind::IntConst: return e->i;
    case tir::ExprKind::ParamRef: return K;
    case tir::ExprKind::VarRef: return k;
    case tir::ExprKind::SpecialReg: return static_cast<tir::Special>(e->i) == tir::Special::TidX ? tid : bid;
    case tir::ExprKind::Cast: return eval(e->args[0], tid, bid, K, k);
    case tir::ExprKind::Binary: {
      int64_t a = eval(e->args[0], tid, bid, K, k), b = eval(e->args[1], tid, bid, K, k);
      switch (e->bin) {
        case BinOp::Add: return a + b;
        case BinOp::Sub: return a - b;
        case BinOp::Mul: return a * b;
        case BinOp::Shr: return a >> b;
        case BinOp::And: return a & b;
        default: break;
      }
      break;
    }
    default: break;
  }
  FAIL("unexpected expression");
  return 0;
}

bool dependsOnThreadOrLoop(const ExprRef& e) {
  if (!e) return false;
  if (e->kind == tir::ExprKind::SpecialReg || e->kind == tir::ExprKind::VarRef) return true;
  return dependsOnThreadOrLoop(e->args[0]) || dependsOnThreadOrLoop(e->args[1]) || dependsOnThreadOrLoop(e->args[2]);
}

}  // namespace

TEST_CASE("a thread's rows r, r + 32, ... of a strided global tensor share one offset plus a uniform one") {
  Fixture f;
  const ExprRef first = lower::elementOffset(f.a, f.coord(0, 0));
  for (int64_t c : {32, 64, 96}) {
    INFO("row + " << c);
    const ExprRef off = lower::elementOffset(f.a, f.coord(c, 64));
    REQUIRE(off->kind == tir::ExprKind::Binary);
    CHECK(off->bin == BinOp::Add);
    CHECK(tir::sameExpr(off->args[0], first));      // the part that depends on the thread and k
    CHECK(!dependsOnThreadOrLoop(off->args[1]));      // c K + 64: the same in every thread
  }
}

TEST_CASE("strided global offsets are coordinate times stride summed") {
  Fixture f;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) {
    const int64_t c = int64_t(rng() % 300) - 20, d = int64_t(rng() % 300) - 20;
    const ExprRef off = lower::elementOffset(f.a, f.coord(c, d));
    const int64_t tid = int64_t(rng() % 1024), bid = int64_t(rng() % 5000), K = int64_t(rng() % 100000),
                  k = int64_t(rng() % 3000);
    const int64_t want = (bid * 128 + (tid >> 2) + c) * K + (32 * k + 8 * (tid & 3) + d);
    INFO("c " << c << " d " << d << " tid " << tid << " bid " << bid << " K " << K << " k " << k);
    CHECK(eval(off, tid, bid, K, k) == want);
  }
}
