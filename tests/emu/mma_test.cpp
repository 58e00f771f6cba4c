// mma.sync m16n8k16 inside a kernel: one warp loads A (16x16, row-major), B (16x8 as [k][n])
// and C (16x8) from global memory into fragments per the PTX tables, runs the mma, stores D.
#include <catch2/catch.hpp>
#include <cmath>

#include "TestKernel.h"

using namespace tyl;
using namespace tyl::emu;
using namespace tyl::emu::test;
using tir::BinOp;
using tir::Reg;
using tir::Type;

namespace {

// g = lane / 4, t = lane % 4 as expressions.
tir::ExprRef g() { return bin(BinOp::Div, laneId(), i32(4)); }
tir::ExprRef t4() { return bin(BinOp::Rem, laneId(), i32(4)); }

TestKernel mmaKernel(Type ab) {
  TestKernel t("mma", 32);
  uint32_t A = t.globalBuffer("A", ab), B = t.globalBuffer("B", ab);
  uint32_t C = t.globalBuffer("C", Type::F32), D = t.globalBuffer("D", Type::F32);
  uint32_t a = t.array("a", ab, 8), b = t.array("b", ab, 4);
  uint32_t c = t.array("c", Type::F32, 4), d = t.array("d", Type::F32, 4);
  tir::Block& body = t.k.body;
  // A: elements e and e+1 (even e) are adjacent in a row: one 4-byte load per word.
  for (int e = 0; e < 8; e += 2) {
    tir::ExprRef row = tir::add(g(), i32(8 * ((e / 2) % 2)));
    tir::ExprRef col = tir::add(tir::mul(t4(), i32(2)), i32(8 * (e / 4)));
    body.push_back(at(1, load(ab, mem(A, tir::add(tir::mul(row, i32(16)), col)), elems(a, e, 2))));
  }
  // B is [k][n]: the two k of a word are a row apart, so one element at a time.
  for (int e = 0; e < 4; ++e) {
    tir::ExprRef k = tir::add(tir::mul(t4(), i32(2)), i32(e % 2 + 8 * (e / 2)));
    body.push_back(at(2, load(ab, mem(B, tir::add(tir::mul(k, i32(8)), g())), elems(b, e, 1))));
  }
  // C and D: elements e, e+1 are adjacent in a row.
  for (int e = 0; e < 4; e += 2) {
    tir::ExprRef off = tir::add(tir::mul(tir::add(g(), i32(8 * (e / 2))), i32(8)), tir::mul(t4(), i32(2)));
    body.push_back(at(3, load(Type::F32, mem(C, off), elems(c, e, 2))));
  }
  body.push_back(at(4, tir::Mma{ab, elems(d, 0, 4), elems(a, 0, 4), elems(b, 0, 2), elems(c, 0, 4)}));
  for (int e = 0; e < 4; e += 2) {
    tir::ExprRef off = tir::add(tir::mul(tir::add(g(), i32(8 * (e / 2))), i32(8)), tir::mul(t4(), i32(2)));
    body.push_back(at(5, store(Type::F32, mem(D, off), elems(d, e, 2))));
  }
  return t;
}

void checkMma(Type ab, uint64_t seed) {
  TestKernel t = mmaKernel(ab);
  std::vector<Buffer> buffers = {makeBuffer(ab, 256), makeBuffer(ab, 128), makeBuffer(Type::F32, 128),
                                 makeBuffer(Type::F32, 128, false)};
  fillRandom(buffers[0], ab, seed);
  fillRandom(buffers[1], ab, seed + 1);
  fillRandom(buffers[2], Type::F32, seed + 2);
  RunResult r = run(t.k, {Arg::pointer(0), Arg::pointer(1), Arg::pointer(2), Arg::pointer(3)}, buffers);
  INFO(describe(r));
  REQUIRE(r.ok());
  CHECK(r.stats.mmas == 1);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 8; ++j) {
      double ref = getElement(buffers[2], Type::F32, i * 8 + j), scale = std::fabs(ref);
      for (int k = 0; k < 16; ++k) {
        double p = getElement(buffers[0], ab, i * 16 + k) * getElement(buffers[1], ab, k * 8 + j);
        ref += p;
        scale += std::fabs(p);
      }
      double got = getElement(buffers[3], Type::F32, i * 8 + j);
      INFO("D[" << i << "][" << j << "]");
      REQUIRE(std::fabs(got - ref) <= 1e-2 * scale + 1e-6);
    }
}

}  // namespace

TEST_CASE("mma.sync m16n8k16 f16 matches a double-precision reference", "[mma]") {
  checkMma(Type::F16, 11);
  checkMma(Type::F16, 12);
}

TEST_CASE("mma.sync m16n8k16 bf16 matches a double-precision reference", "[mma]") {
  checkMma(Type::BF16, 21);
  checkMma(Type::BF16, 22);
}
