// wgmma on the emulator, in hand-built thread IR: a warpgroup copies A and B into shared memory
// in a wgmma form (the images are laid out on the host with the layout algebra), computes the
// descriptors in the kernel from the shared base address, issues wgmma.mma_async, and stores
// its accumulator registers by the PTX D-fragment formula. The result must be A @ B, for each
// operand form, and accumulate over K steps.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <variant>

#include "backend/emu/Half.h"
#include "ir/layout/Wgmma.h"
#include "tests/emu/TestKernel.h"

namespace tyl::emu::test {
namespace {

using layout::Layout;
using tir::BinOp;
using tir::ExprRef;
using tir::Type;

// An operand tile in shared memory: its layout over (rows, cols), and which dimension is MN.
struct Operand {
  Layout layout;
  layout::Shape shape;
  int mnDim;
  int64_t atomMN;
};

Layout swizzled(int b, layout::TileLayout t) { return Layout::compose(layout::Swizzle::make(3, b, 3), std::move(t)); }
layout::TileLayout tile(std::vector<layout::Iter> shard) {
  layout::TileLayout t;
  t.shard = std::move(shard);
  return t;
}

ExprRef i64(int64_t v) { return tir::intConst(v, Type::I64); }

// The descriptor of the matrix at byte `start` of shared buffer `b`, computed in the kernel:
// ((smem_base + offset + start) & 0x3FFFF) >> 4 | LBO, SBO and layout type.
ExprRef descriptor(const TestKernel& t, uint32_t b, const layout::WgmmaOperandForm& f, int64_t start) {
  const uint64_t fields = layout::WgmmaDescriptor{0, f.lbo, f.sbo, f.swizzle}.encode();
  ExprRef address = tir::add(tir::cast(Type::I64, tir::special(tir::Special::SharedBase)),
                             i64(t.k.buffers[b].sharedOffset + start));
  ExprRef encoded = bin(BinOp::Shr, bin(BinOp::And, address, i64(0x3FFFF)), i64(4));
  return bin(BinOp::Or, encoded, i64(static_cast<int64_t>(fields)));
}

// D = A @ B (+ D) for one warpgroup: A (64, K) and B (K, n) in the operands' forms. Without
// `wait`, D is stored with its wgmmas still in flight: that must be reported (and nothing returned).
std::vector<float> run(const Operand& a, const Operand& b, int64_t n, int64_t K, Type ab, uint64_t seed,
                       bool wait = true) {
  auto formOf = [](const Operand& o) {
    auto r = layout::wgmmaOperandForm(o.layout, o.shape, o.mnDim, o.atomMN, 2);
    if (const auto* m = std::get_if<layout::WgmmaFormMismatch>(&r)) FAIL(m->message);
    return std::get<layout::WgmmaOperandForm>(r);
  };
  const layout::WgmmaOperandForm fa = formOf(a), fb = formOf(b);
  const int64_t aElems = layout::cosize(a.layout, layout::Axis::m), bElems = layout::cosize(b.layout, layout::Axis::m);

  TestKernel t("wgmma", 128);
  const uint32_t gA = t.globalBuffer("Aimg", ab), gB = t.globalBuffer("Bimg", ab), gD = t.globalBuffer("D", Type::F32);
  const uint32_t sA = t.sharedBuffer("sa", ab, (aElems + 511) / 512 * 512);  // keeps B on 1024 bytes
  const uint32_t sB = t.sharedBuffer("sb", ab, bElems);
  const uint32_t i = t.var("i", Type::I32), x = t.var("x", ab);
  const uint32_t acc = t.array("acc", Type::F32, n / 2);
  tir::Block& body = t.k.body;
  int lineNo = 1;
  // Copy the images into shared memory, element i * 128 + tid.
  for (auto [g, s, count] : {std::tuple{gA, sA, aElems}, std::tuple{gB, sB, bElems}}) {
    ExprRef e = tir::add(bin(BinOp::Mul, t.v(i), i32(128)), tid());
    body.push_back(at(lineNo++, loop(i, i32(0), i32((count + 127) / 128), i32(1),
                                     {at(lineNo, tir::If{bin(BinOp::Lt, e, i32(count)),
                                                         {at(lineNo, load(ab, mem(g, e), {tir::Reg::var(x)})),
                                                          at(lineNo, store(ab, mem(s, e), {tir::Reg::var(x)}))},
                                                         {}})})));
  }
  body.push_back(at(lineNo++, tir::Barrier{}));
  body.push_back(at(lineNo++, tir::WgmmaFence{}));
  for (int64_t step = 0; step < K / 16; ++step)
    body.push_back(at(lineNo++, tir::Wgmma{ab, static_cast<int>(n), descriptor(t, sA, fa, fa.start(0, step)),
                                           descriptor(t, sB, fb, fb.start(0, step)), fa.major == layout::WgmmaMajor::MN,
                                           fb.major == layout::WgmmaMajor::MN, tir::boolConst(step > 0),
                                           elems(acc, 0, n / 2), {}}));
  body.push_back(at(lineNo++, tir::WgmmaCommit{}));
  if (wait) body.push_back(at(lineNo++, tir::WgmmaWait{0}));
  // D[row][col] = acc[r], row = 16 (warp % 4) + lane / 4 + 8 ((r >> 1) & 1), col = 8 (r >> 2) + 2 (lane % 4) + (r & 1).
  ExprRef warpRow = bin(BinOp::Mul, bin(BinOp::Rem, tir::special(tir::Special::WarpId), i32(4)), i32(16));
  for (int64_t r = 0; r < n / 2; ++r) {
    ExprRef row = tir::add(tir::add(warpRow, bin(BinOp::Div, laneId(), i32(4))), i32(8 * ((r >> 1) & 1)));
    ExprRef col = tir::add(bin(BinOp::Mul, bin(BinOp::Rem, laneId(), i32(4)), i32(2)), i32(8 * (r >> 2) + (r & 1)));
    ExprRef offset = tir::add(bin(BinOp::Mul, row, i32(n)), col);
    body.push_back(at(lineNo++, store(Type::F32, mem(gD, offset), {tir::Reg::elem(acc, r)})));
  }

  // The operands, random small integers (exact in 16 bits and in the f32 sums).
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> value(-4, 4);
  std::vector<double> A(static_cast<size_t>(64 * K)), B(static_cast<size_t>(K * n));
  for (double& v : A) v = value(rng);
  for (double& v : B) v = value(rng);
  auto bits = [&](double v) {
    return ab == Type::BF16 ? f32ToBf16(static_cast<float>(v)) : f32ToF16(static_cast<float>(v));
  };
  auto image = [&](const Operand& o, int64_t elems, auto&& valueAt) {
    Buffer buf = makeBuffer(ab, elems);
    for (int64_t r = 0; r < o.shape[0]; ++r)
      for (int64_t c = 0; c < o.shape[1]; ++c) {
        const int64_t at = layout::applyAxis(o.layout, std::vector<int64_t>{r, c}, o.shape, layout::Axis::m);
        const uint16_t h = bits(valueAt(r, c));
        std::memcpy(buf.bytes.data() + 2 * at, &h, 2);
      }
    return buf;
  };
  std::vector<Buffer> buffers;
  buffers.push_back(image(a, aElems, [&](int64_t r, int64_t c) { return A[static_cast<size_t>(r * K + c)]; }));
  buffers.push_back(image(b, bElems, [&](int64_t r, int64_t c) { return B[static_cast<size_t>(r * n + c)]; }));
  buffers.push_back(makeBuffer(Type::F32, 64 * n, false));
  RunResult result = emu::run(t.k, {Arg::pointer(0), Arg::pointer(1), Arg::pointer(2)}, buffers);
  INFO(describe(result));
  if (!wait) {
    REQUIRE_FALSE(result.findings.empty());
    CHECK(result.findings[0].kind == FindingKind::WgmmaInFlight);
    CHECK_THAT(result.findings[0].message, Catch::Contains("which a wgmma in flight still writes"));
    return {};
  }
  REQUIRE(result.ok());
  CHECK(result.stats.wgmmas == 4 * K / 16);
  std::vector<float> d(static_cast<size_t>(64 * n));
  std::memcpy(d.data(), buffers[2].bytes.data(), d.size() * 4);
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += A[static_cast<size_t>(r * K + k)] * B[static_cast<size_t>(k * n + c)];
      if (d[static_cast<size_t>(r * n + c)] != static_cast<float>(sum))
        FAIL("D(" << r << ", " << c << ") = " << d[static_cast<size_t>(r * n + c)] << ", expected " << sum);
    }
  return d;
}

}  // namespace

TEST_CASE("emu.wgmma: one warpgroup computes A @ B from shared memory, in every operand form", "[wgmma]") {
  SECTION("A and B K-major, 32-byte swizzle, N = 64, bf16") {
    run({swizzled(1, tile({{64, 16}, {16, 1}})), {64, 16}, 0, 64},
        {swizzled(1, tile({{16, 1}, {64, 16}})), {16, 64}, 1, 64}, 64, 16, Type::BF16, 1);
  }
  SECTION("A K-major without swizzle (core matrices), B MN-major 128-byte swizzle, N = 64, f16") {
    run({Layout{tile({{8, 128}, {8, 8}, {2, 64}, {8, 1}})}, {64, 16}, 0, 64},
        {swizzled(3, tile({{16, 64}, {64, 1}})), {16, 64}, 1, 64}, 64, 16, Type::F16, 2);
  }
  SECTION("A MN-major 128-byte swizzle, B MN-major 64-byte panels, N = 256, K = 32: the second step accumulates") {
    run({swizzled(3, tile({{64, 1}, {32, 64}})), {64, 32}, 0, 64},
        {swizzled(2, tile({{32, 32}, {8, 32 * 32}, {32, 1}})), {32, 256}, 1, 256}, 256, 32, Type::BF16, 3);
  }
  SECTION("A K-major 128-byte swizzle, K = 64 in four steps inside the swizzle row, N = 8") {
    run({swizzled(3, tile({{64, 64}, {64, 1}})), {64, 64}, 0, 64},
        {swizzled(3, tile({{64, 1}, {8, 64}})), {64, 8}, 1, 8}, 8, 64, Type::F16, 4);
  }
}

TEST_CASE("emu.wgmma: D read before the wait_group that retires its wgmmas is reported", "[wgmma]") {
  run({swizzled(3, tile({{64, 64}, {64, 1}})), {64, 64}, 0, 64},
      {swizzled(3, tile({{64, 1}, {8, 64}})), {64, 8}, 1, 8}, 8, 64, Type::F16, 7, false);
}

}  // namespace tyl::emu::test
