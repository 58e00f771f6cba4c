#include "backend/emu/Memory.h"

#include <algorithm>
#include <cstring>

namespace tyl::emu {

SharedMemory::SharedMemory(int64_t bytes)
    : data_(static_cast<size_t>(bytes)),
      written_(static_cast<size_t>(bytes)),
      shadow_(static_cast<size_t>(bytes)) {}

void SharedMemory::beginBlock(int64_t threads, ThreadClocks& clocks) {
  std::fill(data_.begin(), data_.end(), std::byte{0});
  std::fill(written_.begin(), written_.end(), uint8_t{0});
  // No copy is pending: every warp lands its copies when it exits. Epochs never repeat, so
  // the rest of the shadow state from earlier blocks reads as "no access".
  clocks_ = &clocks;
  proxyWriter_.assign(data_.size(), Site{});
  proxyWriterFences_.assign(data_.size(), 0);
  proxyFences_.assign(static_cast<size_t>(threads), 0);
  asyncReader_.assign(data_.size(), Site{});
  asyncReaders_.assign(data_.size(), 0);
  barrier();
}

void SharedMemory::beginAsyncRead(int64_t addr, int64_t n, Site who) {
  for (auto a = static_cast<size_t>(addr); a < static_cast<size_t>(addr + n); ++a) {
    asyncReader_[a] = who;
    ++asyncReaders_[a];
  }
}

void SharedMemory::endAsyncRead(int64_t addr, int64_t n) {
  for (auto a = static_cast<size_t>(addr); a < static_cast<size_t>(addr + n); ++a)
    if (asyncReaders_[a] > 0 && --asyncReaders_[a] == 0) asyncReader_[a] = Site{};
}

void SharedMemory::fenceProxyAsync(int32_t thread) { ++proxyFences_.at(static_cast<size_t>(thread)); }

void SharedMemory::asyncProxyWrote(int64_t addr, int n) {
  for (int64_t a = addr; a < addr + n; ++a) proxyWriter_[static_cast<size_t>(a)] = Site{};
}

std::optional<std::pair<int64_t, Site>> SharedMemory::unfenced(int64_t addr, int n) const {
  for (int64_t a = addr; a < addr + n; ++a) {
    const Site& w = proxyWriter_[static_cast<size_t>(a)];
    if (w.thread >= 0 && proxyFences_[static_cast<size_t>(w.thread)] == proxyWriterFences_[static_cast<size_t>(a)])
      return std::pair{a, w};
  }
  return std::nullopt;
}

void SharedMemory::barrier() { ++epoch_; }

void ThreadClocks::reset(int64_t threads) {
  threads_ = threads;
  clocks_.clear();
}

void ThreadClocks::barrier(int64_t first, int64_t n) {
  if (clocks_.empty()) return;
  if (first == 0 && n == threads_) {
    clocks_.clear();  // every thread has seen everything
    return;
  }
  std::vector<int32_t> threads;
  for (int64_t t = first; t < first + n; ++t) threads.push_back(static_cast<int32_t>(t));
  join(threads);
}

void ThreadClocks::barrier(const std::vector<int32_t>& threads) {
  start();
  join(threads);
}

void ThreadClocks::start() {
  if (!clocks_.empty()) return;
  clocks_.assign(static_cast<size_t>(threads_), VectorClock(static_cast<size_t>(threads_), 0));
  for (int64_t t = 0; t < threads_; ++t) clocks_[static_cast<size_t>(t)][static_cast<size_t>(t)] = 1;
}

void ThreadClocks::join(const std::vector<int32_t>& threads) {
  VectorClock all(static_cast<size_t>(threads_), 0);
  for (int32_t t : threads)
    for (size_t u = 0; u < all.size(); ++u) all[u] = std::max(all[u], clocks_[static_cast<size_t>(t)][u]);
  for (int32_t t : threads) {
    VectorClock& mine = clocks_[static_cast<size_t>(t)];
    const uint32_t own = mine[static_cast<size_t>(t)];
    mine = all;
    mine[static_cast<size_t>(t)] = own + 1;
  }
}

void ThreadClocks::release(int32_t thread, VectorClock& into) {
  start();
  VectorClock& mine = clocks_[static_cast<size_t>(thread)];
  if (into.size() < mine.size()) into.resize(mine.size(), 0);
  for (size_t u = 0; u < mine.size(); ++u) into[u] = std::max(into[u], mine[u]);
  ++mine[static_cast<size_t>(thread)];  // what the thread does next is not released
}

void ThreadClocks::acquire(int32_t thread, const VectorClock& from) {
  if (clocks_.empty() || from.empty()) return;  // nothing released since the last barrier
  VectorClock& mine = clocks_[static_cast<size_t>(thread)];
  for (size_t u = 0; u < from.size() && u < mine.size(); ++u) mine[u] = std::max(mine[u], from[u]);
}

bool ThreadClocks::ordered(const Site& site, uint32_t clock, int32_t thread) const {
  if (site.thread < 0 || site.thread == thread) return true;
  return !clocks_.empty() && clocks_[static_cast<size_t>(thread)][static_cast<size_t>(site.thread)] >= clock;
}

SharedMemory::ByteState& SharedMemory::fresh(int64_t addr) {
  ByteState& s = shadow_[addr];
  if (s.epoch != epoch_) {
    s.epoch = epoch_;
    s.writer = s.reader = s.reader2 = Site{};
  }
  return s;
}

std::optional<Conflict> SharedMemory::writeConflict(const ByteState& s, int32_t thread, int64_t addr) const {
  if (!ordered(s.writer, s.writerClock, thread)) return Conflict{s.writer, true, addr};
  if (!ordered(s.reader, s.readerClock, thread)) return Conflict{s.reader, false, addr};
  if (!ordered(s.reader2, s.reader2Clock, thread)) return Conflict{s.reader2, false, addr};
  return std::nullopt;
}

SharedCheck SharedMemory::read(int64_t addr, int n, Site who, std::byte* out) {
  SharedCheck check;
  for (int64_t a = addr; a < addr + n; ++a) {
    ByteState& s = fresh(a);
    if (s.async.thread >= 0) {
      if (!check.pending) check.pending = Conflict{s.async, true, a};
    } else if (!written_[a] && !check.uninit) {
      check.uninit = a;
    }
    if (!check.race && !ordered(s.writer, s.writerClock, who.thread)) check.race = Conflict{s.writer, true, a};
    // Two readers that do not happen before one another are kept: a later writer ordered after
    // one of them may still race with the other.
    if (s.reader.thread < 0 || s.reader.thread == who.thread || ordered(s.reader, s.readerClock, who.thread)) {
      s.reader = who;
      s.readerClock = clock(who.thread);
    } else if (s.reader2.thread < 0 || s.reader2.thread == who.thread ||
               ordered(s.reader2, s.reader2Clock, who.thread)) {
      s.reader2 = who;
      s.reader2Clock = clock(who.thread);
    }
  }
  std::memcpy(out, data_.data() + addr, n);
  return check;
}

SharedCheck SharedMemory::write(int64_t addr, int n, Site who, const std::byte* in) {
  SharedCheck check;
  for (int64_t a = addr; a < addr + n; ++a) {
    ByteState& s = fresh(a);
    // Writing under a copy in flight races with it, even from the issuing thread: the order
    // of the two writes is unknown.
    if (s.async.thread >= 0 && !check.race) check.race = Conflict{s.async, true, a};
    if (!check.race) check.race = writeConflict(s, who.thread, a);
    if (!check.race && !asyncReader_.empty() && asyncReader_[static_cast<size_t>(a)].thread >= 0)
      check.race = Conflict{asyncReader_[static_cast<size_t>(a)], false, a};
    s.writer = who;
    s.writerClock = clock(who.thread);
    written_[a] = 1;
    if (!proxyFences_.empty()) {
      proxyWriter_[static_cast<size_t>(a)] = who;
      proxyWriterFences_[static_cast<size_t>(a)] = proxyFences_[static_cast<size_t>(who.thread)];
    }
  }
  std::memcpy(data_.data() + addr, in, n);
  return check;
}

SharedCheck SharedMemory::beginAsync(int64_t addr, int n, Site who, uint64_t copyId) {
  SharedCheck check;
  for (int64_t a = addr; a < addr + n; ++a) {
    ByteState& s = fresh(a);
    if (s.async.thread >= 0 && !check.race) check.race = Conflict{s.async, true, a};
    if (!check.race) check.race = writeConflict(s, who.thread, a);
    s.async = who;
    s.asyncId = copyId;
  }
  return check;
}

void SharedMemory::land(int64_t addr, int n, Site who, uint64_t copyId, const std::byte* data) {
  // Conflicts with accesses while the copy was in flight were reported when they happened;
  // from here on the copy is an ordinary write of this interval.
  for (int64_t a = addr; a < addr + n; ++a) {
    ByteState& s = fresh(a);
    if (s.asyncId == copyId) s.async = Site{};
    s.writer = who;
    s.writerClock = clock(who.thread);
    written_[a] = 1;
    if (!proxyFences_.empty()) {  // cp.async writes through the generic proxy
      proxyWriter_[static_cast<size_t>(a)] = who;
      proxyWriterFences_[static_cast<size_t>(a)] = proxyFences_[static_cast<size_t>(who.thread)];
    }
  }
  std::memcpy(data_.data() + addr, data, n);
}

GlobalMemory::GlobalMemory(std::vector<Buffer>& buffers) : buffers_(buffers) {
  for (const Buffer& b : buffers) written_.emplace_back(b.bytes.size(), b.initialized ? 1 : 0);
}

std::optional<int64_t> GlobalMemory::read(int buffer, int64_t addr, int n, std::byte* out) const {
  std::memcpy(out, buffers_[buffer].bytes.data() + addr, n);
  const std::vector<uint8_t>& w = written_[buffer];
  for (int64_t a = addr; a < addr + n; ++a)
    if (!w[a]) return a;
  return std::nullopt;
}

void GlobalMemory::write(int buffer, int64_t addr, int n, const std::byte* in) {
  std::memcpy(buffers_[buffer].bytes.data() + addr, in, n);
  std::fill_n(written_[buffer].begin() + addr, n, uint8_t{1});
}

}  // namespace tyl::emu
