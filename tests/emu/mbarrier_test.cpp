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
