// ldmatrix x1/x2/x4, plain and .trans, checked lane by lane against the PTX description;
// stmatrix checked by a round trip through registers.
#include <catch2/catch.hpp>

#include "TestKernel.h"

using namespace tyl;
using namespace tyl::emu;
using namespace tyl::emu::test;
using tir::BinOp;
using tir::Reg;
using tir::Type;

namespace {

// Matrix i's row r starts at this f16 element of the shared buffer: 16 elements per row,
// odd matrices shifted by 8 elements (16 bytes) so rows are not all at the same column.
int rowStart(int i, int r) { return i * 128 + r * 16 + 8 * (i % 2); }

tir::ExprRef rowStartExpr() {
  tir::ExprRef i = bin(BinOp::Div, laneId(), i32(8)), r = bin(BinOp::Rem, laneId(), i32(8));
  return tir::add(tir::add(tir::mul(i, i32(128)), tir::mul(r, i32(16))),
                  tir::mul(bin(BinOp::Rem, i, i32(2)), i32(8)));
}

// Every thread writes 16 consecutive elements: S[e] = e (exact in f16), then a barrier.
void fillShared(TestKernel& t, uint32_t S) {
  uint32_t j = t.var("j", Type::I32), h = t.var("h", Type::F16);
  tir::ExprRef e = tir::add(tir::mul(tid(), i32(16)), t.v(j));
  t.k.body.push_back(at(1, loop(j, i32(0), i32(16), i32(1),
                                {at(2, tir::Assign{Reg::var(h), tir::cast(Type::F16, e)}),
                                 at(3, store(Type::F16, mem(S, e), {Reg::var(h)}))})));
  t.k.body.push_back(at(4, tir::Barrier{}));
}

// Lane l's word for matrix i, from shared contents S[e] = e.
std::pair<int, int> expectedWord(int lane, int i, bool trans) {
  int fixed = lane / 4, pair = 2 * (lane % 4);
  if (trans) return {rowStart(i, pair) + fixed, rowStart(i, pair + 1) + fixed};
  return {rowStart(i, fixed) + pair, rowStart(i, fixed) + pair + 1};
}

}  // namespace

TEST_CASE("ldmatrix gives every lane the words of the PTX fragment layout", "[ldmatrix]") {
  for (int num : {1, 2, 4}) {
    for (bool trans : {false, true}) {
      TestKernel t("ldmatrix", 32);
      uint32_t out = t.globalBuffer("out", Type::F16);
      uint32_t S = t.sharedBuffer("S", Type::F16, 512);
      uint32_t R = t.array("R", Type::F16, 8);
      fillShared(t, S);
      std::vector<Reg> words;
      for (int i = 0; i < num; ++i) words.push_back(Reg::elem(R, i));  // word indices
      t.k.body.push_back(at(5, tir::Ldmatrix{num, trans, words, mem(S, rowStartExpr())}));
      for (int i = 0; i < num; ++i)
        t.k.body.push_back(
            at(6, store(Type::F16, mem(out, tir::mul(tir::add(tir::mul(laneId(), i32(4)), i32(i)), i32(2))),
                        elems(R, 2 * i, 2))));
      std::vector<Buffer> buffers = {makeBuffer(Type::F16, 256, false)};
      RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
      INFO("x" << num << (trans ? ".trans" : "") << "\n" << describe(r));
      REQUIRE(r.ok());
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < num; ++i) {
          auto [lo, hi] = expectedWord(lane, i, trans);
          INFO("lane " << lane << " matrix " << i);
          REQUIRE(getElement(buffers[0], Type::F16, (lane * 4 + i) * 2) == lo);
          REQUIRE(getElement(buffers[0], Type::F16, (lane * 4 + i) * 2 + 1) == hi);
        }
    }
  }
}

TEST_CASE("stmatrix writes back what ldmatrix read", "[ldmatrix]") {
  for (bool trans : {false, true}) {
    TestKernel t("roundtrip", 32);
    uint32_t out = t.globalBuffer("out", Type::F16);
    uint32_t S = t.sharedBuffer("S", Type::F16, 512), T = t.sharedBuffer("T", Type::F16, 512);
    uint32_t R = t.array("R", Type::F16, 8), row = t.array("row", Type::F16, 8);
    fillShared(t, S);
    std::vector<Reg> words = elems(R, 0, 4);
    tir::Block& body = t.k.body;
    body.push_back(at(5, tir::Ldmatrix{4, trans, words, mem(S, rowStartExpr())}));
    body.push_back(at(6, tir::Stmatrix{4, trans, words, mem(T, rowStartExpr())}));
    body.push_back(at(7, tir::Barrier{}));
    body.push_back(at(8, load(Type::F16, mem(T, rowStartExpr()), elems(row, 0, 8))));
    body.push_back(at(9, store(Type::F16, mem(out, rowStartExpr()), elems(row, 0, 8))));
    std::vector<Buffer> buffers = {makeBuffer(Type::F16, 512)};
    RunResult r = run(t.k, {Arg::pointer(0)}, buffers);
    INFO((trans ? ".trans\n" : "\n") << describe(r));
    REQUIRE(r.ok());
    for (int i = 0; i < 4; ++i)
      for (int rr = 0; rr < 8; ++rr)
        for (int c = 0; c < 8; ++c)
          REQUIRE(getElement(buffers[0], Type::F16, rowStart(i, rr) + c) == rowStart(i, rr) + c);
  }
}
