// Element offsets in global tensors with run-time strides (ir/lower/Addressing.cpp): the
// offsets of a thread's rows r, r + 32, ... share one loop-invariant part and differ by a
// constant times the stride, and every offset equals coordinate times stride summed.
#include <catch2/catch.hpp>

#include <random>

#include "ir/layout/Layout.h"
#include "ir/layout/Transforms.h"
#include "ir/lower/Addressing.h"
#include "ir/lower/MemoryRuns.h"
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
    case tir::ExprKind::IntConst: return e->value;
    case tir::ExprKind::ParamRef: return K;
    case tir::ExprKind::VarRef: return k;
    case tir::ExprKind::SpecialReg: return e->special == tir::Special::TidX ? tid : bid;
    case tir::ExprKind::Cast: return eval(e->args[0], tid, bid, K, k);
    case tir::ExprKind::Binary: {
      int64_t a = eval(e->args[0], tid, bid, K, k), b = eval(e->args[1], tid, bid, K, k);
      switch (e->bin) {
        case BinOp::Add: return a + b;
        case BinOp::Sub: return a - b;
        case BinOp::Mul: return a * b;
        case BinOp::Shr: return a >> b;
        case BinOp::Shl: return a << b;
        case BinOp::And: return a & b;
        case BinOp::Or: return a | b;
        case BinOp::Xor: return a ^ b;
        case BinOp::Div: return a / b;
        case BinOp::Rem: return a % b;
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

namespace {

// Brute force: whether the run of `len` elements at view coordinate (r, c) of a view of
// shape `vshape` at origin (r0 + dr, c0 + dc) is contiguous and aligned for every run-time
// part (dr, dc) in multiples of (divR, divC) that keeps the view inside the tensor.
bool runHoldsEverywhere(const layout::Layout& l, const std::vector<int64_t>& shape, const std::vector<int64_t>& vshape,
                        int64_t r0, int64_t c0, int64_t divR, int64_t divC, int64_t r, int64_t c, int64_t len) {
  // The run-time parts d, multiples of div, with 0 <= base + d and base + d + extent <= size.
  auto places = [](int64_t base, int64_t div, int64_t extent, int64_t size) {
    if (div == 0) return std::vector<int64_t>{0};
    std::vector<int64_t> v;
    const int64_t lo = -base, hi = size - extent - base;
    int64_t d = lo / div * div;
    if (d < lo) d += div;
    for (; d <= hi; d += div) v.push_back(d);
    return v;
  };
  for (int64_t dr : places(r0, divR, vshape[0], shape[0]))
    for (int64_t dc : places(c0, divC, vshape[1], shape[1])) {
      const int64_t first = layout::applyAxis(l, std::vector<int64_t>{r0 + dr + r, c0 + dc + c}, shape, layout::Axis::m);
      if (first % len != 0) return false;
      for (int64_t j = 1; j < len; ++j)
        if (layout::applyAxis(l, std::vector<int64_t>{r0 + dr + r, c0 + dc + c + j}, shape, layout::Axis::m) != first + j) return false;
    }
  return true;
}

// An f16 shared tensor of `shape` in layout `l`, aligned well past any run.
tile::Tensor sharedF16(const layout::Layout& l, const std::vector<int64_t>& shape) {
  tile::Tensor t;
  t.space = tile::MemSpace::Shared;
  t.dtype = tile::DType::F16;
  t.staticShape = shape;
  t.layout = l;
  t.alignBytes = 1024;
  return t;
}

}  // namespace

TEST_CASE("runs in swizzled shared tiles hold for every place a run-time origin can put the window") {
  std::mt19937_64 rng(9);
  tir::Kernel k;
  const uint32_t var = tir::addVar(k, "k", Type::I32);
  int checked = 0, held = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const int64_t rows = int64_t{8} << (rng() % 3), cols = int64_t{16} << (rng() % 3);  // 8..32 x 16..64
    const int len = int(rng() % 3) + 1;  // swizzle field width 1..3
    const int atom = len + int(rng() % 2), per = int(rng() % 4);
    if (per + len + atom > 9) continue;
    const std::vector<int64_t> shape{rows, cols};
    layout::Layout l = layout::Layout::compose(layout::Swizzle::make(per, len, atom), layout::TileLayout::rowMajor(shape));
    const tile::Tensor t = sharedF16(l, shape);
    const std::vector<int64_t> vshape{rows / 2, cols / 2};
    const int64_t divs[] = {0, 1, 2, 4, 8, 16};
    const int64_t coefR = divs[rng() % 6], coefC = divs[rng() % 6];
    // k is a multiple of m (a loop stepping by m), so the origin moves in steps of coef * m.
    const int64_t m = int64_t{1} << (rng() % 3);
    const int64_t divR = coefR * m, divC = coefC * m;
    // Constant parts that fit (the window's own bounds check covers the others).
    const int64_t r0 = int64_t(rng() % 3), c0 = int64_t(rng() % 5);
    tile::View v;
    auto origin = [&](int64_t c, int64_t coef) {
      ExprRef o = tir::intConst(c, Type::I64);
      ExprRef run = tir::mul(tir::cast(Type::I64, tir::varRef(k, var)), tir::intConst(coef, Type::I64));
      return coef ? tir::add(o, run) : o;
    };
    v.origin = {origin(r0, coefR), origin(c0, coefC)};
    v.dims = {0, 1};
    v.shape = vshape;
    lower::MemoryRuns runs(t, v, nullptr, [&](const tir::Expr& atom) {
      return atom.kind == tir::ExprKind::VarRef && atom.id == var ? m : 1;
    });
    if (!runs.originProblem().empty()) continue;
    for (int64_t w : {2, 4, 8}) {
      const int64_t r = int64_t(rng() % uint64_t(vshape[0])), c = int64_t(rng() % uint64_t(vshape[1] / w)) * w;
      INFO(layout::toString(l) << " origin (" << r0 << " + " << coefR << " k, " << c0 << " + " << coefC
                               << " k), k a multiple of " << m << ", run at (" << r << ", " << c << ") of " << w);
      const bool want = runHoldsEverywhere(l, shape, vshape, r0, c0, divR, divC, r, c, w);
      CHECK(runs.check({r, c}, w, nullptr).ok() == want);
      ++checked;
      held += want;
    }
  }
  // Both outcomes occur.
  CHECK(checked > 200);
  CHECK(held > 20);
  CHECK(checked - held > 20);
}

TEST_CASE("runs along a dimension that is not the tensor's last agree with the layout, element by element") {
  // Views keeping two of three dimensions (the third at a constant): a run walks the view's
  // last dimension, which is tensor dimension 1 when dimension 2 is indexed away.
  std::mt19937_64 rng(17);
  int held = 0, failed = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const std::vector<int64_t> shape{int64_t{2} << (rng() % 2), int64_t{8} << (rng() % 2), int64_t{4} << (rng() % 3)};
    const bool swizzled = rng() % 2;
    layout::TileLayout rowMajor = layout::TileLayout::rowMajor(shape);
    layout::Layout l = swizzled ? layout::Layout::compose(layout::Swizzle::make(int(rng() % 2), 1, 2), rowMajor)
                                : layout::Layout{rowMajor};
    const tile::Tensor t = sharedF16(l, shape);
    const int dropped = 1 + int(rng() % 2);  // dimension 1 or 2 is indexed away
    tile::View v;
    v.dims = dropped == 1 ? std::vector<int>{0, 2} : std::vector<int>{0, 1};
    std::vector<int64_t> origin(3, 0);
    origin[static_cast<size_t>(dropped)] = int64_t(rng() % uint64_t(shape[static_cast<size_t>(dropped)]));
    v.shape = {shape[0], shape[static_cast<size_t>(v.dims[1])]};
    for (int64_t o : origin) v.origin.push_back(tir::intConst(o, Type::I64));
    lower::MemoryRuns runs(t, v);
    const int64_t w = int64_t{1} << (1 + rng() % 2);  // 2 or 4
    const int64_t r = int64_t(rng() % uint64_t(v.shape[0])), c = int64_t(rng() % uint64_t(v.shape[1]));
    // The brute force: every element inside the tensor, at consecutive offsets from an aligned first one.
    bool want = true;
    int64_t first = 0;
    for (int64_t j = 0; j < w && want; ++j) {
      std::vector<int64_t> at = origin;
      at[0] += r;
      at[static_cast<size_t>(v.dims[1])] += c + j;
      if (at[static_cast<size_t>(v.dims[1])] >= shape[static_cast<size_t>(v.dims[1])]) {
        want = false;
        break;
      }
      const int64_t m = layout::applyAxis(l, at, shape, layout::Axis::m);
      if (j == 0) first = m;
      want = j == 0 ? m % w == 0 : m == first + j;
    }
    INFO(layout::toString(l) << " over " << layout::shapeToString(shape) << ", dimension " << dropped << " at "
                             << origin[static_cast<size_t>(dropped)] << ", run of " << w << " at (" << r << ", " << c
                             << ")");
    CHECK(runs.check({r, c}, w, nullptr).ok() == want);
    (want ? held : failed)++;
  }
  CHECK(held > 30);
  CHECK(failed > 30);
}

TEST_CASE("shared offsets whose origin moves by a known multiple are the layout's, swizzle included") {
  std::mt19937_64 rng(17);
  tir::Kernel k;
  const uint32_t var = tir::addVar(k, "k", Type::I32);
  int checked = 0, pulledOut = 0;
  for (int iter = 0; iter < 600; ++iter) {
    const int64_t rows = int64_t{8} << (rng() % 3), cols = int64_t{16} << (rng() % 3);
    const int len = int(rng() % 3) + 1;
    const int atom = len + int(rng() % 2), per = int(rng() % 4);
    if (per + len + atom > 9) continue;
    const std::vector<int64_t> shape{rows, cols};
    layout::Layout l = layout::Layout::compose(layout::Swizzle::make(per, len, atom), layout::TileLayout::rowMajor(shape));
    const tile::Tensor t = sharedF16(l, shape);
    // Row r0 + coefR k, column c0 + coefC k + 8 (tid % 4), k a multiple of m.
    const int64_t coefs[] = {0, 1, 2, 3, 4, 8};
    const int64_t coefR = coefs[rng() % 6], coefC = coefs[rng() % 6], m = int64_t{1} << (rng() % 6);
    const int64_t r0 = int64_t(rng() % 4), c0 = int64_t(rng() % 8);
    ExprRef kk = tir::cast(Type::I32, tir::varRef(k, var));
    const std::vector<ExprRef> coord = {
        tir::add(tir::intConst(r0), tir::mul(kk, tir::intConst(coefR))),
        tir::add(tir::add(tir::intConst(c0), tir::mul(kk, tir::intConst(coefC))),
                 tir::mul(tir::binary(BinOp::And, tir::special(tir::Special::TidX), tir::intConst(3)), tir::intConst(8)))};
    const lower::AtomDivisor divisors = [&](const tir::Expr& a) {
      return a.kind == tir::ExprKind::VarRef && a.id == var ? m : 1;
    };
    const ExprRef off = lower::elementOffset(t, coord, divisors);
    pulledOut += !tir::sameExpr(off, lower::elementOffset(t, coord));
    for (int64_t j = 0; j < 8; ++j) {
      const int64_t kv = j * m, row = r0 + coefR * kv;
      for (int64_t tid = 0; tid < 4; ++tid) {
        const int64_t col = c0 + coefC * kv + 8 * tid;
        if (row >= rows || col >= cols) continue;
        INFO(layout::toString(l) << " at (" << r0 << " + " << coefR << " k, " << c0 << " + " << coefC << " k + 8 tid), k = "
                                 << kv << ", tid " << tid);
        CHECK(eval(off, tid, 0, 0, kv) == layout::applyAxis(l, std::vector<int64_t>{row, col}, shape, layout::Axis::m));
        ++checked;
      }
    }
  }
  CHECK(checked > 1000);
  CHECK(pulledOut > 20);  // where k steps by whole periods of the swizzle, it is added after it
}
