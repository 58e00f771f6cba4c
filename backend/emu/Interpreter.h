// Executes thread IR statements for one warp at a time, 32 lanes in lockstep under an
// active mask, until the warp reaches a barrier or its end. Block.cpp schedules the warps.
//
// The statement kinds are split over three files: control flow and registers
// (Interpreter.cpp), memory accesses and cp.async (MemoryOps.cpp), and the warp-collective
// ldmatrix/stmatrix/mma.sync (Collectives.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/emu/Launch.h"
#include "backend/emu/Mbarrier.h"
#include "backend/emu/Warp.h"

namespace tyl::emu {

// A cp.async in flight: its source was read at issue, its destination is written when a
// wait covers its group.
struct AsyncCopy {
  int64_t dst = 0;
  int bytes = 0;
  std::array<std::byte, 16> data{};
  const tir::Stmt* stmt = nullptr;
  uint64_t id = 0;
};

// One thread's cp.async groups: copies issued since the last commit, and committed groups
// oldest first.
struct AsyncGroups {
  std::vector<AsyncCopy> open;
  std::deque<std::vector<AsyncCopy>> committed;
};

// One thread's TMA store groups: the shared byte ranges [first, first + second) its stores may
// still read, since the last commit and in committed groups, oldest first.
struct BulkGroups {
  std::vector<std::pair<int64_t, int64_t>> open;
  std::deque<std::vector<std::pair<int64_t, int64_t>>> committed;
};

// An mbarrier of the block, with what its arrivals released: in the phase under way, and in the
// phase that completed last (what a wait for it acquires).
struct MbarrierState {
  Mbarrier barrier;
  VectorClock current, completed;
};

struct BlockState {
  std::array<int64_t, 3> idx{0, 0, 0};
  int rank = 0;                     // in its cluster
  int64_t threadBase = 0;           // the cluster thread id of its thread 0: rank * threads per block
  SharedMemory* shared = nullptr;   // its shared memory
  std::vector<Warp> warps;
  std::vector<AsyncGroups> async;  // per thread
  std::vector<BulkGroups> bulk;    // per thread
  std::map<int64_t, MbarrierState> mbarriers;  // by shared byte
  // setmaxnreg: each warp's registers per thread, and the block's pool (what the launch allocated).
  std::vector<int> registers;
  int64_t registerPool = 0;

  bool exited() const {
    for (const Warp& w : warps)
      if (w.state != WarpState::Exited) return false;
    return true;
  }
};

// The blocks of one cluster (one block without clusters), which run together: their threads
// arrive on each other's mbarriers and TMA multicasts into each other's shared memory.
struct ClusterState {
  std::vector<BlockState> blocks;  // by rank
  uint64_t mbarrierChanges = 0;  // counts inits, arrivals, transactions and registers returned: waits may now succeed
};

class Interpreter {
 public:
  Interpreter(LaunchContext& ctx, ClusterState& cluster, BlockState& block)
      : ctx_(ctx), cluster_(cluster), block_(block) {}

  // Runs `w` until it waits at a barrier, exits, or the run must stop.
  void run(Warp& w);

 private:
  // Where one lane's access lands, after bounds checks.
  struct Place {
    bool shared = false;
    int buffer = -1;   // host buffer (global)
    int64_t byte = 0;  // in the host buffer (global) or in shared memory
  };

  // Control flow and registers (Interpreter.cpp).
  bool spend(const Warp& w, Mask mask);
  bool exec(Warp& w, const tir::Stmt& s, Mask mask);  // true: the warp pauses at a barrier
  void endFrame(Warp& w);
  Mask loopTest(Warp& w, const tir::For& loop, Mask mask);
  void exitWarp(Warp& w);
  Evaluator evaluator(const Warp& w) const;
  // Reports division by zero, and lanes whose value comes from registers never written (it
  // is used as an address, a condition or a loop bound).
  Lanes eval(const Warp& w, const tir::ExprRef& e, Mask mask);
  // Reports division by zero only; which lanes depend on unwritten registers goes to `taint`.
  Lanes evalValue(const Warp& w, const tir::ExprRef& e, Mask mask, Taint& taint);
  // A stored value, an address or a condition that depends on registers the thread never wrote.
  void reportUnwritten(const Warp& w, Mask lanes, const tir::Reg& reg, const char* use);
  Mask predicate(const Warp& w, const tir::ExprRef& pred, Mask mask);
  void execAssign(Warp& w, const tir::Assign& a, Mask mask);
  bool execBarrier(Warp& w, const tir::Barrier& b, Mask mask);

  // Memory (MemoryOps.cpp).
  void execLoad(Warp& w, const tir::Load& load, Mask mask);
  void execStore(Warp& w, const tir::Store& store, Mask mask);
  void execCpAsync(Warp& w, const tir::CpAsync& cp, Mask mask);
  void execCommit(Warp& w, Mask mask);
  void execWait(Warp& w, const tir::CpAsyncWait& wait, Mask mask);
  void landGroup(int64_t thread, std::vector<AsyncCopy>& group);
  bool place(const Warp& w, const tir::MemRef& m, int64_t elemOffset, int bytes, int align, int lane,
             const char* verb, Place* out);
  void readBytes(const Warp& w, const tir::MemRef& m, const Place& p, int n, int lane, std::byte* out);
  void writeBytes(const Warp& w, const tir::MemRef& m, const Place& p, int n, int lane, const std::byte* in);
  // A write of `lane` to shared memory `to` (this block's, or another's of the cluster).
  void writeShared(const Warp& w, const tir::MemRef& m, SharedMemory& to, int64_t byte, int n, int lane,
                   const std::byte* in);
  void reportShared(const Warp& w, const SharedCheck& check, const tir::MemRef& m, int lane, bool writing);
  std::string where(const tir::MemRef& m, const Place& p) const;

  // Warp-collective instructions (Collectives.cpp).
  void execLdmatrix(Warp& w, const tir::Ldmatrix& ld, Mask mask);
  void execStmatrix(Warp& w, const tir::Stmatrix& st, Mask mask);
  void execShfl(Warp& w, const tir::Shfl& sh, Mask mask);
  void execMma(Warp& w, const tir::Mma& mma, Mask mask);

  // mbarriers (MbarrierOps.cpp). A wait that cannot complete yet pauses the warp at it.
  void execMbarrierInit(Warp& w, const tir::MbarrierInit& op, Mask mask);
  void execMbarrierArrive(Warp& w, const tir::MbarrierArrive& op, Mask mask);
  bool execMbarrierWait(Warp& w, const tir::MbarrierWait& op, Mask mask);
  bool execSetMaxNReg(Warp& w, const tir::SetMaxNReg& op, Mask mask);
  void execTmaStore(Warp& w, const tir::TmaStore& op, Mask mask);
  struct TmaBox;  // TmaOps.cpp
  TmaBox tmaBox(Warp& w, uint32_t map, const std::vector<tir::ExprRef>& coords, Mask mask);
  bool tmaMapEncoded(Warp& w, const TmaBox& box, int lane, const char* what);
  // cp.async.bulk.commit_group (commit) or wait_group.read `pending`.
  void execBulkGroup(Warp& w, bool commit, int pending, Mask mask);
  // TMA (TmaOps.cpp).
  void execTmaLoad(Warp& w, const tir::TmaLoad& op, Mask mask);
  // The shared byte of `lane`'s barrier; nullopt (reported) when it is not a barrier's place.
  std::optional<int64_t> mbarrierByte(const Warp& w, const tir::MemRef& bar, uint64_t offset, int lane);
  void execWgmma(Warp& w, const tir::Wgmma& op, Mask mask);
  void execWgmmaCommit(Warp& w, Mask mask);
  void execWgmmaWait(Warp& w, int pending, Mask mask);
  void performWgmma(Warp& w, const IssuedWgmma& issued);
  // Performs the warp's committed wgmma groups but the `pending` newest.
  void retireWgmmas(Warp& w, size_t pending);
  void forEachWgmmaOperand(const Warp& w, const IssuedWgmma& issued,
                           const std::function<void(bool, int64_t, int64_t, int64_t)>& fn);
  // Whether `reg` is a D register of a wgmma in flight in `w`.
  static bool heldByWgmma(const Warp& w, const tir::Reg& reg);
  // A 16-bit element wgmma reads at shared-window address `address`, for `lane`'s warp.
  float wgmmaElement(const Warp& w, int lane, int64_t address, tir::Type type, const char* operand);
  void execCheck(const Warp& w, const tir::Check& c, Mask mask);
  void checkCollective(const Warp& w, Mask mask, const char* name);

  // Clusters: the block of `rank` that a remote operation of `lane` addresses (reported and null
  // when there is none, or it has exited), and arrivals on an mbarrier state.
  BlockState* clusterBlock(const Warp& w, int lane, uint64_t rank, const char* what);
  // An arrive (with `amount` expected bytes first, for ArriveExpectTx) or a transaction of `amount`
  // bytes by `lane` on the mbarrier at shared byte `byte` of `target`, releasing what the lane did.
  enum class Signal { Arrive, ArriveExpectTx, CompleteTx };
  void signalMbarrier(const Warp& w, int lane, BlockState& target, int64_t byte, Signal signal, int64_t amount);

  // Shared memory of this block, and the cluster thread id of a lane, as Sites name threads.
  SharedMemory& shared() { return *block_.shared; }
  int32_t clusterThread(const Warp& w, int lane) const { return static_cast<int32_t>(block_.threadBase + w.thread(lane)); }
  Site site(const Warp& w, int lane) const { return Site{stmt_, clusterThread(w, lane)}; }

  // Findings.
  ThreadRef threadRef(const Warp& w, int lane) const { return ThreadRef{block_.idx, w.thread(lane)}; }
  // A thread named by its cluster thread id.
  ThreadRef threadRef(int64_t clusterThread) const;
  void report(FindingKind kind, const Warp& w, int lane, std::string message);
  // "thread 3 (warp 0, lane 3)": another thread of the same block, or of another block of the
  // cluster ("... of block (1, 0, 0)"), by its cluster thread id.
  std::string describeInBlock(int64_t clusterThread) const;

  LaunchContext& ctx_;
  ClusterState& cluster_;
  BlockState& block_;
  const tir::Stmt* stmt_ = nullptr;  // the statement being executed, for findings
};

}  // namespace tyl::emu
