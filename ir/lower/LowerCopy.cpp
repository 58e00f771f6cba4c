// Tile copies. Between a fragment and memory, each owning thread moves its own slots,
// grouped into the widest vectors that are contiguous and aligned in memory; elements
// outside a global tensor are skipped. Between two memories, 16-byte vectors are spread
// over the block's threads (thread t takes vectors t, t + T, ...).
#include <fmt/format.h>

#include "ir/layout/Analysis.h"
#include "ir/layout/Transforms.h"
#include "ir/lower/LowerImpl.h"

namespace tyl::lower {

TYL_DIAG(kCopyVector, Remark, "copy-vector", "which vector width a copy uses, and why not a wider one");
TYL_DIAG(kCopyUnsupported, Error, "copy-unsupported", "a copy between tensors this version cannot lower");
TYL_DIAG(kCopyNotContiguous, Error, "copy-not-contiguous",
         "a cp.async copy whose 16-byte vectors are not contiguous in one of its layouts");
TYL_DIAG(kCopyMisaligned, Error, "copy-misaligned",
         "a cp.async copy whose 16-byte vectors are not 16-byte aligned in one of its layouts");
TYL_DIAG(kCopyAliases, Error, "copy-dst-aliases", "a copy destination that holds one element twice");

using tir::ExprRef;
using tir::Type;

namespace {

// Whether a run-time step of `step` elements along dimension `d` shifts every address of
// the layout by the same amount (so checking one origin checks them all).
bool translationInvariant(const layout::Layout& l, const layout::Shape& shape, int d, int64_t step) {
  if (step == 0) return true;
  layout::Grouped g = layout::group(l, shape);
  const layout::TileLayout& t = g.layout.tile;
  int64_t inner = 1;
  for (size_t i = g.bounds[d] + 1; i < g.bounds[d + 1]; ++i) inner *= t.shard[i].extent;
  if (step % inner != 0) return false;
  if (!l.swizzle) return true;
  int64_t shift = (step / inner) * t.shard[g.bounds[d]].stride;
  return shift % l.swizzle->period() == 0;
}

}  // namespace

int KernelLowering::chooseVectorWidth(SourceRange loc, const tile::View& mem, const tile::Tensor& frag,
                                      const FragmentMap& fm, std::string& why) {
  (void)loc;
  (void)frag;
  const tile::Tensor& t = tk_.tensors[mem.tensor];
  int eb = tile::dtypeBytes(t.dtype);
  size_t rank = mem.rank();
  int last = static_cast<int>(rank) - 1;
  int tl = mem.dims[last];
  std::vector<tir::LaunchCheck> pendingChecks;
  auto fail = [&](int w, std::string reason) {
    if (why.empty()) why = fmt::format("{}-byte vectors: {}", w * eb, reason);
    return false;
  };
  auto tryWidth = [&](int w) -> bool {
    pendingChecks.clear();
    // Consecutive slots must hold consecutive elements along the last dimension.
    if (fm.slots.size() % w != 0) return fail(w, fmt::format("each thread holds {} elements", fm.slots.size()));
    for (size_t i = 0; i < fm.slots.size(); i += w) {
      for (int j = 1; j < w; ++j) {
        const FragmentSlot& a = fm.slots[i];
        const FragmentSlot& b = fm.slots[i + j];
        bool ok = b.m == a.m + j;
        for (size_t d = 0; d < rank && ok; ++d) ok = b.offset[d] == a.offset[d] + (static_cast<int>(d) == last ? j : 0);
        if (!ok)
          return fail(w, fmt::format("register slots {}..{} do not hold consecutive elements of a row", a.m,
                                     a.m + w - 1));
      }
    }
    if (t.alignBytes < w * eb)
      return fail(w, fmt::format("'{}' is only declared {}-byte aligned", t.name, t.alignBytes));
    std::vector<ThreadPoint> threads;
    for (int64_t z = 0; z < k_.block[2]; ++z)
      for (int64_t y = 0; y < k_.block[1]; ++y)
        for (int64_t x = 0; x < k_.block[0]; ++x) {
          ThreadPoint p;
          p.tid[0] = x, p.tid[1] = y, p.tid[2] = z;
          for (int i = 0; i < 3; ++i) p.blockDim[i] = k_.block[i];
          threads.push_back(p);
        }
    if (!t.layout) {
      // Global tensor with strides: unit stride along the last dimension, and every
      // other stride a multiple of the vector (checked at launch when it is a parameter).
      int64_t s = 0;
      if (!tir::isIntConst(t.strides[tl], &s) || s != 1)
        return fail(w, fmt::format("the stride of the last dimension of '{}' is not 1", t.name));
      for (size_t d = 0; d < t.shape.size(); ++d) {
        if (static_cast<int>(d) == tl) continue;
        if (tir::isIntConst(t.strides[d], &s)) {
          if (s % w != 0)
            return fail(w, fmt::format("the stride {} of dimension {} of '{}' is not a multiple of {} elements", s, d,
                                       t.name, w));
          continue;
        }
        tir::LaunchCheck c;
        c.cond = tir::binary(tir::BinOp::Eq, tir::binary(tir::BinOp::Rem, t.strides[d], tir::intConst(w, Type::I64)),
                             tir::intConst(0, Type::I64));
        c.message = fmt::format("the stride of dimension {} of {} must be a multiple of {} elements for {}-byte "
                                "vector accesses",
                                d, t.name, w, w * eb);
        c.loc = t.loc;
        pendingChecks.push_back(std::move(c));
      }
      AffineForm o = linearize(mem.origin[tl]);
      int64_t div = o.runtimeDivisor();
      if (div != 0 && div % w != 0)
        return fail(w, fmt::format("the window origin along the last dimension is only a multiple of {}", div));
      for (const ThreadPoint& p : threads) {
        std::optional<int64_t> base = evalAtThread(fm.base[last], p);
        if (!base) return fail(w, "the thread's coordinates are not known at compile time");
        for (size_t i = 0; i < fm.slots.size(); i += w) {
          int64_t c = o.constant + *base + fm.slots[i].offset[last];
          if (((c % w) + w) % w != 0)
            return fail(w, fmt::format("a vector starts at column {}, not a multiple of {}", c, w));
        }
      }
      return true;
    }
    // Static layout (shared memory): check every thread concretely at the constant part
    // of the origin; run-time parts must shift all addresses alike.
    std::vector<int64_t> origin(t.shape.size());
    for (size_t d = 0; d < t.shape.size(); ++d) {
      AffineForm o = linearize(mem.origin[d]);
      origin[d] = o.constant;
      if (!translationInvariant(*t.layout, t.staticShape, static_cast<int>(d), o.runtimeDivisor()))
        return fail(w, fmt::format("the window origin along dimension {} moves across the layout's pattern", d));
    }
    for (const ThreadPoint& p : threads) {
      std::vector<int64_t> base(rank);
      for (size_t d = 0; d < rank; ++d) {
        std::optional<int64_t> b = evalAtThread(fm.base[d], p);
        if (!b) return fail(w, "the thread's coordinates are not known at compile time");
        base[d] = *b;
      }
      for (size_t i = 0; i < fm.slots.size(); i += w) {
        int64_t first = 0;
        for (int j = 0; j < w; ++j) {
          std::vector<int64_t> coord = origin;
          for (size_t d = 0; d < rank; ++d)
            coord[mem.dims[d]] += base[d] + fm.slots[i].offset[d] + (static_cast<int>(d) == last ? j : 0);
          bool inside = true;
          for (size_t d = 0; d < coord.size(); ++d) inside &= coord[d] >= 0 && coord[d] < t.staticShape[d];
          if (!inside) return fail(w, "a vector leaves the tensor");
          int64_t m = layout::apply(*t.layout, coord, t.staticShape)[layout::Axis::m];
          if (j == 0) {
            first = m;
            if (m % w != 0) return fail(w, fmt::format("a vector starts at offset {}, not a multiple of {}", m, w));
          } else if (m != first + j) {
            return fail(w, fmt::format("elements of a vector are not adjacent in memory (offsets {} and {})",
                                       first + j - 1, m));
          }
        }
      }
    }
    return true;
  };
  for (int w = 16 / eb; w >= 2; w /= 2) {
    if (tryWidth(w)) {
      for (tir::LaunchCheck& c : pendingChecks) addLaunchCheck(std::move(c));
      return w;
    }
  }
  return 1;
}

void KernelLowering::copyFragmentMemory(SourceRange loc, const tile::Copy& c, bool toMemory) {
  const tile::View& mem = toMemory ? c.dst : *c.src;
  const tile::Tensor& t = tk_.tensors[mem.tensor];
  uint32_t fragId = 0;
  if (toMemory) {
    std::function<const tile::FragExpr*(const tile::FragRef&)> leaf = [&](const tile::FragRef& f) {
      if (!f) return static_cast<const tile::FragExpr*>(nullptr);
      if (f->kind == tile::FragExpr::Kind::Tensor) return f.get();
      const tile::FragExpr* l = leaf(f->a);
      return l ? l : leaf(f->b);
    };
    fragId = leaf(c.value)->tensor;
  } else {
    fragId = c.dst.tensor;
  }
  const tile::Tensor& f = tk_.tensors[fragId];
  const FragmentMap* fm = fragment(fragId, loc);
  if (!fm) return;
  Type type = tile::toTir(t.dtype);
  std::string why;
  int w = chooseVectorWidth(loc, mem, f, *fm, why);
  int eb = tile::dtypeBytes(t.dtype);
  diags_.report(kCopyVector, loc,
                w > 1 || why.empty()
                    ? fmt::format("copy: {}-byte vectors ({} x {}){}", w * eb, w, tile::dtypeName(t.dtype),
                                  why.empty() ? "" : fmt::format("; not wider: {}", why))
                    : fmt::format("copy: {}-byte accesses; not wider: {}", eb, why));

  // The registers that are stored: the fragment itself, or its arithmetic evaluated into
  // a temporary of the memory's element type.
  uint32_t regs = f.array;
  tir::Block body;
  out_.push_back(&body);
  if (toMemory) {
    bool plain = c.value->kind == tile::FragExpr::Kind::Tensor && f.dtype == t.dtype;
    if (!plain) {
      regs = tir::addArray(k_, fmt::format("tmp{}", temps_++), type, f.slots);
      for (const FragmentSlot& s : fm->slots) emit(loc, tir::Assign{tir::Reg::elem(regs, s.m), fragValue(c.value, s.m, type)});
    }
  } else if (f.dtype != t.dtype) {
    regs = tir::addArray(k_, fmt::format("tmp{}", temps_++), type, f.slots);
  }
  size_t rank = mem.rank();
  for (size_t i = 0; i < fm->slots.size(); i += w) {
    const FragmentSlot& s = fm->slots[i];
    auto coordOf = [&](int j) {
      std::vector<ExprRef> viewCoord(rank);
      for (size_t d = 0; d < rank; ++d)
        viewCoord[d] = tir::add(fm->base[d], tir::intConst(s.offset[d] + (d + 1 == rank ? j : 0)));
      return tensorCoord(mem, viewCoord);
    };
    std::vector<tir::Reg> group;
    for (int j = 0; j < w; ++j) group.push_back(tir::Reg::elem(regs, fm->slots[i + j].m));
    std::vector<ExprRef> first = coordOf(0);
    ExprRef pred = inBounds(t, first);
    if (w > 1 && pred) {
      ExprRef lastPred = inBounds(t, coordOf(w - 1));
      pred = lastPred ? tir::land(pred, lastPred) : pred;
    }
    tir::MemRef ref = memRef(t, first);
    auto access = [&](tir::MemRef r, std::vector<tir::Reg> g, ExprRef p) {
      if (toMemory)
        emit(loc, tir::Store{type, std::move(r), std::move(g), std::move(p)});
      else
        emit(loc, tir::Load{type, std::move(r), std::move(g), std::move(p)});
    };
    if (!pred || w == 1) {
      access(ref, group, pred);
      continue;
    }
    // The whole vector when it is inside the tensor; element by element at the edge.
    tir::If edge{pred, {}, {}};
    out_.push_back(&edge.then);
    access(ref, group, nullptr);
    out_.pop_back();
    out_.push_back(&edge.otherwise);
    for (int j = 0; j < w; ++j) {
      std::vector<ExprRef> cj = coordOf(j);
      access(memRef(t, cj), {group[j]}, inBounds(t, cj));
    }
    out_.pop_back();
    emit(loc, std::move(edge));
  }
  if (!toMemory && regs != f.array) {
    for (const FragmentSlot& s : fm->slots)
      emit(loc, tir::Assign{tir::Reg::elem(f.array, s.m), tir::cast(tile::toTir(f.dtype), tir::elemRef(k_, regs, s.m))});
  }
  out_.pop_back();
  // Only owners move data; of replicated elements only the first replica stores.
  ExprRef guard = fm->owns;
  if (toMemory && fm->primary) guard = guard ? tir::land(guard, fm->primary) : fm->primary;
  if (!guard) {
    for (tir::Stmt& s : body) out_.back()->push_back(std::move(s));
    return;
  }
  emit(loc, tir::If{guard, std::move(body), {}});
}

void KernelLowering::copyMemoryMemory(SourceRange loc, const tile::Copy&) {
  diags_.report(kCopyUnsupported, loc, "copies between two memories are not available yet in this version of tyloc");
}

void KernelLowering::copy(SourceRange loc, const tile::Copy& c) {
  const tile::Tensor& dst = tk_.tensors[c.dst.tensor];
  if (dst.space == tile::MemSpace::Local) {
    if (c.src) {
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
  copyMemoryMemory(loc, c);
}

}  // namespace tyl::lower
