// Semantic analysis of the tensor-core operations: the mma.sync atom, tiled_mma,
// load_a / load_b, zero_c and the mma call itself.
#include <fmt/format.h>

#include <utility>

#include "base/CommonDiags.h"
#include "frontend/SemaImpl.h"
#include "ir/layout/Transforms.h"
#include "ir/layout/Wgmma.h"

namespace tyl {

TYL_DIAG(kMmaAtom, Error, "mma-atom", "an MMA atom with unsupported element types");
TYL_DIAG(kTiledMmaThreads, Error, "tiled-mma-threads", "a tiled MMA whose warps do not match the launch");
TYL_DIAG(kTiledMmaCover, Error, "tiled-mma-cover", "an MMA operand whose shape does not match the tiled MMA's tile");
TYL_DIAG(kMmaK, Error, "mma-k", "an MMA operand whose K extent is not a multiple of the atom's K (16)");

namespace sema {

using tir::ExprRef;

bool isWholeLocal(const tile::Kernel& k, const Value& v) {
  if (v.kind != Value::Kind::View) return false;
  const tile::Tensor& t = k.tensors[v.view.tensor];
  return t.space == tile::MemSpace::Local && v.view.shape == t.staticShape;
}

// `(a, b)`, or a pair constant, as two compile-time integers in 1..64.
bool KernelSema::pairArg(const ast::Expr& e, const char* what, int64_t out[2]) {
  std::optional<std::vector<Entry>> pair = entries(e);
  if (!pair) return false;
  if (pair->size() != 2) {
    diags_.report(kBadArgument, e.range, fmt::format("{} takes a pair, e.g. (2, 4)", what));
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    std::optional<int64_t> v = constInt((*pair)[i], "a tiled_mma extent");
    if (!v) return false;
    if (*v <= 0 || *v > 64) {
      diags_.report(kBadArgument, (*pair)[i].range, fmt::format("{} entries must lie in 1..64, found {}", what, *v));
      return false;
    }
    out[i] = *v;
  }
  return true;
}

bool KernelSema::withinRegisterLimit(int64_t slots, SourceRange loc) {
  constexpr int64_t kMaxSlots = 1024;
  if (slots <= kMaxSlots) return true;
  diags_.report(kRegisterLimit, loc, fmt::format("each thread would hold {} register slots; the limit is {}", slots, kMaxSlots));
  return false;
}

std::optional<uint32_t> KernelSema::allocFragment(const std::string& base, tile::DType dtype,
                                                  std::vector<int64_t> shape, const layout::Layout& l,
                                                  SourceRange loc, std::string madeBy) {
  tile::Tensor t;
  t.space = tile::MemSpace::Local;
  t.dtype = dtype;
  t.staticShape = shape;
  for (int64_t d : shape) t.shape.push_back(tir::intConst(d, tir::Type::I64));
  t.layout = l;
  t.layoutLoc = loc;
  t.loc = loc;
  t.slots = std::max<int64_t>(1, layout::cosize(layout::Layout(layout::storage(l.tile)), layout::Axis::m));
  if (!withinRegisterLimit(t.slots, loc)) return std::nullopt;
  t.name = fmt::format("{}{}", base, k_.tensors.size());
  t.autoNamed = true;
  t.madeBy = std::move(madeBy);
  t.array = tir::addArray(k_.skeleton, t.name, tile::toTir(dtype), t.slots);
  return addTensor(std::move(t));
}

std::optional<Value> KernelSema::mmaAtom(const ast::Expr& e, const ast::Call& c, std::string_view instruction) {
  const std::string_view name = c.callee->as<ast::Name>() ? std::string_view(c.callee->as<ast::Name>()->name) : "";
  if (c.args.size() != 3) {
    diags_.report(kBadArgument, e.range,
                  fmt::format("{} takes the types of A, B and C: {}(f16, f16, f32)", name, name));
    return std::nullopt;
  }
  tile::DType types[3];
  for (int i = 0; i < 3; ++i) {
    std::optional<Value> v = expr(*c.args[i].value);
    if (!v) return std::nullopt;
    if (v->kind != Value::Kind::DType) {
      diags_.report(kMmaAtom, c.args[i].value->range, fmt::format("expected an element type, found {}", describe(*v)));
      return std::nullopt;
    }
    types[i] = v->dtype;
  }
  bool ok = types[0] == types[1] && (types[0] == tile::DType::F16 || types[0] == tile::DType::BF16) &&
            types[2] == tile::DType::F32;
  if (!ok) {
    diags_.report(kMmaAtom, e.range,
                  fmt::format("{} takes f16 or bf16 A and B of the same type with f32 C; found {}, {}, {}",
                              instruction, tile::dtypeName(types[0]), tile::dtypeName(types[1]),
                              tile::dtypeName(types[2])));
    return std::nullopt;
  }
  Value v;
  v.kind = Value::Kind::Atom;
  v.mma.ab = types[0];
  return v;
}

std::optional<Value> KernelSema::tiledMma(const ast::Expr& e, const ast::Call& c) {
  const ast::Expr* atomArg = nullptr;
  const ast::Expr* warps = nullptr;
  const ast::Expr* repeat = nullptr;
  for (const ast::Arg& a : c.args) {
    const ast::Expr** slot = a.name.empty() ? &atomArg : a.name == "warps" ? &warps : a.name == "repeat" ? &repeat : nullptr;
    if (!slot || *slot) {
      diags_.report(kBadArgument, a.name.empty() ? a.value->range : a.nameRange,
                    "tiled_mma takes an atom, warps = (m, n) and repeat = (m, n)");
      return std::nullopt;
    }
    *slot = a.value.get();
  }
  if (!atomArg || !warps) {
    diags_.report(kBadArgument, e.range, "tiled_mma needs an atom and warps = (m, n)");
    return std::nullopt;
  }
  std::optional<Value> atom = expr(*atomArg);
  if (!atom) return std::nullopt;
  if (atom->kind != Value::Kind::Atom) {
    diags_.report(kMmaAtom, atomArg->range, fmt::format("expected an MMA atom such as mma_m16n8k16(f16, f16, f32), "
                                                         "found {}", describe(*atom)));
    return std::nullopt;
  }
  if (atom->mma.warpgroup()) {
    diags_.report(kMmaAtom, atomArg->range,
                  "a wgmma atom runs on warpgroups: arrange it with warpgroup_mma(atom, warpgroups = (m, n))");
    return std::nullopt;
  }
  int64_t w[2], r[2] = {1, 1};
  if (!pairArg(*warps, "warps", w)) return std::nullopt;
  if (repeat && !pairArg(*repeat, "repeat", r)) return std::nullopt;
  Value v = *atom;
  v.kind = Value::Kind::Mma;
  v.mma.shape.warpsM = w[0];
  v.mma.shape.warpsN = w[1];
  v.mma.shape.repeatM = r[0];
  v.mma.shape.repeatN = r[1];
  if (v.mma.shape.threads() != k_.skeleton.threadsPerBlock()) {
    diags_.report(kTiledMmaThreads, e.range,
                  fmt::format("warps = ({}, {}) needs {} threads, but the block has {}", w[0], w[1],
                              v.mma.shape.threads(), k_.skeleton.threadsPerBlock()))
        .note(decl_.launchRange, "the launch is declared here");
    return std::nullopt;
  }
  return v;
}

std::optional<Value> KernelSema::zeroC(const ast::Expr& e, const tile::TiledMma& mma) {
  layout::Layout l(mma.warpgroup() ? layout::wgmmaLayoutD(mma.wgmmaN, mma.groupsM, mma.groupsN)
                                   : layout::mmaLayoutC(mma.shape));
  std::optional<uint32_t> id = allocFragment("acc", tile::DType::F32, {mma.tileM(), mma.tileN()}, l, e.range,
                                             "zero_c's accumulator");
  if (!id) return std::nullopt;
  tile::FragExpr zero;
  zero.kind = tile::FragExpr::Kind::Scalar;
  zero.dtype = tile::DType::F32;
  zero.scalar = tir::floatConst(0.0);
  emit(e.range, tile::FragAssign{*id, std::make_shared<const tile::FragExpr>(std::move(zero))});
  return Value::ofView(wholeView(*id, e.range));
}

std::optional<Value> KernelSema::loadOperand(const ast::Expr& e, const ast::Call& c, bool isA) {
  const char* fn = isA ? "load_a" : "load_b";
  if (c.args.size() != 2 || !c.args[0].name.empty() || !c.args[1].name.empty()) {
    diags_.report(kBadArgument, e.range, fmt::format("{} takes a tiled MMA and a tensor: {}(mma, tile)", fn, fn));
    return std::nullopt;
  }
  std::optional<Value> m = expr(*c.args[0].value);
  if (!m) return std::nullopt;
  if (m->kind != Value::Kind::Mma) {
    diags_.report(kTypeMismatch, c.args[0].value->range, fmt::format("expected a tiled MMA, found {}", describe(*m)));
    return std::nullopt;
  }
  if (m->mma.warpgroup() && !isA) {
    diags_.report(kTypeMismatch, e.range,
                  "a warpgroup MMA reads B from shared memory itself: pass the shared tile to the MMA, "
                  "mma(acc, a, Bs), instead of load_b");
    return std::nullopt;
  }
  std::optional<Value> src = expr(*c.args[1].value);
  if (!src) return std::nullopt;
  if (src->kind != Value::Kind::View || k_.tensors[src->view.tensor].space == tile::MemSpace::Local) {
    const bool fragment = src->kind == Value::Kind::View;  // of a register fragment
    diags_.report(kTypeMismatch, c.args[1].value->range,
                  fmt::format("{} loads from a shared or global tensor, found {}", fn,
                              fragment ? "a register fragment" : describe(*src)));
    return std::nullopt;
  }
  const tile::View& v = src->view;
  const tile::Tensor& t = k_.tensors[v.tensor];
  const layout::TiledMmaShape& s = m->mma.shape;
  if (t.dtype != m->mma.ab) {
    diags_.report(kTypeMismatch, c.args[1].value->range,
                  fmt::format("the MMA multiplies {} but '{}' holds {}", tile::dtypeName(m->mma.ab), t.name,
                              tile::dtypeName(t.dtype)));
    return std::nullopt;
  }
  if (v.rank() != 2) {
    diags_.report(kTiledMmaCover, c.args[1].value->range,
                  fmt::format("{} takes a two-dimensional tile, found {} dimensions", fn, v.rank()));
    return std::nullopt;
  }
  int64_t k = isA ? v.shape[1] : v.shape[0];
  int64_t other = isA ? v.shape[0] : v.shape[1];
  const tile::TiledMma& tm = m->mma;
  int64_t want = isA ? tm.tileM() : tm.tileN();
  if (other != want) {
    diags_.report(kTiledMmaCover, c.args[1].value->range,
                  tm.warpgroup()
                      ? fmt::format("the warpgroup MMA covers {} rows ({} warpgroups of 64), but this tile has {}",
                                    want, tm.groupsM, other)
                      : fmt::format("the tiled MMA covers {} {} (warps {} x repeat {} x atom {}), but this tile has {}",
                                    want, isA ? "rows" : "columns", isA ? s.warpsM : s.warpsN,
                                    isA ? s.repeatM : s.repeatN, isA ? 16 : 8, other));
    return std::nullopt;
  }
  if (k % 16 != 0) {
    diags_.report(kMmaK, c.args[1].value->range,
                  fmt::format("the tile's K extent is {}, not a multiple of the atom's K (16)", k));
    return std::nullopt;
  }
  layout::Layout l(tm.warpgroup() ? layout::wgmmaLayoutA(k / 16, tm.groupsM, tm.groupsN)
                   : isA        ? layout::mmaLayoutA(s, k / 16)
                                : layout::mmaLayoutB(s, k / 16));
  // `x = load_a(...)` into a fragment that already has the operand's shape and layout loads
  // into x itself: no temporary, and x can carry fragments from one loop iteration to the next.
  std::optional<uint32_t> into = std::exchange(loadInto_, std::nullopt);
  const bool direct = into && k_.tensors[*into].dtype == t.dtype && k_.tensors[*into].staticShape == v.shape &&
                      k_.tensors[*into].layout == l;
  std::optional<uint32_t> id = direct ? into : allocFragment(isA ? "a" : "b", t.dtype, v.shape, l, e.range,
                                                             fmt::format("{}'s fragment", fn));
  if (!id) return std::nullopt;
  tile::Copy cp;
  cp.dst = wholeView(*id, e.range);
  cp.src = v;
  emit(e.range, std::move(cp));
  return Value::ofView(wholeView(*id, e.range));
}

std::optional<Value> KernelSema::mmaCall(const ast::Expr& e, const ast::Call& c, const tile::TiledMma& mma) {
  if (mma.warpgroup()) return wgmmaCall(e, c, mma);
  if (c.args.size() != 3) {
    diags_.report(kBadArgument, e.range, "an MMA call takes the accumulator and the operands: mma(acc, a, b)");
    return std::nullopt;
  }
  Value r;
  r.kind = Value::Kind::MmaResult;
  r.mma = mma;
  const char* names[3] = {"accumulator", "A operand", "B operand"};
  const layout::TiledMmaShape& s = mma.shape;
  for (int i = 0; i < 3; ++i) {
    std::optional<Value> v = expr(*c.args[i].value);
    if (!v) return std::nullopt;
    if (!isWholeLocal(k_, *v)) {
      diags_.report(kTypeMismatch, c.args[i].value->range,
                    fmt::format("the {} must be a whole register fragment, found {}{}", names[i],
                                v->kind == Value::Kind::View ? "a window or view of a tensor" : describe(*v),
                                v->kind == Value::Kind::Frag ? " (bind it first: let p = f16(acc);)" : ""));
      return std::nullopt;
    }
    const tile::Tensor& t = k_.tensors[v->view.tensor];
    tile::DType want = i == 0 ? tile::DType::F32 : mma.ab;
    if (t.dtype != want) {
      diags_.report(kTypeMismatch, c.args[i].value->range,
                    fmt::format("the {} must hold {}, not {}", names[i], tile::dtypeName(want), tile::dtypeName(t.dtype)));
      return std::nullopt;
    }
    r.mmaArgs[i] = v->view.tensor;
  }
  const tile::Tensor& ct = k_.tensors[r.mmaArgs[0]];
  const tile::Tensor& at = k_.tensors[r.mmaArgs[1]];
  const tile::Tensor& bt = k_.tensors[r.mmaArgs[2]];
  auto cover = [&](int i, const tile::Tensor& t, int64_t rows, int64_t cols) {
    if (t.staticShape.size() == 2 && (rows < 0 || t.staticShape[0] == rows) && (cols < 0 || t.staticShape[1] == cols))
      return true;
    diags_.report(kTiledMmaCover, c.args[i].value->range,
                  fmt::format("the {} has shape {}, but the tiled MMA needs ({}, {})", names[i],
                              layout::shapeToString(t.staticShape), rows < 0 ? std::string("K") : std::to_string(rows),
                              cols < 0 ? std::string("K") : std::to_string(cols)));
    return false;
  };
  if (!cover(0, ct, s.tileM(), s.tileN()) || !cover(1, at, s.tileM(), -1) || !cover(2, bt, -1, s.tileN()))
    return std::nullopt;
  if (at.staticShape[1] != bt.staticShape[0]) {
    diags_.report(kTiledMmaCover, e.range,
                  fmt::format("A has K = {} but B has K = {}", at.staticShape[1], bt.staticShape[0]));
    return std::nullopt;
  }
  if (at.staticShape[1] % 16 != 0) {
    diags_.report(kMmaK, c.args[1].value->range,
                  fmt::format("K = {} is not a multiple of the atom's K (16)", at.staticShape[1]));
    return std::nullopt;
  }
  return r;
}

std::optional<Value> KernelSema::wgmmaAtom(const ast::Expr& e, const ast::Call& c, int64_t n) {
  if (!layout::validWgmmaN(n)) {
    diags_.report(kMmaAtom, c.callee->range,
                  fmt::format("wgmma m64nNk16 takes N from 8 to 256 in steps of 8, not {}", n));
    return std::nullopt;
  }
  std::optional<Value> v = mmaAtom(e, c, "wgmma m64nNk16");  // mma.sync's types: f16 or bf16 A and B, f32 C
  if (!v) return std::nullopt;
  v->mma.wgmmaN = n;
  return v;
}

std::optional<Value> KernelSema::warpgroupMma(const ast::Expr& e, const ast::Call& c) {
  const ast::Expr* atomArg = nullptr;
  const ast::Expr* groups = nullptr;
  for (const ast::Arg& a : c.args) {
    const ast::Expr** slot = a.name.empty() ? &atomArg : a.name == "warpgroups" ? &groups : nullptr;
    if (!slot || *slot) {
      diags_.report(kBadArgument, a.name.empty() ? a.value->range : a.nameRange,
                    "warpgroup_mma takes a wgmma atom and warpgroups = (m, n)");
      return std::nullopt;
    }
    *slot = a.value.get();
  }
  if (!atomArg) {
    diags_.report(kBadArgument, e.range, "warpgroup_mma needs a wgmma atom, e.g. wgmma_m64n128k16(f16, f16, f32)");
    return std::nullopt;
  }
  std::optional<Value> atom = expr(*atomArg);
  if (!atom) return std::nullopt;
  if (atom->kind != Value::Kind::Atom || !atom->mma.warpgroup()) {
    diags_.report(kMmaAtom, atomArg->range,
                  fmt::format("expected a wgmma atom such as wgmma_m64n128k16(f16, f16, f32), found {}",
                              atom->kind == Value::Kind::Atom ? "mma_m16n8k16, a warp's atom (tiled_mma arranges it)"
                                                              : describe(*atom)));
    return std::nullopt;
  }
  int64_t g[2] = {1, 1};
  if (groups && !pairArg(*groups, "warpgroups", g)) return std::nullopt;
  Value v = *atom;
  v.kind = Value::Kind::Mma;
  v.mma.groupsM = g[0];
  v.mma.groupsN = g[1];
  if (v.mma.threads() > k_.skeleton.threadsPerBlock()) {
    diags_.report(kTiledMmaThreads, e.range,
                  fmt::format("warpgroups = ({}, {}) needs {} threads (128 per warpgroup), but the block has {}", g[0],
                              g[1], v.mma.threads(), k_.skeleton.threadsPerBlock()))
        .note(decl_.launchRange, "the launch is declared here");
    return std::nullopt;
  }
  return v;
}

// mma(acc, As, Bs[, async = b]) of a warpgroup MMA: acc a register fragment, As and Bs shared
// tiles; async (a compile-time truth value) leaves the group in flight for wait_mmas.
std::optional<Value> KernelSema::wgmmaCall(const ast::Expr& e, const ast::Call& c, const tile::TiledMma& mma) {
  const bool named = c.args.size() == 4 && c.args[3].name == "async";
  if (c.args.size() != 3 + (named ? 1 : 0) || !c.args[0].name.empty() || !c.args[1].name.empty() ||
      !c.args[2].name.empty()) {
    diags_.report(kBadArgument, e.range,
                  "a warpgroup MMA call takes the accumulator and the shared tiles, and may be async: "
                  "mma(acc, As, Bs) or mma(acc, As, Bs, async = true)");
    return std::nullopt;
  }
  Value r;
  r.kind = Value::Kind::MmaResult;
  r.mma = mma;
  if (named) {
    std::optional<int64_t> async = constInt(*c.args[3].value, "async (true or false)");
    if (!async) return std::nullopt;
    r.mmaAsync = *async != 0;
  }
  std::optional<Value> acc = expr(*c.args[0].value);
  if (!acc) return std::nullopt;
  if (!isWholeLocal(k_, *acc) || k_.tensors[acc->view.tensor].dtype != tile::DType::F32) {
    diags_.report(kTypeMismatch, c.args[0].value->range,
                  fmt::format("the accumulator must be an f32 register fragment, found {}", describe(*acc)));
    return std::nullopt;
  }
  const tile::Tensor& ct = k_.tensors[acc->view.tensor];
  if (ct.staticShape != std::vector<int64_t>{mma.tileM(), mma.tileN()}) {
    diags_.report(kTiledMmaCover, c.args[0].value->range,
                  fmt::format("the accumulator has shape {}, but the warpgroup MMA needs ({}, {})",
                              layout::shapeToString(ct.staticShape), mma.tileM(), mma.tileN()));
    return std::nullopt;
  }
  r.mmaArgs[0] = acc->view.tensor;
  const char* names[2] = {"A operand", "B operand"};
  for (int i = 0; i < 2; ++i) {
    const ast::Expr& arg = *c.args[static_cast<size_t>(i + 1)].value;
    std::optional<Value> v = expr(arg);
    if (!v) return std::nullopt;
    // A may also be a register fragment (load_a(mma, As) gives one in the instruction's layout).
    const bool registerA = i == 0 && isWholeLocal(k_, *v);
    if (!registerA &&
        (v->kind != Value::Kind::View || k_.tensors[v->view.tensor].space != tile::MemSpace::Shared)) {
      diags_.report(kTypeMismatch, arg.range,
                    fmt::format("wgmma reads the {} from shared memory{}: it must be a shared tile{}, found {}",
                                names[i], i == 0 ? " or registers" : "", i == 0 ? " or a whole register fragment" : "",
                                v->kind == Value::Kind::View
                                    ? fmt::format("a {} tensor", tile::spaceName(k_.tensors[v->view.tensor].space))
                                    : std::string(describe(*v))));
      return std::nullopt;
    }
    r.mmaRegisterA = r.mmaRegisterA || registerA;
    const tile::Tensor& t = k_.tensors[v->view.tensor];
    if (t.dtype != mma.ab) {
      diags_.report(kTypeMismatch, arg.range,
                    fmt::format("the MMA multiplies {} but '{}' holds {}", tile::dtypeName(mma.ab), t.name,
                                tile::dtypeName(t.dtype)));
      return std::nullopt;
    }
    const tile::View& view = v->view;
    const int64_t want = i == 0 ? mma.tileM() : mma.tileN();
    if (view.rank() != 2 || view.shape[i == 0 ? 0 : 1] != want) {
      diags_.report(kTiledMmaCover, arg.range,
                    fmt::format("the {} must be a two-dimensional tile with {} {} ({} per warpgroup), found shape {}",
                                names[i], want, i == 0 ? "rows" : "columns", i == 0 ? 64 : mma.wgmmaN,
                                layout::shapeToString(view.shape)));
      return std::nullopt;
    }
    r.mmaViews[i] = view;
  }
  const int64_t kA = r.mmaViews[0].shape[1], kB = r.mmaViews[1].shape[0];
  if (kA != kB) {
    diags_.report(kTiledMmaCover, e.range, fmt::format("A has K = {} but B has K = {}", kA, kB));
    return std::nullopt;
  }
  if (kA % 16 != 0) {
    diags_.report(kMmaK, c.args[1].value->range, fmt::format("K = {} is not a multiple of the atom's K (16)", kA));
    return std::nullopt;
  }
  return r;
}

void KernelSema::emitMma(SourceRange loc, uint32_t dst, const Value& result) {
  if (result.mma.warpgroup()) {
    tile::WarpgroupMma op;
    op.mma = result.mma;
    op.d = dst;
    op.c = result.mmaArgs[0];
    op.a = result.mmaViews[0];
    op.b = result.mmaViews[1];
    if (result.mmaRegisterA) op.aFrag = result.mmaViews[0].tensor;
    op.async = result.mmaAsync || asyncMmas_;
    emit(loc, std::move(op));
    return;
  }
  tile::Mma op;
  op.mma = result.mma;
  op.d = dst;
  op.c = result.mmaArgs[0];
  op.a = result.mmaArgs[1];
  op.b = result.mmaArgs[2];
  emit(loc, std::move(op));
}

}  // namespace sema
}  // namespace tyl
