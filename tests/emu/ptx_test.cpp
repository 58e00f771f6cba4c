// The fragment tables of ldmatrix/stmatrix and mma.sync m16n8k16, checked against the PTX
// ISA's tables as written out in the test (not derived from the library's formulas).
#include "backend/emu/Ptx.h"

#include <catch2/catch.hpp>
#include <set>
#include <utility>

#include "backend/emu/Half.h"

using namespace tyl;
using namespace tyl::emu;

TEST_CASE("mma m16n8k16 ownership matches the PTX tables", "[ptx]") {
  // PTX ISA, mma.m16n8k16 with .f16/.bf16: groupID = laneid >> 2, threadID_in_group = laneid % 4.
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane >> 2, t = lane % 4;
    for (int i = 0; i < 8; ++i) {
      int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
      int col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      CHECK(mmaA(lane, i).row == row);
      CHECK(mmaA(lane, i).col == col);
    }
    for (int i = 0; i < 4; ++i) {
      CHECK(mmaB(lane, i).row == t * 2 + (i & 1) + (i >= 2 ? 8 : 0));
      CHECK(mmaB(lane, i).col == g);
      CHECK(mmaC(lane, i).row == (i < 2 ? g : g + 8));
      CHECK(mmaC(lane, i).col == t * 2 + (i & 1));
    }
  }
}

TEST_CASE("mma fragments cover each matrix exactly once", "[ptx]") {
  std::set<std::pair<int, int>> a, b, c;
  for (int lane = 0; lane < 32; ++lane) {
    for (int e = 0; e < 8; ++e) a.insert({mmaA(lane, e).row, mmaA(lane, e).col});
    for (int e = 0; e < 4; ++e) b.insert({mmaB(lane, e).row, mmaB(lane, e).col});
    for (int e = 0; e < 4; ++e) c.insert({mmaC(lane, e).row, mmaC(lane, e).col});
  }
  CHECK(a.size() == 256);
  CHECK(b.size() == 128);
  CHECK(c.size() == 128);
}

TEST_CASE("ldmatrix gives lane l row l/4 and columns 2(l%4) and 2(l%4)+1", "[ptx]") {
  Matrix8x8 m;
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) m[r][c] = static_cast<uint16_t>(100 * r + c);
  for (int lane = 0; lane < 32; ++lane) {
    int w = static_cast<int>(ldmatrixWord(m, lane, false));
    CHECK((w & 0xffff) == 100 * (lane / 4) + 2 * (lane % 4));
    CHECK((w >> 16) == 100 * (lane / 4) + 2 * (lane % 4) + 1);
    // .trans: the same fragment of the transposed matrix.
    int t = static_cast<int>(ldmatrixWord(m, lane, true));
    CHECK((t & 0xffff) == 100 * (2 * (lane % 4)) + lane / 4);
    CHECK((t >> 16) == 100 * (2 * (lane % 4) + 1) + lane / 4);
  }
}

TEST_CASE("stmatrix is the inverse of ldmatrix", "[ptx]") {
  Matrix8x8 m;
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) m[r][c] = static_cast<uint16_t>(r * 8 + c + 1);
  for (bool trans : {false, true}) {
    Matrix8x8 back{};
    for (int lane = 0; lane < 32; ++lane) stmatrixWord(back, lane, trans, ldmatrixWord(m, lane, trans));
    CHECK(back == m);
  }
}

TEST_CASE("mma computes a times b plus c", "[ptx]") {
  // A[i][k] = (i + k) % 3 - 1, B[k][j] = (k * j) % 5 - 2, C[i][j] = i - j: small integers, exact.
  MmaA a{};
  MmaB b{};
  MmaC c{};
  auto A = [](int i, int k) { return static_cast<float>((i + k) % 3 - 1); };
  auto B = [](int k, int j) { return static_cast<float>((k * j) % 5 - 2); };
  for (tir::Type ab : {tir::Type::F16, tir::Type::BF16}) {
    auto enc = [&](float v) -> uint32_t { return ab == tir::Type::F16 ? f32ToF16(v) : f32ToBf16(v); };
    for (int lane = 0; lane < 32; ++lane) {
      a[lane] = {};
      b[lane] = {};
      for (int e = 0; e < 8; ++e)
        a[lane][e / 2] |= enc(A(mmaA(lane, e).row, mmaA(lane, e).col)) << (16 * (e % 2));
      for (int e = 0; e < 4; ++e)
        b[lane][e / 2] |= enc(B(mmaB(lane, e).row, mmaB(lane, e).col)) << (16 * (e % 2));
      for (int e = 0; e < 4; ++e) c[lane][e] = static_cast<float>(mmaC(lane, e).row - mmaC(lane, e).col);
    }
    MmaC d = mmaM16n8k16(ab, a, b, c);
    for (int lane = 0; lane < 32; ++lane) {
      for (int e = 0; e < 4; ++e) {
        int i = mmaC(lane, e).row, j = mmaC(lane, e).col;
        float expect = static_cast<float>(i - j);
        for (int k = 0; k < 16; ++k) expect += A(i, k) * B(k, j);
        REQUIRE(d[lane][e] == expect);
      }
    }
  }
}
