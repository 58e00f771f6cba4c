// Copies between two memories (global <-> shared), with no owning threads: the block's
// threads share the work. The copy is cut into vectors along the last dimension, as wide
// as both layouts allow (16 bytes for cp.async), or along another dimension where only that
// one gives 16-byte vectors, and thread t moves vectors t, t + T, ...
// Elements outside a global source are zero-filled; outside a global destination, skipped.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "ir/layout/Analysis.h"
#include "ir/lower/LowerImpl.h"
#include "ir/lower/MemoryRuns.h"

namespace tyl::lower {

TYL_DIAG(kCopyNotContiguous, Error, "copy-not-contiguous",
         "a cp.async copy whose 16-byte vectors are not contiguous in one of its layouts");
TYL_DIAG(kCopyMisaligned, Error, "copy-misaligned",
         "a cp.async copy whose 16-byte vectors are not 16-byte aligned in one of its layouts");
TYL_DIAG(kCopyAliases, Error, "copy-dst-aliases",
         "a copy destination that holds one element twice, or overlaps its source at other elements");
TYL_DIAG(kCopyTypes, Error, "copy-types", "a copy between memories of different element types");
TYL_DIAG(kCopyPlan, Remark, "copy-plan", "how a copy between memories is spread over the threads");

using tir::ExprRef;
using tir::Type;

tile::View KernelLowering::lastAlong(const tile::View& v, size_t j) {
  tile::View out = v;
  out.dims.clear();
  out.shape.clear();
  for (size_t i = 0; i < v.rank(); ++i)
    if (i != j) {
      out.dims.push_back(v.dims[i]);
      out.shape.push_back(v.shape[i]);
    }
  out.dims.push_back(v.dims[j]);
  out.shape.push_back(v.shape[j]);
  return out;
}

namespace {

std::string dimensionList(const std::vector<size_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i)
    s += fmt::format("{}{}", i == 0 ? "" : i + 1 == dims.size() ? " and " : ", ", dims[i]);
  return s;
}

}  // namespace

std::vector<size_t> KernelLowering::contiguousDims(const tile::View& v) {
  // Whatever the tensor's declared alignment: a different reason, which comes after this one.
  std::vector<size_t> dims;
  tile::Tensor aligned = tk_.tensors[v.tensor];
  aligned.alignBytes = std::max<int64_t>(aligned.alignBytes, 2 * tile::dtypeBytes(aligned.dtype));
  for (size_t j = 0; j < v.rank(); ++j) {
    if (v.shape[j] < 2) continue;
    const tile::View along = lastAlong(v, j);
    std::vector<std::pair<int, int64_t>> conditions;
    MemoryRuns r(aligned, along, &tables_.memoryRuns, atomDivisors());
    if (r.check(std::vector<int64_t>(v.rank(), 0), 2, &conditions).kind != MemoryRuns::Problem::Kind::NotContiguous)
      dims.push_back(j);
  }
  return dims;
}

std::string KernelLowering::runsText(const std::string& what, const std::vector<size_t>& dims) {
  return fmt::format("{} along dimension{} {}", what, dims.size() > 1 ? "s" : "", dimensionList(dims));
}

std::string KernelLowering::noCommonRun(const tile::View& dv, const tile::View& sv) {
  // Only where each view is contiguous along some dimension: a view contiguous along none (or
  // that cannot be placed at all) has its own reason, which the witness gives.
  const std::vector<size_t> d = contiguousDims(dv), s = contiguousDims(sv);
  if (d.empty() || s.empty() ||
      std::any_of(d.begin(), d.end(), [&](size_t j) { return std::find(s.begin(), s.end(), j) != s.end(); }))
    return "";
  return fmt::format("no dimension of the copy is contiguous in both layouts ({}, {})",
                     runsText("'" + tk_.tensors[dv.tensor].name + "'", d),
                     runsText("'" + tk_.tensors[sv.tensor].name + "'", s));
}

void KernelLowering::copyMemoryMemory(SourceRange loc, const tile::Copy& c) {
  const tile::View& dv = c.dst;
  const tile::View& sv = *c.src;
  const tile::Tensor& dt = tk_.tensors[dv.tensor];
  const tile::Tensor& st = tk_.tensors[sv.tensor];
  if (dt.dtype != st.dtype) {
    diags_.report(kCopyTypes, loc,
                  fmt::format("'{}' holds {} and '{}' holds {}; copies between memories keep the element type", st.name,
                              tile::dtypeName(st.dtype), dt.name, tile::dtypeName(dt.dtype)));
    return;
  }
  // The block's threads divide the copy's vectors among them: each must reach it.
  emit(loc, tir::Cooperative{c.async ? "this copy_async" : "this copy", {}, nullptr, nullptr});
  Type type = tile::toTir(dt.dtype);
  int eb = tile::dtypeBytes(dt.dtype);
  size_t rank = dv.rank();
  const std::vector<int64_t>& shape = dv.shape;
  int64_t size = dv.size();
  MemoryRuns dRuns(dt, dv, &tables_.memoryRuns, atomDivisors()), sRuns(st, sv, &tables_.memoryRuns, atomDivisors());

  // A destination holding an element twice would make the result depend on timing. With a
  // run-time origin, at each place it can be (as far as that is cheap to check). Views of a
  // tensor whose layout checkLayouts proved injective cannot.
  const size_t shifts = injective_[dv.tensor] ? 0
                        : static_cast<size_t>(size) * dRuns.shifts().size() <= (size_t{1} << 22)
                            ? dRuns.shifts().size()
                            : 1;
  for (size_t shift = 0; dt.layout && dRuns.originProblem().empty() && shift < shifts; ++shift) {
    // (offset, element) pairs, sorted: equal neighbours are the same place.
    std::vector<std::pair<int64_t, int64_t>> at;
    at.reserve(static_cast<size_t>(size));
    std::vector<int64_t> e(rank, 0);  // element i's coordinate
    for (int64_t i = 0; i < size; ++i, layout::nextCoord(e, shape))
      if (std::optional<int64_t> m = dRuns.offsetAt(e, shift)) at.emplace_back(*m, i);
    std::sort(at.begin(), at.end());
    // Report the first element, in row-major order, whose place an earlier one took.
    size_t clash = 0;
    for (size_t j = 1; j < at.size(); ++j) {
      bool secondOfItsPlace = at[j].first == at[j - 1].first && (j == 1 || at[j - 2].first != at[j].first);
      if (secondOfItsPlace && (clash == 0 || at[j].second < at[clash].second)) clash = j;
    }
    if (clash != 0) {
      diags_.report(kCopyAliases, loc,
                    fmt::format("the destination aliases itself: {} and {} both map to m={} in '{}'",
                                layout::shapeToString(layout::unflatten(at[clash - 1].second, shape)),
                                layout::shapeToString(layout::unflatten(at[clash].second, shape)), at[clash].first,
                                dt.name))
          .note(dt.layoutLoc, fmt::format("the layout of '{}' is here", dt.name));
      return;
    }
  }

  // A source that overlaps its destination elsewhere than element for element is read by some
  // threads where others write. Decided when both views are at constant places of one tensor.
  auto constantOrigin = [](const tile::View& v) {
    return std::all_of(v.origin.begin(), v.origin.end(), [](const ExprRef& e) { return tir::isIntConst(e); });
  };
  if (dv.tensor == sv.tensor && dt.layout && constantOrigin(dv) && constantOrigin(sv) &&
      static_cast<size_t>(size) <= (size_t{1} << 22)) {
    std::unordered_map<int64_t, int64_t> written;  // offset -> destination element
    std::vector<int64_t> e(rank, 0);  // element i's (then j's) coordinate
    for (int64_t i = 0; i < size; ++i, layout::nextCoord(e, shape))
      if (std::optional<int64_t> m = dRuns.offsetAt(e, 0)) written.emplace(*m, i);
    for (int64_t j = 0; j < size; ++j, layout::nextCoord(e, shape)) {
      std::optional<int64_t> m = sRuns.offsetAt(e, 0);
      auto hit = m ? written.find(*m) : written.end();
      if (hit == written.end() || hit->second == j) continue;
      diags_.report(kCopyAliases, loc,
                    fmt::format("the destination overlaps the source: element {} of the source is element {} of the "
                                "destination (m={} in '{}'), so threads would read what others write; copy through "
                                "another tensor",
                                layout::shapeToString(layout::unflatten(j, shape)),
                                layout::shapeToString(layout::unflatten(hit->second, shape)), *m, dt.name))
          .note(dt.loc, fmt::format("'{}' is declared here", dt.name));
      return;
    }
  }

  // The widest vector that is contiguous and aligned in both layouts, along the last dimension
  // of the views; where that is less than 16 bytes, along another dimension whose 16-byte
  // vectors are (a K-major view of an N x K tensor into a K-major tile). Both views are then
  // reordered alike, that dimension last: the copy is the same, element for element.
  struct Vectors {
    int64_t w = 1;
    WidthReasons why;
    std::vector<std::pair<int, int64_t>> dCond, sCond;
    MemoryRuns::Problem firstProblem;
    const tile::Tensor* problemTensor = nullptr;
  };
  auto widest = [&](const tile::View& dview, const tile::View& sview) {
    Vectors v;
    MemoryRuns dr(dt, dview, &tables_.memoryRuns, atomDivisors()), sr(st, sview, &tables_.memoryRuns, atomDivisors());
    const std::vector<int64_t>& vs = dview.shape;
    for (int64_t cand = 16 / eb; cand >= 1; cand /= 2) {
      if (c.async && cand * eb < 4) break;
      if (vs.back() % cand != 0) {
        v.why.add(cand * eb, fmt::format("rows of {} elements", vs.back()));
        continue;
      }
      v.dCond.clear();
      v.sCond.clear();
      MemoryRuns::Problem problem;
      std::vector<int64_t> units = vs, unit(rank, 0), vc(rank, 0);  // vector q's place among the vectors, and its first element
      units.back() /= cand;
      for (int64_t q = 0; q < size / cand && problem.ok(); ++q, layout::nextCoord(unit, units)) {
        vc = unit;
        vc.back() *= cand;
        problem = dr.check(vc, cand, &v.dCond);
        if (!problem.ok()) {
          v.problemTensor = &dt;
          break;
        }
        problem = sr.check(vc, cand, &v.sCond);
        if (!problem.ok()) v.problemTensor = &st;
      }
      if (problem.ok()) {
        v.w = cand;
        break;
      }
      if (v.firstProblem.ok()) v.firstProblem = problem;
      v.why.add(cand * eb, problem.message);
      if (c.async) break;  // cp.async copies 16 bytes or reports why it cannot
    }
    return v;
  };
  Vectors best = widest(dv, sv);
  tile::View dvv = dv, svv = sv;
  std::optional<size_t> along;  // the view dimension the vectors run along, when not the last
  for (size_t j = 0; j + 1 < rank && best.w * eb < 16; ++j) {
    tile::View dj = lastAlong(dv, j), sj = lastAlong(sv, j);
    Vectors v = widest(dj, sj);
    if (v.w * eb < 16) continue;
    best = std::move(v);
    dvv = std::move(dj);
    svv = std::move(sj);
    along = j;
  }
  // The structural reason first: no vector wider than an element runs along a dimension that
  // is not contiguous in both layouts. The witness along the last dimension follows it.
  if (std::string s = best.w * eb < 16 && rank >= 2 ? noCommonRun(dv, sv) : ""; !s.empty()) {
    if (!best.firstProblem.ok()) best.firstProblem.message = s + ": " + best.firstProblem.message;
    best.why = WidthReasons{};
    for (int64_t cand = 16 / eb; cand > best.w; cand /= 2) best.why.add(cand * eb, s);
  }
  const std::vector<int64_t>& vshape = dvv.shape;
  const int64_t w = best.w;
  WidthReasons& why = best.why;
  std::vector<std::pair<int, int64_t>>& dCond = best.dCond;
  std::vector<std::pair<int, int64_t>>& sCond = best.sCond;
  const MemoryRuns::Problem& firstProblem = best.firstProblem;
  const tile::Tensor* problemTensor = best.problemTensor;
  if (c.async && w * eb != 16 && (vshape.back() * eb) % 16 != 0) {
    int64_t rowBytes = vshape.back() * eb;
    diags_.report(kCopyNotContiguous, loc,
                  rowBytes < 16 ? fmt::format("copy_async moves 16-byte vectors, but rows of {} elements are only {} bytes",
                                              vshape.back(), rowBytes)
                                : fmt::format("copy_async moves 16-byte vectors, but rows of {} elements ({} bytes) are "
                                              "not a multiple of 16 bytes",
                                              vshape.back(), rowBytes));
    return;
  }
  if (c.async && w * eb != 16) {
    bool contiguous = firstProblem.kind != MemoryRuns::Problem::Kind::Misaligned;
    std::string msg = firstProblem.ok() ? why.text() : firstProblem.message;
    auto d = diags_.report(contiguous ? kCopyNotContiguous : kCopyMisaligned, loc,
                           fmt::format("copy_async moves 16-byte vectors, but {}", msg));
    if (problemTensor) d.note(problemTensor->layoutLoc.valid() ? problemTensor->layoutLoc : problemTensor->loc,
                              fmt::format("the layout of '{}' is here", problemTensor->name));
    return;
  }
  std::string checked = addStrideChecks(dt, dCond);
  if (std::string s = addStrideChecks(st, sCond); !s.empty()) checked += (checked.empty() ? "" : " and ") + s;

  int64_t threads = k_.threadsPerBlock();
  int64_t vectors = size / w;
  int64_t iters = (vectors + threads - 1) / threads;
  diags_.report(kCopyPlan, loc,
                fmt::format("{}: {} vectors of {} bytes{} over {} threads ({} per thread){}{}",
                            c.async ? "copy_async: cp.async" : "copy", vectors, w * eb,
                            along ? fmt::format(" along dimension {}", *along) : "", threads, iters,
                            checked.empty() ? "" : fmt::format("; the launcher checks that {}", checked),
                            why.empty() || w * eb == 16 ? "" : fmt::format("; not wider: {}", why.text())));
  checkSharedBanks(loc, c.async ? "cp.async" : "copy", dt, dvv, vshape, w, vectors);
  checkSharedBanks(loc, "copy", st, svv, vshape, w, vectors);

  ExprRef tid = threadAxisValue(layout::Axis::tx, k_.block);
  for (int64_t i = 0; i < iters; ++i) {
    ExprRef q = tir::add(tid, tir::intConst(i * threads));
    // The vector's view coordinate, from its index.
    std::vector<ExprRef> vc(rank);
    std::vector<int64_t> units = vshape;
    units.back() /= w;
    int64_t weight = 1;
    for (size_t d = rank; d-- > 0;) {
      ExprRef x = divConst(q, weight);
      if (d > 0) x = modConst(x, units[d]);
      vc[d] = d + 1 == rank ? tir::mul(x, tir::intConst(w)) : x;
      weight *= units[d];
    }
    tir::Block body;
    out_.push_back(&body);
    std::vector<ExprRef> dCoord = tensorCoord(dvv, vc);
    std::vector<ExprRef> sCoord = tensorCoord(svv, vc);
    // Source bounds: the other dimensions, and how much of the row remains.
    ExprRef rowsOk;
    ExprRef valid;  // elements of the vector inside the source (I64), null: all
    ExprRef all;    // the first element is inside the source (null: always); else nothing is read
    bool wholeVectors = false;  // every vector is entirely inside the source or entirely outside
    if (st.space == tile::MemSpace::Global) {
      int lastDim = svv.dims.back();
      // inBounds over all dims, with the last one tested at its first element.
      all = bounds(st, sCoord);
      std::vector<ExprRef> lastElem = sCoord;
      lastElem[lastDim] = tir::add(lastElem[lastDim], tir::intConst(w - 1, lastElem[lastDim]->type));
      ExprRef full = bounds(st, lastElem);
      if (full) {
        rowsOk = all;
        if (knownDivisor(st.shape[lastDim]) % w == 0) {
          // Rows are whole vectors (checked at launch): a vector is entirely in or out.
          valid = tir::select(all ? all : tir::boolConst(true), tir::intConst(w, Type::I64), tir::intConst(0, Type::I64));
          rowsOk = nullptr;
          wholeVectors = true;
        } else {
          ExprRef remain = tir::sub(tir::cast(Type::I64, st.shape[lastDim]), tir::cast(Type::I64, sCoord[lastDim]));
          valid = tir::binary(tir::BinOp::Min, tir::binary(tir::BinOp::Max, remain, tir::intConst(0, Type::I64)),
                              tir::intConst(w, Type::I64));
        }
      }
    }
    tir::MemRef dst = memRef(dt, dCoord);
    tir::MemRef src = memRef(st, sCoord);
    if (c.async) {
      tir::CpAsync cp{dst, src, static_cast<int>(w * eb), nullptr};
      // Nothing is read outside the source, or when the copy is disabled: the source size
      // is 0 there and the vector zero-filled. The address is then never touched, so it is
      // left as computed (an address past the end costs nothing, where selecting a safe one
      // cost two instructions per copy).
      ExprRef bytes;  // how many bytes are read (null: all)
      if (valid) {
        bytes = tir::cast(Type::I32, tir::mul(valid, tir::intConst(eb, Type::I64)));
        if (rowsOk) bytes = tir::select(rowsOk, bytes, tir::intConst(0));
      }
      // A copy outside the source reads nothing: an enable that only holds where the copy is
      // inside (a pipeline's `k < cdiv(K, BK)` for column k * BK + r) adds nothing to that.
      if (!tir::isTrue(c.enable) && !(valid && boundsImply(all, c.enable, atomRanges(), definitions())))
        bytes = tir::select(c.enable, bytes ? bytes : tir::intConst(w * eb), tir::intConst(0));
      cp.srcBytes = bytes;
      emit(loc, std::move(cp));
    } else {
      uint32_t tmp = tir::addArray(k_, fmt::format("vec{}", temps_++), type, w);
      std::vector<tir::Reg> regs;
      for (int64_t j = 0; j < w; ++j) regs.push_back(tir::Reg::elem(tmp, j));
      if (wholeVectors) {
        // Rows are whole vectors: the vector is read whole where it starts inside, else zero.
        for (const tir::Reg& r : regs) emit(loc, tir::Assign{r, tir::cast(type, tir::intConst(0))});
        emit(loc, tir::Load{type, src, regs, all});
      } else if (valid) {
        for (const tir::Reg& r : regs) emit(loc, tir::Assign{r, tir::cast(type, tir::intConst(0))});
        ExprRef fullPred = rowsOk ? tir::land(rowsOk, tir::binary(tir::BinOp::Eq, valid, tir::intConst(w, Type::I64)))
                                  : tir::binary(tir::BinOp::Eq, valid, tir::intConst(w, Type::I64));
        tir::If edge{fullPred, {}, {}};
        edge.then.push_back(tir::Stmt{loc, tir::Load{type, src, regs, nullptr}});
        for (int64_t j = 0; j < w; ++j) {
          std::vector<ExprRef> cj = sCoord;
          int lastDim = svv.dims.back();
          cj[lastDim] = tir::add(cj[lastDim], tir::intConst(j, cj[lastDim]->type));
          ExprRef p = tir::binary(tir::BinOp::Gt, valid, tir::intConst(j, Type::I64));
          if (rowsOk) p = tir::land(rowsOk, p);
          edge.otherwise.push_back(tir::Stmt{loc, tir::Load{type, memRef(st, cj), {regs[j]}, p}});
        }
        emit(loc, std::move(edge));
      } else {
        emit(loc, tir::Load{type, src, regs, nullptr});
      }
      // Global destinations skip what lies outside them.
      ExprRef dstOk = dt.space == tile::MemSpace::Global ? bounds(dt, dCoord) : nullptr;
      if (dstOk && w > 1) {
        std::vector<ExprRef> lastElem = dCoord;
        int lastDim = dvv.dims.back();
        lastElem[lastDim] = tir::add(lastElem[lastDim], tir::intConst(w - 1, lastElem[lastDim]->type));
        ExprRef full = bounds(dt, lastElem);
        tir::If edge{full ? full : tir::boolConst(true), {}, {}};
        edge.then.push_back(tir::Stmt{loc, tir::Store{type, dst, regs, nullptr}});
        for (int64_t j = 0; j < w; ++j) {
          std::vector<ExprRef> cj = dCoord;
          cj[lastDim] = tir::add(cj[lastDim], tir::intConst(j, cj[lastDim]->type));
          edge.otherwise.push_back(tir::Stmt{loc, tir::Store{type, memRef(dt, cj), {regs[j]}, bounds(dt, cj)}});
        }
        emit(loc, std::move(edge));
      } else {
        emit(loc, tir::Store{type, dst, regs, dstOk});
      }
    }
    out_.pop_back();
    bool partial = (i + 1) * threads > vectors;
    if (partial) {
      emit(loc, tir::If{tir::lt(q, tir::intConst(vectors)), std::move(body), {}});
    } else {
      for (tir::Stmt& s : body) out_.back()->push_back(std::move(s));
    }
  }
}

}  // namespace tyl::lower
