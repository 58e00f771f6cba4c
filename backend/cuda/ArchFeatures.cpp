// Which architecture each instruction needs, and the check that a kernel uses none its target
// lacks: mbarriers (with expected transactions and parity waits) and TMA need sm_90, wgmma sm_90a.
#include <fmt/format.h>

#include "backend/cuda/EmitImpl.h"
#include "ir/thread/Builder.h"
#include "ir/thread/Walk.h"

namespace tyl::cuda {

TYL_DIAG(kArchFeature, Error, "arch-feature", "an instruction the target architecture (--arch) does not have");

namespace {

// The instruction a statement is and the architectures that have it; null when every target does.
struct Need {
  const char* instruction;
  bool sm90;   // sm_90 has it (and so sm_90a)
};

std::optional<Need> need(const tir::Stmt& s) {
  return std::visit(
      [](const auto& n) -> std::optional<Need> {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, tir::Wgmma> || std::is_same_v<T, tir::WgmmaFence> ||
                      std::is_same_v<T, tir::WgmmaCommit> || std::is_same_v<T, tir::WgmmaWait>)
          return Need{"wgmma.mma_async", false};
        if constexpr (std::is_same_v<T, tir::MbarrierInit> || std::is_same_v<T, tir::MbarrierArrive> ||
                      std::is_same_v<T, tir::MbarrierWait> || std::is_same_v<T, tir::FenceMbarrierInit>)
          return Need{"an mbarrier", true};
        if constexpr (std::is_same_v<T, tir::TmaLoad> || std::is_same_v<T, tir::TmaStore> ||
                      std::is_same_v<T, tir::BulkCommit> || std::is_same_v<T, tir::BulkWait> ||
                      std::is_same_v<T, tir::FenceProxyAsync>)
          return Need{"a TMA copy (cp.async.bulk.tensor)", true};
        if constexpr (std::is_same_v<T, tir::SetMaxNReg>) return Need{"setmaxnreg", false};
        if constexpr (std::is_same_v<T, tir::Barrier>)
          if (n.cluster) return Need{"a cluster barrier (barrier.cluster)", true};
        return std::nullopt;
      },
      s.node);
}

// Whether the statement itself (not the blocks nested in it) reads special register `reg`
// (elect_one is elect.sync, cluster_rank %cluster_ctarank: both sm_90).
bool reads(const tir::Stmt& s, tir::Special reg) {
  bool found = false;
  tir::Block one;
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, tir::If>) {
          found = tir::mentionsSpecial(n.cond, reg);
        } else if constexpr (std::is_same_v<T, tir::For>) {
          for (const tir::ExprRef* e : {&n.begin, &n.end, &n.step})
            found = found || tir::mentionsSpecial(*e, reg);
        } else {
          one.push_back(s);
          tir::forEachExpr(static_cast<const tir::Block&>(one), [&](const tir::ExprRef& e, const tir::Block&, size_t) {
            found = found || tir::mentionsSpecial(e, reg);
          });
        }
      },
      s.node);
  return found;
}

// The first statement of `b` (nested ones included) that `arch` does not have.
const tir::Stmt* firstMissing(const tir::Block& b, Arch arch, Need* what) {
  for (const tir::Stmt& s : b) {
    std::optional<Need> n = need(s);
    if (!n && reads(s, tir::Special::ElectOne)) n = Need{"elect_one (elect.sync)", true};
    if (!n && reads(s, tir::Special::ClusterRank)) n = Need{"cluster_rank (%cluster_ctarank)", true};
    if (n && arch != Arch::Sm90a && !(n->sm90 && arch == Arch::Sm90)) {
      *what = *n;
      return &s;
    }
    const tir::Stmt* inner = nullptr;
    if (const auto* loop = std::get_if<tir::For>(&s.node)) inner = firstMissing(loop->body, arch, what);
    if (const auto* branch = std::get_if<tir::If>(&s.node)) {
      inner = firstMissing(branch->then, arch, what);
      if (!inner) inner = firstMissing(branch->otherwise, arch, what);
    }
    if (inner) return inner;
  }
  return nullptr;
}

}  // namespace

bool checkArchFeatures(const tir::Module& module, Arch arch, DiagnosticEngine& diags) {
  bool ok = true;
  for (const tir::Kernel& k : module.kernels) {
    Need what{};
    if (k.clusterSize() > 1 && arch != Arch::Sm90 && arch != Arch::Sm90a) {
      diags.report(kArchFeature, k.launchLoc,
                   fmt::format("a launch in clusters needs --arch sm_90 or sm_90a; '{}' is compiled for {}", k.name,
                               archName(arch)));
      ok = false;
    } else if (const tir::Stmt* s = firstMissing(k.body, arch, &what)) {
      diags.report(kArchFeature, s->loc,
                   fmt::format("{} needs --arch {}; '{}' is compiled for {}", what.instruction,
                               what.sm90 ? "sm_90 or sm_90a" : "sm_90a", k.name, archName(arch)));
      ok = false;
    }
  }
  return ok;
}

}  // namespace tyl::cuda
