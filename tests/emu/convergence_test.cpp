// The convergence check (lower/Convergence.h) against the emulator, which runs every thread:
// on random kernels whose conditions and loops follow the thread, the check reports a
// divergent barrier (or warp-wide instruction) exactly when the emulator finds one; with
// parameters and values from memory mixed in, every divergence the emulator finds is
// reported, as an error or as a warning.
#include <catch2/catch.hpp>

#include <functional>
#include <random>

#include "TestKernel.h"
#include "ir/lower/Convergence.h"
#include "ir/thread/Print.h"

using namespace tyl;
using namespace tyl::emu;
using namespace tyl::emu::test;
using tir::BinOp;
using tir::ExprRef;
using tir::Reg;
using tir::Type;

namespace {

ExprRef warpId() { return tir::special(tir::Special::WarpId); }

// The IDs the check reports for `k`.
std::vector<std::string> convergenceIds(const tir::Kernel& k) {
  DiagnosticEngine diags(sources());
  lower::checkConvergence(k, diags);
  std::vector<std::string> ids;
  for (const Diagnostic& d : diags.diagnostics()) ids.emplace_back(d.kind->id);
  return ids;
}

bool has(const std::vector<std::string>& ids, const char* id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Random guards around one barrier or mma.sync: `if`s on comparisons of thread ids and the
// variables of constant loops around them (and, with `runTime`, of a parameter, a value loaded
// at the thread's address and the variables of any loop), in either branch, and loops whose
// bounds are constants or follow the thread.
struct Generator {
  std::mt19937_64 rng;
  TestKernel& t;
  int64_t threads;
  bool runTime;
  int param = -1;
  uint32_t loaded = 0;
  std::vector<uint32_t> constantLoops, otherLoops;  // the variables of the loops around

  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

  ExprRef threadValue() {
    switch (pick(0, 5)) {
      case 0: return tid();
      case 1: return laneId();
      case 2: return warpId();
      case 3: return bin(BinOp::Div, tid(), i32(pick(1, 64)));
      case 4: return bin(BinOp::Rem, tid(), i32(pick(1, 40)));
      default: return bin(BinOp::And, laneId(), i32(pick(1, 31)));
    }
  }

  ExprRef value() {
    if (runTime && pick(0, 3) == 0)
      return pick(0, 1) ? tir::add(threadValue(), t.param(param)) : t.v(loaded);
    std::vector<uint32_t> loops = constantLoops;
    if (runTime) loops.insert(loops.end(), otherLoops.begin(), otherLoops.end());
    if (!loops.empty() && pick(0, 1) == 0) {
      ExprRef k = t.v(loops[static_cast<size_t>(pick(0, static_cast<int64_t>(loops.size()) - 1))]);
      return tir::add(threadValue(), tir::mul(k, i32(pick(-16, 32))));
    }
    return threadValue();
  }

  ExprRef condition() {
    static const BinOp cmp[] = {BinOp::Lt, BinOp::Le, BinOp::Gt, BinOp::Ge, BinOp::Eq, BinOp::Ne};
    ExprRef c = bin(cmp[pick(0, 5)], value(), i32(pick(-1, threads)));
    if (pick(0, 3) == 0) c = tir::land(c, bin(cmp[pick(0, 5)], value(), i32(pick(-1, threads))));
    return c;
  }

  tir::Block nest(int depth, tir::Stmt inner) {
    if (depth == 0) return {std::move(inner)};
    int lineNo = 10 + depth;
    if (int64_t kind = pick(0, 5); kind <= 2) {
      uint32_t k = t.var("k" + std::to_string(depth), Type::I32);
      ExprRef begin = kind <= 1 || pick(0, 1) ? i32(pick(0, 1)) : bin(BinOp::Rem, value(), i32(pick(1, 3)));
      ExprRef end = kind <= 1 || pick(0, 2) == 0 ? i32(pick(0, 4)) : bin(BinOp::Rem, value(), i32(pick(1, 4)));
      std::vector<uint32_t>& scope = kind <= 1 ? constantLoops : otherLoops;
      scope.push_back(k);
      tir::Block body = nest(depth - 1, std::move(inner));
      scope.pop_back();
      return {at(lineNo, loop(k, begin, end, i32(pick(1, 2)), std::move(body)))};
    }
    ExprRef c = condition();
    tir::Block body = nest(depth - 1, std::move(inner));
    if (pick(0, 1)) return {at(lineNo, when(c, std::move(body)))};
    return {at(lineNo, when(c, {}, std::move(body)))};
  }
};

// One random kernel per seed, built by `setUp` (the statements before the guards) and
// `inner` (the statement they guard), compared with its run on the emulator: `finds` says
// whether a run's findings show the divergence `errorId` is about. Odd seeds mix in a
// parameter and a value read at the thread's address, for which only soundness holds: each
// divergence the emulator finds is reported, as an error or as a warning.
void compareWithEmulator(int seeds, const std::vector<int64_t>& sizes, const char* errorId,
                         const std::function<tir::Stmt(TestKernel&)>& setUp,
                         const std::function<bool(const RunResult&)>& finds) {
  int divergent = 0, fine = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    bool runTime = seed % 2 == 1;
    int64_t threads = sizes[static_cast<size_t>(seed) % sizes.size()];
    TestKernel t("guarded", threads);
    Generator g{std::mt19937_64(static_cast<uint64_t>(seed)), t, threads, runTime, -1, 0, {}, {}};
    std::vector<Buffer> buffers;
    std::vector<Arg> args;
    if (runTime) {
      uint32_t in = t.globalBuffer("in", Type::I32);
      g.param = t.scalar("n", Type::I32);
      g.loaded = t.var("x", Type::I32);
      t.k.body.push_back(at(1, load(Type::I32, mem(in, tid()), {Reg::var(g.loaded)})));
      buffers.push_back(makeBuffer(Type::I32, threads, false));
      for (int64_t i = 0; i < threads; ++i) setElement(buffers[0], Type::I32, i, static_cast<double>(g.pick(0, 40)));
      args = {Arg::pointer(0), Arg::integer(g.pick(-8, 40))};
    }
    tir::Stmt inner = setUp(t);
    for (const tir::Stmt& s : g.nest(static_cast<int>(g.pick(1, 3)), std::move(inner))) t.k.body.push_back(s);
    std::vector<std::string> ids = convergenceIds(t.k);
    RunResult r = run(t.k, args, buffers);
    bool found = finds(r);
    INFO("seed " << seed << "\n" << tir::print(t.k) << "\n" << describe(r));
    if (found) {
      ++divergent;
      CHECK((has(ids, errorId) || has(ids, "maybe-divergent")));
    } else {
      ++fine;
    }
    // Without run-time values the check is exact.
    if (!runTime) {
      CHECK(has(ids, errorId) == found);
      CHECK_FALSE(has(ids, "maybe-divergent"));
    }
  }
  // Both outcomes are common enough for the comparison to mean something.
  CHECK(divergent > seeds / 10);
  CHECK(fine > seeds / 10);
}

}  // namespace

TEST_CASE("random guards around a barrier: the check agrees with the emulator", "[convergence]") {
  compareWithEmulator(
      400, {32, 48, 64, 96, 128}, "divergent-barrier", [](TestKernel&) { return at(2, tir::Barrier{}); },
      [](const RunResult& r) {
        return !findingsOf(r, FindingKind::DivergentBarrier).empty() || !findingsOf(r, FindingKind::Deadlock).empty();
      });
}

// Partial warps always miss lanes of an mma.sync, so blocks are whole warps here.
TEST_CASE("random guards around mma.sync: the check agrees with the emulator", "[convergence]") {
  compareWithEmulator(
      300, {32, 64, 96, 128}, "divergent-collective",
      [](TestKernel& t) {
        uint32_t a = t.array("a", Type::F16, 8), b = t.array("b", Type::F16, 4), c = t.array("c", Type::F32, 4);
        for (int i = 0; i < 8; ++i)
          t.k.body.push_back(at(3, tir::Assign{Reg::elem(a, i), tir::cast(Type::F16, f32(1))}));
        for (int i = 0; i < 4; ++i)
          t.k.body.push_back(at(3, tir::Assign{Reg::elem(b, i), tir::cast(Type::F16, f32(1))}));
        for (int i = 0; i < 4; ++i) t.k.body.push_back(at(3, tir::Assign{Reg::elem(c, i), f32(0)}));
        return at(2, tir::Mma{Type::F16, elems(c, 0, 4), elems(a, 0, 4), elems(b, 0, 2), elems(c, 0, 4)});
      },
      [](const RunResult& r) { return !findingsOf(r, FindingKind::PartialCollective).empty(); });
}

TEST_CASE("conditions the same in a whole block or warp pass the check", "[convergence]") {
  TestKernel t("uniform", 128);
  int n = t.scalar("n", Type::I32);
  uint32_t in = t.globalBuffer("in", Type::I32);
  uint32_t x = t.var("x", Type::I32), w = t.var("w", Type::I32), k = t.var("k", Type::I32);
  uint32_t a = t.array("a", Type::F16, 8), b = t.array("b", Type::F16, 4), c = t.array("c", Type::F32, 4);
  tir::Stmt mma = at(9, tir::Mma{Type::F16, elems(c, 0, 4), elems(a, 0, 4), elems(b, 0, 2), elems(c, 0, 4)});
  t.k.body = {
      at(1, load(Type::I32, mem(in, i32(0)), {Reg::var(x)})),  // the same address in every thread
      at(2, tir::Assign{Reg::var(w), bin(BinOp::Div, tid(), i32(32))}),
      at(3, when(bin(BinOp::Gt, t.param(n), i32(0)), {at(4, tir::Barrier{})})),
      at(5, when(bin(BinOp::Gt, t.v(x), i32(0)), {at(6, tir::Barrier{})})),
      at(7, when(bin(BinOp::Lt, tid(), i32(128)), {at(8, tir::Barrier{})})),
      at(10, when(bin(BinOp::Eq, t.v(w), i32(2)), {mma})),
      at(11, loop(k, i32(0), t.v(w), i32(1), {mma})),
  };
  CHECK(convergenceIds(t.k).empty());
}

TEST_CASE("a register written under a divergent condition makes later conditions on it unknown", "[convergence]") {
  TestKernel t("flag", 64);
  uint32_t f = t.var("f", Type::I32);
  t.k.body = {
      at(1, tir::Assign{Reg::var(f), i32(0)}),
      at(2, when(bin(BinOp::Lt, tid(), i32(5)), {at(3, tir::Assign{Reg::var(f), i32(1)})})),
      at(4, when(bin(BinOp::Eq, t.v(f), i32(1)), {at(5, tir::Barrier{})})),
  };
  CHECK(convergenceIds(t.k) == std::vector<std::string>{"maybe-divergent"});
}
