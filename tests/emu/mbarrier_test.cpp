// The mbarrier model (backend/emu/Mbarrier.h) against the phase rules of the PTX ISA and the
// worked sequence of design/HOPPER.md (G7).
#include <catch2/catch.hpp>

#include "backend/emu/Mbarrier.h"

using tyl::emu::Mbarrier;

TEST_CASE("emu.mbarrier: a phase completes when the arrivals and the transaction bytes are all in (G7)",
          "[mbarrier]") {
  Mbarrier b;
  REQUIRE(b.init(1).empty());
  CHECK(b.phaseComplete(1));  // a fresh barrier: the phase before phase 0 counts as complete
  CHECK_FALSE(b.phaseComplete(0));
  // The peer's multicast lands before this CTA's producer expects it.
  REQUIRE(b.completeTx(16384).empty());
  CHECK(b.txCount() == -16384);
  CHECK_FALSE(b.phaseComplete(0));
  REQUIRE(b.arriveExpectTx(49152).empty());
  CHECK(b.pending() == 0);
  CHECK(b.txCount() == 32768);
  CHECK_FALSE(b.phaseComplete(0));
  REQUIRE(b.completeTx(32768).empty());
  CHECK(b.phase() == 1);
  CHECK(b.phaseComplete(0));
  CHECK_FALSE(b.phaseComplete(1));
  CHECK(b.pending() == 1);
}

TEST_CASE("emu.mbarrier: arrivals without transactions, phase after phase", "[mbarrier]") {
  Mbarrier b;
  REQUIRE(b.init(3).empty());
  for (int64_t phase = 0; phase < 5; ++phase) {
    const int parity = static_cast<int>(phase & 1);
    CHECK_FALSE(b.phaseComplete(parity));
    REQUIRE(b.arrive(2).empty());
    CHECK_FALSE(b.phaseComplete(parity));
    REQUIRE(b.arrive().empty());
    CHECK(b.phaseComplete(parity));
    CHECK(b.phase() == phase + 1);
  }
}

TEST_CASE("emu.mbarrier: misuse is reported, not modelled", "[mbarrier]") {
  Mbarrier b;
  CHECK_FALSE(b.arrive().empty());  // never initialized
  CHECK_FALSE(b.phaseComplete(1));
  CHECK_FALSE(b.init(0).empty());
  REQUIRE(b.init(2).empty());
  CHECK_FALSE(b.arrive(3).empty());  // more than are pending
  CHECK_FALSE(b.expectTx(Mbarrier::kMaxTxCount + 1).empty());
  CHECK_FALSE(b.completeTx(Mbarrier::kMaxTxCount + 1).empty());
  CHECK(b.phase() == 0);
  CHECK(b.pending() == 2);
}

// ---- mbarriers in kernels -------------------------------------------------------------

#include "tests/emu/TestKernel.h"

namespace tyl::emu::test {
namespace {

using tir::BinOp;
using tir::ExprRef;
using tir::Type;

// Warp 1 produces: each of its lanes writes its value into shared memory, then arrives on the
// barrier (32 arrivals). Warp 0 consumes: it waits for the phase, reads warp 1's value at its
// lane and writes it out. The emulator runs warp 0 first, so the consumer waits before anything
// has arrived. `parity` is what the consumer waits for, `arrivals` the barrier's
// count; with the right ones (0 and 32) the run is clean.
RunResult producerConsumer(int64_t parity, int64_t arrivals, std::vector<Buffer>& buffers) {
  TestKernel t("handoff", 64);
  const uint32_t out = t.globalBuffer("out", Type::I32);
  const uint32_t data = t.sharedBuffer("data", Type::I32, 32);
  const uint32_t bar = t.sharedBuffer("bar", Type::I64, 1);
  const uint32_t x = t.var("x", Type::I32);
  const ExprRef warp = tir::special(tir::Special::WarpId), zero = i32(0);
  tir::Block& body = t.k.body;
  body.push_back(at(1, when(bin(BinOp::Eq, tid(), zero), {at(2, tir::MbarrierInit{mem(bar, zero), i32(arrivals)})})));
  body.push_back(at(3, tir::FenceMbarrierInit{}));
  body.push_back(at(4, tir::Barrier{}));
  tir::Block producer = {at(5, tir::Assign{tir::Reg::var(x), tir::add(laneId(), i32(100))}),
                         at(6, store(Type::I32, mem(data, laneId()), {tir::Reg::var(x)})),
                         at(7, tir::MbarrierArrive{mem(bar, zero), nullptr, nullptr})};
  tir::Block consumer = {at(8, tir::MbarrierWait{mem(bar, zero), i32(parity)}),
                         at(9, load(Type::I32, mem(data, laneId()), {tir::Reg::var(x)})),
                         at(10, store(Type::I32, mem(out, laneId()), {tir::Reg::var(x)}))};
  body.push_back(at(5, when(bin(BinOp::Eq, warp, zero), std::move(consumer), std::move(producer))));
  buffers = {makeBuffer(Type::I32, 32, false)};
  return run(t.k, {Arg::pointer(0)}, buffers);
}

TEST_CASE("emu.mbarrier: a consumer warp waits for the producer's phase and sees its writes", "[mbarrier]") {
  std::vector<Buffer> buffers;
  RunResult r = producerConsumer(0, 32, buffers);
  INFO(describe(r));
  REQUIRE(r.ok());
  for (int64_t i = 0; i < 32; ++i) CHECK(getElement(buffers[0], Type::I32, i) == 100 + i);
}

TEST_CASE("emu.mbarrier: a wait on the wrong parity returns at once, before the data is there", "[mbarrier]") {
  // On a fresh barrier the phase before phase 0 counts as complete: parity 1 returns at once,
  // and the consumer reads shared memory the producer has not written yet.
  std::vector<Buffer> buffers;
  RunResult r = producerConsumer(1, 32, buffers);
  INFO(describe(r));
  CHECK_FALSE(r.ok());
  CHECK_FALSE(findingsOf(r, FindingKind::UninitializedRead).empty());
}

TEST_CASE("emu.mbarrier: a phase that never completes is a deadlock naming the barrier's state", "[mbarrier]") {
  std::vector<Buffer> buffers;
  RunResult r = producerConsumer(0, 33, buffers);  // one arrival too many expected
  std::vector<Finding> d = findingsOf(r, FindingKind::Deadlock);
  REQUIRE(d.size() == 1);
  CHECK_THAT(d[0].message, Catch::Contains("warp 0 waits on the mbarrier at shared byte"));
  CHECK_THAT(d[0].message, Catch::Contains("for its phase of parity 0, while it is in phase 0 with 1 arrivals and 0 "
                                           "transaction bytes pending"));
  CHECK_THAT(d[0].message, Catch::Contains("warps 1 have exited"));
  CHECK(lineOf(d[0].loc) == 8);
}

}  // namespace
}  // namespace tyl::emu::test
