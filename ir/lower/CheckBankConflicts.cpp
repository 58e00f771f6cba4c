// Shared-memory bank conflicts of the accesses a lowering emits. A conflict is a warning
// with its degree, the instruction, and a swizzle of the same tile that avoids it.
#include <fmt/format.h>

#include "ir/layout/Analysis.h"
#include "ir/layout/Transforms.h"
#include "ir/lower/LowerImpl.h"
#include "ir/lower/MemoryRuns.h"

namespace tyl::lower {

TYL_DIAG(kBankConflict, Warning, "bank-conflict", "shared-memory accesses of one warp that hit a bank more than once");

namespace {

// The worst degree of the accesses, and the first access that has it.
std::pair<int, const WarpAccess*> worst(const std::vector<WarpAccess>& accesses) {
  std::pair<int, const WarpAccess*> w{1, nullptr};
  for (const WarpAccess& a : accesses) {
    int d = layout::bankConflictDegree(a.bytes, a.width);
    if (d > w.first) w = {d, &a};
  }
  return w;
}

}  // namespace

void KernelLowering::reportBankConflicts(SourceRange loc, const std::string& instr, const tile::Tensor& t,
                                         const std::function<std::vector<WarpAccess>(const layout::Layout&)>& accesses) {
  if (!t.layout || t.space != tile::MemSpace::Shared) return;
  std::vector<WarpAccess> now = accesses(*t.layout);
  if (now.empty()) return;
  const auto [degree, culprit] = worst(now);
  if (degree <= 1) return;
  // Look for a swizzle of the same affine tile that makes every access conflict-free:
  // keep 16-byte chunks whole (M) and try the field widths and distances in turn.
  std::string suggestion;
  int eb = tile::dtypeBytes(t.dtype);
  int m = 0;
  while ((1 << (m + 1)) * eb <= 16) ++m;
  for (int b = 1; b <= 3 && suggestion.empty(); ++b) {
    for (int s = b; s <= 7 && suggestion.empty(); ++s) {
      layout::Layout candidate = layout::Layout::compose(layout::Swizzle::make(m, b, s), t.layout->tile);
      std::vector<WarpAccess> alt = accesses(candidate);
      if (!alt.empty() && worst(alt).first == 1) suggestion = layout::toString(candidate);
    }
  }
  auto d = diags_.report(kBankConflict, loc,
                         fmt::format("{} on '{}' has {}-way shared-memory bank conflicts{}", instr, t.name, degree,
                                     culprit->where));
  d.note(t.layoutLoc, fmt::format("the layout of '{}' is {}", t.name, layout::toString(*t.layout)));
  if (!suggestion.empty())
    d.note(t.layoutLoc, fmt::format("this layout is conflict-free for these accesses: {}", suggestion));
}

void KernelLowering::checkSharedBanks(SourceRange loc, const char* instr, const tile::Tensor& t, const tile::View& v,
                                      const std::vector<int64_t>& shape, int64_t w, int64_t vectors) {
  if (!t.layout || t.space != tile::MemSpace::Shared) return;
  int64_t threads = k_.threadsPerBlock();
  int eb = tile::dtypeBytes(t.dtype);
  reportBankConflicts(loc, instr, t, [&](const layout::Layout& l) {
    tile::Tensor probe = t;
    probe.layout = l;
    MemoryRuns runs(probe, v, &tables_.memoryRuns, atomDivisors());
    std::vector<WarpAccess> out;
    for (size_t shift = 0; shift < runs.shifts().size(); ++shift) {
      for (int64_t base = 0; base < vectors; base += threads) {
        for (int64_t warp = 0; warp * 32 < threads; ++warp) {
          WarpAccess a;
          a.width = static_cast<int>(w * eb);
          a.where = runs.shiftDescription(shift);
          for (int lane = 0; lane < 32; ++lane) {
            int64_t q = base + warp * 32 + lane;
            if (q >= vectors || warp * 32 + lane >= threads) {
              a.bytes.push_back(std::nullopt);
              continue;
            }
            std::vector<int64_t> units = shape;
            units.back() /= w;
            std::vector<int64_t> c = layout::unflatten(q, units);
            c.back() *= w;
            std::optional<int64_t> m = runs.offsetAt(c, shift);
            a.bytes.push_back(m ? std::optional<int64_t>(*m * eb) : std::nullopt);
          }
          out.push_back(std::move(a));
        }
      }
    }
    return out;
  });
}

void KernelLowering::checkFragmentBanks(SourceRange loc, const char* instr, const tile::View& v, const FragmentMap& fm,
                                        int w, bool store, const tile::View* part) {
  const tile::Tensor& t = tk_.tensors[v.tensor];
  if (!t.layout || t.space != tile::MemSpace::Shared) return;
  std::vector<int64_t> partOrigin;
  if (part) {
    for (const tir::ExprRef& o : part->origin)
      if (!tir::isIntConst(o, &partOrigin.emplace_back())) return;  // moves at run time: not checked
  }
  // The coordinate in `v` of the fragment element `c`, or none when the part leaves it out.
  auto memoryCoord = [&](std::vector<int64_t> c) -> std::optional<std::vector<int64_t>> {
    if (!part) return c;
    std::vector<int64_t> inView;
    std::vector<bool> kept(c.size(), false);
    for (size_t i = 0; i < part->dims.size(); ++i) {
      const size_t d = static_cast<size_t>(part->dims[i]);
      const int64_t rel = c[d] - partOrigin[d];
      if (rel < 0 || rel >= part->shape[i]) return std::nullopt;
      inView.push_back(rel);
      kept[d] = true;
    }
    for (size_t d = 0; d < c.size(); ++d)
      if (!kept[d] && c[d] != partOrigin[d]) return std::nullopt;  // an index the part fixes
    return inView;
  };
  const int eb = tile::dtypeBytes(t.dtype);
  // Each thread's base coordinate, and whether it takes part (owners; for stores, the
  // first replica only); unknown at compile time: nothing to say.
  const std::vector<ThreadPoint> threads = threadPoints();
  const std::optional<std::vector<std::vector<int64_t>>> base = threadCoords(fm);
  if (!base) return;
  std::vector<bool> active(threads.size(), true);
  for (size_t i = 0; i < threads.size(); ++i) {
    for (const tir::ExprRef& guard : {fm.owns, store ? fm.primary : tir::ExprRef{}}) {
      if (!guard) continue;
      std::optional<int64_t> on = evalAtThread(guard, threads[i]);
      if (!on) return;
      active[i] = active[i] && *on != 0;
    }
  }
  reportBankConflicts(loc, instr, t, [&](const layout::Layout& l) {
    tile::Tensor probe = t;
    probe.layout = l;
    MemoryRuns runs(probe, v, &tables_.memoryRuns, atomDivisors());
    std::vector<WarpAccess> out;
    for (size_t shift = 0; shift < runs.shifts().size(); ++shift) {
      for (size_t i = 0; i < fm.slots.size(); i += static_cast<size_t>(w)) {
        for (size_t warp = 0; warp * 32 < threads.size(); ++warp) {
          WarpAccess a;
          a.width = w * eb;
          a.where = runs.shiftDescription(shift);
          for (size_t lane = 0; lane < 32; ++lane) {
            size_t thread = warp * 32 + lane;
            if (thread >= threads.size() || !active[thread]) {
              a.bytes.push_back(std::nullopt);
              continue;
            }
            std::vector<int64_t> c = (*base)[thread];
            for (size_t d = 0; d < c.size(); ++d) c[d] += fm.slots[i].offset[d];
            const std::optional<std::vector<int64_t>> at = memoryCoord(std::move(c));
            std::optional<int64_t> m = at ? runs.offsetAt(*at, shift) : std::nullopt;
            a.bytes.push_back(m ? std::optional<int64_t>(*m * eb) : std::nullopt);
          }
          out.push_back(std::move(a));
        }
      }
    }
    return out;
  });
}

}  // namespace tyl::lower
