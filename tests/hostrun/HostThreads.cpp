#include "tests/hostrun/HostThreads.h"

#include <ucontext.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "backend/emu/Mbarrier.h"
#include "backend/emu/Ptx.h"
#include "backend/emu/Values.h"
#include "backend/emu/Wgmma.h"
#include "ir/layout/Tma.h"

namespace tylo_host {
namespace {

constexpr int kWarp = 32;
constexpr size_t kStackBytes = 512 * 1024;
constexpr size_t kDefaultSharedLimit = 48 * 1024;
constexpr size_t kMaxShared = 227 * 1024;

// AtMbarrier: waiting for an mbarrier phase; retried once a barrier changes.
enum class State { Ready, AtCollective, AtBarrier, AtNamedBarrier, AtClusterBarrier, AtMbarrier, Done };
enum class Collective { Ldmatrix, Stmatrix, Shfl, Mma, Wgmma, WgmmaCommit, WgmmaWait, Elect, SetMaxNReg };

// What one lane brings to a warp collective.
struct LaneOp {
  Collective kind{};
  bool flag = false;  // ldmatrix/stmatrix: trans; mma: bf16
  uint32_t addr = 0;
  std::array<uint32_t*, 4> wordsOut{};
  std::array<float*, 4> floatsOut{};
  std::array<uint32_t, 4> words{};
  std::array<uint32_t, 2> b{};
  std::array<float, 4> c{};
  int count = 0;  // registers
  // wgmma: the descriptors, the scale-d operand, the transposes, N and this lane's D registers;
  // with registerA, A in `words` instead of through descA.
  uint64_t descA = 0, descB = 0;
  int32_t scale = 0;
  bool transA = false, transB = false, registerA = false;
  std::vector<float*> dOut;
};

// A cp.async in flight: its source was read when it was issued; it lands (its destination is
// written) when a wait retires its group or its thread exits (backend/emu/README.md).
struct Copy {
  uint32_t dst;
  int bytes;
  std::array<unsigned char, 16> data;  // the source's bytes, zeros past the source size
};

// A warp's wgmmas in flight: each lane's operands, performed when a wait_group retires its group
// (the hardware may read shared memory and write D any time before).
struct WarpWgmmas {
  std::vector<std::vector<LaneOp>> open;                 // issued, not yet committed; each by lane
  std::deque<std::vector<std::vector<LaneOp>>> groups;  // committed, oldest first
};

struct Block;

struct Thread {
  Block* block = nullptr;
  ucontext_t context{};
  std::unique_ptr<char[]> stack;
  uint3 id{};
  State state = State::Ready;
  uint32_t barrierId = 0, barrierThreads = 0;  // AtNamedBarrier: bar.sync barrierId, barrierThreads
  LaneOp op;
  std::vector<Copy> open;                // issued, not yet committed
  std::vector<std::vector<Copy>> groups;  // committed, oldest first
};

// One block of the cluster that runs (one block without clusters): its threads, its shared
// memory and its mbarriers, by shared address.
struct Block {
  uint3 id{};
  unsigned rank = 0;
  std::vector<Thread> threads;
  unsigned char* shared = nullptr;
  std::map<uint32_t, tyl::emu::Mbarrier> mbarriers;
  std::vector<WarpWgmmas> wgmmas;  // by warp

  bool exited() const {
    for (const Thread& t : threads)
      if (t.state != State::Done) return false;
    return true;
  }
};

struct Launch {
  const std::function<void()>* body = nullptr;
  dim3 grid, block, cluster;
  std::vector<Block> blocks;  // the running cluster's, by rank
  Thread* current = nullptr;
  ucontext_t scheduler{};
  size_t sharedBytes = 0;
  uint64_t mbarrierChanges = 0;  // how often a barrier has changed
  std::vector<std::string> problems;
};

Launch* active = nullptr;
std::map<const void*, int> sharedLimits;
cudaError_t lastError = cudaSuccess;
std::string problemLog;
int launchCount = 0;
int64_t asyncBytesLanded = 0;

Launch& launch() {
  if (!active) {
    std::fputs("tylo_host: a device function ran outside a launch\n", stderr);
    std::abort();
  }
  return *active;
}

Thread& self() { return *launch().current; }
// The block of the running thread (of the warp whose collective is performed).
Block& here() { return *self().block; }

void problem(const std::string& what) {
  Launch& l = launch();
  if (l.problems.size() >= 20) return;
  std::ostringstream os;
  if (l.current) {
    const uint3& b = l.current->block->id;
    os << "block (" << b.x << ", " << b.y << ", " << b.z << ")";
  }
  if (l.current) os << " thread (" << l.current->id.x << ", " << l.current->id.y << ", " << l.current->id.z << ")";
  os << ": " << what;
  l.problems.push_back(os.str());
}

// Suspends the running thread until the scheduler resumes it.
void suspend(State state) {
  Launch& l = launch();
  Thread& t = *l.current;
  t.state = state;
  swapcontext(&t.context, &l.scheduler);
}

void perform(const Copy& c);

void threadEntry() {
  Launch& l = launch();
  (*l.body)();
  // The hardware does not cancel the copies a thread has in flight when it exits: they land.
  Thread& t = *l.current;
  for (const std::vector<Copy>& group : t.groups)
    for (const Copy& c : group) perform(c);
  for (const Copy& c : t.open) perform(c);
  t.groups.clear();
  t.open.clear();
  t.state = State::Done;  // uc_link returns to the scheduler
}

// Whether [offset, offset + bytes) lies in the block's shared memory, aligned to `align`.
bool sharedRange(uint32_t offset, size_t bytes, size_t align, const char* what) {
  Launch& l = launch();
  if (offset % align != 0) {
    problem(std::string(what) + ": shared address " + std::to_string(offset) + " is not aligned to " +
            std::to_string(align) + " bytes");
    return false;
  }
  if (offset > l.sharedBytes || bytes > l.sharedBytes - offset) {
    problem(std::string(what) + ": shared bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
            ") lie outside the block's " + std::to_string(l.sharedBytes) + " bytes");
    return false;
  }
  return true;
}

void perform(const Copy& c) {
  std::memcpy(here().shared + c.dst, c.data.data(), static_cast<size_t>(c.bytes));
  asyncBytesLanded += c.bytes;
}

using tyl::emu::Matrix8x8;

// Matrix `i`'s eight rows, from the addresses of lanes 8i .. 8i + 7.
bool rowAddresses(Thread* const* lanes, int i, const char* what, std::array<uint32_t, 8>& rows) {
  for (int r = 0; r < 8; ++r) {
    rows[r] = lanes[8 * i + r]->op.addr;
    if (!sharedRange(rows[r], 16, 16, what)) return false;
  }
  return true;
}

void doLdmatrix(Thread* const* lanes) {
  const LaneOp& first = lanes[0]->op;
  for (int i = 0; i < first.count; ++i) {
    std::array<uint32_t, 8> rows;
    Matrix8x8 m{};
    if (!rowAddresses(lanes, i, "ldmatrix", rows)) return;
    for (int r = 0; r < 8; ++r) std::memcpy(m[r].data(), here().shared + rows[r], 16);
    for (int lane = 0; lane < kWarp; ++lane) *lanes[lane]->op.wordsOut[i] = tyl::emu::ldmatrixWord(m, lane, first.flag);
  }
}

void doStmatrix(Thread* const* lanes) {
  const LaneOp& first = lanes[0]->op;
  for (int i = 0; i < first.count; ++i) {
    std::array<uint32_t, 8> rows;
    Matrix8x8 m{};
    if (!rowAddresses(lanes, i, "stmatrix", rows)) return;
    for (int lane = 0; lane < kWarp; ++lane) tyl::emu::stmatrixWord(m, lane, first.flag, lanes[lane]->op.words[i]);
    for (int r = 0; r < 8; ++r) std::memcpy(here().shared + rows[r], m[r].data(), 16);
  }
}

void doMma(Thread* const* lanes) {
  tyl::emu::MmaA a;
  tyl::emu::MmaB b;
  tyl::emu::MmaC c;
  for (int lane = 0; lane < kWarp; ++lane) {
    const LaneOp& op = lanes[lane]->op;
    a[lane] = op.words;
    b[lane] = op.b;
    c[lane] = op.c;
  }
  tyl::emu::MmaC d = tyl::emu::mmaM16n8k16(lanes[0]->op.flag ? tyl::tir::Type::BF16 : tyl::tir::Type::F16, a, b, c);
  for (int lane = 0; lane < kWarp; ++lane)
    for (int e = 0; e < 4; ++e) *lanes[lane]->op.floatsOut[e] = d[lane][e];
}

// wgmma for warp `warp` of the running block: its 16 rows of D (rows 16 (warp % 4) ..), from A and
// B in shared memory as the descriptors address them, decoded as the emulator decodes them
// (backend/emu/Wgmma.h). `lanes` were checked to agree when the wgmma was issued.
void doWgmma(const std::vector<LaneOp>& lanes, size_t warp) {
  const LaneOp& first = lanes[0];
  const tyl::emu::MatrixDescriptor a = tyl::emu::decodeMatrixDescriptor(first.descA);
  const tyl::emu::MatrixDescriptor b = tyl::emu::decodeMatrixDescriptor(first.descB);
  const tyl::tir::Type type = first.flag ? tyl::tir::Type::BF16 : tyl::tir::Type::F16;
  Block& b0 = here();
  bool ok = true;
  auto element = [&](int64_t address) -> double {
    if (!sharedRange(static_cast<uint32_t>(address), 2, 2, "wgmma operand")) {
      ok = false;
      return 0.0;
    }
    uint16_t bits = 0;
    std::memcpy(&bits, b0.shared + address, 2);
    return tyl::emu::toFloat(type, bits);
  };
  const int64_t firstRow = 16 * static_cast<int64_t>(warp % 4);
  const int n = first.count;
  std::vector<double> A(16 * 16), B(static_cast<size_t>(n) * 16);
  if (first.registerA) {
    const std::array<double, 256> a = tyl::emu::registerA(type, [&](int lane, int word) {
      return lanes[static_cast<size_t>(lane)].words[static_cast<size_t>(word)];
    });
    A.assign(a.begin(), a.end());
  } else {
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t k = 0; k < 16; ++k)
        A[static_cast<size_t>(r * 16 + k)] =
            element(tyl::emu::matrixElementAddress(a, first.transA, 2, firstRow + r, k));
  }
  for (int64_t c = 0; c < n; ++c)
    for (int64_t k = 0; k < 16; ++k)
      B[static_cast<size_t>(c * 16 + k)] = element(tyl::emu::matrixElementAddress(b, first.transB, 2, c, k));
  if (!ok) return;
  for (int lane = 0; lane < kWarp; ++lane) {
    const LaneOp& op = lanes[static_cast<size_t>(lane)];
    for (int r = 0; r < n / 2; ++r) {
      const int64_t row = lane / 4 + 8 * ((r >> 1) & 1), col = 8 * (r >> 2) + 2 * (lane % 4) + (r & 1);
      double sum = first.scale ? *op.dOut[static_cast<size_t>(r)] : 0.0;
      for (int64_t k = 0; k < 16; ++k) sum += A[static_cast<size_t>(row * 16 + k)] * B[static_cast<size_t>(col * 16 + k)];
      *op.dOut[static_cast<size_t>(r)] = static_cast<float>(sum);
    }
  }
}

// wgmma.mma_async for one warp: checked, then in flight in the warp's open group.
void issueWgmma(Thread* const* lanes, size_t warp) {
  const LaneOp& first = lanes[0]->op;
  for (int lane = 0; lane < kWarp; ++lane) {
    const LaneOp& op = lanes[lane]->op;
    if (op.descA != first.descA || op.descB != first.descB || op.scale != first.scale) {
      problem("wgmma: the lanes of a warp give different descriptors or scale-d");
      return;
    }
  }
  if ((!first.registerA && tyl::emu::decodeMatrixDescriptor(first.descA).baseOffset != 0) ||
      tyl::emu::decodeMatrixDescriptor(first.descB).baseOffset != 0) {
    problem("wgmma: a descriptor with a base offset");
    return;
  }
  std::vector<LaneOp> ops;
  for (int lane = 0; lane < kWarp; ++lane) ops.push_back(lanes[lane]->op);
  here().wgmmas[warp].open.push_back(std::move(ops));
}

// wgmma.wait_group for one warp: its groups but the `pending` newest are performed, oldest first.
void retireWgmmas(size_t warp, int pending) {
  WarpWgmmas& mine = here().wgmmas[warp];
  while (mine.groups.size() > static_cast<size_t>(pending)) {
    for (const std::vector<LaneOp>& wgmma : mine.groups.front()) doWgmma(wgmma, warp);
    mine.groups.pop_front();
  }
}

const char* collectiveName(Collective c) {
  switch (c) {
    case Collective::Ldmatrix: return "ldmatrix";
    case Collective::Stmatrix: return "stmatrix";
    case Collective::Shfl: return "shfl.sync";
    case Collective::Mma: return "mma.sync";
    case Collective::Wgmma: return "wgmma.mma_async";
    case Collective::WgmmaCommit: return "wgmma.commit_group";
    case Collective::WgmmaWait: return "wgmma.wait_group";
    case Collective::Elect: return "elect.sync";
    case Collective::SetMaxNReg: return "setmaxnreg";
  }
  return "?";
}

// Performs warp `w`'s collective when all its lanes wait at one; whether it released them.
bool releaseWarp(Launch& l, Block& b, size_t w) {
  size_t begin = w * kWarp, end = std::min(begin + kWarp, b.threads.size());
  std::vector<Thread*> lanes;
  for (size_t i = begin; i < end; ++i) {
    if (b.threads[i].state != State::AtCollective) return false;
    lanes.push_back(&b.threads[i]);
  }
  l.current = lanes[0];
  const LaneOp& first = lanes[0]->op;
  bool same = lanes.size() == kWarp;
  for (Thread* t : lanes) same = same && t->op.kind == first.kind && t->op.flag == first.flag && t->op.count == first.count;
  if (lanes.size() != kWarp) {
    problem(std::string(collectiveName(first.kind)) + " in a warp of " + std::to_string(lanes.size()) +
            " threads (the block is not a whole number of warps)");
  } else if (!same) {
    problem("the lanes of a warp are at different collective instructions");
  } else if (first.kind == Collective::Ldmatrix) {
    doLdmatrix(lanes.data());
  } else if (first.kind == Collective::Stmatrix) {
    doStmatrix(lanes.data());
  } else if (first.kind == Collective::Shfl) {
    for (size_t lane = 0; lane < kWarp; ++lane)
      *lanes[lane]->op.wordsOut[0] = lanes[lane ^ static_cast<size_t>(first.count)]->op.words[0];
  } else if (first.kind == Collective::Wgmma) {
    issueWgmma(lanes.data(), w);
  } else if (first.kind == Collective::WgmmaCommit) {
    WarpWgmmas& mine = b.wgmmas[w];
    mine.groups.push_back(std::move(mine.open));
    mine.open.clear();
  } else if (first.kind == Collective::WgmmaWait) {
    retireWgmmas(w, first.count);
  } else if (first.kind == Collective::Elect) {
    // PTX leaves the lane unspecified; the emulator's choice, the highest.
    for (int lane = 0; lane < kWarp; ++lane) *lanes[static_cast<size_t>(lane)]->op.wordsOut[0] = lane == kWarp - 1;
  } else if (first.kind == Collective::SetMaxNReg) {
    // The register pool is the emulator's to model; the harness checks the count.
    if (first.count < 24 || first.count > 256 || first.count % 8 != 0)
      problem("setmaxnreg to " + std::to_string(first.count) + " registers per thread");
  } else {
    doMma(lanes.data());
  }
  for (Thread* t : lanes) t->state = State::Ready;
  return true;
}

// Releases the threads of `b` at a named barrier once as many as it counts have arrived, counting
// each warp whose threads are all there as 32 (bar.sync counts warps; a partial last warp as 32);
// a barrier of 32 releases each such warp on its own. True if some were released.
bool releaseNamedBarriers(Block& b) {
  bool released = false;
  for (uint32_t id = 1; id <= 15; ++id) {
    std::vector<Thread*> at;       // the threads of the warps all of whose threads are there
    uint32_t count = 0, arrived = 0;
    bool mixed = false;
    for (size_t w = 0; w * kWarp < b.threads.size(); ++w) {
      const size_t end = std::min(b.threads.size(), (w + 1) * kWarp);
      bool all = true;
      for (size_t i = w * kWarp; i < end; ++i) {
        const Thread& t = b.threads[i];
        all = all && t.state == State::AtNamedBarrier && t.barrierId == id;
      }
      if (!all) continue;
      for (size_t i = w * kWarp; i < end; ++i) {
        Thread& t = b.threads[i];
        mixed = mixed || (count != 0 && t.barrierThreads != count);
        count = t.barrierThreads;
        at.push_back(&t);
      }
      arrived += static_cast<uint32_t>(kWarp);
    }
    if (at.empty() || (arrived < count && !mixed)) continue;
    if (mixed || (arrived > count && count > static_cast<uint32_t>(kWarp))) {
      launch().current = at[0];
      problem("bar.sync " + std::to_string(id) + " reached by " + std::to_string(arrived) +
              " threads that count different numbers, or more than they count");
      launch().current = nullptr;
      continue;
    }
    for (Thread* t : at) t->state = State::Ready;
    released = true;
  }
  return released;
}

// Runs one cluster (one block without clusters) to its end; false if it deadlocked.
bool runCluster(Launch& l) {
  uint64_t seenChanges = l.mbarrierChanges;
  for (Block& b : l.blocks) {
    b.mbarriers.clear();
    b.wgmmas.assign((b.threads.size() + kWarp - 1) / kWarp, WarpWgmmas{});
    for (Thread& t : b.threads) {
      t.state = State::Ready;
      t.open.clear();
      t.groups.clear();
      getcontext(&t.context);
      t.context.uc_stack.ss_sp = t.stack.get();
      t.context.uc_stack.ss_size = kStackBytes;
      t.context.uc_link = &l.scheduler;
      makecontext(&t.context, threadEntry, 0);
    }
  }
  while (true) {
    bool ran = false;
    for (Block& b : l.blocks)
      for (Thread& t : b.threads) {
        if (t.state != State::Ready) continue;
        l.current = &t;
        swapcontext(&l.scheduler, &t.context);
        ran = true;
      }
    l.current = nullptr;
    bool released = false;
    for (Block& b : l.blocks)
      for (size_t w = 0; w * kWarp < b.threads.size(); ++w) released |= releaseWarp(l, b, w);
    l.current = nullptr;
    if (released) continue;
    size_t done = 0, atCluster = 0, all = 0;
    bool passed = false;
    for (Block& b : l.blocks) {
      size_t blockDone = 0, atBarrier = 0;
      for (const Thread& t : b.threads) {
        blockDone += t.state == State::Done;
        atBarrier += t.state == State::AtBarrier;
        atCluster += t.state == State::AtClusterBarrier;
      }
      done += blockDone;
      all += b.threads.size();
      passed |= releaseNamedBarriers(b);
      if (atBarrier > 0 && atBarrier + blockDone == b.threads.size()) {
        if (blockDone > 0) {
          l.current = &b.threads[0];
          problem("__syncthreads() with " + std::to_string(blockDone) + " of the block's threads already exited");
          l.current = nullptr;
          return false;
        }
        for (Thread& t : b.threads) t.state = State::Ready;
        passed = true;
      }
    }
    if (done == all) return true;
    if (passed) continue;
    if (atCluster > 0 && atCluster == all) {
      for (Block& b : l.blocks)
        for (Thread& t : b.threads) t.state = State::Ready;
      continue;
    }
    if (l.mbarrierChanges != seenChanges) {  // a barrier changed: the waits may now succeed
      seenChanges = l.mbarrierChanges;
      for (Block& b : l.blocks)
        for (Thread& t : b.threads)
          if (t.state == State::AtMbarrier) t.state = State::Ready;
      continue;
    }
    if (!ran) {
      for (Block& b : l.blocks)  // the problem names the first block with a waiting thread
        for (Thread& t : b.threads)
          if (!l.current && t.state != State::Done) l.current = &t;
      problem("deadlock: threads wait at a __syncthreads(), a cluster barrier, a warp collective or an mbarrier phase "
              "that the others (waiting elsewhere, or exited) never reach or complete");
      return false;
    }
  }
}

}  // namespace

const uint3& thread_idx() { return self().id; }
const uint3& block_idx() { return here().id; }
const dim3& block_dim() { return launch().block; }
const dim3& grid_dim() { return launch().grid; }

void syncthreads() { suspend(State::AtBarrier); }

void named_barrier(uint32_t id, uint32_t threads) {
  Thread& t = *launch().current;
  if (id < 1 || id > 15 || threads == 0 || threads % kWarp != 0) {
    problem("bar.sync " + std::to_string(id) + ", " + std::to_string(threads) +
            ": a named barrier is 1..15 and counts whole warps");
    return;
  }
  t.barrierId = id;
  t.barrierThreads = threads;
  suspend(State::AtNamedBarrier);
}

unsigned char* shared_memory() { return here().shared; }

uint32_t shared_address(const void* p) {
  Launch& l = launch();
  const unsigned char* q = static_cast<const unsigned char*>(p);
  const unsigned char* shared = here().shared;
  if (q < shared || q > shared + l.sharedBytes) {
    problem("a shared address was taken of a pointer outside shared memory");
    return 0xffffffffu;
  }
  return static_cast<uint32_t>(q - shared);
}

int sm_count_value = 132;
int sm_count() { return sm_count_value; }
void set_sm_count(int sms) { sm_count_value = sms; }

unsigned cluster_rank() { return here().rank; }
void cluster_barrier() { suspend(State::AtClusterBarrier); }

void cp_async(uint32_t dst, const void* src, int bytes, uint32_t src_bytes) {
  if (!sharedRange(dst, static_cast<size_t>(bytes), static_cast<size_t>(bytes), "cp.async")) return;
  if (src_bytes > static_cast<uint32_t>(bytes)) {
    problem("cp.async: source size " + std::to_string(src_bytes) + " exceeds the copy's " + std::to_string(bytes));
    return;
  }
  if (src_bytes > 0 && reinterpret_cast<uintptr_t>(src) % static_cast<uintptr_t>(bytes) != 0) {
    problem("cp.async: global source is not aligned to " + std::to_string(bytes) + " bytes");
    return;
  }
  // PTX lets the copy read its source at any time before the wait that completes it; both
  // executors read it now, when it is issued.
  Copy c{dst, bytes, {}};
  if (src_bytes > 0) std::memcpy(c.data.data(), src, src_bytes);
  self().open.push_back(c);
}

void cp_async_commit() {
  Thread& t = self();
  t.groups.push_back(std::move(t.open));
  t.open.clear();
}

void cp_async_wait(int pending) {
  Thread& t = self();
  while (t.groups.size() > static_cast<size_t>(pending)) {
    for (const Copy& c : t.groups.front()) perform(c);
    t.groups.erase(t.groups.begin());
  }
}

namespace {

// The running lane's operands of a collective, cleared and set up for `kind`; the caller adds
// its registers, then suspends.
LaneOp& arrive(Collective kind, bool flag, uint32_t addr, int count) {
  LaneOp& op = self().op;
  op = LaneOp{};
  op.kind = kind;
  op.flag = flag;
  op.addr = addr;
  op.count = count;
  return op;
}

}  // namespace

void ldmatrix(uint32_t addr, bool trans, std::initializer_list<uint32_t*> dst) {
  LaneOp& op = arrive(Collective::Ldmatrix, trans, addr, static_cast<int>(dst.size()));
  std::copy(dst.begin(), dst.end(), op.wordsOut.begin());
  suspend(State::AtCollective);
}

void stmatrix(uint32_t addr, bool trans, std::initializer_list<uint32_t> src) {
  LaneOp& op = arrive(Collective::Stmatrix, trans, addr, static_cast<int>(src.size()));
  std::copy(src.begin(), src.end(), op.words.begin());
  suspend(State::AtCollective);
}

void mma(bool bf16, std::initializer_list<float*> d, std::initializer_list<uint32_t> a,
         std::initializer_list<uint32_t> b, std::initializer_list<float> c) {
  LaneOp& op = arrive(Collective::Mma, bf16, 0, 4);
  std::copy(d.begin(), d.end(), op.floatsOut.begin());
  std::copy(a.begin(), a.end(), op.words.begin());
  std::copy(b.begin(), b.end(), op.b.begin());
  std::copy(c.begin(), c.end(), op.c.begin());
  suspend(State::AtCollective);
}

void wgmma(int n, bool bf16, bool transA, bool transB, uint64_t descA, uint64_t descB, int32_t scale,
           std::initializer_list<float*> d) {
  LaneOp& op = arrive(Collective::Wgmma, bf16, 0, n);
  op.descA = descA;
  op.descB = descB;
  op.scale = scale;
  op.transA = transA;
  op.transB = transB;
  op.dOut.assign(d.begin(), d.end());
  suspend(State::AtCollective);
}

void wgmma_ra(int n, bool bf16, bool transB, std::initializer_list<uint32_t> a, uint64_t descB, int32_t scale,
              std::initializer_list<float*> d) {
  LaneOp& op = arrive(Collective::Wgmma, bf16, 0, n);
  op.registerA = true;
  std::copy(a.begin(), a.end(), op.words.begin());
  op.descB = descB;
  op.scale = scale;
  op.transB = transB;
  op.dOut.assign(d.begin(), d.end());
  suspend(State::AtCollective);
}

void wgmma_commit() {
  arrive(Collective::WgmmaCommit, false, 0, 0);
  suspend(State::AtCollective);
}

void wgmma_wait(int pending) {
  arrive(Collective::WgmmaWait, false, 0, pending);
  suspend(State::AtCollective);
}

bool elect_one() {
  uint32_t elected = 0;
  LaneOp& op = arrive(Collective::Elect, false, 0, 0);
  op.wordsOut[0] = &elected;
  suspend(State::AtCollective);
  return elected != 0;
}

uint32_t shfl_bfly(uint32_t bits, int laneMask) {
  uint32_t out = 0;
  LaneOp& op = arrive(Collective::Shfl, false, 0, laneMask);
  op.words[0] = bits;
  op.wordsOut[0] = &out;
  suspend(State::AtCollective);
  return out;
}

void setmaxnreg(bool increase, int count) {
  arrive(Collective::SetMaxNReg, increase, 0, count);
  suspend(State::AtCollective);
}

namespace {

// The barrier at shared address `addr` of `block` (this thread's when null), or null (reported)
// when there is none.
tyl::emu::Mbarrier* mbarrierAt(uint32_t addr, const char* what, Block* block = nullptr) {
  if (!sharedRange(addr, 8, 8, what)) return nullptr;
  return &(block ? *block : here()).mbarriers[addr];
}

// The cluster's block of rank `rank`, or null (reported) when there is none or it has exited.
Block* clusterBlock(unsigned rank, const char* what) {
  Launch& l = launch();
  if (rank >= l.blocks.size()) {
    problem(std::string(what) + ": cluster rank " + std::to_string(rank) + " in a cluster of " +
            std::to_string(l.blocks.size()) + " blocks");
    return nullptr;
  }
  if (l.blocks[rank].exited()) {
    problem(std::string(what) + ": the block of cluster rank " + std::to_string(rank) +
            " has exited, and its shared memory with it");
    return nullptr;
  }
  return &l.blocks[rank];
}

void mbarrierProblem(const std::string& p) {
  if (!p.empty()) problem(p);
}

}  // namespace

void mbarrier_init(uint32_t addr, uint32_t count) {
  if (tyl::emu::Mbarrier* b = mbarrierAt(addr, "mbarrier.init")) {
    *b = tyl::emu::Mbarrier{};
    mbarrierProblem(b->init(count));
    ++launch().mbarrierChanges;
  }
}

void mbarrier_arrive(uint32_t addr, int64_t expectTx, int cta) {
  Block* target = cta < 0 ? &here() : clusterBlock(static_cast<unsigned>(cta), "mbarrier.arrive.shared::cluster");
  if (!target) return;
  if (tyl::emu::Mbarrier* b = mbarrierAt(addr, "mbarrier.arrive", target)) {
    mbarrierProblem(expectTx >= 0 ? b->arriveExpectTx(expectTx) : b->arrive());
    ++launch().mbarrierChanges;
  }
}

void mbarrier_wait(uint32_t addr, uint32_t parity) {
  while (true) {
    tyl::emu::Mbarrier* b = mbarrierAt(addr, "mbarrier wait");
    if (!b) return;
    if (!b->initialized()) {
      problem("a wait on an mbarrier that was never initialized");
      return;
    }
    if (b->phaseComplete(static_cast<int>(parity & 1))) return;
    suspend(State::AtMbarrier);
  }
}

namespace {

// The fields of the tensor-map stand-in, in its 16 words.
struct TensorMapFields {
  uint64_t base;
  int elemBytes, rank, swizzle;
  uint64_t dims[5], strides[4];
  uint32_t box[5];
};

constexpr int kMapDims = 2, kMapStrides = 7, kMapBox = 11;

TensorMapFields readTensorMap(const uint64_t (&m)[16]) {
  TensorMapFields f{};
  f.base = m[0];
  f.elemBytes = static_cast<int>(m[1] & 0xff);
  f.rank = static_cast<int>((m[1] >> 8) & 0xff);
  f.swizzle = static_cast<int>(m[1] >> 16);
  for (int d = 0; d < 5; ++d) f.dims[d] = m[kMapDims + d];
  for (int d = 0; d < 4; ++d) f.strides[d] = m[kMapStrides + d];
  for (int d = 0; d < 5; ++d) f.box[d] = static_cast<uint32_t>(m[kMapBox + d / 2] >> (32 * (d % 2)));
  return f;
}

}  // namespace

bool encode_tensor_map(uint64_t (&map)[16], const void* base, int elemBytes, int rank, const uint64_t* dims,
                       const uint64_t* strides, const uint32_t* box, int swizzleBytes) {
  std::fill(std::begin(map), std::end(map), uint64_t{0});
  const uint64_t address = reinterpret_cast<uintptr_t>(base);
  if (rank < 1 || rank > 5 || address % 16 != 0) return false;
  if (elemBytes != 1 && elemBytes != 2 && elemBytes != 4 && elemBytes != 8) return false;
  if (swizzleBytes != 0 && swizzleBytes != 32 && swizzleBytes != 64 && swizzleBytes != 128) return false;
  // A tensor without elements: left unencoded, as tylo::encode_tensor_map leaves it.
  if (std::any_of(dims, dims + rank, [](uint64_t n) { return n == 0; })) return true;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == 0 || dims[d] > (uint64_t{1} << 32) || box[d] == 0 || box[d] > 256) return false;
    if (d > 0 && (strides[d - 1] % 16 != 0 || strides[d - 1] >= (uint64_t{1} << 40))) return false;
  }
  const uint64_t rowBytes = uint64_t{box[0]} * static_cast<uint64_t>(elemBytes);
  if (rowBytes % 16 != 0 || (swizzleBytes != 0 && rowBytes > static_cast<uint64_t>(swizzleBytes))) return false;
  map[0] = address;
  map[1] = static_cast<uint64_t>(elemBytes) | static_cast<uint64_t>(rank) << 8 | static_cast<uint64_t>(swizzleBytes) << 16;
  for (int d = 0; d < rank; ++d) {
    map[kMapDims + d] = dims[d];
    if (d > 0) map[kMapStrides + d - 1] = strides[d - 1];
    map[kMapBox + d / 2] |= static_cast<uint64_t>(box[d]) << (32 * (d % 2));
  }
  return true;
}

void tma_load(uint32_t dst, const uint64_t (&map)[16], std::initializer_list<int32_t> coordList, uint32_t bar,
              int ctaMask) {
  const TensorMapFields f = readTensorMap(map);
  if (f.rank == 0) {
    problem("cp.async.bulk.tensor: the tensor map was never encoded (its tensor has no elements, or the launch did "
            "not encode it)");
    return;
  }
  if (static_cast<int>(coordList.size()) != f.rank) {
    problem("cp.async.bulk.tensor: " + std::to_string(coordList.size()) + " coordinates for a tensor map of rank " +
            std::to_string(f.rank));
    return;
  }
  const std::vector<int32_t> coords(coordList);
  int64_t boxElems = 1;
  for (int d = 0; d < f.rank; ++d) boxElems *= f.box[d];
  const int64_t boxBytes = boxElems * f.elemBytes;
  if (!sharedRange(dst, static_cast<size_t>(boxBytes), 128, "cp.async.bulk.tensor")) return;
  // The blocks it lands in: this one, or those of the multicast mask.
  std::vector<Block*> targets;
  if (ctaMask < 0) targets.push_back(&here());
  for (unsigned r = 0; ctaMask >= 0 && r < 16; ++r)
    if (ctaMask >> r & 1)
      if (Block* t = clusterBlock(r, "cp.async.bulk.tensor .multicast::cluster")) targets.push_back(t);
  std::vector<unsigned char> box(static_cast<size_t>(boxBytes));
  std::vector<int64_t> index(static_cast<size_t>(f.rank), 0);
  for (int64_t i = 0; i < boxElems; ++i) {
    bool inside = true;
    uint64_t address = f.base;
    for (int d = 0; d < f.rank; ++d) {
      const int64_t g = int64_t{coords[static_cast<size_t>(d)]} + index[static_cast<size_t>(d)];
      inside = inside && g >= 0 && static_cast<uint64_t>(g) < f.dims[d];
      address += static_cast<uint64_t>(g) * (d == 0 ? static_cast<uint64_t>(f.elemBytes) : f.strides[d - 1]);
    }
    unsigned char* out = box.data() + i * f.elemBytes;
    if (inside)
      std::memcpy(out, reinterpret_cast<const void*>(static_cast<uintptr_t>(address)), static_cast<size_t>(f.elemBytes));
    else
      std::memset(out, 0, static_cast<size_t>(f.elemBytes));
    for (int d = 0; d < f.rank && ++index[static_cast<size_t>(d)] == f.box[d]; ++d) index[static_cast<size_t>(d)] = 0;
  }
  for (Block* t : targets) {
    tyl::emu::Mbarrier* b = mbarrierAt(bar, "cp.async.bulk.tensor's mbarrier", t);
    if (!b) return;
    for (int64_t i = 0; i < boxElems; ++i) {
      const int64_t to = tyl::layout::tmaElementAddress(f.swizzle, dst, f.box[0], f.elemBytes, i / f.box[0], i % f.box[0]);
      std::memcpy(t->shared + to, box.data() + i * f.elemBytes, static_cast<size_t>(f.elemBytes));
    }
    mbarrierProblem(b->completeTx(boxBytes));
    ++launch().mbarrierChanges;
  }
}

void tma_store(const uint64_t (&map)[16], std::initializer_list<int32_t> coordList, uint32_t src) {
  const TensorMapFields f = readTensorMap(map);
  if (f.rank == 0 || static_cast<int>(coordList.size()) != f.rank) {
    problem("cp.async.bulk.tensor (store): a tensor map never encoded, or coordinates of another rank");
    return;
  }
  const std::vector<int32_t> coords(coordList);
  int64_t boxElems = 1;
  for (int d = 0; d < f.rank; ++d) boxElems *= f.box[d];
  if (!sharedRange(src, static_cast<size_t>(boxElems * f.elemBytes), 128, "cp.async.bulk.tensor (store)")) return;
  std::vector<int64_t> index(static_cast<size_t>(f.rank), 0);
  for (int64_t i = 0; i < boxElems; ++i) {
    bool inside = true;
    uint64_t address = f.base;
    for (int d = 0; d < f.rank; ++d) {
      const int64_t g = int64_t{coords[static_cast<size_t>(d)]} + index[static_cast<size_t>(d)];
      inside = inside && g >= 0 && static_cast<uint64_t>(g) < f.dims[d];
      address += static_cast<uint64_t>(g) * (d == 0 ? static_cast<uint64_t>(f.elemBytes) : f.strides[d - 1]);
    }
    const int64_t from = tyl::layout::tmaElementAddress(f.swizzle, src, f.box[0], f.elemBytes, i / f.box[0], i % f.box[0]);
    if (inside)
      std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(address)), here().shared + from,
                  static_cast<size_t>(f.elemBytes));
    for (int d = 0; d < f.rank && ++index[static_cast<size_t>(d)] == f.box[d]; ++d) index[static_cast<size_t>(d)] = 0;
  }
}

cudaError_t set_kernel_attribute(const void* kernel, int attribute, int value) {
  // As CUDA does, a failed call also leaves its error for cudaGetLastError().
  if (attribute != 8 || value < 0 || static_cast<size_t>(value) > kMaxShared) return lastError = cudaErrorInvalidValue;
  sharedLimits[kernel] = value;
  return cudaSuccess;
}

cudaError_t take_last_error() { return std::exchange(lastError, cudaSuccess); }

cudaError_t launch_kernel(const void* kernel, const std::function<void()>& body, dim3 grid, dim3 block,
                          size_t shared_bytes, dim3 cluster) {
  ++launchCount;
  auto refuse = [&](const std::string& why) {
    problemLog += "launch refused: " + why + "\n";
    return lastError = cudaErrorInvalidValue;
  };
  size_t threads = size_t{block.x} * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.z > 64) return refuse("block of " + std::to_string(threads) + " threads");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535) return refuse("empty or too large grid");
  const size_t clusterBlocks = size_t{cluster.x} * cluster.y * cluster.z;
  if (clusterBlocks == 0 || clusterBlocks > 8 || grid.x % cluster.x || grid.y % cluster.y || grid.z % cluster.z)
    return refuse("a grid that is not a whole number of clusters of at most 8 blocks");
  auto limit = sharedLimits.find(kernel);
  size_t allowed = limit == sharedLimits.end() ? kDefaultSharedLimit : std::max<size_t>(kDefaultSharedLimit, static_cast<size_t>(limit->second));
  if (shared_bytes > allowed)
    return refuse(std::to_string(shared_bytes) + " bytes of dynamic shared memory, over the kernel's limit of " +
                  std::to_string(allowed));

  Launch l;
  l.body = &body;
  l.grid = grid;
  l.block = block;
  l.cluster = cluster;
  l.sharedBytes = shared_bytes;
  // Exactly the bytes asked for, 1024-aligned as the declaration says; poisoned, since
  // shared memory starts with whatever the last block left.
  std::vector<std::unique_ptr<unsigned char, decltype(&std::free)>> shared;
  l.blocks.resize(clusterBlocks);
  for (size_t r = 0; r < clusterBlocks; ++r) {
    Block& b = l.blocks[r];
    b.rank = static_cast<unsigned>(r);
    shared.emplace_back(
        static_cast<unsigned char*>(std::aligned_alloc(1024, std::max<size_t>(1024, (shared_bytes + 1023) / 1024 * 1024))),
        &std::free);
    b.shared = shared.back().get();
    b.threads.resize(threads);
    for (size_t i = 0; i < threads; ++i) {
      Thread& t = b.threads[i];
      t.block = &b;
      t.stack.reset(new char[kStackBytes]);
      t.id = uint3{static_cast<unsigned>(i % block.x), static_cast<unsigned>(i / block.x % block.y),
                   static_cast<unsigned>(i / (size_t{block.x} * block.y))};
    }
  }
  active = &l;
  bool ok = true;
  for (unsigned z = 0; z < grid.z && ok; z += cluster.z)
    for (unsigned y = 0; y < grid.y && ok; y += cluster.y)
      for (unsigned x = 0; x < grid.x && ok; x += cluster.x) {
        // Ranks as %cluster_ctarank numbers them: x fastest.
        for (Block& b : l.blocks) {
          b.id = uint3{x + b.rank % cluster.x, y + b.rank / cluster.x % cluster.y, z + b.rank / (cluster.x * cluster.y)};
          std::memset(b.shared, 0xa5, shared_bytes);
        }
        ok = runCluster(l) && l.problems.empty();
      }
  active = nullptr;
  for (const std::string& p : l.problems) problemLog += p + "\n";
  // A launch that succeeds leaves an earlier call's error in place, as CUDA does.
  if (l.problems.empty() && ok) return cudaSuccess;
  return lastError = cudaErrorLaunchFailure;
}

std::string take_problems() { return std::exchange(problemLog, std::string()); }
int launches() { return launchCount; }
int64_t take_async_bytes_landed() { return std::exchange(asyncBytesLanded, int64_t{0}); }

}  // namespace tylo_host
