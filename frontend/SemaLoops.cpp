// What the range loops around a statement say about its run-time values: a window or an
// index into shared memory that lies outside the tensor at a value a loop variable surely
// takes is an error, although no single constant shows it.
#include <fmt/format.h>

#include <algorithm>

#include "frontend/SemaImpl.h"

namespace tyl::sema {

using tir::ExprRef;

namespace {

// All combinations of the loop values are tried up to this many; past it, those of the
// first and last values.
constexpr int64_t kMaxCombinations = 256;

}  // namespace

void KernelSema::enterLoop(uint32_t var, const std::string& name, SourceRange loc, const ExprRef& begin,
                           const ExprRef& end, int64_t step) {
  LoopValues l;
  l.var = var;
  l.name = name;
  l.loc = loc;
  l.step = step;
  l.conditions = conditions_;
  int64_t b = 0, e = 0;
  if (tir::isIntConst(begin, &b)) {
    l.first = b;
    // The step is positive; (e - b + step - 1) / step without overflow.
    if (tir::isIntConst(end, &e)) l.count = e <= b ? 0 : (e - b - 1) / step + 1;
  }
  loops_.push_back(std::move(l));
}

std::optional<KernelSema::Escape> KernelSema::escapeAtLoopValues(const std::vector<ExprRef>& coord,
                                                                 const std::vector<int64_t>& most) {
  // The loops the coordinates depend on, outermost first; nothing else may be run-time.
  std::vector<size_t> used;
  bool other = false;
  auto visit = [&](auto&& self, const ExprRef& e) -> void {
    if (!e || other) return;
    switch (e->kind) {
      case tir::ExprKind::VarRef: {
        size_t i = loops_.size();
        while (i > 0 && loops_[i - 1].var != static_cast<uint32_t>(e->i)) --i;
        if (i == 0 || !loops_[i - 1].first || loops_[i - 1].conditions != conditions_) {
          other = true;
          return;
        }
        if (std::find(used.begin(), used.end(), i - 1) == used.end()) used.push_back(i - 1);
        return;
      }
      case tir::ExprKind::ParamRef:
      case tir::ExprKind::SpecialReg:
      case tir::ExprKind::Elem: other = true; return;
      default:
        for (const ExprRef& a : e->args) self(self, a);
    }
  };
  for (const ExprRef& c : coord) visit(visit, c);
  if (other || used.empty()) return std::nullopt;
  // A loop with no iterations: the statement never runs.
  for (const LoopValues& l : loops_)
    if (l.count && *l.count == 0) return std::nullopt;
  std::sort(used.begin(), used.end());

  // The values to try of each loop used.
  int64_t combinations = 1;
  for (size_t i : used) {
    const std::optional<int64_t>& n = loops_[i].count;
    combinations = n && combinations <= kMaxCombinations ? combinations * std::min(*n, kMaxCombinations + 1)
                                                         : kMaxCombinations + 1;
  }
  std::vector<std::vector<int64_t>> values;
  for (size_t i : used) {
    const LoopValues& l = loops_[i];
    std::vector<int64_t>& v = values.emplace_back(1, *l.first);
    // first + (count - 1) * step is the last value the variable takes, and fits its type.
    if (combinations <= kMaxCombinations)
      for (int64_t j = 1; j < *l.count; ++j) v.push_back(*l.first + j * l.step);
    else if (l.count && *l.count > 1)
      v.push_back(*l.first + (*l.count - 1) * l.step);
  }

  std::vector<size_t> at(used.size(), 0);
  for (;;) {
    auto value = [&](uint32_t var) -> ExprRef {
      for (size_t u = 0; u < used.size(); ++u)
        if (loops_[used[u]].var == var)
          return tir::intConst(values[u][at[u]], k_.skeleton.vars[var].type);
      return nullptr;
    };
    for (size_t d = 0; d < coord.size(); ++d) {
      int64_t c = 0;
      if (!tir::isIntConst(tir::substituteVars(coord[d], value), &c) || (c >= 0 && c <= most[d])) continue;
      Escape esc{d, c, "", &loops_[used.back()]};
      for (size_t u = 0; u < used.size(); ++u)
        esc.when += fmt::format("{}{} = {}", u == 0 ? "when " : " and ", loops_[used[u]].name, values[u][at[u]]);
      return esc;
    }
    size_t u = 0;
    while (u < at.size() && ++at[u] == values[u].size()) at[u++] = 0;
    if (u == at.size()) return std::nullopt;
  }
}

}  // namespace tyl::sema
