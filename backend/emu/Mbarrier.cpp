#include "backend/emu/Mbarrier.h"

#include <fmt/format.h>

namespace tyl::emu {

Mbarrier::Problem Mbarrier::init(int64_t count) {
  if (count < 1 || count > kMaxArrivals)
    return fmt::format("mbarrier.init with an arrival count of {} (it takes 1 to {})", count, kMaxArrivals);
  *this = Mbarrier{};
  initialized_ = true;
  count_ = pending_ = count;
  return {};
}

Mbarrier::Problem Mbarrier::arrive(int64_t count) {
  if (!initialized_) return "an arrive on an mbarrier that was never initialized";
  if (count < 1 || count > pending_)
    return fmt::format("an arrive of {} on an mbarrier with {} arrivals pending in phase {}", count, pending_, phase_);
  pending_ -= count;
  completeIfDone();
  return {};
}

Mbarrier::Problem Mbarrier::expectTx(int64_t bytes) {
  if (!initialized_) return "an expect-tx on an mbarrier that was never initialized";
  if (bytes < 0 || tx_ + bytes > kMaxTxCount)
    return fmt::format("an expect-tx of {} bytes takes the mbarrier's transaction count from {} past {}", bytes, tx_,
                       kMaxTxCount);
  tx_ += bytes;
  return {};
}

Mbarrier::Problem Mbarrier::arriveExpectTx(int64_t bytes) {
  if (Problem p = expectTx(bytes); !p.empty()) return p;
  return arrive(1);
}

Mbarrier::Problem Mbarrier::completeTx(int64_t bytes) {
  if (!initialized_) return "a complete-tx on an mbarrier that was never initialized";
  if (bytes < 0 || tx_ - bytes < -kMaxTxCount)
    return fmt::format("a complete-tx of {} bytes takes the mbarrier's transaction count from {} below {}", bytes, tx_,
                       -kMaxTxCount);
  tx_ -= bytes;
  completeIfDone();
  return {};
}

void Mbarrier::completeIfDone() {
  if (pending_ != 0 || tx_ != 0) return;
  ++phase_;
  pending_ = count_;
}

}  // namespace tyl::emu
