// The values a statement surely sees: those of the range loops around it, of the threads and
// of the blocks. A window or an index into shared memory that lies outside the tensor at such
// values is an error, although no single constant shows it.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <map>
#include <set>
#include <vector>

#include "frontend/Ast.h"
#include "frontend/SemaImpl.h"
#include "ir/thread/ValueRange.h"

namespace tyl::sema {

using tir::ExprRef;
using tir::Type;

namespace {

// All combinations of the sure values are tried up to this many; past it, those of the
// first and last values.
constexpr int64_t kMaxCombinations = 1024;
// Launch checks of accesses with up to this many corners of their sure values, and up to
// this many conditions in a kernel's launcher.
constexpr size_t kMaxCorners = 64;
constexpr size_t kMaxLaunchChecks = 256;

// Thread indices at which every affine form of thread_id, lane_id() and warp_id() in a block
// of `dims` takes its extremes. Each of them is a run of digits of the thread's linear index
// in the mixed radix cut at dims.x, dims.x * dims.y and 32; where each cut divides the next
// and the last divides the thread count, all of them are affine in those digits, which range
// over a box, so the box's corners (each digit at 0 or its largest) are the extremes.
// Otherwise, for a one-dimensional block whose last warp is partial, lane and warp range over
// a staircase whose corners are the first and last lane of the first warp, the last lane of
// the next-to-last warp, and the first and last lane of the last warp; other blocks get the
// same ids, which are then not sure to be the extremes (docs/language.md, Sure values at launch).
std::set<int64_t> laneWarpCorners(const std::array<int64_t, 3>& dims) {
  const int64_t threads = dims[0] * dims[1] * dims[2];
  std::vector<int64_t> cuts;
  for (int64_t c : {dims[0], dims[0] * dims[1], int64_t{32}})
    if (c > 1 && c < threads) cuts.push_back(c);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  bool chain = true;
  int64_t place = 1;
  for (int64_t c : cuts) {
    chain = chain && c % place == 0;
    place = c;
  }
  chain = chain && threads % place == 0;
  std::set<int64_t> ids;
  if (chain) {
    cuts.push_back(threads);
    for (unsigned pick = 0; pick < (1u << cuts.size()); ++pick) {
      int64_t id = 0, below = 1;
      for (size_t d = 0; d < cuts.size(); ++d) {
        if (pick >> d & 1) id += cuts[d] - below;  // (radix - 1) * place: the digit at its largest
        below = cuts[d];
      }
      ids.insert(id);
    }
    return ids;
  }
  const int64_t lastWarp = (threads - 1) / 32 * 32;
  for (int64_t t : {int64_t{0}, std::min<int64_t>(31, threads - 1), lastWarp - 1, lastWarp, threads - 1})
    if (t >= 0) ids.insert(t);
  return ids;
}

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
  l.begin = begin;
  l.end = end;
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

KernelSema::SureDeps KernelSema::sureDependencies(const std::vector<ExprRef>& coord, bool gridKnown) const {
  SureDeps deps;
  std::set<uint32_t> lets;  // each let's value is looked into once
  auto visit = [&](auto&& self, const ExprRef& e) -> void {
    if (!e || deps.other) return;
    switch (e->kind) {
      case tir::ExprKind::VarRef: {
        if (auto let = letValues_.find(static_cast<uint32_t>(e->id)); let != letValues_.end()) {
          if (lets.insert(let->first).second) self(self, let->second);
          return;
        }
        size_t i = loops_.size();
        while (i > 0 && loops_[i - 1].var != static_cast<uint32_t>(e->id)) --i;
        if (i == 0 || !loops_[i - 1].first || loops_[i - 1].conditions != conditions_) {
          deps.other = true;
          return;
        }
        if (std::find(deps.loops.begin(), deps.loops.end(), i - 1) == deps.loops.end()) deps.loops.push_back(i - 1);
        return;
      }
      case tir::ExprKind::SpecialReg: {
        bool block = false;
        const auto special = e->special;
        switch (special) {
          case tir::Special::CtaidX:
          case tir::Special::CtaidY:
          case tir::Special::CtaidZ:
          case tir::Special::NctaidX:
          case tir::Special::NctaidY:
          case tir::Special::NctaidZ:
            block = true;
            deps.blockAxes |= static_cast<uint8_t>(1u << (static_cast<int64_t>(e->special) - static_cast<int64_t>(tir::Special::CtaidX)) % 3);
            break;
          case tir::Special::TidX:
          case tir::Special::TidY:
          case tir::Special::TidZ:
            deps.threadAxes |= static_cast<uint8_t>(1u << (static_cast<int64_t>(e->special) - static_cast<int64_t>(tir::Special::TidX)));
            break;
          default:
            deps.threadAxes |= 8;
        }
        // Every thread of every block runs a statement that no condition guards.
        if (conditions_ != 0 || (block && !gridKnown)) deps.other = true;
        return;
      }
      case tir::ExprKind::ParamRef: deps.params = true; return;
      case tir::ExprKind::Elem: deps.other = true; return;
      default:
        for (const ExprRef& a : e->args) self(self, a);
    }
  };
  for (const ExprRef& c : coord) visit(visit, c);
  std::sort(deps.loops.begin(), deps.loops.end());
  deps.neverRuns = std::any_of(loops_.begin(), loops_.end(), [](const LoopValues& l) { return l.count == 0; });
  return deps;
}

std::vector<KernelSema::SureSource> KernelSema::sureSources(const SureDeps& deps, int64_t blocks,
                                                             const std::array<int64_t, 3>& grid) const {
  std::vector<SureSource> sources;
  for (size_t i : deps.loops) sources.push_back({&loops_[i], false, loops_[i].count.value_or(1), {}});
  // Each used axis at its first or last value, the others at 0, as linear ids of `dims`.
  auto boxCorners = [](uint8_t axes, const std::array<int64_t, 3>& dims) {
    std::set<int64_t> ids;
    for (unsigned pick = 0; pick < 8; ++pick) {
      int64_t id = 0, scale = 1;
      for (int d = 0; d < 3; ++d) {
        if ((axes >> d & 1) && (pick >> d & 1)) id += (dims[d] - 1) * scale;
        scale *= dims[d];
      }
      ids.insert(id);
    }
    return ids;
  };
  if (deps.thread()) {
    const int64_t threads = k_.skeleton.threadsPerBlock();
    std::set<int64_t> ids = boxCorners(deps.threadAxes & 7, k_.skeleton.block);
    if (deps.threadAxes & 8) ids.merge(laneWarpCorners(k_.skeleton.block));
    sources.push_back({nullptr, true, threads, {ids.begin(), ids.end()}});
  }
  if (deps.block()) {
    std::set<int64_t> ids;
    if (grid[0] > 0) {
      ids = boxCorners(deps.blockAxes, grid);
    } else {
      for (unsigned last = 0; last < 8; ++last) ids.insert(last & deps.blockAxes);
    }
    sources.push_back({nullptr, false, blocks, {ids.begin(), ids.end()}});
  }
  return sources;
}

namespace {

// Thread or block ids of a linear index, over dims (x, y, z).
std::array<int64_t, 3> ids(int64_t linear, const std::array<int64_t, 3>& dims) {
  return {linear % dims[0], linear / dims[0] % dims[1], linear / (dims[0] * dims[1])};
}

std::string idText(const char* what, int64_t linear, const std::array<int64_t, 3>& dims) {
  const std::array<int64_t, 3> id = ids(linear, dims);
  if (dims[1] == 1 && dims[2] == 1) return fmt::format("{} {}", what, id[0]);
  return fmt::format("{} ({}, {}, {})", what, id[0], id[1], id[2]);
}

// `e` (an integer index over parameters and constants) computed so that it does not wrap: its
// sums, differences, products and negations in 64 bits, truncations dropped, other operations
// kept in the IR's arithmetic (as atoms). The kernel's value equals this one modulo 2^32 (2^64
// for i64) where each widening of a 32-bit operand in it gets the operand's exact value; that
// operand's exact value lying in 32 bits is added to `inside`. So where this value lies in a
// tensor and `inside` holds, the kernel's value is the same. Null when the 64-bit arithmetic
// itself could wrap.
ExprRef unwrapped(const ExprRef& e, std::vector<ExprRef>& inside) {
  const tir::AtomRange none = [](const tir::Expr&) { return std::optional<tir::Range>(); };
  auto ring = [](tir::Type t) { return t == Type::I32 || t == Type::I64; };
  auto i64 = [](int64_t v) { return tir::intConst(v, Type::I64); };
  std::function<ExprRef(const ExprRef&)> widen = [&](const ExprRef& x) -> ExprRef {
    if (!ring(x->type)) return tir::cast(Type::I64, x);
    switch (x->kind) {
      case tir::ExprKind::IntConst: return i64(x->value);
      case tir::ExprKind::Binary:
        if (x->bin == tir::BinOp::Add || x->bin == tir::BinOp::Sub || x->bin == tir::BinOp::Mul)
          return tir::binary(x->bin, widen(x->args[0]), widen(x->args[1]));
        break;
      case tir::ExprKind::Unary:
        if (x->un == tir::UnOp::Neg) return tir::unary(tir::UnOp::Neg, widen(x->args[0]));
        break;
      case tir::ExprKind::Cast: {
        const ExprRef& from = x->args[0];
        if (!ring(from->type)) break;
        ExprRef w = widen(from);
        // A truncation keeps the value modulo 2^32; a widening keeps the value itself, which
        // is the exact one where that lies in 32 bits.
        if (tir::typeBytes(from->type) < tir::typeBytes(x->type) && !tir::exactArithmetic(from, none))
          inside.push_back(tir::land(tir::binary(tir::BinOp::Ge, w, i64(INT32_MIN)),
                                     tir::binary(tir::BinOp::Le, w, i64(INT32_MAX))));
        return w;
      }
      default: break;
    }
    return tir::cast(Type::I64, x);
  };
  if (!ring(e->type)) return nullptr;
  const size_t before = inside.size();
  ExprRef w = widen(e);
  bool exact = tir::exactArithmetic(w, none);
  for (size_t i = before; i < inside.size() && exact; ++i) exact = tir::exactArithmetic(inside[i], none);
  if (!exact) {
    inside.resize(before);
    return nullptr;
  }
  return w;
}

// A block of a run-time grid that is the last along the axes of `last`: "block 0", "the last
// block" (along every axis the access uses), or "block (last, 0, 0)".
std::string runtimeBlockText(int64_t last, uint8_t used) {
  if (last == 0) return "block 0";
  if (last == used && (used == 1 || used == 7)) return "the last block";
  auto axis = [&](int d) { return (last >> d & 1) ? "last" : "0"; };
  return fmt::format("block ({}, {}, {})", axis(0), axis(1), axis(2));
}

// "for a, b and c"; empty for no parts.
std::string forParts(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i == 0 ? "for " : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

// The kernel's grid when it is a constant (zeros otherwise), and its number of blocks.
std::array<int64_t, 3> constantGrid(const tir::Kernel& kernel, int64_t* blocks) {
  std::array<int64_t, 3> grid{0, 0, 0};
  int64_t n = 1;
  for (size_t d = 0; d < 3; ++d) {
    if (!tir::isIntConst(kernel.grid[d], &grid[d]) || grid[d] <= 0 || __builtin_mul_overflow(n, grid[d], &n))
      return {0, 0, 0};
  }
  *blocks = n;
  return grid;
}

}  // namespace

ExprRef KernelSema::atSurePoint(const ExprRef& e, const SurePoint& p, const std::array<int64_t, 3>& grid) const {
  const std::array<int64_t, 3> bd = k_.skeleton.block;
  const std::array<int64_t, 3> tid = ids(p.thread, bd);
  const std::array<int64_t, 3> cta = grid[0] > 0 ? ids(p.block, grid) : std::array<int64_t, 3>{0, 0, 0};
  // A run-time grid's size along axis d, over the parameters; its block 1 is the last one.
  auto gridSize = [&](int64_t d) {
    const ExprRef& g = k_.skeleton.grid[static_cast<size_t>(d)];
    return g ? tir::cast(Type::I64, g) : tir::intConst(1, Type::I64);
  };
  std::map<uint32_t, ExprRef> letAt;  // each let's value at p, once worked out
  std::function<ExprRef(const tir::Expr&)> value = [&](const tir::Expr& atom) -> ExprRef {
    if (atom.kind == tir::ExprKind::VarRef) {
      if (auto let = letValues_.find(static_cast<uint32_t>(atom.id)); let != letValues_.end()) {
        ExprRef& known = letAt[let->first];
        if (!known) known = tir::substitute(let->second, value);
        return known;
      }
      auto loop = p.loops.find(static_cast<uint32_t>(atom.id));
      return loop == p.loops.end() ? nullptr : tir::cast(atom.type, loop->second);
    }
    if (atom.kind != tir::ExprKind::SpecialReg) return nullptr;
    const int64_t n = static_cast<int64_t>(atom.special) - static_cast<int64_t>(tir::Special::TidX);
    switch (atom.special) {
      case tir::Special::TidX:
      case tir::Special::TidY:
      case tir::Special::TidZ: return tir::intConst(tid[static_cast<size_t>(n)], atom.type);
      case tir::Special::CtaidX:
      case tir::Special::CtaidY:
      case tir::Special::CtaidZ:
        if (grid[0] == 0 && (p.block >> (n - 3) & 1))
          return tir::cast(atom.type, tir::sub(gridSize(n - 3), tir::intConst(1, Type::I64)));
        return tir::intConst(cta[static_cast<size_t>(n - 3)], atom.type);
      case tir::Special::NctaidX:
      case tir::Special::NctaidY:
      case tir::Special::NctaidZ:
        return grid[0] > 0 ? tir::intConst(grid[static_cast<size_t>(n - 6)], atom.type)
                           : tir::cast(atom.type, gridSize(n - 6));
      case tir::Special::LaneId: return tir::intConst(p.thread % 32, atom.type);
      case tir::Special::WarpId: return tir::intConst(p.thread / 32, atom.type);
      case tir::Special::SharedBase: return nullptr;  // made by lowering, never by analysis
      case tir::Special::ElectOne: return nullptr;    // which lane is not known
      case tir::Special::ClusterRank: return nullptr;
      case tir::Special::SmCount: return nullptr;
    }
    return nullptr;
  };
  return tir::substitute(e, value);
}

std::optional<KernelSema::Escape> KernelSema::escapeAtSureValues(const std::vector<ExprRef>& coord,
                                                                 const std::vector<int64_t>& most) {
  const tir::Kernel& kernel = k_.skeleton;
  int64_t blocks = 1;
  const std::array<int64_t, 3> grid = constantGrid(kernel, &blocks);
  // What the coordinates depend on; anything but loops, the thread and the block (parameters,
  // other variables, values under a condition) is not sure.
  SureDeps deps = sureDependencies(coord, grid[0] > 0);
  if (deps.other || deps.params || (deps.loops.empty() && !deps.thread() && !deps.block())) return std::nullopt;
  if (deps.neverRuns) return std::nullopt;
  // A loop whose end is not a constant runs, and through which values, depending on what its
  // end is made of: where those are sure values too, they are sources (`for j in range(0, i)`
  // runs at i = 3 through j = 2, and not at all at i = 0).
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i : std::vector<size_t>(deps.loops)) {
      if (loops_[i].count) continue;
      const SureDeps end = sureDependencies({loops_[i].end}, grid[0] > 0);
      if (end.other || end.params) continue;
      for (size_t j : end.loops)
        if (std::find(deps.loops.begin(), deps.loops.end(), j) == deps.loops.end()) {
          deps.loops.push_back(j);
          grew = true;
        }
      deps.threadAxes |= end.threadAxes;
      deps.blockAxes |= end.blockAxes;
    }
    std::sort(deps.loops.begin(), deps.loops.end());
  }

  // A loop whose end is not a constant has two sure values at a point: its first, and its
  // last there when its end is then known. Sources are outermost first.
  std::vector<SureSource> sources = sureSources(deps, blocks, grid);
  for (SureSource& src : sources)
    if (src.loop && !src.loop->count) src.count = 2;
  int64_t combinations = 1;
  for (const SureSource& src : sources)
    combinations = std::min(combinations * std::min(src.count, kMaxCombinations + 1), kMaxCombinations + 1);
  // Every combination when there are few; otherwise the first and last of each loop, and the
  // corners of the thread and the block.
  std::vector<std::vector<int64_t>> picks;
  for (const SureSource& src : sources) {
    std::vector<int64_t>& p = picks.emplace_back(1, 0);
    if (combinations <= kMaxCombinations)
      for (int64_t j = 1; j < src.count; ++j) p.push_back(j);
    else if (!src.loop)
      p = src.corners;
    else if (src.count > 1)
      p.push_back(src.count - 1);
  }

  std::vector<size_t> at(sources.size(), 0);
  auto pick = [&](size_t i) { return picks[i][at[i]]; };
  std::vector<int64_t> loopValue(sources.size(), 0);
  // The point of the current picks, or nullopt when no such point occurs: a loop whose end is
  // known there does not run, or the last value of one whose end is not known was picked.
  auto pointAt = [&]() -> std::optional<SurePoint> {
    SurePoint point;
    for (size_t i = 0; i < sources.size(); ++i) {
      if (sources[i].isThread)
        point.thread = pick(i);
      else if (!sources[i].loop)
        point.block = pick(i);
    }
    for (size_t i = 0; i < sources.size(); ++i) {
      const LoopValues* l = sources[i].loop;
      if (!l) continue;
      if (l->count) {
        loopValue[i] = pick(i) + 1 == sources[i].count ? l->last : *l->first + pick(i) * l->step;
      } else {
        int64_t end = 0;
        const bool known = tir::isIntConst(atSurePoint(tir::cast(Type::I64, l->end), point, grid), &end);
        if (known && end <= *l->first) return std::nullopt;
        if (pick(i) == 0) {
          loopValue[i] = *l->first;
        } else if (!known) {
          return std::nullopt;
        } else {
          // In unsigned arithmetic, as in enterLoop: end - first cannot overflow.
          const uint64_t steps = (static_cast<uint64_t>(end) - static_cast<uint64_t>(*l->first) - 1) /
                                 static_cast<uint64_t>(l->step);
          loopValue[i] = static_cast<int64_t>(static_cast<uint64_t>(*l->first) + steps * static_cast<uint64_t>(l->step));
        }
      }
      point.loops[l->var] = tir::intConst(loopValue[i], Type::I64);
    }
    return point;
  };
  for (;;) {
    if (const std::optional<SurePoint> point = pointAt()) {
      for (size_t d = 0; d < coord.size(); ++d) {
        int64_t c = 0;
        if (!tir::isIntConst(atSurePoint(coord[d], *point, grid), &c) || (c >= 0 && c <= most[d])) continue;
        Escape esc{d, c, "", nullptr};
        std::vector<std::string> parts;
        for (size_t i = 0; i < sources.size(); ++i) {
          if (sources[i].loop) {
            parts.push_back(fmt::format("{} = {}", sources[i].loop->name, loopValue[i]));
            esc.loop = sources[i].loop;
          } else {
            parts.push_back(sources[i].isThread ? idText("thread", point->thread, kernel.block)
                                                : idText("block", point->block, grid));
          }
        }
        esc.when = forParts(parts);
        return esc;
      }
    }
    size_t i = 0;
    while (i < at.size() && ++at[i] == picks[i].size()) at[i++] = 0;
    if (i == at.size()) return std::nullopt;
  }
}

void KernelSema::launchChecksAtSureValues(const std::vector<ExprRef>& coord, const std::vector<int64_t>& most,
                                          const std::function<std::string(size_t)>& what, SourceRange where) {
  // Only a statement that no condition guards surely runs whenever its loops do.
  if (conditions_ != 0) return;
  tir::Kernel& kernel = k_.skeleton;
  int64_t blocks = 1;
  const std::array<int64_t, 3> grid = constantGrid(kernel, &blocks);
  // The launcher knows a run-time grid: its first and last blocks are corners too.
  const bool runtimeGrid = grid[0] == 0;
  // The last value of a loop whose end depends on the thread, the block or an outer loop
  // differs between them: what the ends depend on are sources of corners too.
  std::vector<ExprRef> valuesOf = coord;
  std::set<size_t> withEnd;
  SureDeps deps = sureDependencies(valuesOf, true);
  for (bool grew = true; grew && !deps.other;) {
    grew = false;
    for (size_t i : deps.loops)
      if (!loops_[i].count && withEnd.insert(i).second) {
        valuesOf.push_back(loops_[i].end);
        grew = true;
      }
    if (grew) deps = sureDependencies(valuesOf, true);
  }
  if (deps.other) return;
  std::function<ExprRef(const tir::Expr&)> throughLets = [&](const tir::Expr& atom) -> ExprRef {
    if (atom.kind != tir::ExprKind::VarRef) return nullptr;
    auto let = letValues_.find(static_cast<uint32_t>(atom.id));
    return let == letValues_.end() ? nullptr : tir::substitute(let->second, throughLets);
  };
  // The last value of a loop whose end is not a constant, where it can be computed exactly:
  // begin + (end - 1 - begin) / step * step, for end > begin, in 64 bits.
  auto symbolicLast = [&](const LoopValues& l) -> ExprRef {
    if (l.count || (l.begin->type == Type::I64 && *l.first < 0)) return nullptr;
    ExprRef b = tir::cast(Type::I64, l.begin), e = tir::cast(Type::I64, tir::substitute(l.end, throughLets));
    ExprRef step = tir::intConst(l.step, Type::I64);
    ExprRef steps = tir::binary(tir::BinOp::Div, tir::sub(tir::sub(e, tir::intConst(1, Type::I64)), b), step);
    return tir::add(b, tir::mul(steps, step));
  };
  bool symbolic = deps.params || (deps.block() && runtimeGrid);
  for (size_t i : deps.loops) {
    if (loops_[i].count) continue;
    if (!symbolicLast(loops_[i])) return;
    symbolic = true;
  }
  if (!symbolic) return;  // every sure value is a constant: escapeAtSureValues has seen them
  if (deps.neverRuns) return;

  // Nothing to check when the coordinates' ranges already lie inside: a loop variable lies
  // between its bounds, ids inside the block and the grid (`As[k % 3]` needs no check).
  std::function<std::optional<tir::Range>(const tir::Expr&)> range = [&](const tir::Expr& atom)
      -> std::optional<tir::Range> {
    if (atom.kind == tir::ExprKind::VarRef) {
      for (const LoopValues& l : loops_) {
        if (l.var != static_cast<uint32_t>(atom.id)) continue;
        const int64_t lo = tir::valueRange(tir::substitute(l.begin, throughLets), range).lo;
        const int64_t hi = tir::valueRange(tir::substitute(l.end, throughLets), range).hi;
        return tir::Range{lo, hi > lo ? hi - 1 : lo};
      }
      return std::nullopt;
    }
    if (atom.kind != tir::ExprKind::SpecialReg) return std::nullopt;
    if (grid[0] == 0 && atom.special >= tir::Special::CtaidX &&
        atom.special <= tir::Special::NctaidZ)
      return std::nullopt;  // block ids of a run-time grid
    return tir::specialRange(atom.special, kernel.block, grid);
  };
  bool inside = true;
  for (size_t d = 0; d < coord.size() && inside; ++d) {
    const tir::Range r = tir::valueRange(tir::substitute(coord[d], throughLets), range);
    inside = r.lo >= 0 && r.hi <= most[d];
  }
  if (inside) return;

  // The corners: each loop's first and last value, the corners of the thread and block. Each
  // gives a condition over the parameters, which must hold when every loop around the statement
  // has iterations (a loop with a run-time end may have none).
  const std::vector<SureSource> sources = sureSources(deps, blocks, grid);
  // Corners: each loop's first or last value (0 or 1), a corner of the thread or the block.
  std::vector<size_t> choices;
  size_t corners = 1;
  for (const SureSource& src : sources) {
    choices.push_back(src.loop ? 2 : src.corners.size());
    corners *= choices.back();
    if (corners > kMaxCorners) return;
  }
  // What the launcher can evaluate: parameters and constants only, and nothing that can fault
  // (the launcher evaluates a condition whole, also for a launch in which the loop is empty and
  // the kernel would divide by nothing).
  auto launchable = [](const ExprRef& e) {
    bool ok = true;
    auto visit = [&](auto&& self, const ExprRef& x) -> void {
      if (!x || !ok) return;
      ok = x->kind != tir::ExprKind::VarRef && x->kind != tir::ExprKind::SpecialReg &&
           x->kind != tir::ExprKind::Elem && tir::speculatable(*x);
      for (const ExprRef& a : x->args) self(self, a);
    };
    visit(visit, e);
    return ok;
  };
  // The launcher's messages name the access by file (without its folder) and line.
  if (!where.valid()) where = decl_.range;
  const SourceManager& sm = diags_.sources();
  const std::string& path = sm.file(where.begin.file).name;
  const std::string fileName = path.substr(path.find_last_of('/') + 1);
  std::vector<size_t> at(sources.size(), 0);
  for (size_t corner = 0; corner < corners; ++corner) {
    for (size_t i = 0, rest = corner; i < sources.size(); ++i) {
      at[i] = rest % choices[i];
      rest /= choices[i];
    }
    SurePoint point;
    std::vector<std::string> parts;
    // The thread and the block first: a loop's last value may depend on them (and on the loops
    // outside it, which come before it).
    for (size_t i = 0; i < sources.size(); ++i)
      if (!sources[i].loop) (sources[i].isThread ? point.thread : point.block) = sources[i].corners[at[i]];
    for (size_t i = 0; i < sources.size(); ++i) {
      const bool last = at[i] == 1;
      const SureSource& src = sources[i];
      if (src.loop) {
        const LoopValues& l = *src.loop;
        if (!last) {
          point.loops[l.var] = tir::intConst(*l.first, Type::I64);
          parts.push_back(fmt::format("{} = {}", l.name, *l.first));
        } else if (l.count) {
          point.loops[l.var] = tir::intConst(l.last, Type::I64);
          parts.push_back(fmt::format("{} = {}", l.name, l.last));
        } else {
          point.loops[l.var] = atSurePoint(symbolicLast(l), point, grid);
          parts.push_back(fmt::format("the last value of '{}'", l.name));
        }
      } else if (src.isThread) {
        parts.push_back(idText("thread", point.thread, kernel.block));
      } else {
        parts.push_back(!runtimeGrid ? idText("block", point.block, grid) : runtimeBlockText(point.block, deps.blockAxes));
      }
    }
    // The statement runs when every loop around it whose iterations are not known has some.
    ExprRef runs = tir::boolConst(true);
    for (const LoopValues& l : loops_)
      if (!l.count)
        runs = tir::land(runs, tir::lt(atSurePoint(l.begin, point, grid), atSurePoint(l.end, point, grid)));
    for (size_t d = 0; d < coord.size(); ++d) {
      ExprRef c = atSurePoint(coord[d], point, grid);
      // Between corners an affine index moves steadily only in exact arithmetic: a corner the
      // IR's arithmetic wraps back inside would let values between the corners through.
      std::vector<ExprRef> noWrap;
      if (ExprRef exact = unwrapped(c, noWrap)) c = exact;
      ExprRef inRange = tir::land(tir::binary(tir::BinOp::Ge, c, tir::intConst(0, c->type)),
                                  tir::binary(tir::BinOp::Le, c, tir::intConst(most[d], c->type)));
      for (const ExprRef& n : noWrap) inRange = tir::land(inRange, n);
      ExprRef cond =
          tir::isTrue(runs) ? inRange : tir::binary(tir::BinOp::LOr, tir::unary(tir::UnOp::Not, runs), inRange);
      if (tir::isTrue(cond) || !launchable(cond) || tir::isIntConst(cond) || kernel.checks.size() >= kMaxLaunchChecks)
        continue;
      if (std::any_of(kernel.checks.begin(), kernel.checks.end(),
                      [&](const tir::LaunchCheck& k) { return tir::sameExpr(k.cond, cond); }))
        continue;
      tir::LaunchCheck check;
      check.cond = cond;
      check.loc = where;
      check.message = fmt::format("{} at {}:{}{}{}{}", what(d), fileName, sm.lineCol(where.begin).line,
                                  parts.empty() ? "" : " ", forParts(parts),
                                  copyEnable_ ? " (a pipeline's copies run ahead of its loop)" : "");
      kernel.checks.push_back(std::move(check));
    }
  }
}

}  // namespace tyl::sema
