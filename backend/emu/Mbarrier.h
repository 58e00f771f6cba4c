// An mbarrier in shared memory (PTX ISA 9.7.13.15), as the emulator will run it.
//
// A barrier counts, per phase, the arrivals still pending (from its init count down) and a
// transaction count of bytes (expect-tx adds, complete-tx subtracts; it may go below zero when
// data lands before it is expected, within +-(2^20 - 1)). The phase completes when both reach
// zero, and the next one starts with the full count. A wait by parity p returns once the phase
// of parity p has completed: the current phase's parity differs from p. So on a fresh barrier
// (phase 0) a wait on parity 1 returns at once, which producers rely on for their first wait on
// an empty slot.
#pragma once

#include <cstdint>
#include <string>

namespace tyl::emu {

class Mbarrier {
 public:
  static constexpr int64_t kMaxTxCount = (int64_t{1} << 20) - 1;
  static constexpr int64_t kMaxArrivals = (int64_t{1} << 20) - 1;

  // What went wrong in an operation (a finding for the emulator); empty when nothing did.
  using Problem = std::string;

  Problem init(int64_t count);
  Problem arrive(int64_t count = 1);
  Problem expectTx(int64_t bytes);
  // arrive.expect_tx: the expect-tx, then the arrive-on.
  Problem arriveExpectTx(int64_t bytes);
  Problem completeTx(int64_t bytes);

  // mbarrier.test_wait.parity / try_wait.parity: whether the phase of parity `parity` has completed.
  bool phaseComplete(int parity) const { return initialized_ && (phase_ & 1) != parity; }

  bool initialized() const { return initialized_; }
  int64_t phase() const { return phase_; }
  int64_t pending() const { return pending_; }
  int64_t txCount() const { return tx_; }

 private:
  void completeIfDone();

  bool initialized_ = false;
  int64_t count_ = 0;
  int64_t pending_ = 0;
  int64_t tx_ = 0;
  int64_t phase_ = 0;
};

}  // namespace tyl::emu
