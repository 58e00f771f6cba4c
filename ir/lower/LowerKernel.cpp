#include <fmt/format.h>

#include <bit>

#include "base/CommonDiags.h"
#include "base/InternalError.h"
#include "ir/layout/Analysis.h"
#include "ir/lower/Convergence.h"
#include "ir/lower/LowerImpl.h"
#include "ir/thread/Walk.h"

namespace tyl::lower {

TYL_DIAG(kUnsupportedLayout, Error, "unsupported-layout", "a fragment layout that cannot be lowered per thread");
TYL_DIAG(kOwnershipLaunch, Error, "ownership-outside-launch",
         "a fragment layout that places elements on lanes, warps or threads the launch does not have");

using tir::ExprRef;
using tir::Type;

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

tir::MemRef KernelLowering::memRef(const tile::Tensor& t, const std::vector<ExprRef>& coord) {
  return tir::MemRef{t.buffer, elementOffset(t, coord, atomDivisors())};
}

ExprRef KernelLowering::bounds(const tile::Tensor& t, const std::vector<ExprRef>& coord) {
  ExprRef pred = inBounds(t, coord, atomRanges());
  return pred && tir::isTrue(pred) ? nullptr : pred;  // null: no test needed
}

// What the kernel's structure and launch checks say about an atom's values: a loop
// variable lies between its loop's bounds, a dimension checked at launch is not negative,
// thread ids lie inside the block and block ids inside the grid (which the launcher keeps
// within CUDA's limits).
std::optional<tir::Range> KernelLowering::atomRange(const tir::Expr& atom) const {
  switch (atom.kind) {
    case tir::ExprKind::VarRef: {
      auto it = varRanges_.find(static_cast<uint32_t>(atom.id));
      if (it == varRanges_.end()) return std::nullopt;
      return it->second;
    }
    case tir::ExprKind::ParamRef:
      if (checkedDims_.count(atom.id)) return tir::Range{0, std::numeric_limits<int64_t>::max()};
      return std::nullopt;
    case tir::ExprKind::SpecialReg:
      return tir::specialRange(atom.special, k_.block, {gridLimit(0), gridLimit(1), gridLimit(2)});
    default: return std::nullopt;
  }
}

// The most blocks the launcher can launch along `axis`: its grid expression's largest value,
// and never more than CUDA allows (the launcher refuses larger grids).
int64_t KernelLowering::gridLimit(int64_t axis) const {
  std::optional<int64_t>& limit = gridLimits_[axis];
  if (limit) return *limit;
  return *(limit = tir::gridLimit(k_.grid[axis], static_cast<int>(axis), atomRanges()));
}

int64_t KernelLowering::atomDivisor(const tir::Expr& atom) const {
  if (atom.kind != tir::ExprKind::VarRef) return 1;
  auto it = varDivisors_.find(static_cast<uint32_t>(atom.id));
  return it == varDivisors_.end() ? 1 : it->second;
}

int64_t KernelLowering::divisorOf(const ExprRef& e) const {
  int64_t g = 1;
  try {
    g = linearize(e).valueDivisor(atomDivisors());
  } catch (const layout::OverflowError&) {
    return 1;  // a coefficient past 64 bits: nothing is known
  }
  if (g == 0 || tir::exactArithmetic(e, atomRanges())) return g;
  // Where the IR's arithmetic may wrap (modulo 2^32 or 2^64), only the power of two in g is
  // sure to survive: block_id.x * 65537 * 65535 is -block_id.x in i32, no multiple of 65535.
  const int64_t cap = tir::typeBytes(e->type) >= 8 ? int64_t{1} << 62 : int64_t{1} << 32;
  return std::min(g & -g, cap);
}

int64_t KernelLowering::knownDivisor(const ExprRef& e) const {
  int64_t c = 0;
  if (tir::isIntConst(e, &c)) return c == 0 ? 0 : (c < 0 ? -c : c);
  if (e->kind == tir::ExprKind::Cast && tir::isInt(e->args[0]->type)) return knownDivisor(e->args[0]);
  if (e->kind == tir::ExprKind::ParamRef) {
    auto it = paramDivisor_.find(e->id);
    return it == paramDivisor_.end() ? 1 : it->second;
  }
  return 1;
}

void KernelLowering::addLaunchCheck(tir::LaunchCheck check) {
  for (const tir::LaunchCheck& c : k_.checks) {
    if (c.kind == check.kind && c.param == check.param && c.other == check.other && c.alignBytes == check.alignBytes &&
        tir::sameExpr(c.cond, check.cond))
      return;
  }
  k_.checks.push_back(std::move(check));
}

void KernelLowering::block(const tile::Block& b) {
  for (const tile::Stmt& s : b) {
    if (tooLarge_) return;
    stmt(s);
    if (emitted_ > kMaxThreadStmts && !tooLarge_) {
      diags_.report(kTooLarge, s.loc,
                    fmt::format("the kernel lowers to more than {} thread statements here", kMaxThreadStmts));
      tooLarge_ = true;
    }
  }
}

int64_t KernelLowering::largestOperand(const tile::Stmt& s) const {
  int64_t most = 0;
  auto view = [&](const tile::View& v) {
    // Views of register fragments enumerate the whole fragment (its owners and slots).
    const tile::Tensor& t = tk_.tensors[v.tensor];
    most = std::max(most, t.space == tile::MemSpace::Local ? t.staticSize() : v.size());
  };
  auto fragment = [&](uint32_t tensor) { most = std::max(most, tk_.tensors[tensor].staticSize()); };
  auto expr = [&](auto& self, const tile::FragRef& f) -> void {
    if (!f) return;
    if (f->kind == tile::FragExpr::Kind::Tensor) fragment(f->tensor);
    if (f->kind == tile::FragExpr::Kind::Memory) view(f->memory);
    self(self, f->a);
    self(self, f->b);
  };
  std::visit(
      [&](const auto& n) {
        using N = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<N, tile::Copy>) {
          view(n.dst);
          if (n.src) view(*n.src);
          expr(expr, n.value);
        } else if constexpr (std::is_same_v<N, tile::FragAssign>) {
          fragment(n.dst);
          expr(expr, n.value);
        } else if constexpr (std::is_same_v<N, tile::Mma>) {
          for (uint32_t t : {n.d, n.a, n.b, n.c}) fragment(t);
        } else if constexpr (std::is_same_v<N, tile::ElemLoad> || std::is_same_v<N, tile::ElemStore>) {
          if (tk_.tensors[n.view.tensor].space == tile::MemSpace::Local) fragment(n.view.tensor);
        }
      },
      s.node);
  return most;
}

void KernelLowering::stmt(const tile::Stmt& s) {
  if (int64_t n = largestOperand(s); n > kMaxStatementElements) {
    diags_.report(kTooLarge, s.loc,
                  fmt::format("this statement touches {} elements of one tensor; tyloc lowers at most {} per statement",
                              n, kMaxStatementElements));
    return;
  }
  // Layout arithmetic for the statement's tensors may leave 64 bits: the statement is then
  // reported. The blocks being filled are those of before it: the ones it opened went with the
  // exception. Any other refusal of the algebra is a bug: the checks before lowering have
  // reported every layout the algebra cannot take.
  const size_t depth = out_.size();
  try {
    stmtNode(s);
  } catch (const layout::OverflowError&) {
    out_.resize(depth);
    diags_.report(kIntegerOverflow, s.loc, "the offsets this statement computes overflow 64-bit integers");
  } catch (const layout::Error& e) {
    TYL_UNREACHABLE("the layout algebra refused a statement whose layouts passed the checks: {}", e.what());
  }
}

void KernelLowering::stmtNode(const tile::Stmt& s) {
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, tile::ScalarSet>) {
          // A scalar set once (a `let` never assigned again) holds values of its expression.
          if (n.dst.isVar && scalarSets_[n.dst.id] == 1) {
            varRanges_[n.dst.id] = tir::valueRange(n.value, atomRanges());
            varDefs_[n.dst.id] = n.value;
            if (tir::isInt(n.value->type)) varDivisors_[n.dst.id] = divisorOf(n.value);
          }
          emit(s.loc, tir::Assign{n.dst, n.value});
        } else if constexpr (std::is_same_v<T, tile::ElemLoad>) {
          const tile::Tensor& t = tk_.tensors[n.view.tensor];
          emit(s.loc, tir::Load{tile::toTir(t.dtype), memRef(t, tensorCoord(n.view, n.index)), {n.dst}, nullptr});
        } else if constexpr (std::is_same_v<T, tile::ElemStore>) {
          const tile::Tensor& t = tk_.tensors[n.view.tensor];
          Type type = tile::toTir(t.dtype);
          ExprRef value = tir::cast(type, n.value);
          // Store straight from a register when the value already is one.
          tir::Reg src;
          if (value->kind == tir::ExprKind::VarRef) {
            src = tir::Reg::var(static_cast<uint32_t>(value->id));
          } else if (value->kind == tir::ExprKind::Elem) {
            src = tir::Reg::elem(static_cast<uint32_t>(value->id), value->index);
          } else {
            src = tir::Reg::var(tir::addVar(k_, fmt::format("st{}", temps_++), type));
            emit(s.loc, tir::Assign{src, value});
          }
          emit(s.loc, tir::Store{type, memRef(t, tensorCoord(n.view, n.index)), {src}, nullptr});
        } else if constexpr (std::is_same_v<T, tile::Copy>) {
          copy(s.loc, n);
        } else if constexpr (std::is_same_v<T, tile::FragAssign>) {
          fragAssign(s.loc, n.dst, n.value);
        } else if constexpr (std::is_same_v<T, tile::Mma>) {
          mma(s.loc, n);
        } else if constexpr (std::is_same_v<T, tile::CommitCopies>) {
          emit(s.loc, tir::CpAsyncCommit{});
        } else if constexpr (std::is_same_v<T, tile::WaitCopies>) {
          emit(s.loc, tir::CpAsyncWait{n.pending});
        } else if constexpr (std::is_same_v<T, tile::Barrier>) {
          emit(s.loc, tir::Barrier{});
        } else if constexpr (std::is_same_v<T, tile::For>) {
          int64_t step = 0;
          if (tir::isIntConst(n.step, &step) && step > 0) {
            // In the body, begin <= var < end.
            int64_t lo = tir::valueRange(n.begin, atomRanges()).lo, hi = tir::valueRange(n.end, atomRanges()).hi;
            varRanges_[n.var] = tir::Range{lo, hi > lo ? hi - 1 : lo};
            // The variable takes begin + i * step.
            varDivisors_[n.var] = gcd64(divisorOf(n.begin), step);
          }
          tir::For loop{n.var, n.begin, n.end, n.step, false, {}};
          out_.push_back(&loop.body);
          block(n.body);
          out_.pop_back();
          emit(s.loc, std::move(loop));
        } else {
          tir::If node{n.cond, {}, {}};
          out_.push_back(&node.then);
          block(n.then);
          out_.pop_back();
          out_.push_back(&node.otherwise);
          block(n.otherwise);
          out_.pop_back();
          emit(s.loc, std::move(node));
        }
      },
      s.node);
}

namespace {

// The kernel's pointers are __restrict__: one check per pair of pointer parameters of which
// the kernel writes one, that they share no memory.
std::vector<tir::LaunchCheck> disjointChecks(const tir::Kernel& k) {
  std::vector<tir::LaunchCheck> out;
  for (size_t i = 0; i < k.params.size(); ++i) {
    for (size_t j = i + 1; j < k.params.size(); ++j) {
      const tir::Param& a = k.params[i];
      const tir::Param& b = k.params[j];
      if (!a.isPointer || !b.isPointer) continue;
      bool writesA = !k.buffers.at(a.buffer).readOnly, writesB = !k.buffers.at(b.buffer).readOnly;
      if (!writesA && !writesB) continue;
      tir::LaunchCheck c;
      c.kind = tir::LaunchCheck::Kind::Disjoint;
      c.param = static_cast<int>(i);
      c.other = static_cast<int>(j);
      c.message = fmt::format("{} and {} must not overlap (the kernel writes {})", a.name, b.name,
                              writesA && writesB ? "both" : writesA ? a.name : b.name);
      c.loc = k.loc;
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace

std::optional<tir::Kernel> KernelLowering::run() {
  size_t errors = diags_.errorCount();
  if (!checkLayouts()) return std::nullopt;
  // The checks of shared indices that semantic analysis made come last, after those of the
  // launch's sizes, alignment and vector accesses (docs/language.md lists them in this order).
  std::vector<tir::LaunchCheck> accessChecks = std::move(k_.checks);
  k_.checks.clear();
  // Global pointers must have the alignment their declarations promise.
  for (const tile::Tensor& t : tk_.tensors) {
    if (t.space != tile::MemSpace::Global || t.alignBytes <= tile::dtypeBytes(t.dtype)) continue;
    tir::LaunchCheck c;
    c.kind = tir::LaunchCheck::Kind::PointerAlignment;
    c.param = k_.buffers[t.buffer].param;
    c.alignBytes = t.alignBytes;
    c.message = fmt::format("{} must be aligned to {} bytes (declared 'align {}')", t.name, t.alignBytes, t.alignBytes);
    c.loc = t.loc;
    addLaunchCheck(std::move(c));
  }
  // Run-time dimensions must not be negative.
  for (const tile::Tensor& t : tk_.tensors) {
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (t.staticShape[d] >= 0) continue;
      tir::LaunchCheck c;
      c.cond = tir::binary(tir::BinOp::Ge, t.shape[d], tir::intConst(0, t.shape[d]->type));
      c.message = fmt::format("dimension {} of {} must not be negative", d, t.name);
      ExprRef dim = t.shape[d];
      while (dim->kind == tir::ExprKind::Cast && tir::isInt(dim->args[0]->type) &&
             tir::typeBytes(dim->args[0]->type) <= tir::typeBytes(dim->type))
        dim = dim->args[0];
      if (dim->kind == tir::ExprKind::ParamRef && dim->type != Type::U32) checkedDims_.insert(dim->id);
      c.loc = t.loc;
      c.beforeGrid = true;
      addLaunchCheck(std::move(c));
    }
  }
  // A grid computed by dividing by 0 would be empty (the IR's n / 0 is 0), and the launch would
  // succeed without running anything: refused instead, before the grid is computed.
  for (int d = 0; d < 3; ++d) {
    std::vector<ExprRef> divisors;
    std::function<void(const ExprRef&)> walk = [&](const ExprRef& e) {
      for (const ExprRef& a : e->args)
        if (a) walk(a);
      if (e->kind != tir::ExprKind::Binary || (e->bin != tir::BinOp::Div && e->bin != tir::BinOp::Rem) ||
          !tir::isInt(e->type))
        return;
      const tir::Range r = tir::valueRange(e->args[1], atomRanges());
      if (r.lo <= 0 && r.hi >= 0 &&
          std::none_of(divisors.begin(), divisors.end(), [&](const ExprRef& x) { return tir::sameExpr(x, e->args[1]); }))
        divisors.push_back(e->args[1]);
    };
    if (k_.grid[d]) walk(k_.grid[d]);
    for (const ExprRef& divisor : divisors) {
      tir::LaunchCheck c;
      c.cond = tir::binary(tir::BinOp::Ne, divisor, tir::intConst(0, divisor->type));
      c.message = fmt::format("grid dimension {} divides by zero", "xyz"[d]);
      c.loc = k_.loc;
      c.beforeGrid = true;
      addLaunchCheck(std::move(c));
    }
  }
  std::function<void(const tile::Block&)> countSets = [&](const tile::Block& b) {
    for (const tile::Stmt& st : b) {
      if (const auto* set = std::get_if<tile::ScalarSet>(&st.node); set && set->dst.isVar) ++scalarSets_[set->dst.id];
      if (const auto* loop = std::get_if<tile::For>(&st.node)) countSets(loop->body);
      if (const auto* branch = std::get_if<tile::If>(&st.node)) {
        countSets(branch->then);
        countSets(branch->otherwise);
      }
    }
  };
  countSets(tk_.body);
  const size_t checksBeforeBody = k_.checks.size();
  out_.push_back(&k_.body);
  block(tk_.body);
  out_.pop_back();
  // Buffers never stored to are read-only (the backend may read them through the
  // read-only cache).
  std::function<void(const tir::Block&)> markWrites = [&](const tir::Block& b) {
    for (const tir::Stmt& s : b) {
      std::visit(
          [&](const auto& n) {
            using T = std::decay_t<decltype(n)>;
            if constexpr (std::is_same_v<T, tir::Store>) k_.buffers[n.dst.buffer].readOnly = false;
            if constexpr (std::is_same_v<T, tir::If>) {
              markWrites(n.then);
              markWrites(n.otherwise);
            }
            if constexpr (std::is_same_v<T, tir::For>) markWrites(n.body);
          },
          s.node);
    }
  };
  for (tir::Buffer& b : k_.buffers) b.readOnly = b.space == tir::Space::Global;
  markWrites(k_.body);
  // Checked after the alignment, before the conditions of the accesses (docs/language.md).
  std::vector<tir::LaunchCheck> disjoint = disjointChecks(k_);
  k_.checks.insert(k_.checks.begin() + static_cast<std::ptrdiff_t>(checksBeforeBody),
                   std::make_move_iterator(disjoint.begin()), std::make_move_iterator(disjoint.end()));
  checkConvergence(k_, diags_);
  tir::removeCooperative(k_.body);
  for (tir::LaunchCheck& c : accessChecks) addLaunchCheck(std::move(c));
  if (diags_.errorCount() > errors) return std::nullopt;
  return std::move(k_);
}

std::optional<tir::Module> lower(const tile::Module& module, DiagnosticEngine& diags) {
  tir::Module out;
  out.sourceName = module.sourceName;
  LayoutTables tables;
  for (const tile::Kernel& k : module.kernels) {
    KernelLowering kl(k, diags, tables);
    if (std::optional<tir::Kernel> lowered = kl.run()) out.kernels.push_back(std::move(*lowered));
  }
  if (diags.hasErrors()) return std::nullopt;
  return out;
}

}  // namespace tyl::lower
