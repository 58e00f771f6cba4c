// Which threads hold each element of a register fragment, and in which slot: decoded from
// the fragment's layout once per layout, shape and launch (LayoutTables), and checked
// against the launch, whose threads must include every one the layout names.
#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "base/InternalError.h"
#include "ir/layout/Analysis.h"
#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

TYL_DIAG(kUnsupportedLayout, Error, "unsupported-layout", "a fragment layout that cannot be lowered per thread");
TYL_DIAG(kOwnershipLaunch, Error, "ownership-outside-launch",
         "a fragment layout that places elements on lanes, warps or threads the launch does not have");


const FragmentMap* KernelLowering::fragment(uint32_t tensor, SourceRange where) {
  auto it = fragments_.find(tensor);
  if (it != fragments_.end()) return it->second.get();
  const tile::Tensor& t = tk_.tensors[tensor];
  LayoutTables::Entry& known = tables_.at(*t.layout, t.staticShape, k_.block);
  if (known.fragment) return (fragments_[tensor] = known.fragment).get();
  auto decoded = decodeFragment(*t.layout, t.staticShape, k_.block);
  if (const auto* err = std::get_if<OwnershipError>(&decoded)) {
    diags_.report(kUnsupportedLayout, t.layoutLoc.valid() ? t.layoutLoc : where,
                  fmt::format("tyloc cannot lower this fragment layout: {}", err->message));
    return nullptr;
  }
  if (!owners(tensor)) return nullptr;
  known.fragment = std::make_shared<const FragmentMap>(std::get<FragmentMap>(std::move(decoded)));
  return (fragments_[tensor] = known.fragment).get();
}

const FragmentMap* KernelLowering::fragmentThrough(const tile::View& v, SourceRange where) {
  const FragmentMap* whole = fragment(v.tensor, where);
  if (!whole || v.dims.size() == whole->base.size()) return whole;
  auto [it, added] = fragmentViews_.try_emplace({v.tensor, v.dims});
  FragmentMap& fm = it->second;
  if (!added) return &fm;
  fm = *whole;
  fm.base.clear();
  for (int d : v.dims) fm.base.push_back(whole->base[static_cast<size_t>(d)]);
  for (FragmentSlot& s : fm.slots) {
    std::vector<int64_t> offset;
    for (int d : v.dims) offset.push_back(s.offset[static_cast<size_t>(d)]);
    s.offset = std::move(offset);
  }
  return &fm;
}

const FragmentMap* KernelLowering::fragmentPart(const tile::View& part, SourceRange where) {
  const FragmentMap* whole = fragment(part.tensor, where);
  if (!whole) return nullptr;
  std::vector<int64_t> origin;
  for (const tir::ExprRef& o : part.origin) {
    int64_t v = 0;
    TYL_CHECK(tir::isIntConst(o, &v), "a part of a fragment at a run-time origin");
    origin.push_back(v);
  }
  auto [it, added] = fragmentParts_.try_emplace({part.tensor, origin, part.shape, part.dims});
  if (!added) return it->second ? &*it->second : nullptr;
  const tile::Tensor& t = tk_.tensors[part.tensor];
  std::vector<int64_t> extent(origin.size(), 1);  // per dimension of the fragment, in the window
  for (size_t i = 0; i < part.dims.size(); ++i) extent[static_cast<size_t>(part.dims[i])] = part.shape[i];
  // The slots in the window, thread by thread: the same in every thread that holds elements of
  // it (a window of some rows holds none of the others' elements).
  const std::optional<std::vector<std::vector<int64_t>>> coords = threadCoords(*whole);
  if (!coords) {
    diags_.report(kUnsupportedLayout, where,
                  fmt::format("the threads' coordinates in register fragment '{}' are not known at compile time, so "
                              "a part of it cannot be read",
                              t.name));
    return nullptr;
  }
  const std::vector<ThreadPoint> threads = threadPoints();
  const std::vector<bool> holds = holders(*whole).value_or(std::vector<bool>(threads.size(), true));
  std::vector<std::vector<int64_t>> slotsOf(threads.size());  // by thread: its slots in the window
  std::optional<size_t> first;
  for (size_t i = 0; i < threads.size(); ++i) {
    if (!holds[i]) continue;
    for (const FragmentSlot& s : whole->slots) {
      bool in = true;
      for (size_t d = 0; d < origin.size() && in; ++d) {
        const int64_t rel = (*coords)[i][d] + s.offset[d] - origin[d];
        in = rel >= 0 && rel < extent[d];
      }
      if (in) slotsOf[i].push_back(s.m);
    }
    if (!first && !slotsOf[i].empty()) first = i;
  }
  // Which threads hold the part: those whose first slot of the part lies in the window.
  tir::ExprRef inside;
  std::vector<int64_t> kept;
  if (first) {
    kept = slotsOf[*first];
    const FragmentSlot& s0 =
        *std::find_if(whole->slots.begin(), whole->slots.end(), [&](const FragmentSlot& s) { return s.m == kept[0]; });
    inside = tir::boolConst(true);
    for (size_t d = 0; d < origin.size(); ++d) {
      const tir::ExprRef rel = tir::add(whole->base[d], tir::intConst(s0.offset[d] - origin[d]));
      inside = tir::land(inside, tir::land(tir::binary(tir::BinOp::Ge, rel, tir::intConst(0)),
                                           tir::lt(rel, tir::intConst(extent[d]))));
    }
  }
  for (size_t i = 0; i < threads.size(); ++i) {
    if (!holds[i] || slotsOf[i].empty()) continue;
    std::optional<int64_t> in = evalAtThread(inside, threads[i]);
    if (slotsOf[i] != kept || !in || !*in) {
      diags_.report(kUnsupportedLayout, where,
                    fmt::format("this part of register fragment '{}' is in {} register slots of thread {} and in {} "
                                "others of thread {}: a part is read from the same slots in every thread that holds "
                                "it (a window of whole rows or columns of the layout's tiles)",
                                t.name, kept.size(), *first, slotsOf[i].size(), i));
      return nullptr;
    }
  }
  bool everyHolder = true;
  for (size_t i = 0; i < threads.size(); ++i) everyHolder = everyHolder && (!holds[i] || !slotsOf[i].empty());
  FragmentMap& fm = it->second.emplace();
  fm.owns = whole->owns;
  if (!everyHolder && inside) fm.owns = fm.owns ? tir::land(fm.owns, inside) : inside;
  fm.primary = whole->primary;
  fm.threadAxes = whole->threadAxes;
  for (int d : part.dims)
    fm.base.push_back(tir::sub(whole->base[static_cast<size_t>(d)], tir::intConst(origin[static_cast<size_t>(d)])));
  for (const FragmentSlot& s : whole->slots) {
    if (!std::binary_search(kept.begin(), kept.end(), s.m)) continue;
    FragmentSlot p;
    p.m = s.m;
    for (int d : part.dims) p.offset.push_back(s.offset[static_cast<size_t>(d)]);
    fm.slots.push_back(std::move(p));
  }
  return &fm;
}

// Which threads hold each element, checking on the way that every thread axis value the
// layout uses exists in the launch.
const OwnerTable* KernelLowering::owners(uint32_t tensor) {
  auto it = owners_.find(tensor);
  if (it != owners_.end()) return it->second.get();
  const tile::Tensor& t = tk_.tensors[tensor];
  LayoutTables::Entry& known = tables_.at(*t.layout, t.staticShape, k_.block);
  if (known.owners) return (owners_[tensor] = known.owners).get();
  int64_t threads = k_.threadsPerBlock();
  // The value of every thread axis for every thread.
  std::vector<std::array<int64_t, layout::kAxisCount>> axisOf(threads);
  for (int64_t tid = 0; tid < threads; ++tid) {
    std::array<int64_t, layout::kAxisCount> v{};
    v[static_cast<int>(layout::Axis::tx)] = tid;
    v[static_cast<int>(layout::Axis::laneid)] = tid % 32;
    v[static_cast<int>(layout::Axis::warpid)] = tid / 32;
    v[static_cast<int>(layout::Axis::wgid)] = tid / 128;
    v[static_cast<int>(layout::Axis::tid_in_wg)] = tid % 128;
    v[static_cast<int>(layout::Axis::wid_in_wg)] = (tid / 32) % 4;
    axisOf[tid] = v;
  }
  OwnerTable table;
  table.holders.resize(static_cast<size_t>(t.layout->size()));
  std::optional<std::string> problem;
  const uint32_t threadMask = layout::threadAxesMask();
  uint32_t launchMask = 0;  // thread axes proper, whose values the launch bounds
  std::array<int64_t, layout::kAxisCount> extentOf{};
  for (layout::Axis a : layout::allAxes())
    if (layout::isThreadAxis(a)) {
      launchMask |= layout::axisBit(a);
      extentOf[static_cast<int>(a)] = threadAxisExtent(a, k_.block);
    }
  // Calls f(axis index) for each set bit of `mask`, lowest first, while it returns true.
  auto eachAxis = [](uint32_t mask, auto&& f) {
    for (; mask; mask &= mask - 1)
      if (!f(std::countr_zero(mask))) return false;
    return true;
  };
  try {
    layout::forEachPlacement(*t.layout, [&](int64_t index, const layout::PhysCoord& p) {
      const uint32_t threadAxes = p.axesMask() & threadMask;
      eachAxis(threadAxes & launchMask, [&](int a) {
        int64_t v = p[static_cast<layout::Axis>(a)];
        if (v >= 0 && v < extentOf[a]) return true;
        problem = fmt::format("element {} is held by {} {}, but a block of {} threads has {} 0..{}",
                              layout::shapeToString(layout::unflatten(index, t.staticShape)),
                              layout::axisName(static_cast<layout::Axis>(a)), v, threads,
                              layout::axisName(static_cast<layout::Axis>(a)), extentOf[a] - 1);
        return false;
      });
      if (problem) return false;
      // The holders: one thread when lane and warp (or tx) are given, else every match.
      auto matches = [&](int64_t tid) {
        return eachAxis(threadAxes, [&](int a) { return axisOf[tid][a] == p[static_cast<layout::Axis>(a)]; });
      };
      int32_t m = static_cast<int32_t>(p[layout::Axis::m]);
      auto& h = table.holders[static_cast<size_t>(index)];
      if (threadAxes & layout::axisBit(layout::Axis::tx)) {
        if (matches(p[layout::Axis::tx])) h.emplace_back(static_cast<int32_t>(p[layout::Axis::tx]), m);
      } else if ((threadAxes & layout::axisBit(layout::Axis::laneid)) &&
                 (threadAxes & layout::axisBit(layout::Axis::warpid))) {
        int64_t tid = p[layout::Axis::warpid] * 32 + p[layout::Axis::laneid];
        if (tid < threads && matches(tid)) h.emplace_back(static_cast<int32_t>(tid), m);
      } else {
        for (int64_t tid = 0; tid < threads; ++tid)
          if (matches(tid)) h.emplace_back(static_cast<int32_t>(tid), m);
      }
      return true;
    });
  } catch (const layout::Error& e) {
    problem = e.what();
  }
  if (problem) {
    diags_.report(kOwnershipLaunch, t.layoutLoc, *problem).note(tk_.skeleton.launchLoc, "the launch is declared here");
    return nullptr;
  }
  known.owners = std::make_shared<const OwnerTable>(std::move(table));
  return (owners_[tensor] = known.owners).get();
}

}  // namespace tyl::lower
