// Emulated memory with shadow state: which bytes were ever written (for uninitialized
// reads) and, for shared memory, who touched each byte since the last barrier (for races)
// and which bytes a cp.async has yet to write.
//
// Callers check bounds first; these classes assume every access is in range.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "backend/emu/HostData.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::emu {

// One thread's access at one statement.
struct Site {
  const tir::Stmt* stmt = nullptr;
  int32_t thread = -1;  // linear thread id in the cluster: rank * threads per block + id in the block
};

// An earlier access that conflicts with the current one, at shared byte `byte`.
struct Conflict {
  Site other;
  bool otherWrote = false;
  int64_t byte = 0;
};

// What one shared-memory access ran into; at most one of each per access.
struct SharedCheck {
  std::optional<Conflict> race;     // another thread's access in this barrier interval
  std::optional<Conflict> pending;  // a cp.async not yet waited for (other = its issuer)
  std::optional<int64_t> uninit;    // a byte never written
};

// What one thread has seen of the others since the last bar.sync: entry u is the clock of thread
// u whose accesses happen before this thread's next ones. A thread's own entry is its clock.
using VectorClock = std::vector<uint32_t>;

// The vector clocks of the threads of a cluster (of a block, without clusters), by cluster thread
// id. Between barriers an mbarrier orders threads: an arrive releases what the arriving thread did
// so far into the barrier's phase (`into` joins its clock), and a wait that sees the phase
// complete acquires it. Two accesses of different threads race unless one happens before the
// other so. Empty until a release: then no access of one thread is ordered before another's.
class ThreadClocks {
 public:
  // A new cluster of `threads` threads: nothing ordered yet.
  void reset(int64_t threads);
  void release(int32_t thread, VectorClock& into);
  void acquire(int32_t thread, const VectorClock& from);
  // A barrier of threads [first, first + n): each has seen what all of them did. For all the
  // threads, the clocks start over (what came before is ordered by the memories' epochs).
  void barrier(int64_t first, int64_t n);
  // A named barrier of these threads (bar.sync id, n): each has seen what all of them did; the
  // others' clocks are unchanged.
  void barrier(const std::vector<int32_t>& threads);
  // Whether `site`'s access at its thread's clock `clock` happens before `thread`'s next access.
  bool ordered(const Site& site, uint32_t clock, int32_t thread) const;
  uint32_t clock(int32_t thread) const {
    return clocks_.empty() ? 1 : clocks_[static_cast<size_t>(thread)][static_cast<size_t>(thread)];
  }

 private:
  void start();  // clocks for every thread, none ordered yet
  void join(const std::vector<int32_t>& threads);

  int64_t threads_ = 0;
  std::vector<VectorClock> clocks_;  // per thread; empty: no mbarrier has ordered threads yet
};

class SharedMemory {
 public:
  explicit SharedMemory(int64_t bytes);

  int64_t size() const { return static_cast<int64_t>(data_.size()); }
  // A new block, of a cluster of `threads` threads whose clocks are `clocks`: undefined contents,
  // nothing written, nothing shared with earlier blocks.
  void beginBlock(int64_t threads, ThreadClocks& clocks);
  // bar.sync of the block (or a cluster barrier): accesses before it no longer race with accesses
  // after it (ThreadClocks::barrier orders the threads).
  void barrier();

  SharedCheck read(int64_t addr, int n, Site who, std::byte* out);
  SharedCheck write(int64_t addr, int n, Site who, const std::byte* in);

  // cp.async: the copy may land any time until a wait covers it. Issuing checks it against
  // earlier accesses of this interval and marks the bytes pending; reads and writes of
  // pending bytes are findings until land() writes the data (as a write by `who`).
  SharedCheck beginAsync(int64_t addr, int n, Site who, uint64_t copyId);
  void land(int64_t addr, int n, Site who, uint64_t copyId, const std::byte* data);

  // The async proxy (TMA stores) sees a generic write to shared memory only after the writing
  // thread's fence.proxy.async. Writes by the async proxy itself (TMA loads) need no fence.
  void fenceProxyAsync(int32_t thread);
  void asyncProxyWrote(int64_t addr, int n);
  // The first byte of [addr, addr + n) whose last generic write its thread has not fenced, and
  // that thread.
  std::optional<std::pair<int64_t, Site>> unfenced(int64_t addr, int n) const;
  // An asynchronous read (a TMA store, a wgmma) may read [addr, addr + n) until its group is
  // retired: writing there races with it (the conflict names the reader, the last to begin when
  // several read a byte). Each begin is matched by an end; a byte is free after the last.
  void beginAsyncRead(int64_t addr, int64_t n, Site who);
  void endAsyncRead(int64_t addr, int64_t n);

 private:
  // Accesses to one byte during the barrier interval `epoch` (older epochs mean none). Two
  // distinct readers are enough to find one that differs from any later writer.
  struct ByteState {
    uint64_t epoch = 0;
    Site writer, reader, reader2;
    uint32_t writerClock = 0, readerClock = 0, reader2Clock = 0;  // the accessing threads' clocks
    Site async;  // the pending cp.async's issuer; async.thread < 0 when none
    uint64_t asyncId = 0;
  };

  ByteState& fresh(int64_t addr);
  bool ordered(const Site& site, uint32_t clock, int32_t thread) const { return clocks_->ordered(site, clock, thread); }
  uint32_t clock(int32_t thread) const { return clocks_->clock(thread); }
  std::optional<Conflict> writeConflict(const ByteState& s, int32_t thread, int64_t addr) const;

  std::vector<std::byte> data_;
  std::vector<uint8_t> written_;
  std::vector<ByteState> shadow_;
  uint64_t epoch_ = 1;
  ThreadClocks* clocks_ = nullptr;
  // Per byte: the last generic write (thread < 0: none, or fenced) and its thread's fence count
  // then; per thread, its fence.proxy.async count.
  std::vector<Site> proxyWriter_;
  std::vector<uint32_t> proxyWriterFences_;
  std::vector<uint32_t> proxyFences_;
  std::vector<Site> asyncReader_;        // per byte: an asynchronous read that may still read it
  std::vector<uint32_t> asyncReaders_;   // per byte: how many may
};

// The host buffers while a kernel runs, with per-byte written bits.
class GlobalMemory {
 public:
  explicit GlobalMemory(std::vector<Buffer>& buffers);

  int64_t size(int buffer) const { return static_cast<int64_t>(buffers_[buffer].bytes.size()); }
  // Copies the bytes and returns the first one never written, if any.
  std::optional<int64_t> read(int buffer, int64_t addr, int n, std::byte* out) const;
  void write(int buffer, int64_t addr, int n, const std::byte* in);

 private:
  std::vector<Buffer>& buffers_;
  std::vector<std::vector<uint8_t>> written_;
};

}  // namespace tyl::emu
