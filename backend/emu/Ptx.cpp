#include "backend/emu/Ptx.h"

#include "base/InternalError.h"

namespace tyl::emu {

uint32_t ldmatrixWord(const Matrix8x8& m, int lane, bool trans) {
  int fixed = lane / 4, pair = 2 * (lane % 4);
  uint16_t lo = trans ? m[pair][fixed] : m[fixed][pair];
  uint16_t hi = trans ? m[pair + 1][fixed] : m[fixed][pair + 1];
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}

void stmatrixWord(Matrix8x8& m, int lane, bool trans, uint32_t word) {
  int fixed = lane / 4, pair = 2 * (lane % 4);
  uint16_t lo = static_cast<uint16_t>(word), hi = static_cast<uint16_t>(word >> 16);
  if (trans) {
    m[pair][fixed] = lo;
    m[pair + 1][fixed] = hi;
  } else {
    m[fixed][pair] = lo;
    m[fixed][pair + 1] = hi;
  }
}

MatrixCoord mmaA(int lane, int e) {
  int g = lane / 4, t = lane % 4;
  return {g + 8 * ((e / 2) % 2), 2 * t + e % 2 + 8 * (e / 4)};
}

MatrixCoord mmaB(int lane, int e) {
  int g = lane / 4, t = lane % 4;
  return {2 * t + e % 2 + 8 * (e / 2), g};
}

MatrixCoord mmaC(int lane, int e) {
  int g = lane / 4, t = lane % 4;
  return {g + 8 * (e / 2), 2 * t + e % 2};
}

namespace {

uint16_t half(uint32_t word, int e) { return static_cast<uint16_t>(word >> (16 * (e % 2))); }

}  // namespace

MmaC mmaM16n8k16(tir::Type ab, const MmaA& a, const MmaB& b, const MmaC& c) {
  if (ab != tir::Type::F16 && ab != tir::Type::BF16)
    TYL_UNREACHABLE("{}", "emulator: mma.sync m16n8k16 takes f16 or bf16 inputs");
  // Unpack the fragments into whole matrices.
  double A[16][16], B[16][8], C[16][8];
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int e = 0; e < 8; ++e) {
      MatrixCoord p = mmaA(lane, e);
      A[p.row][p.col] = toFloat(ab, half(a[lane][e / 2], e));
    }
    for (int e = 0; e < 4; ++e) {
      MatrixCoord p = mmaB(lane, e);
      B[p.row][p.col] = toFloat(ab, half(b[lane][e / 2], e));
      MatrixCoord q = mmaC(lane, e);
      C[q.row][q.col] = c[lane][e];
    }
  }
  MmaC d;
  for (int lane = 0; lane < kWarpSize; ++lane) {
    for (int e = 0; e < 4; ++e) {
      MatrixCoord q = mmaC(lane, e);
      double sum = C[q.row][q.col];
      for (int k = 0; k < 16; ++k) sum += A[q.row][k] * B[k][q.col];
      d[lane][e] = static_cast<float>(sum);
    }
  }
  return d;
}

}  // namespace tyl::emu
