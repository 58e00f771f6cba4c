// Value ranges of thread IR expressions (ir/thread/ValueRange.cpp) against the emulator's
// evaluation of the same expressions, and the 32-bit bounds tests they allow
// (ir/lower/Addressing.cpp, inBounds): random expressions over scalar parameters whose values
// are drawn from their ranges must evaluate inside the computed range, and a narrowed bounds
// test must agree with 0 <= coordinate < extent computed exactly.
#include <catch2/catch.hpp>

#include <random>

#include "backend/emu/Eval.h"
#include "backend/emu/Launch.h"
#include "ir/lower/Addressing.h"
#include "ir/thread/Builder.h"
#include "ir/thread/ValueRange.h"
#include "tests/emu/RandomRanges.h"

using namespace tyl;
using tir::BinOp;
using tir::ExprRef;
using tir::Range;
using tir::Type;

namespace {

// Scalar parameters of each integer type, with a range each; values are drawn from them.
struct Params {
  tir::Kernel k;
  std::vector<Range> ranges;
  std::vector<emu::Buffer> buffers;
  emu::Options options;

  void add(Type t, Range r) {
    k.params.push_back(tir::Param{"p" + std::to_string(k.params.size()), false, t, -1, {}, {}});
    ranges.push_back(r);
  }
  tir::AtomRange atoms() const {
    return [this](const tir::Expr& e) -> std::optional<Range> {
      if (e.kind == tir::ExprKind::ParamRef) return ranges.at(e.id);
      return std::nullopt;
    };
  }
  // The values of `e` at random parameter values (the ranges' ends among them).
  std::vector<int64_t> samples(const ExprRef& e, std::mt19937_64& rng, int n) {
    emu::LaunchContext ctx(k, options, buffers);
    ctx.params.resize(k.params.size());
    std::vector<int64_t> out;
    for (int s = 0; s < n; ++s) {
      for (size_t p = 0; p < ranges.size(); ++p) {
        const Range& r = ranges[p];
        int64_t v = s == 0 ? r.lo : s == 1 ? r.hi : std::uniform_int_distribution<int64_t>(r.lo, r.hi)(rng);
        ctx.params[p] = emu::canonical(k.params[p].type, static_cast<uint64_t>(v));
      }
      emu::Evaluator ev(ctx, nullptr, nullptr, nullptr);
      if (std::optional<int64_t> v = ev.scalar(e)) out.push_back(*v);
    }
    return out;
  }
};

using test::randomIntType;
using test::randomRange;

ExprRef randomExpr(const Params& p, Type t, int depth, std::mt19937_64& rng) {
  auto leaf = [&]() -> ExprRef {
    if (rng() % 3 == 0) {
      const int64_t consts[] = {0, 1, 3, 7, 8, 31, 32, 127, 1000, -1, -8, int64_t{1} << 31, (int64_t{1} << 32) - 1};
      return tir::intConst(consts[rng() % std::size(consts)], t);
    }
    int param = static_cast<int>(rng() % p.k.params.size());
    return tir::cast(t, tir::paramRef(p.k, param));
  };
  if (depth == 0 || rng() % 5 == 0) return leaf();
  auto sub = [&](Type st) { return randomExpr(p, st, depth - 1, rng); };
  auto positive = [&] { return tir::intConst(1 + static_cast<int64_t>(rng() % 40), t); };
  switch (rng() % 16) {
    case 0: return tir::add(sub(t), sub(t));
    case 1: return tir::sub(sub(t), sub(t));
    case 2: return tir::mul(sub(t), sub(t));
    case 3: return tir::binary(BinOp::Div, sub(t), positive());
    case 4: return tir::binary(BinOp::Rem, sub(t), positive());
    case 5: return tir::binary(BinOp::Shl, sub(t), tir::intConst(static_cast<int64_t>(rng() % 40), t));
    case 6: return tir::binary(BinOp::Shr, sub(t), tir::intConst(static_cast<int64_t>(rng() % 40), t));
    case 7: return tir::binary(BinOp::And, sub(t), sub(t));
    case 8: return tir::binary(BinOp::Or, sub(t), sub(t));
    case 9: return tir::binary(BinOp::Xor, sub(t), sub(t));
    case 10: return tir::binary(BinOp::Min, sub(t), sub(t));
    case 11: return tir::binary(BinOp::Max, sub(t), sub(t));
    case 12: {
      Type ct = randomIntType(rng);
      return tir::select(tir::lt(sub(ct), sub(ct)), sub(t), sub(t));
    }
    case 13: return tir::unary(tir::UnOp::Neg, sub(t));
    default: return tir::cast(t, sub(randomIntType(rng)));
  }
}

}  // namespace

namespace {

// cdiv(e, s) as Sema builds it.
ExprRef cdivOf(const ExprRef& e, int64_t s) {
  ExprRef sc = tir::intConst(s, e->type);
  return tir::add(tir::binary(BinOp::Div, e, sc),
                  tir::select(tir::binary(BinOp::Gt, tir::binary(BinOp::Rem, e, sc), tir::intConst(0, e->type)),
                              tir::intConst(1, e->type), tir::intConst(0, e->type)));
}

}  // namespace

TEST_CASE("value ranges hold every value the emulator computes", "[value-range]") {
  std::mt19937_64 rng(20261201);
  int narrow = 0;
  for (int round = 0; round < 300; ++round) {
    Params p;
    for (int i = 0; i < 3; ++i) {
      Type t = randomIntType(rng);
      p.add(t, randomRange(t, rng));
    }
    for (int e = 0; e < 10; ++e) {
      Type t = randomIntType(rng);
      ExprRef x = randomExpr(p, t, 4, rng);
      Range r = tir::valueRange(x, p.atoms());
      Range all = tir::typeRange(t);
      REQUIRE(r.lo <= r.hi);
      REQUIRE(r.within(all));
      if (r.lo != all.lo || r.hi != all.hi) ++narrow;
      for (int64_t v : p.samples(x, rng, 40)) {
        INFO("round " << round << ", expression " << e << ": value " << v << " outside [" << r.lo << ", " << r.hi
                      << "]");
        REQUIRE(v >= r.lo);
        REQUIRE(v <= r.hi);
      }
    }
  }
  // The test means something only if many ranges say more than the type does.
  CHECK(narrow > 600);
}

TEST_CASE("value ranges of the expressions lowering builds", "[value-range]") {
  Params p;
  p.add(Type::I32, Range{0, (int64_t{1} << 31) - 1});  // K, checked >= 0 at launch
  auto atoms = p.atoms();
  ExprRef K = tir::paramRef(p.k, 0);
  // cdiv(K, 32) may wrap in 32 bits (K + 31 past 2^31 - 1): any i32 / 32.
  ExprRef tiles = tir::binary(BinOp::Div, tir::add(K, tir::intConst(31)), tir::intConst(32));
  Range t = tir::valueRange(tiles, atoms);
  CHECK(t.lo == -(int64_t{1} << 26));
  CHECK(t.hi == (int64_t{1} << 26) - 1);
  // In 64 bits it does not.
  ExprRef tiles64 = tir::binary(BinOp::Div, tir::add(tir::cast(Type::I64, K), tir::intConst(31, Type::I64)),
                                tir::intConst(32, Type::I64));
  Range t64 = tir::valueRange(tiles64, atoms);
  CHECK(t64.lo == 0);
  CHECK(t64.hi == (int64_t{1} << 26));
  // cdiv as Sema builds it, K / 32 + (K % 32 > 0), cannot wrap.
  Range c = tir::valueRange(cdivOf(K, 32), atoms);
  CHECK(c.lo == 0);
  CHECK(c.hi == (int64_t{1} << 26));
  // Masks and remainders of a non-negative value.
  CHECK(tir::valueRange(tir::binary(BinOp::And, K, tir::intConst(7)), atoms).hi == 7);
  CHECK(tir::valueRange(tir::binary(BinOp::Rem, K, tir::intConst(3)), atoms).hi == 2);
  CHECK(tir::valueRange(tir::binary(BinOp::Rem, K, tir::intConst(3)), atoms).lo == 0);
}

namespace {

// A global tensor of extents (M, K), M and K parameters in [0, 2^31).
struct BoundsFixture {
  Params p;
  tile::Tensor a;
  BoundsFixture() {
    p.add(Type::I32, Range{0, (int64_t{1} << 31) - 1});  // M
    p.add(Type::I32, Range{0, (int64_t{1} << 31) - 1});  // K
    p.add(Type::I32, Range{-5, 100});                      // a row index
    p.add(Type::I64, Range{0, int64_t{1} << 40});          // a column index too large for 32 bits
    a.space = tile::MemSpace::Global;
    a.dtype = tile::DType::F16;
    a.shape = {tir::paramRef(p.k, 0), tir::paramRef(p.k, 1)};
    a.staticShape = {-1, -1};
    a.strides = {tir::cast(Type::I64, tir::paramRef(p.k, 1)), tir::intConst(1, Type::I64)};
  }
  ExprRef param(int i) const { return tir::paramRef(p.k, i); }
};

// Whether the expression holds a comparison of U32 operands.
bool hasU32Compare(const ExprRef& e) {
  if (!e) return false;
  if (e->kind == tir::ExprKind::Binary && e->bin == BinOp::Lt && e->args[0]->type == Type::U32) return true;
  return hasU32Compare(e->args[0]) || hasU32Compare(e->args[1]) || hasU32Compare(e->args[2]);
}

}  // namespace

TEST_CASE("bounds tests narrow to 32 bits only where that is exact", "[value-range]") {
  BoundsFixture f;
  auto atoms = f.p.atoms();
  // Row: p2 * 64 + 63 (in [-320, 6463]); column: p3 (up to 2^40), or p3 / 2^10 (up to 2^30).
  ExprRef row = tir::cast(Type::I64, tir::add(tir::mul(f.param(2), tir::intConst(64)), tir::intConst(63)));
  ExprRef wide = f.param(3);
  ExprRef narrowCol = tir::binary(BinOp::Shr, f.param(3), tir::intConst(10, Type::I64));

  ExprRef both = lower::inBounds(f.a, {row, narrowCol}, atoms);
  ExprRef mixed = lower::inBounds(f.a, {row, wide}, atoms);
  ExprRef none = lower::inBounds(f.a, {row, narrowCol});  // nothing known: 64-bit tests
  CHECK(hasU32Compare(both));
  CHECK(hasU32Compare(mixed));
  CHECK_FALSE(hasU32Compare(none));

  // Each test agrees with 0 <= row < M and 0 <= column < K at random values, the edges included.
  std::mt19937_64 rng(7);
  emu::LaunchContext ctx(f.p.k, f.p.options, f.p.buffers);
  ctx.params.resize(4);
  for (int s = 0; s < 20000; ++s) {
    int64_t M = s % 3 == 0 ? static_cast<int64_t>(rng() % 7000) : static_cast<int64_t>(rng() % (int64_t{1} << 31));
    int64_t K = s % 5 == 0 ? (int64_t{1} << 31) - 1 - static_cast<int64_t>(rng() % 3)
                           : static_cast<int64_t>(rng() % (int64_t{1} << 31));
    int64_t r = -5 + static_cast<int64_t>(rng() % 106);
    int64_t c = s % 2 ? static_cast<int64_t>(rng() % ((int64_t{1} << 40) + 1))
                      : K + static_cast<int64_t>(rng() % 2048) - 1024;  // near the edge
    c = std::clamp<int64_t>(c, 0, int64_t{1} << 40);
    ctx.params = {static_cast<uint64_t>(M), static_cast<uint64_t>(K), emu::canonical(Type::I32, static_cast<uint64_t>(r)),
                  static_cast<uint64_t>(c)};
    emu::Evaluator ev(ctx, nullptr, nullptr, nullptr);
    const int64_t row64 = r * 64 + 63;
    const bool rowIn = row64 >= 0 && row64 < M;
    INFO("M " << M << ", K " << K << ", row " << row64 << ", column " << c);
    CHECK(*ev.scalar(both) == (rowIn && (c >> 10) < K));
    CHECK(*ev.scalar(mixed) == (rowIn && c < K));
    CHECK(*ev.scalar(none) == (rowIn && (c >> 10) < K));
  }
}


TEST_CASE("bounds tests imply a pipeline's enable only where they must", "[value-range]") {
  // K, M: extents checked >= 0; k: a loop variable below cdiv(K, 16) (or any i32); t: a
  // thread's offset in [0, 7] (or [-3, 7]).
  const Range extent{0, (int64_t{1} << 31) - 1};
  struct Case {
    const char* what;
    int64_t s;        // the tile of cdiv(K, s) ...
    int64_t scale;    // ... and the step of x along k
    int64_t mult;     // x = (k + j) * scale + mult * t
    bool otherExtent; // x tested against M instead of K
    Range k, t;
    bool implied;
  };
  const Case cases[] = {
      {"x = (k + j) s + 8 t", 32, 32, 8, false, {0, 1 << 26}, {0, 7}, true},
      {"x = (k + j) s + t, s = 48", 48, 48, 1, false, {0, 1 << 26}, {0, 7}, true},
      {"t may be -3", 32, 32, 8, false, {0, 1 << 26}, {-3, 7}, false},
      {"t may be -1", 32, 32, 1, false, {0, 1 << 26}, {-1, 7}, false},
      {"x steps by s / 2", 32, 16, 8, false, {0, 1 << 26}, {0, 7}, false},
      {"tested against another extent", 32, 32, 8, true, {0, 1 << 26}, {0, 7}, false},
      {"k + j may wrap (j > 0)", 32, 32, 8, false, {0, (int64_t{1} << 31) - 1}, {0, 7}, false},
  };
  std::mt19937_64 rng(99);
  for (const Case& c : cases) {
    for (int64_t j = 0; j < 3; ++j) {
      Params p;
      p.add(Type::I32, extent);  // K
      p.add(Type::I32, extent);  // M
      p.add(Type::I32, c.k);     // k
      p.add(Type::I32, c.t);     // t
      tile::Tensor a;
      a.space = tile::MemSpace::Global;
      a.dtype = tile::DType::F16;
      ExprRef K = tir::paramRef(p.k, 0), M = tir::paramRef(p.k, 1), k = tir::paramRef(p.k, 2),
              t = tir::paramRef(p.k, 3);
      a.shape = {c.otherExtent ? M : K};
      a.staticShape = {-1};
      a.strides = {tir::intConst(1, Type::I64)};
      ExprRef kj = tir::add(k, tir::intConst(j));
      ExprRef x = tir::add(tir::mul(tir::add(tir::cast(Type::I64, k), tir::intConst(j, Type::I64)),
                                    tir::intConst(c.scale, Type::I64)),
                           tir::cast(Type::I64, tir::mul(t, tir::intConst(c.mult))));
      ExprRef cond = tir::lt(kj, cdivOf(K, c.s));
      for (bool narrow : {true, false}) {
        ExprRef test = narrow ? lower::inBounds(a, {x}, p.atoms()) : lower::inBounds(a, {x});
        INFO(c.what << ", j = " << j << (narrow ? ", 32-bit test" : ", 64-bit test"));
        const bool implied = lower::boundsImply(test, cond, p.atoms(), {});
        // k itself (j = 0) cannot wrap.
        const bool wraps = c.k.hi == (int64_t{1} << 31) - 1 && j > 0;
        CHECK(implied == (c.implied || (c.k.hi == (int64_t{1} << 31) - 1 && !wraps)));
        if (!implied) continue;
        // Where the test holds, so does the condition.
        emu::LaunchContext ctx(p.k, p.options, p.buffers);
        for (int s = 0; s < 5000; ++s) {
          auto pick = [&](Range r) { return std::uniform_int_distribution<int64_t>(r.lo, r.hi)(rng); };
          int64_t Kv = s % 4 == 0 ? extent.hi - static_cast<int64_t>(rng() % 100) : pick({0, 100000});
          int64_t kv = s % 2 ? Kv / c.s + static_cast<int64_t>(rng() % 5) - 3 : pick(c.k);
          kv = std::clamp(kv, c.k.lo, c.k.hi);
          ctx.params = {static_cast<uint64_t>(Kv), static_cast<uint64_t>(pick(extent)), static_cast<uint64_t>(kv),
                        emu::canonical(Type::I32, static_cast<uint64_t>(pick(c.t)))};
          emu::Evaluator ev(ctx, nullptr, nullptr, nullptr);
          if (*ev.scalar(test)) REQUIRE(*ev.scalar(cond));
        }
      }
    }
  }
}
