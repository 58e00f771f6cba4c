// The values a statement surely sees: those of the range loops around it, of the threads and
// of the blocks. A window or an index into shared memory that lies outside the tensor at such
// values is an error, although no single constant shows it.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <set>

#include "frontend/Ast.h"
#include "frontend/SemaImpl.h"

namespace tyl::sema {

using tir::ExprRef;

namespace {

// All combinations of the sure values are tried up to this many; past it, those of the
// first and last values.
constexpr int64_t kMaxCombinations = 1024;

}  // namespace

void KernelSema::collectAssignedNames(const ast::Block& b) {
  for (const ast::StmtPtr& st : b.stmts) {
    std::visit(
        [&](const auto& n) {
          using T = std::decay_t<decltype(n)>;
          if constexpr (std::is_same_v<T, ast::Assign>) {
            if (const auto* name = n.target->template as<ast::Name>()) assignedNames_.insert(name->name);
          } else if constexpr (std::is_same_v<T, ast::For>) {
            collectAssignedNames(n.body);
          } else if constexpr (std::is_same_v<T, ast::If>) {
            collectAssignedNames(n.then);
            if (n.otherwise) collectAssignedNames(*n.otherwise);
          } else if constexpr (std::is_same_v<T, ast::Block>) {
            collectAssignedNames(n);
          }
        },
        st->node);
  }
}

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
    l.first = l.last = b;
    if (tir::isIntConst(end, &e)) {
      l.count = 0;
      if (e > b) {
        // In unsigned arithmetic, e - b cannot overflow and the last value wraps back to its
        // signed value; the step is positive.
        const uint64_t steps = (static_cast<uint64_t>(e) - static_cast<uint64_t>(b) - 1) / static_cast<uint64_t>(step);
        l.count = static_cast<int64_t>(std::min<uint64_t>(steps, INT64_MAX - 1) + 1);
        l.last = static_cast<int64_t>(static_cast<uint64_t>(b) + steps * static_cast<uint64_t>(step));
      }
    }
  }
  loops_.push_back(std::move(l));
}

std::optional<KernelSema::Escape> KernelSema::escapeAtSureValues(const std::vector<ExprRef>& coord,
                                                                 const std::vector<int64_t>& most) {
  const tir::Kernel& kernel = k_.skeleton;
  const auto& bd = kernel.block;
  std::array<int64_t, 3> grid{0, 0, 0};
  int64_t blocks = 1;
  bool gridKnown = true;
  for (size_t d = 0; d < 3; ++d)
    gridKnown = gridKnown && tir::isIntConst(kernel.grid[d], &grid[d]) && grid[d] > 0 &&
                !__builtin_mul_overflow(blocks, grid[d], &blocks);

  // What the coordinates depend on: loops (outermost first), the thread and the block;
  // anything else (parameters, other variables, values under a condition) is not sure.
  std::vector<size_t> used;
  bool thread = false, block = false, other = false;
  std::set<uint32_t> lets;  // each let's value is looked into once
  auto visit = [&](auto&& self, const ExprRef& e) -> void {
    if (!e || other) return;
    switch (e->kind) {
      case tir::ExprKind::VarRef: {
        if (auto let = letValues_.find(static_cast<uint32_t>(e->i)); let != letValues_.end()) {
          if (lets.insert(let->first).second) self(self, let->second);
          return;
        }
        size_t i = loops_.size();
        while (i > 0 && loops_[i - 1].var != static_cast<uint32_t>(e->i)) --i;
        if (i == 0 || !loops_[i - 1].first || loops_[i - 1].conditions != conditions_) {
          other = true;
          return;
        }
        if (std::find(used.begin(), used.end(), i - 1) == used.end()) used.push_back(i - 1);
        return;
      }
      case tir::ExprKind::SpecialReg:
        switch (static_cast<tir::Special>(e->i)) {
          case tir::Special::CtaidX:
          case tir::Special::CtaidY:
          case tir::Special::CtaidZ:
          case tir::Special::NctaidX:
          case tir::Special::NctaidY:
          case tir::Special::NctaidZ: block = true; break;
          default: thread = true;
        }
        // Every thread of every block runs a statement that no condition guards.
        if (conditions_ != 0 || (block && !gridKnown)) other = true;
        return;
      case tir::ExprKind::ParamRef:
      case tir::ExprKind::Elem: other = true; return;
      default:
        for (const ExprRef& a : e->args) self(self, a);
    }
  };
  for (const ExprRef& c : coord) visit(visit, c);
  if (other || (used.empty() && !thread && !block)) return std::nullopt;
  // A loop with no iterations: the statement never runs.
  for (const LoopValues& l : loops_)
    if (l.count && *l.count == 0) return std::nullopt;
  std::sort(used.begin(), used.end());

  // The sources of values, each numbered 0 .. count - 1: the loops (only the first value of
  // one whose end is not a constant), the thread's linear index, the block's.
  struct Source {
    const LoopValues* loop = nullptr;  // null: the thread, or the block
    bool isThread = false;
    int64_t count = 1;
  };
  std::vector<Source> sources;
  for (size_t i : used) sources.push_back({&loops_[i], false, loops_[i].count.value_or(1)});
  if (thread) sources.push_back({nullptr, true, kernel.threadsPerBlock()});
  if (block) sources.push_back({nullptr, false, blocks});
  int64_t combinations = 1;
  for (const Source& src : sources)
    combinations = std::min(combinations * std::min(src.count, kMaxCombinations + 1), kMaxCombinations + 1);
  // Every combination when there are few; otherwise the first and last of each.
  std::vector<std::vector<int64_t>> picks;
  for (const Source& src : sources) {
    std::vector<int64_t>& p = picks.emplace_back(1, 0);
    if (combinations <= kMaxCombinations)
      for (int64_t j = 1; j < src.count; ++j) p.push_back(j);
    else if (src.count > 1)
      p.push_back(src.count - 1);
  }

  std::vector<size_t> at(sources.size(), 0);
  auto pick = [&](size_t i) { return picks[i][at[i]]; };
  auto loopValue = [&](size_t i) {
    const LoopValues& l = *sources[i].loop;
    return pick(i) + 1 == sources[i].count ? l.last : *l.first + pick(i) * l.step;
  };
  // Thread or block ids of a linear index, over dims (x, y, z).
  auto ids = [](int64_t linear, const auto& dims) {
    return std::array<int64_t, 3>{linear % dims[0], linear / dims[0] % dims[1], linear / (dims[0] * dims[1])};
  };
  auto idText = [](const char* what, const std::array<int64_t, 3>& id, const auto& dims) {
    if (dims[1] == 1 && dims[2] == 1) return fmt::format("{} {}", what, id[0]);
    return fmt::format("{} ({}, {}, {})", what, id[0], id[1], id[2]);
  };
  for (;;) {
    std::array<int64_t, 3> tid{0, 0, 0}, cta{0, 0, 0};
    int64_t linearThread = 0;
    for (size_t i = 0; i < sources.size(); ++i) {
      if (sources[i].loop) continue;
      if (sources[i].isThread) {
        linearThread = pick(i);
        tid = ids(linearThread, bd);
      } else {
        cta = ids(pick(i), grid);
      }
    }
    std::map<uint32_t, ExprRef> letAt;  // each let's value at this combination, once worked out
    std::function<ExprRef(const tir::Expr&)> value = [&](const tir::Expr& atom) -> ExprRef {
      if (atom.kind == tir::ExprKind::VarRef) {
        if (auto let = letValues_.find(static_cast<uint32_t>(atom.i)); let != letValues_.end()) {
          ExprRef& known = letAt[let->first];
          if (!known) known = tir::substitute(let->second, value);
          return known;
        }
        for (size_t i = 0; i < sources.size(); ++i)
          if (sources[i].loop && sources[i].loop->var == static_cast<uint32_t>(atom.i))
            return tir::intConst(loopValue(i), atom.type);
        return nullptr;
      }
      if (atom.kind != tir::ExprKind::SpecialReg) return nullptr;
      const int64_t n = atom.i - static_cast<int64_t>(tir::Special::TidX);
      switch (static_cast<tir::Special>(atom.i)) {
        case tir::Special::TidX:
        case tir::Special::TidY:
        case tir::Special::TidZ: return tir::intConst(tid[static_cast<size_t>(n)], atom.type);
        case tir::Special::CtaidX:
        case tir::Special::CtaidY:
        case tir::Special::CtaidZ: return tir::intConst(cta[static_cast<size_t>(n - 3)], atom.type);
        case tir::Special::NctaidX:
        case tir::Special::NctaidY:
        case tir::Special::NctaidZ: return tir::intConst(grid[static_cast<size_t>(n - 6)], atom.type);
        case tir::Special::LaneId: return tir::intConst(linearThread % 32, atom.type);
        case tir::Special::WarpId: return tir::intConst(linearThread / 32, atom.type);
      }
      return nullptr;
    };
    for (size_t d = 0; d < coord.size(); ++d) {
      int64_t c = 0;
      if (!tir::isIntConst(tir::substitute(coord[d], value), &c) || (c >= 0 && c <= most[d])) continue;
      Escape esc{d, c, "", nullptr};
      std::vector<std::string> parts;
      for (size_t i = 0; i < sources.size(); ++i) {
        if (sources[i].loop) {
          parts.push_back(fmt::format("{} = {}", sources[i].loop->name, loopValue(i)));
          esc.loop = sources[i].loop;
        } else {
          parts.push_back(sources[i].isThread ? idText("thread", tid, bd) : idText("block", cta, grid));
        }
      }
      for (size_t i = 0; i < parts.size(); ++i)
        esc.when += (i == 0 ? "for " : i + 1 == parts.size() ? " and " : ", ") + parts[i];
      return esc;
    }
    size_t i = 0;
    while (i < at.size() && ++at[i] == picks[i].size()) at[i++] = 0;
    if (i == at.size()) return std::nullopt;
  }
}

}  // namespace tyl::sema
