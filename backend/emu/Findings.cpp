#include "backend/emu/Findings.h"

#include <fmt/format.h>

#include <sstream>

#include "base/Diagnostics.h"

namespace tyl::emu {
namespace {

TYL_DIAG(kEmuOutOfBounds, Error, "emu-out-of-bounds", "emulator: a memory access outside its buffer, or a window outside its register fragment");
TYL_DIAG(kEmuMisaligned, Error, "emu-misaligned", "emulator: an address not aligned to the access size");
TYL_DIAG(kEmuUninitialized, Error, "emu-uninitialized-read", "emulator: a read of memory never written");
TYL_DIAG(kEmuUninitializedRegister, Error, "emu-uninitialized-register",
         "emulator: a stored value, address or condition computed from a register never written");
TYL_DIAG(kEmuSharedRace, Error, "emu-shared-race", "emulator: a shared-memory race between barriers");
TYL_DIAG(kEmuAsyncRead, Error, "emu-async-read-before-wait",
         "emulator: a cp.async destination read before a wait covers the copy");
TYL_DIAG(kEmuAsyncProxy, Error, "emu-async-proxy",
         "emulator: a TMA store reads shared memory written without a fence.proxy.async");
TYL_DIAG(kEmuWgmmaInFlight, Error, "emu-wgmma-in-flight",
         "emulator: a register read while a wgmma that writes it is in flight (before its wait_group)");
TYL_DIAG(kEmuClusterExited, Error, "emu-cluster-exited",
         "emulator: a remote arrive or multicast into a block of the cluster that has exited");
TYL_DIAG(kEmuPartialCollective, Error, "emu-partial-collective",
         "emulator: a warp-collective instruction executed by part of a warp");
TYL_DIAG(kEmuDivergentBarrier, Error, "emu-divergent-barrier",
         "emulator: bar.sync reached by part of a warp");
TYL_DIAG(kEmuDeadlock, Error, "emu-deadlock", "emulator: warps wait at a barrier others never reach");
TYL_DIAG(kEmuDivisionByZero, Error, "emu-division-by-zero", "emulator: integer division by zero");
TYL_DIAG(kEmuInvalidOperand, Error, "emu-invalid-operand", "emulator: an instruction operand out of range");
TYL_DIAG(kEmuLaunchFailure, Error, "emu-launch-failure", "emulator: a launch the host launcher would refuse");
TYL_DIAG(kEmuStepLimit, Error, "emu-step-limit", "emulator: the run exceeded its instruction budget");

const DiagKind& diagKind(FindingKind kind) {
  switch (kind) {
    case FindingKind::OutOfBounds: return kEmuOutOfBounds;
    case FindingKind::Misaligned: return kEmuMisaligned;
    case FindingKind::UninitializedRead: return kEmuUninitialized;
    case FindingKind::UninitializedRegister: return kEmuUninitializedRegister;
    case FindingKind::SharedRace: return kEmuSharedRace;
    case FindingKind::AsyncReadBeforeWait: return kEmuAsyncRead;
    case FindingKind::AsyncProxy: return kEmuAsyncProxy;
    case FindingKind::WgmmaInFlight: return kEmuWgmmaInFlight;
    case FindingKind::ClusterExited: return kEmuClusterExited;
    case FindingKind::PartialCollective: return kEmuPartialCollective;
    case FindingKind::DivergentBarrier: return kEmuDivergentBarrier;
    case FindingKind::Deadlock: return kEmuDeadlock;
    case FindingKind::DivisionByZero: return kEmuDivisionByZero;
    case FindingKind::InvalidOperand: return kEmuInvalidOperand;
    case FindingKind::LaunchFailure: return kEmuLaunchFailure;
    case FindingKind::StepLimit: return kEmuStepLimit;
  }
  return kEmuLaunchFailure;
}

}  // namespace

const char* findingId(FindingKind kind) { return diagKind(kind).id.data(); }

std::string describe(const ThreadRef& t) {
  return fmt::format("thread {} (warp {}, lane {}) of block ({}, {}, {})", t.thread, t.thread / 32,
                     t.thread % 32, t.block[0], t.block[1], t.block[2]);
}

void FindingLog::add(Finding f, const void* site, const void* otherSite) {
  auto key = std::make_tuple(f.kind, site, otherSite);
  if (auto it = index_.find(key); it != index_.end()) {
    ++findings_[it->second].count;
    return;
  }
  if (stopped()) return;
  index_.emplace(key, findings_.size());
  findings_.push_back(std::move(f));
}

void reportFindings(const std::vector<Finding>& findings, DiagnosticEngine& diags) {
  for (const Finding& f : findings) {
    DiagBuilder d = diags.report(diagKind(f.kind), f.loc, f.message);
    if (!f.otherNote.empty()) d.note(f.otherLoc.valid() ? f.otherLoc : f.loc, f.otherNote);
    if (f.count > 1) d.note(f.loc, fmt::format("this happened {} times", f.count));
  }
}

std::string renderFindings(const std::vector<Finding>& findings, const SourceManager& sources) {
  DiagnosticOptions options;
  options.errorLimit = findings.size();
  DiagnosticEngine diags(sources, options);
  reportFindings(findings, diags);
  std::ostringstream out;
  diags.renderText(out);
  return out.str();
}

}  // namespace tyl::emu
