// Shared-memory bank conflicts of the accesses a lowering emits. A conflict is a warning
// with its degree, the instruction, and a swizzle of the same tile that avoids it.
#include <fmt/format.h>


#include <map>

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

// Whether `e` reads variable `var`.
bool readsVar(const tir::ExprRef& e, uint32_t var) {
  if (!e) return false;
  if (e->kind == tir::ExprKind::VarRef) return static_cast<uint32_t>(e->id) == var;
  for (const tir::ExprRef& a : e->args)
    if (readsVar(a, var)) return true;
  return false;
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
  // Narrower accesses (element by element) may need the swizzle to move smaller chunks: those
  // are tried after, down to the widest access.
  int widest = 1;
  for (const WarpAccess& a : now) widest = std::max(widest, a.width);
  for (; m >= 0 && (1 << m) * eb >= widest && suggestion.empty(); --m) {
    for (int b = 1; b <= 5 - (m > 0) * 2 && suggestion.empty(); ++b) {
      for (int s = b; s <= 7 && suggestion.empty(); ++s) {
        layout::Layout candidate = layout::Layout::compose(layout::Swizzle::make(m, b, s), t.layout->tile);
        std::vector<WarpAccess> alt = accesses(candidate);
        if (!alt.empty() && worst(alt).first == 1) suggestion = layout::toString(candidate);
      }
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

void KernelLowering::checkElementBanks(SourceRange loc, const char* instr, const tile::View& v,
                                       const std::vector<tir::ExprRef>& index) {
  const tile::Tensor& t = tk_.tensors[v.tensor];
  if (!t.layout || t.space != tile::MemSpace::Shared || t.mbarriers || !t.isStatic()) return;
  const std::vector<tir::ExprRef> coord = tensorCoord(v, index);
  auto tripsOf = [](const ConstLoop& l) { return l.end > l.begin ? (l.end - l.begin + l.step - 1) / l.step : 0; };
  // The loops whose variables the index reads, and the number of points they make together.
  std::vector<const ConstLoop*> loops;
  int64_t points = 1;
  for (const ConstLoop& l : constLoops_) {
    bool read = false;
    for (const tir::ExprRef& c : coord) read = read || readsVar(c, l.var);
    if (!read) continue;
    const int64_t trips = tripsOf(l);
    if (trips == 0) return;
    points *= trips;
    if (points > kMaxLoopPoints) return;
    loops.push_back(&l);
  }
  const int64_t threads = k_.threadsPerBlock();
  if (points * threads > kMaxElementAccesses) return;
  auto varName = [&](uint32_t var) {
    const tir::Var& v = k_.vars.at(var);
    return v.sourceName.empty() ? v.name : v.sourceName;
  };
  // The loops' variables at point `p`, outermost first (the innermost varies fastest).
  auto loopValues = [&](int64_t p) {
    std::vector<std::pair<uint32_t, int64_t>> values(loops.size());
    for (size_t i = loops.size(); i-- > 0;) {
      values[i] = {loops[i]->var, loops[i]->begin + p % tripsOf(*loops[i]) * loops[i]->step};
      p /= tripsOf(*loops[i]);
    }
    return values;
  };
  // The coordinate of thread `tid` at loop point `p`, or nothing when anything else is read.
  auto coordAt = [&](int64_t tid, int64_t p) -> std::optional<std::vector<int64_t>> {
    std::map<uint32_t, int64_t> vars;
    for (const auto& [var, value] : loopValues(p)) vars[var] = value;
    const int64_t x = tid % k_.block[0], y = tid / k_.block[0] % k_.block[1], z = tid / (k_.block[0] * k_.block[1]);
    std::vector<int64_t> out;
    for (const tir::ExprRef& c : coord) {
      tir::ExprRef value = tir::substitute(c, [&](const tir::Expr& atom) -> tir::ExprRef {
        if (atom.kind == tir::ExprKind::VarRef) {
          auto it = vars.find(static_cast<uint32_t>(atom.id));
          return it == vars.end() ? nullptr : tir::intConst(it->second, atom.type);
        }
        if (atom.kind != tir::ExprKind::SpecialReg) return nullptr;
        switch (atom.special) {
          case tir::Special::TidX: return tir::intConst(x, atom.type);
          case tir::Special::TidY: return tir::intConst(y, atom.type);
          case tir::Special::TidZ: return tir::intConst(z, atom.type);
          case tir::Special::LaneId: return tir::intConst(tid % 32, atom.type);
          case tir::Special::WarpId: return tir::intConst(tid / 32, atom.type);
          default: return nullptr;
        }
      });
      int64_t n = 0;
      if (!tir::isIntConst(value, &n)) return std::nullopt;
      out.push_back(n);
    }
    return out;
  };
  // The coordinates, once: they do not depend on the layout.
  std::vector<std::vector<std::optional<std::vector<int64_t>>>> at(static_cast<size_t>(points));
  for (int64_t p = 0; p < points; ++p)
    for (int64_t tid = 0; tid < threads; ++tid) {
      at[static_cast<size_t>(p)].push_back(coordAt(tid, p));
      if (!at[static_cast<size_t>(p)].back()) return;  // the index reads what is not known here
    }
  tile::View whole{v.tensor, {}, {}, t.staticShape, v.loc};
  for (size_t d = 0; d < t.staticShape.size(); ++d) {
    whole.origin.push_back(tir::intConst(0, tir::Type::I64));
    whole.dims.push_back(static_cast<int>(d));
  }
  const int eb = tile::dtypeBytes(t.dtype);
  reportBankConflicts(loc, instr, t, [&](const layout::Layout& l) {
    tile::Tensor probe = t;
    probe.layout = l;
    MemoryRuns runs(probe, whole, &tables_.memoryRuns, atomDivisors());
    std::vector<WarpAccess> out;
    for (int64_t p = 0; p < points; ++p) {
      std::string where;
      for (const auto& [var, value] : loopValues(p)) where += fmt::format("{}{} = {}", where.empty() ? "" : ", ", varName(var), value);
      for (int64_t warp = 0; warp * 32 < threads; ++warp) {
        WarpAccess a;
        a.width = eb;
        a.where = where.empty() ? "" : " (when " + where + ")";
        for (int64_t lane = 0; lane < 32; ++lane) {
          const int64_t tid = warp * 32 + lane;
          const auto& c = tid < threads ? at[static_cast<size_t>(p)][static_cast<size_t>(tid)] : std::nullopt;
          bool inside = c.has_value();
          for (size_t d = 0; inside && d < c->size(); ++d) inside = (*c)[d] >= 0 && (*c)[d] < t.staticShape[d];
          std::optional<int64_t> m = inside ? runs.offsetAt(*c, 0) : std::nullopt;
          a.bytes.push_back(m ? std::optional<int64_t>(*m * eb) : std::nullopt);
        }
        out.push_back(std::move(a));
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
  const std::optional<std::vector<bool>> holds = holders(fm, store ? fm.primary : tir::ExprRef{});
  if (!holds) return;
  const std::vector<bool>& active = *holds;
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
