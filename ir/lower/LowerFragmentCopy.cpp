// Tile copies. Between a fragment and memory, each owning thread moves its own slots,
// grouped into the widest vectors that are contiguous and aligned in memory; elements
// outside a global tensor are skipped. Between two memories, 16-byte vectors are spread
// over the block's threads (thread t takes vectors t, t + T, ...).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "ir/layout/Analysis.h"
#include "ir/layout/Transforms.h"
#include "ir/lower/LowerImpl.h"
#include "ir/lower/MemoryRuns.h"

namespace tyl::lower {

TYL_DIAG(kMatrixFallback, Remark, "ldmatrix-fallback",
         "a 16-bit fragment load that could not use ldmatrix (or store, for sm_90, stmatrix), and why");

using tir::ExprRef;
using tir::Type;

std::optional<std::vector<bool>> KernelLowering::holders(const FragmentMap& fm, const tir::ExprRef& also) const {
  std::vector<bool> holds;
  for (const ThreadPoint& p : threadPoints()) {
    bool on = true;
    for (const tir::ExprRef& guard : {fm.owns, also}) {
      if (!guard) continue;
      std::optional<int64_t> v = evalAtThread(guard, p);
      if (!v) return std::nullopt;
      on = on && *v != 0;
    }
    holds.push_back(on);
  }
  return holds;
}

std::optional<std::vector<std::vector<int64_t>>> KernelLowering::threadCoords(const FragmentMap& fm) const {
  std::vector<std::vector<int64_t>> coords;
  for (const ThreadPoint& p : threadPoints()) {
    std::vector<int64_t>& c = coords.emplace_back();
    for (const tir::ExprRef& b : fm.base) {
      std::optional<int64_t> x = evalAtThread(b, p);
      if (!x) return std::nullopt;
      c.push_back(*x);
    }
  }
  return coords;
}

std::string KernelLowering::addStrideChecks(const tile::Tensor& t,
                                            const std::vector<std::pair<int, int64_t>>& conditions) {
  // Every vector of a copy adds the same few conditions: check each once.
  std::set<std::pair<int, int64_t>> unique(conditions.begin(), conditions.end());
  std::string checked;
  for (const auto& [d, len] : unique) {
    checked += fmt::format("{}the stride of dimension {} of {} is a multiple of {} elements", checked.empty() ? "" : " and ",
                           d, t.name, len);
    // Remember what the check guarantees, for simpler predicates below.
    ExprRef s = t.strides[d];
    while (s->kind == tir::ExprKind::Cast) s = s->args[0];
    if (s->kind == tir::ExprKind::ParamRef) paramDivisor_[s->id] = std::lcm(paramDivisor_[s->id] ? paramDivisor_[s->id] : 1, len);
    tir::LaunchCheck c;
    c.cond = tir::binary(tir::BinOp::Eq, tir::binary(tir::BinOp::Rem, t.strides[d], tir::intConst(len, Type::I64)),
                         tir::intConst(0, Type::I64));
    c.message = fmt::format("the stride of dimension {} of {} must be a multiple of {} elements for {}-byte "
                            "accesses",
                            d, t.name, len, len * tile::dtypeBytes(t.dtype));
    c.loc = t.loc;
    addLaunchCheck(std::move(c));
  }
  return checked;
}

void WidthReasons::add(int64_t bytes, const std::string& problem) {
  if (!groups_.empty() && groups_.back().problem == problem)
    groups_.back().bytes.push_back(bytes);
  else
    groups_.push_back(Group{{bytes}, problem});
}

std::string WidthReasons::text() const {
  std::string out;
  for (const Group& g : groups_) {
    if (!out.empty()) out += "; ";
    for (size_t i = 0; i < g.bytes.size(); ++i) {
      const char* sep = i == 0 ? "" : i + 1 == g.bytes.size() ? "- and " : "-, ";
      out += fmt::format("{}{}", sep, g.bytes[i]);
    }
    out += fmt::format("-byte vectors: {}", g.problem);
  }
  return out;
}

int KernelLowering::chooseVectorWidth(const tile::View& mem, const FragmentMap& fm, WidthReasons& why) {
  const tile::Tensor& t = tk_.tensors[mem.tensor];
  int eb = tile::dtypeBytes(t.dtype);
  size_t rank = mem.rank();
  const std::optional<std::vector<std::vector<int64_t>>> coords = threadCoords(fm);
  // By thread: whether it holds elements of the fragment (unknown: every thread, to be safe).
  const std::vector<bool> holds = holders(fm).value_or(std::vector<bool>(static_cast<size_t>(k_.threadsPerBlock()), true));
  std::vector<std::pair<int, int64_t>> conditions;
  // Vectors of w elements along view dimension `vd`, whose runs `runs` checks (over the view
  // reordered with vd last).
  auto tryWidth = [&](int w, size_t vd, const MemoryRuns& runs) -> std::string {
    conditions.clear();
    // Consecutive slots must hold consecutive elements along the dimension.
    if (fm.slots.size() % w != 0) return fmt::format("each thread holds {} elements", fm.slots.size());
    for (size_t i = 0; i < fm.slots.size(); i += w) {
      for (int j = 1; j < w; ++j) {
        const FragmentSlot& a = fm.slots[i];
        const FragmentSlot& b = fm.slots[i + j];
        bool ok = b.m == a.m + j;
        for (size_t d = 0; d < rank && ok; ++d) ok = b.offset[d] == a.offset[d] + (d == vd ? j : 0);
        if (!ok)
          return fmt::format("register slots {}..{} do not hold consecutive elements of a {}", a.m, a.m + w - 1,
                             vd + 1 == rank ? "row" : fmt::format("run along dimension {}", vd));
      }
    }
    // Every thread's runs must be contiguous and aligned in memory (of the threads holding elements).
    if (!coords) return "the thread's coordinates are not known at compile time";
    for (size_t th = 0; th < coords->size(); ++th) {
      if (!holds[th]) continue;
      const std::vector<int64_t>& base = (*coords)[th];
      for (size_t i = 0; i < fm.slots.size(); i += w) {
        std::vector<int64_t> c;  // in the reordered view
        for (size_t d = 0; d < rank; ++d)
          if (d != vd) c.push_back(base[d] + fm.slots[i].offset[d]);
        c.push_back(base[vd] + fm.slots[i].offset[vd]);
        MemoryRuns::Problem problem = runs.check(c, w, &conditions);
        if (!problem.ok()) return problem.message;
      }
    }
    return "";
  };
  // Along the last dimension first; where that gives less than 16 bytes, along another one that
  // gives more (a column of a column-major fragment to a column-major tensor).
  // The launch conditions of the width chosen only are emitted, once it is chosen.
  MemoryRuns runs(t, mem, &tables_.memoryRuns, atomDivisors());
  int best = 1;
  std::vector<std::pair<int, int64_t>> bestConditions;
  for (int w = 16 / eb; w >= 2 && best == 1; w /= 2) {
    std::string problem = tryWidth(w, rank - 1, runs);
    if (problem.empty()) {
      bestConditions = conditions;
      best = w;
    } else {
      why.add(w * eb, problem);
    }
  }
  for (size_t vd = 0; vd + 1 < rank && best * eb < 16; ++vd) {
    const tile::View along = lastAlong(mem, vd);
    MemoryRuns other(t, along, &tables_.memoryRuns, atomDivisors());
    for (int w = 16 / eb; w > best; w /= 2) {
      if (!tryWidth(w, vd, other).empty()) continue;
      why = WidthReasons{};  // the reasons were about the last dimension
      why.vectorDim = vd;
      bestConditions = conditions;
      best = w;
      break;
    }
  }
  if (best > 1) why.launchChecked = addStrideChecks(t, bestConditions);
  // The structural reason first: the register slots run along one dimension and the memory
  // along others only, so no vector can form, whatever the alignment.
  if (best * eb < 16 && rank >= 2 && fm.slots.size() >= 2 && fm.slots[1].m == fm.slots[0].m + 1) {
    std::optional<size_t> slotDim;
    for (size_t d = 0; d < rank; ++d) {
      bool unitAlongD = true;
      for (size_t e = 0; e < rank; ++e)
        unitAlongD &= fm.slots[1].offset[e] - fm.slots[0].offset[e] == (e == d ? 1 : 0);
      if (unitAlongD) slotDim = d;
    }
    const std::vector<size_t> memDims = contiguousDims(mem);
    if (slotDim && !memDims.empty() && std::find(memDims.begin(), memDims.end(), *slotDim) == memDims.end()) {
      const std::string s = fmt::format("no dimension along which both the register slots and '{}' run ({}, {})",
                                        t.name, runsText("the slots", {*slotDim}), runsText("'" + t.name + "'", memDims));
      const std::optional<size_t> along = why.vectorDim;
      const std::string checked = why.launchChecked;
      why = WidthReasons{};
      why.vectorDim = along;
      why.launchChecked = checked;
      for (int w = 16 / eb; w > best; w /= 2) why.add(w * eb, s);
    }
  }
  return best;
}

std::string KernelLowering::vectorRemark(int w, const tile::Tensor& t, const WidthReasons& why) {
  int eb = tile::dtypeBytes(t.dtype);
  if (w > 1 || why.empty())
    return fmt::format("{}-byte vectors ({} x {}){}{}{}", w * eb, w, tile::dtypeName(t.dtype),
                       why.vectorDim ? fmt::format(" along dimension {}", *why.vectorDim) : "",
                       why.launchChecked.empty() ? "" : fmt::format("; the launcher checks that {}", why.launchChecked),
                       why.empty() ? "" : fmt::format("; not wider: {}", why.text()));
  return fmt::format("{}-byte accesses; not wider: {}", eb, why.text());
}

void KernelLowering::accessSlots(SourceRange loc, const tile::View& mem, uint32_t regs, const FragmentMap& fm,
                                 size_t first, int w, std::optional<size_t> dim, bool toMemory, bool zeroOutside) {
  const tile::Tensor& t = tk_.tensors[mem.tensor];
  Type type = tile::toTir(t.dtype);
  size_t rank = mem.rank();
  const FragmentSlot& s = fm.slots[first];
  const size_t along = dim ? *dim : rank - 1;
  auto coordOf = [&](int j) {
    std::vector<ExprRef> viewCoord(rank);
    for (size_t d = 0; d < rank; ++d)
      viewCoord[d] = tir::add(fm.base[d], tir::intConst(s.offset[d] + (d == along ? j : 0)));
    return tensorCoord(mem, viewCoord);
  };
  std::vector<tir::Reg> group;
  for (int j = 0; j < w; ++j) group.push_back(tir::Reg::elem(regs, fm.slots[first + j].m));
  std::vector<ExprRef> start = coordOf(0);
  ExprRef pred = bounds(t, start);
  if (w > 1 && pred) {
    ExprRef lastPred = bounds(t, coordOf(w - 1));
    pred = lastPred ? tir::land(pred, lastPred) : pred;
  }
  if (pred && zeroOutside) {
    ExprRef zero = tir::isFloat(type) ? tir::cast(type, tir::floatConst(0.0)) : tir::cast(type, tir::intConst(0));
    for (const tir::Reg& r : group) emit(loc, tir::Assign{r, zero});
  }
  auto access = [&](tir::MemRef r, std::vector<tir::Reg> g, ExprRef p) {
    if (toMemory)
      emit(loc, tir::Store{type, std::move(r), std::move(g), std::move(p)});
    else
      emit(loc, tir::Load{type, std::move(r), std::move(g), std::move(p)});
  };
  if (!pred || w == 1) {
    access(memRef(t, start), group, pred);
    return;
  }
  // The whole vector when it is inside the tensor; element by element at the edge.
  tir::If edge{pred, {}, {}};
  out_.push_back(&edge.then);
  access(memRef(t, start), group, nullptr);
  out_.pop_back();
  out_.push_back(&edge.otherwise);
  for (int j = 0; j < w; ++j) {
    std::vector<ExprRef> cj = coordOf(j);
    access(memRef(t, cj), {group[j]}, bounds(t, cj));
  }
  out_.pop_back();
  emit(loc, std::move(edge));
}

void KernelLowering::copyFragmentMemory(SourceRange loc, const tile::Copy& c, bool toMemory) {
  const tile::View& mem = toMemory ? c.dst : *c.src;
  const tile::Tensor& t = tk_.tensors[mem.tensor];
  const tile::FragExpr* leaf = toMemory ? tile::layoutLeaf(c.value) : nullptr;
  const uint32_t fragId = toMemory ? leaf->tensor : c.dst.tensor;
  const tile::Tensor& f = tk_.tensors[fragId];
  const FragmentMap* fm = toMemory ? fragmentOf(*leaf, loc) : fragmentThrough(c.dst, loc);
  if (!fm) return;
  // Of the threads holding an element, one stores it: whenever one of them reaches the
  // store, that one must too.
  if (toMemory && fm->primary)
    emit(loc, tir::Cooperative{fmt::format("this store of '{}'", f.name), fm->base, fm->owns, fm->primary});
  Type type = tile::toTir(t.dtype);
  WidthReasons why;
  if (t.space == tile::MemSpace::Shared && (toMemory ? options_.stmatrix && tile::dtypeBytes(t.dtype) == 2
                                                    : tile::dtypeBytes(f.dtype) == 2)) {
    // A store's registers: the fragment itself, or its arithmetic evaluated whole into a
    // temporary of the memory's element type.
    auto registers = [&]() -> uint32_t {
      if (!toMemory || (c.value->kind == tile::FragExpr::Kind::Tensor && f.dtype == t.dtype)) return f.array;
      const uint32_t regs = tir::addArray(k_, fmt::format("tmp{}", temps_++), type, f.slots);
      readMemoryOperands(loc, memoryOperands(loc, c.value, *fm, f), *fm, 0, fm->slots.size());
      for (const FragmentSlot& s : fm->slots)
        emit(loc, tir::Assign{tir::Reg::elem(regs, s.m), fragValue(c.value, s.m, type)});
      return regs;
    };
    std::string noMatrix;
    if (tryMatrixCopy(loc, mem, fragId, *fm, toMemory, registers, noMatrix)) return;
    diags_.report(kMatrixFallback, loc,
                  fmt::format("fragment {} without {}: {}", toMemory ? "store" : "load",
                              toMemory ? "stmatrix" : "ldmatrix", noMatrix));
  }
  int w = chooseVectorWidth(mem, *fm, why);
  diags_.report(kCopyVector, loc, "copy: " + vectorRemark(w, t, why));
  checkFragmentBanks(loc, toMemory ? "st.shared" : "ld.shared", mem, *fm, w, toMemory);

  // The registers that are stored: the fragment itself, or its arithmetic evaluated into
  // a temporary of the memory's element type, a group of slots at a time, each group just
  // before it is stored (with the memory operands it reads), so that few are live at once.
  uint32_t regs = f.array;
  std::vector<MemoryOperand> operands;
  bool compute = toMemory && !(c.value->kind == tile::FragExpr::Kind::Tensor && f.dtype == t.dtype);
  tir::Block body;
  out_.push_back(&body);
  if (compute) {
    regs = tir::addArray(k_, fmt::format("tmp{}", temps_++), type, f.slots);
    operands = memoryOperands(loc, c.value, *fm, f);
  } else if (!toMemory && f.dtype != t.dtype) {
    regs = tir::addArray(k_, fmt::format("tmp{}", temps_++), type, f.slots);
  }
  const size_t group = operandGroup(operands, static_cast<size_t>(w));
  for (size_t i = 0; i < fm->slots.size(); i += group) {
    if (compute) {
      readMemoryOperands(loc, operands, *fm, i, group);
      for (size_t j = i; j < i + group; ++j) {
        const int64_t m = fm->slots[j].m;
        emit(loc, tir::Assign{tir::Reg::elem(regs, m), fragValue(c.value, m, type)});
      }
    }
    for (size_t j = i; j < i + group; j += w) accessSlots(loc, mem, regs, *fm, j, w, why.vectorDim, toMemory, false);
  }
  if (!toMemory && regs != f.array) {
    // Converted into the fragment; a slot whose element lies outside the tensor was not loaded
    // and keeps its value.
    for (const FragmentSlot& s : fm->slots) {
      std::vector<ExprRef> viewCoord(mem.rank());
      for (size_t d = 0; d < viewCoord.size(); ++d) viewCoord[d] = tir::add(fm->base[d], tir::intConst(s.offset[d]));
      tir::Block convert;
      out_.push_back(&convert);
      emit(loc, tir::Assign{tir::Reg::elem(f.array, s.m), tir::cast(tile::toTir(f.dtype), tir::elemRef(k_, regs, s.m))});
      out_.pop_back();
      emitGuarded(loc, bounds(t, tensorCoord(mem, viewCoord)), std::move(convert));
    }
  }
  out_.pop_back();
  // Only owners move data; of replicated elements only the first replica stores.
  ExprRef guard = fm->owns;
  if (toMemory && fm->primary) guard = guard ? tir::land(guard, fm->primary) : fm->primary;
  emitGuarded(loc, guard, std::move(body));
}

// A window whose origin is not known to keep it inside the fragment (one read from memory,
// say) fills only its slots inside: `tyloc run` reports where it reaches outside.
void KernelLowering::checkWindowInside(SourceRange loc, const tile::View& window, const tile::Tensor& f) {
  auto i64 = [](int64_t v) { return tir::intConst(v, Type::I64); };
  ExprRef inside = tir::boolConst(true);
  for (size_t d = 0; d < f.staticShape.size(); ++d) {
    auto kept = std::find(window.dims.begin(), window.dims.end(), static_cast<int>(d));
    const int64_t len = kept == window.dims.end() ? 1 : window.shape[kept - window.dims.begin()];
    const ExprRef o = tir::cast(Type::I64, window.origin[d]);
    const tir::Range r = tir::valueRange(o, atomRanges());
    if (r.lo >= 0 && r.hi <= f.staticShape[d] - len) continue;
    inside = tir::land(inside, tir::land(tir::binary(tir::BinOp::Ge, o, i64(0)),
                                         tir::binary(tir::BinOp::Le, o, i64(f.staticShape[d] - len))));
  }
  if (tir::isTrue(inside)) return;
  tir::Check check{inside,
                   fmt::format("a copy into a ({}) window of register fragment '{}' ({}) reaches outside it (only "
                               "the part inside is filled), at origin",
                               fmt::join(window.shape, ", "), f.name, fmt::join(f.staticShape, ", ")),
                   {}};
  for (const ExprRef& o : window.origin) check.values.push_back(tir::cast(Type::I64, o));
  emit(loc, std::move(check));
}

void KernelLowering::copyIntoFragmentWindow(SourceRange loc, const tile::Copy& c) {
  const tile::View& window = c.dst;
  const tile::View& mem = *c.src;
  const tile::Tensor& t = tk_.tensors[mem.tensor];
  const tile::Tensor& f = tk_.tensors[window.tensor];
  const FragmentMap* fm = fragment(window.tensor, loc);
  if (!fm) return;
  diags_.report(kCopyVector, loc,
                fmt::format("copy: {}-byte accesses; not wider: the destination is a part of the fragment '{}'",
                            tile::dtypeBytes(t.dtype), f.name));
  checkFragmentBanks(loc, "ld.shared", mem, *fm, 1, false, &window);
  checkWindowInside(loc, window, f);
  const Type memType = tile::toTir(t.dtype), fragType = tile::toTir(f.dtype);
  auto i64 = [](int64_t v) { return tir::intConst(v, Type::I64); };
  tir::Block body;
  out_.push_back(&body);
  for (const FragmentSlot& s : fm->slots) {
    // Where the window puts the slot's element (relative to its origin), and whether it is in it.
    std::vector<ExprRef> rel(f.staticShape.size());
    for (size_t d = 0; d < rel.size(); ++d)
      rel[d] = tir::sub(tir::add(tir::cast(Type::I64, fm->base[d]), i64(s.offset[d])), window.origin[d]);
    ExprRef inside = tir::boolConst(true);
    std::vector<bool> kept(rel.size(), false);
    std::vector<ExprRef> viewCoord;
    for (size_t i = 0; i < window.rank(); ++i) {
      const int d = window.dims[i];
      kept[d] = true;
      viewCoord.push_back(rel[d]);
      inside = tir::land(inside, tir::land(tir::binary(tir::BinOp::Ge, rel[d], i64(0)),
                                           tir::lt(rel[d], i64(window.shape[i]))));
    }
    for (size_t d = 0; d < rel.size(); ++d)
      if (!kept[d]) inside = tir::land(inside, tir::binary(tir::BinOp::Eq, rel[d], i64(0)));
    std::vector<ExprRef> coord = tensorCoord(mem, viewCoord);
    if (ExprRef edge = bounds(t, coord)) inside = tir::land(inside, edge);
    if (tir::isFalse(inside)) continue;  // never in the window
    const ExprRef pred = tir::isTrue(inside) ? nullptr : inside;
    const tir::Reg slot = tir::Reg::elem(f.array, s.m);
    if (memType == fragType) {
      emit(loc, tir::Load{memType, memRef(t, coord), {slot}, pred});
      continue;
    }
    // A conversion: the element goes through a register of the memory's type.
    tir::Block convert;
    out_.push_back(&convert);
    const tir::Reg value = tir::Reg::var(tir::addVar(k_, fmt::format("ld{}", temps_++), memType));
    emit(loc, tir::Load{memType, memRef(t, coord), {value}, nullptr});
    emit(loc, tir::Assign{slot, tir::cast(fragType, tir::regRef(k_, value))});
    out_.pop_back();
    emitGuarded(loc, pred, std::move(convert));
  }
  out_.pop_back();
  emitGuarded(loc, fm->owns, std::move(body));
}

void KernelLowering::copy(SourceRange loc, const tile::Copy& c) {
  const tile::Tensor& dst = tk_.tensors[c.dst.tensor];
  if (dst.space == tile::MemSpace::Local) {
    if (c.src && !tile::coversElements(c.dst, dst)) {
      copyIntoFragmentWindow(loc, c);
    } else if (c.src) {
      copyFragmentMemory(loc, c, false);
    } else {
      fragAssign(loc, c.dst.tensor, c.value);
    }
    return;
  }
  if (c.value) {
    copyFragmentMemory(loc, c, true);
    return;
  }
  if (c.barrier) {
    tmaCopy(loc, c);
    return;
  }
  if (c.tmaStore) {
    tmaStore(loc, c);
    return;
  }
  copyMemoryMemory(loc, c);
}

}  // namespace tyl::lower
