// What the emulator reports about a kernel run: bugs in the kernel (races, out-of-bounds or
// uninitialized accesses, misuse of collective instructions) and launches that would fail.
// Findings are values, never exceptions; each points at the thread IR statement's source.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/Source.h"

namespace tyl {
class DiagnosticEngine;
}

namespace tyl::emu {

enum class FindingKind : uint8_t {
  OutOfBounds,          // global access outside its buffer, shared outside its allocation
  Misaligned,           // address not a multiple of the access size
  UninitializedRead,    // a byte never written (shared, or global not provided by the host)
  UninitializedRegister,  // a value stored, or used as an address or condition, computed from
                          // a register the thread never wrote
  SharedRace,           // two threads touch a shared byte between barriers, one writing
  AsyncReadBeforeWait,  // a cp.async destination read before a wait covers the copy
  AsyncProxy,           // a TMA store reading shared bytes whose generic write was not fenced
  WgmmaInFlight,        // a register read that a wgmma still in flight writes
  ClusterExited,        // a remote arrive or multicast into a block of the cluster that has exited
  PartialCollective,    // ldmatrix/stmatrix/mma.sync executed by only part of a warp
  DivergentBarrier,     // bar.sync reached by only part of a warp
  Deadlock,             // some warps wait at a barrier the others never reach
  DivisionByZero,       // integer division or remainder by zero
  InvalidOperand,       // an operand outside what the instruction accepts (cp.async src size)
  LaunchFailure,        // the host launcher would refuse the launch (failed check, bad size)
  StepLimit,            // the run exceeded Options::maxWarpInstructions
};

// A stable, greppable ID per kind (e.g. "emu-shared-race").
const char* findingId(FindingKind kind);

// A thread of the grid: blockIdx and the linear thread id x + y*bx + z*bx*by.
struct ThreadRef {
  std::array<int64_t, 3> block{0, 0, 0};
  int64_t thread = -1;

  bool valid() const { return thread >= 0; }
};

// "thread 33 (warp 1, lane 1) of block (0, 0, 0)"
std::string describe(const ThreadRef& t);

struct Finding {
  FindingKind kind = FindingKind::LaunchFailure;
  std::string message;
  SourceRange loc;
  ThreadRef thread;
  // A second statement involved (the other access of a race, the cp.async not yet waited
  // for), with a note saying what happened there.
  SourceRange otherLoc;
  std::string otherNote;
  ThreadRef otherThread;
  int64_t count = 1;  // occurrences folded into this finding (same kind and statements)

  static Finding make(FindingKind kind, std::string message) {
    Finding f;
    f.kind = kind;
    f.message = std::move(message);
    return f;
  }
};

// Collects findings, folding repeats of the same kind at the same statements into one
// (a race inside a loop is one finding, not thousands), and tells the run when to stop.
class FindingLog {
 public:
  explicit FindingLog(size_t limit) : limit_(limit) {}

  // `site` and `otherSite` identify where it happened (usually the Stmt addresses).
  void add(Finding f, const void* site, const void* otherSite = nullptr);
  // After a finding the run cannot continue from (a divergent barrier, a deadlock).
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_ || findings_.size() >= limit_; }
  const std::vector<Finding>& findings() const { return findings_; }
  std::vector<Finding> take() { return std::move(findings_); }

 private:
  size_t limit_;
  bool stopped_ = false;
  std::vector<Finding> findings_;
  std::map<std::tuple<FindingKind, const void*, const void*>, size_t> index_;
};

// Adds the findings to `diags` as errors (IDs from findingId), with the second location and
// the repeat count as notes.
void reportFindings(const std::vector<Finding>& findings, DiagnosticEngine& diags);
// The same, rendered as text: `file:line:col: error: message [id]`, the source line, notes.
std::string renderFindings(const std::vector<Finding>& findings, const SourceManager& sources);

}  // namespace tyl::emu
