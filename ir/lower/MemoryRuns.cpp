#include "ir/lower/MemoryRuns.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/layout/Transforms.h"
#include "ir/lower/Addressing.h"
#include "ir/lower/Affine.h"
#include "ir/thread/Builder.h"

namespace tyl::lower {

namespace {

// At most this many shifts of the origin are enumerated.
constexpr size_t kMaxShifts = 256;

// Tensors with more elements are not tabulated: the largest shared-memory tile has fewer,
// and a large global tensor is seldom read at more than a few windows.
constexpr int64_t kMaxTabulated = int64_t{1} << 18;

std::shared_ptr<const std::vector<int64_t>> tabulate(const layout::Layout& l, const std::vector<int64_t>& shape) {
  try {
    if (l.size() > kMaxTabulated || layout::shapeSize(shape) != l.size()) return nullptr;
    std::optional<std::vector<int64_t>> all = layout::applyAxisToAll(l, layout::Axis::m);
    return all ? std::make_shared<const std::vector<int64_t>>(std::move(*all)) : nullptr;
  } catch (const layout::Error&) {
    return nullptr;  // then each offset is computed when asked for, and reports its own problem
  }
}

}  // namespace

std::shared_ptr<const std::vector<int64_t>> MemoryRuns::Cache::offsets(const layout::Layout& l,
                                                                       const std::vector<int64_t>& shape) {
  for (const Entry& e : entries_)
    if (e.shape == shape && e.layout == l) return e.offsets;
  return entries_.emplace_back(Entry{l, shape, tabulate(l, shape)}).offsets;
}

MemoryRuns::MemoryRuns(const tile::Tensor& t, const tile::View& v, Cache* cache, const AtomDivisor& divisors)
    : t_(t), v_(v) {
  shifts_.assign(1, std::vector<int64_t>(v.origin.size(), 0));
  for (size_t d = 0; d < v.origin.size(); ++d) {
    AffineForm f = linearize(v.origin[d]);
    originConst_.push_back(f.constant);
    const int64_t div = f.runtimeDivisor(divisors);
    originDivisor_.push_back(div);
    originStep_.push_back(0);
    if (!t.layout || !originProblem_.empty() || div == 0) continue;
    // The run-time part r (a multiple of div) keeps the view inside the tensor when
    // 0 <= constant + r and constant + r + extent <= the tensor's extent.
    int64_t extent = 1;
    for (size_t i = 0; i < v.dims.size(); ++i)
      if (v.dims[i] == static_cast<int>(d)) extent = v.shape[i];
    const int64_t lo = -f.constant, hi = t.staticShape[d] - extent - f.constant;
    const int64_t first = (lo >= 0 ? (lo + div - 1) / div : -(-lo / div)) * div;  // the least r >= lo
    if (first > hi && outside_.empty())
      outside_ = fmt::format("the window never lies inside '{}': along dimension {} its origin is {} plus a "
                             "multiple of {}, and its {} elements there do not fit in {} at any of them",
                             t.name, d, f.constant, div, extent, t.staticShape[d]);
    if (translationInvariant(*t.layout, t.staticShape, static_cast<int>(d), div)) {
      // Every place the view fits has the same pattern: check it at r = 0, or where the view
      // first fits when it does not at 0 (an origin (k - 1) * 64 in a loop from k = 1).
      if ((lo > 0 || hi < 0) && first <= hi) originConst_[d] += first;
      // A global window may also reach past the tensor's edge, at places where it does not
      // fit: the step counts there too.
      if (first + div <= hi || t.space == tile::MemSpace::Global) {
        // Every offset moves by the same amount per step.
        originStep_[d] = translationShift(*t.layout, t.staticShape, static_cast<int>(d), div);
      }
      continue;
    }
    std::vector<int64_t> values;
    for (int64_t r = first; r <= hi && values.size() <= kMaxShifts; r += div) values.push_back(r);
    if (values.empty()) continue;  // no run-time value fits: outside_ says so
    if (values.size() * shifts_.size() > kMaxShifts) {
      originProblem_ = fmt::format("the origin of dimension {} moves by multiples of {}, which does not keep the "
                                   "layout's pattern in place, in more places than are checked ({})",
                                   d, div, kMaxShifts);
      shifts_.resize(1);
      continue;
    }
    std::vector<std::vector<int64_t>> product;
    for (const std::vector<int64_t>& s : shifts_)
      for (int64_t r : values) {
        product.push_back(s);
        product.back()[d] = r;
      }
    // No shift first, when it is one of them.
    std::stable_partition(product.begin(), product.end(), [](const std::vector<int64_t>& s) {
      return std::all_of(s.begin(), s.end(), [](int64_t x) { return x == 0; });
    });
    shifts_ = std::move(product);
  }
  if (!t.layout) return;
  offsets_ = cache ? cache->offsets(*t.layout, t.staticShape) : tabulate(*t.layout, t.staticShape);
  for (const std::vector<int64_t>& shift : shifts_) {
    std::vector<int64_t>& at = origins_.emplace_back(originConst_);
    for (size_t d = 0; d < at.size(); ++d) at[d] += shift[d];
  }
  viewDim_.assign(v.origin.size(), -1);
  for (size_t i = 0; i < v.dims.size(); ++i) viewDim_[static_cast<size_t>(v.dims[i])] = static_cast<int>(i);
}

std::optional<int64_t> MemoryRuns::staticOffset(const std::vector<int64_t>& viewCoord) const {
  return offsetAt(viewCoord, 0);
}

std::optional<int64_t> MemoryRuns::offsetAt(const std::vector<int64_t>& viewCoord, size_t shift) const {
  if (!t_.layout) return std::nullopt;
  return computeOffset(viewCoord, shift);
}

std::optional<int64_t> MemoryRuns::flatIndex(const std::vector<int64_t>& viewCoord, size_t shift) const {
  // The tensor coordinate: the origin at this shift, plus the view coordinate on kept dimensions.
  const std::vector<int64_t>& origin = origins_[shift];
  int64_t flat = 0;
  for (size_t d = 0; d < origin.size(); ++d) {
    const auto i = static_cast<size_t>(viewDim_[d]);  // -1 (indexed away): past any coordinate
    const int64_t c = origin[d] + (i < viewCoord.size() ? viewCoord[i] : 0);
    if (c < 0 || c >= t_.staticShape[d]) return std::nullopt;
    flat = flat * t_.staticShape[d] + c;
  }
  return flat;
}

std::optional<int64_t> MemoryRuns::computeOffset(const std::vector<int64_t>& viewCoord, size_t shift) const {
  const std::optional<int64_t> flat = flatIndex(viewCoord, shift);
  if (!flat) return std::nullopt;
  if (offsets_) return (*offsets_)[static_cast<size_t>(*flat)];
  std::vector<int64_t>& coord = scratch_;
  coord = origins_[shift];
  for (size_t i = 0; i < viewCoord.size(); ++i) coord[v_.dims[i]] += viewCoord[i];
  return layout::applyAxis(*t_.layout, coord, t_.staticShape, layout::Axis::m);
}

MemoryRuns::Problem MemoryRuns::check(const std::vector<int64_t>& viewCoord, int64_t len,
                                      std::vector<std::pair<int, int64_t>>* launchConditions) const {
  using K = Problem::Kind;
  size_t rank = viewCoord.size();
  int last = v_.dims[rank - 1];
  int64_t bytes = len * tile::dtypeBytes(t_.dtype);
  if (t_.alignBytes < bytes)
    return {K::Misaligned, fmt::format("'{}' is only declared {}-byte aligned", t_.name, t_.alignBytes)};
  if (t_.layout) {
    if (!outside_.empty()) return {K::NotContiguous, outside_};
    if (!originProblem_.empty()) return {K::Misaligned, originProblem_};
    for (size_t d = 0; d < originStep_.size(); ++d)
      if (originStep_[d] % len != 0)
        return {K::Misaligned,
                fmt::format("the origin of dimension {} is {} plus a run-time multiple of {}, which moves the run in "
                            "steps of {} element{}, not a multiple of {}",
                            d, originConst_[d], originDivisor_[d], originStep_[d], originStep_[d] == 1 ? "" : "s",
                            len)};
    for (size_t shift = 0; shift < shifts_.size(); ++shift) {
      Problem p = checkStatic(viewCoord, len, shift);
      if (!p.ok()) return p;
    }
    return {};
  }
  // Strided global tensor: unit stride along the run, other strides multiples of it.
  int64_t s = 0;
  if (!tir::isIntConst(t_.strides[last], &s) || s != 1)
    return {K::NotContiguous, fmt::format("the stride of the last dimension of '{}' is not 1", t_.name)};
  for (size_t d = 0; d < t_.shape.size(); ++d) {
    if (static_cast<int>(d) == last) continue;
    if (tir::isIntConst(t_.strides[d], &s)) {
      if (s % len != 0)
        return {K::Misaligned, fmt::format("the stride {} of dimension {} of '{}' is not a multiple of {} elements", s,
                                           d, t_.name, len)};
    } else if (launchConditions) {
      launchConditions->emplace_back(static_cast<int>(d), len);
    } else {
      return {K::Misaligned, fmt::format("the stride of dimension {} of '{}' is only known at run time", d, t_.name)};
    }
  }
  int64_t div = originDivisor_[last];
  if (div != 0 && div % len != 0)
    return {K::Misaligned,
            fmt::format("the origin along the last dimension is only known to be a multiple of {}", div)};
  int64_t start = originConst_[last] + viewCoord[rank - 1];
  if (((start % len) + len) % len != 0)
    return {K::Misaligned, fmt::format("the run starts at column {}, not a multiple of {}", start, len)};
  return {};
}

std::string MemoryRuns::shiftDescription(size_t shift) const {
  std::string where;
  for (size_t d = 0; d < shifts_[shift].size(); ++d) {
    if (shifts_[shift][d] == 0) continue;
    where += where.empty() ? ", when the origin of dimension " : " and that of dimension ";
    where += fmt::format("{} is {} more", d, shifts_[shift][d]);
  }
  return where;
}

// The run at one shift of the origin (see shifts()).
MemoryRuns::Problem MemoryRuns::checkStatic(const std::vector<int64_t>& viewCoord, int64_t len, size_t shift) const {
  using K = Problem::Kind;
  const size_t rank = viewCoord.size();
  auto where = [&] { return shiftDescription(shift); };
  auto element = [&](int64_t j) {
    std::vector<int64_t> c = viewCoord;
    c[rank - 1] += j;
    return c;
  };
  // With the offset table, the run's elements are entries `step` apart, while the tensor
  // coordinate along the run's dimension stays below its extent.
  const std::optional<int64_t> flat = offsets_ ? flatIndex(viewCoord, shift) : std::nullopt;
  const auto dim = static_cast<size_t>(v_.dims[rank - 1]);
  int64_t step = 1;
  for (size_t d = dim + 1; d < t_.staticShape.size(); ++d) step *= t_.staticShape[d];
  const int64_t along = origins_[shift][dim] + viewCoord[rank - 1];
  int64_t first = 0;
  for (int64_t j = 0; j < len; ++j) {
    std::optional<int64_t> m;
    if (!flat)
      m = offsetAt(element(j), shift);
    else if (along + j < t_.staticShape[dim])
      m = (*offsets_)[static_cast<size_t>(*flat + j * step)];
    if (!m) {
      return {K::NotContiguous,
              fmt::format("element {} lies outside '{}'{}", layout::shapeToString(element(j)), t_.name, where())};
    }
    if (j == 0) {
      first = *m;
      if (*m % len != 0)
        return {K::Misaligned, fmt::format("the run at {} starts at offset {}, not a multiple of {} elements{}",
                                           layout::shapeToString(viewCoord), *m, len, where())};
    } else if (*m != first + j) {
      return {K::NotContiguous, fmt::format("elements {} and {} are not adjacent in memory (offsets {} and {}){}",
                                            layout::shapeToString(viewCoord), layout::shapeToString(element(j)),
                                            first + j - 1, *m, where())};
    }
  }
  return {};
}

}  // namespace tyl::lower
