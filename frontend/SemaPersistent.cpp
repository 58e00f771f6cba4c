// The constructs of a persistent kernel, each expanded into the statements one writes by hand:
//
//   launch(grid = persistent_grid((TM, TN)), cluster = C, ...)
//   for (m, n) in tiles((TM, TN), group = G) { ... }
//   store_async(D.window(...), value, staging = bufs)
//
// persistent_grid: one block per SM, in whole clusters, but no more clusters than there are
// units of work: max(1, min(sm_count() / C, units)) * C. A unit is C tiles, one per block of a
// cluster, adjacent along the first dimension (so that the cluster's blocks share the tiles of
// the second operand along it): units = cdiv(TM, C) * TN.
//
// tiles: the units the cluster takes, cluster c = block_id.x / C of clusters = grid_dim.x / C
// taking units c, c + clusters, c + 2 clusters, ... Unit u is numbered in a grouped order, G
// rows of units at a time and column by column inside them, so that the clusters running at
// once read the same tiles from L2:
//
//   for i in range(0, cdiv(units - c, clusters)) {
//       let unit = c + i * clusters
//       let first = unit / (g * TN) * g              // the group's first row of units
//       let rows = min(cdiv(TM, C) - first, g)       // its rows (the last group may have fewer)
//       let in_group = unit % (g * TN)
//       let m = (first + in_group % rows) * C + cluster_rank()
//       let n = in_group / rows
//       ...
//
// with g = min(G, cdiv(TM, C)), a group of at most every row (G = 1 is row-major order, without
// the lets of the group; a 1-D tiles(T) gives m = unit * C + cluster_rank()). When C does not
// divide TM, the last units' extra blocks get tiles past TM, which TMA copies read as zeros and
// TMA stores leave out.
//
// The staged store: `value` (a register tile, or arithmetic on one) cut into sub-tiles of the
// staging buffers' shape, bufs being [S, sub...], each written into buffer j % S by the threads
// and stored from there by a TMA store, which one thread issues while the others fill the next
// buffer:
//
//   for j in unroll(sub-tiles) {
//       store(bufs[j % S], value's sub-tile j)
//       if thread_index() == issuer { wait_stores(S - 2) }  // sub-tile j - S + 1 left buffer (j + 1) % S
//       barrier()
//       if thread_index() == issuer { store_async(D's sub-tile j, bufs[j % S]); commit_stores() }
//   }
//
// and at the kernel's end, `if thread_index() == issuer { wait_stores(0) }`. With one buffer
// (S = 1) the issuer waits for each store and a second barrier tells the others. When S does not
// divide the number of sub-tiles, the sequence ends with the issuer's wait_stores(0) and a
// barrier, so that every staged store starts with buffer 0 free and the others, if busy, freed in
// order (buffers 1, 2, ...), whatever the staged store before it through the same buffers. The issuer is
// thread 0, or in a warp-specialized pipeline's consumers their first thread, and barrier() is
// theirs.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "base/CommonDiags.h"
#include "frontend/SemaImpl.h"

namespace tyl {
namespace sema {

using tir::ExprRef;
using tir::Type;

namespace {

constexpr const char* kStaged = "the staged store";

ExprRef cdivOf(const ExprRef& a, const ExprRef& b) {
  return roundedUp(tir::binary(tir::BinOp::Div, a, b), tir::binary(tir::BinOp::Rem, a, b));
}

}  // namespace

std::optional<std::vector<ExprRef>> KernelSema::tileExtents(const ast::Expr& e, const char* fn, Type type) {
  std::optional<std::vector<Entry>> list = entries(e);
  if (!list) return std::nullopt;
  if (list->empty() || list->size() > 2) {
    diags_.report(kBadArgument, e.range,
                  fmt::format("{} takes the number of tiles along one or two dimensions: {}((tiles_m, tiles_n))",
                              fn, fn));
    return std::nullopt;
  }
  std::vector<ExprRef> out;
  for (const Entry& x : *list) {
    std::optional<ExprRef> v = toScalar(x.value, x.range, std::nullopt);
    if (!v) return std::nullopt;
    if (!tir::isInt((*v)->type)) {
      diags_.report(kTypeMismatch, x.range, "a number of tiles must be an integer");
      return std::nullopt;
    }
    if (int64_t c = 0; tir::isIntConst(*v, &c) && c < 0) {
      diags_.report(kBadArgument, x.range, fmt::format("a number of tiles must not be negative, found {}", c));
      return std::nullopt;
    }
    out.push_back(*v);
  }
  // In 64 bits when any extent is.
  for (const ExprRef& x : out)
    if (x->type == Type::I64) type = Type::I64;
  for (ExprRef& x : out) x = tir::cast(type, x);
  return out;
}

std::optional<Value> KernelSema::persistentGrid(const ast::Expr& e, const ast::Call& c) {
  if (!out_.empty() || !blockKnown_) {
    diags_.report(kBadArgument, e.range,
                  "persistent_grid(...) is the grid of a persistent kernel: use it in the launch clause's grid");
    return std::nullopt;
  }
  if (c.args.size() != 1 || !c.args[0].name.empty()) {
    diags_.report(kBadArgument, e.range, "persistent_grid takes the tiles the loop steps through: "
                                         "persistent_grid((tiles_m, tiles_n))");
    return std::nullopt;
  }
  std::optional<std::vector<ExprRef>> ext = tileExtents(*c.args[0].value, "persistent_grid", Type::I64);
  if (!ext) return std::nullopt;
  const std::vector<ExprRef>& x = *ext;
  const int64_t cluster = k_.skeleton.cluster[0];
  const ExprRef C = tir::intConst(cluster, Type::I64);
  ExprRef units = cluster > 1 ? cdivOf(tir::cast(Type::I64, x[0]), C) : tir::cast(Type::I64, x[0]);
  if (x.size() == 2) units = tir::mul(units, tir::cast(Type::I64, x[1]));
  const ExprRef sms = tir::binary(tir::BinOp::Div, tir::cast(Type::I64, tir::special(tir::Special::SmCount)), C);
  const ExprRef clusters =
      tir::binary(tir::BinOp::Max, tir::intConst(1, Type::I64), tir::binary(tir::BinOp::Min, sms, units));
  return Value::runtime(tir::mul(clusters, C));
}

std::optional<KernelSema::TileOrder> KernelSema::tileOrder(const ast::For& f, const ast::Call& c) {
  const ast::Expr* extents = nullptr;
  const ast::Arg* groupArg = nullptr;
  bool ok = !c.args.empty();
  for (const ast::Arg& a : c.args) {
    if (a.name.empty() && !extents && !groupArg) {
      extents = a.value.get();
    } else if (a.name == "group" && !groupArg) {
      groupArg = &a;
    } else if (!a.name.empty() && a.name != "group") {
      diags_.report(kBadLoop, a.nameRange, fmt::format("tiles has no argument '{}': it takes group = G", a.name));
      return std::nullopt;
    } else {
      ok = false;
    }
  }
  for (size_t i = 0; i < f.vars.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (f.vars[i].name == f.vars[j].name) {
        diags_.report(kDuplicateName, f.vars[i].range, fmt::format("'{}' is named twice", f.vars[i].name))
            .note(f.vars[j].range, "the first is here");
        return std::nullopt;
      }
  if (!ok || !extents) {
    diags_.report(kBadLoop, f.iterable->range,
                  "tiles takes the number of tiles along each dimension and optionally the rows of a group: "
                  "tiles((tiles_m, tiles_n), group = 8)");
    return std::nullopt;
  }
  std::optional<std::vector<ExprRef>> ext = tileExtents(*extents, "tiles", Type::I32);
  if (!ext) return std::nullopt;
  // Every block counts the same tiles: no thread's or block's id in them (seen through lets).
  std::function<ExprRef(const tir::Expr&)> throughLets = [&](const tir::Expr& atom) -> ExprRef {
    if (atom.kind != tir::ExprKind::VarRef) return nullptr;
    auto let = letValues_.find(static_cast<uint32_t>(atom.id));
    return let == letValues_.end() ? nullptr : tir::substitute(let->second, throughLets);
  };
  using S = tir::Special;
  for (const ExprRef& x : *ext)
    for (S id : {S::TidX, S::TidY, S::TidZ, S::LaneId, S::WarpId, S::CtaidX, S::CtaidY, S::CtaidZ, S::ClusterRank})
      if (tir::mentionsSpecial(tir::substitute(x, throughLets), id)) {
        diags_.report(kBadLoop, extents->range,
                      "the number of tiles must be the same in every thread and block: it depends on a thread's or "
                      "block's id here");
        return std::nullopt;
      }
  TileOrder o;
  o.extents = *ext;
  const Type type = o.extents[0]->type;
  if (groupArg) {
    std::optional<int64_t> g = constInt(*groupArg->value, "the rows of a group");
    if (!g) return std::nullopt;
    if (*g < 1 || o.extents.size() != 2) {
      diags_.report(kBadLoop, groupArg->value->range,
                    *g < 1 ? fmt::format("a group has at least one row of tiles, not {}", *g)
                           : std::string("a grouped order is one of two dimensions of tiles"));
      return std::nullopt;
    }
    // Past the rows of units a group is all of them (bindTile takes the smaller): in 32 bits.
    o.group = std::min<int64_t>(*g, std::numeric_limits<int32_t>::max());
  }
  // The names: one per dimension of tiles.
  const size_t names = f.var.empty() ? f.vars.size() : 1;
  if (names != o.extents.size()) {
    diags_.report(kBadLoop, f.varRange,
                  fmt::format("tiles of {} dimension{} give {}, so the loop names {}", o.extents.size(),
                              o.extents.size() == 1 ? "" : "s", o.extents.size() == 1 ? "one index" : "a pair",
                              o.extents.size() == 1 ? "one: for m in tiles(...)" : "two: for (m, n) in tiles(...)"));
    return std::nullopt;
  }
  // The blocks step through the grid's x dimension, a cluster at a time.
  const auto& sk = k_.skeleton;
  int64_t gy = 0, gz = 0;
  if (!tir::isIntConst(sk.grid[1], &gy) || !tir::isIntConst(sk.grid[2], &gz) || gy != 1 || gz != 1 ||
      sk.cluster[1] != 1 || sk.cluster[2] != 1) {
    diags_.report(kBadLoop, f.iterable->range,
                  "tiles(...) steps through the blocks of a one-dimensional grid (and cluster), but this launch has "
                  "more than one along y or z: every block there would compute the same tiles")
        .note(decl_.launchRange, "the launch is here");
    return std::nullopt;
  }
  o.cluster = sk.cluster[0];
  const ExprRef C = tir::intConst(o.cluster, type);
  o.unitsM = o.cluster > 1 ? cdivOf(o.extents[0], C) : o.extents[0];
  ExprRef units = o.extents.size() == 2 ? tir::mul(o.unitsM, o.extents[1]) : o.unitsM;
  const ExprRef ctaid = tir::cast(type, tir::special(tir::Special::CtaidX));
  const ExprRef nctaid = tir::cast(type, tir::special(tir::Special::NctaidX));
  o.first = o.cluster > 1 ? tir::binary(tir::BinOp::Div, ctaid, C) : ctaid;
  o.clusters = o.cluster > 1 ? tir::binary(tir::BinOp::Div, nctaid, C) : nctaid;
  o.range.type = type;
  o.range.begin = tir::intConst(0, type);
  o.range.end = cdivOf(tir::sub(units, o.first), o.clusters);
  o.range.step = 1;
  return o;
}

void KernelSema::bindTile(const ast::For& f, const TileOrder& o, const ExprRef& i) {
  const Type type = o.range.type;
  auto let = [&](const std::string& name, const ExprRef& value) {
    const uint32_t var = newVar(name, type);
    emit(f.varRange, tile::ScalarSet{tir::Reg::var(var), value});
    letValues_[var] = value;
    return tir::varRef(k_.skeleton, var);
  };
  auto bindName = [&](const std::string& name, SourceRange at, const ExprRef& value) {
    Binding b;
    b.value = Value::runtime(let(name, value));
    b.declared = at;
    bind(name, std::move(b));
  };
  auto k = [&](int64_t v) { return tir::intConst(v, type); };
  const ExprRef unit = let("unit", tir::add(o.first, tir::mul(i, o.clusters)));
  // The tile of the block, from its unit's row along the first dimension.
  auto tileOf = [&](const ExprRef& row) {
    if (o.cluster == 1) return row;
    return tir::add(tir::mul(row, k(o.cluster)), tir::cast(type, tir::special(tir::Special::ClusterRank)));
  };
  if (o.extents.size() == 1) return bindName(f.var, f.varRange, tileOf(unit));
  const ExprRef tn = o.extents[1];
  ExprRef row, col;
  if (o.group == 1) {
    row = tir::binary(tir::BinOp::Div, unit, tn);
    col = tir::binary(tir::BinOp::Rem, unit, tn);
  } else {
    // A group of at most all the rows of units, so that G * TN does not overflow.
    const ExprRef g = tir::binary(tir::BinOp::Min, k(o.group), o.unitsM);
    const ExprRef span = tir::mul(g, tn);
    const ExprRef first = let("group_first", tir::mul(tir::binary(tir::BinOp::Div, unit, span), g));
    const ExprRef rows = let("group_rows", tir::binary(tir::BinOp::Min, tir::sub(o.unitsM, first), g));
    const ExprRef in = let("in_group", tir::binary(tir::BinOp::Rem, unit, span));
    row = tir::add(first, tir::binary(tir::BinOp::Rem, in, rows));
    col = tir::binary(tir::BinOp::Div, in, rows);
  }
  bindName(f.vars[0].name, f.vars[0].range, tileOf(row));
  bindName(f.vars[1].name, f.vars[1].range, col);
}

void KernelSema::tilesLoop(const ast::Stmt& s, const ast::For& f, const ast::Call& c) {
  std::optional<TileOrder> o = tileOrder(f, c);
  if (!o) return;
  const uint32_t var = newVar("tile", o->range.type);
  tile::For loop{var, o->range.begin, o->range.end, tir::intConst(1, o->range.type), {}};
  out_.push_back(&loop.body);
  enterLoop(var, "tile", f.varRange, loop.begin, loop.end, 1);
  pushScope();
  bindTile(f, *o, tir::varRef(k_.skeleton, var));
  block(f.body);
  popScope();
  leaveLoop();
  out_.pop_back();
  emit(s.range, std::move(loop));
}

// ---- The staged store ----------------------------------------------------------------

std::optional<tile::FragRef> KernelSema::subTile(const tile::FragRef& f, const std::vector<int64_t>& at,
                                                 const std::vector<int64_t>& shape, SourceRange where) {
  if (!f) return f;
  tile::FragExpr x = *f;
  auto cut = [&](const tile::View& v) {
    tile::View w = v;
    for (size_t i = 0; i < w.rank(); ++i) {
      const int d = w.dims[i];
      w.origin[d] = tir::add(w.origin[d], tir::intConst(at[i], w.origin[d]->type));
      w.shape[i] = shape[i];
    }
    return w;
  };
  switch (x.kind) {
    case tile::FragExpr::Kind::Tensor:
      if (x.broadcast || x.coord) {
        diags_.report(kBadArgument, where,
                      "a staged store cuts its value into sub-tiles, but this value broadcasts a fragment or reads "
                      "coordinates, which are not cut: store it without 'staging'");
        return std::nullopt;
      }
      x.part = cut(x.part ? *x.part : wholeView(x.tensor, where));
      break;
    case tile::FragExpr::Kind::Memory:
      x.memory = cut(x.memory);
      break;
    case tile::FragExpr::Kind::Scalar:
      break;
    default:
      for (tile::FragRef* side : {&x.a, &x.b, &x.cond}) {
        std::optional<tile::FragRef> s = subTile(*side, at, shape, where);
        if (!s) return std::nullopt;
        *side = *s;
      }
  }
  return std::make_shared<const tile::FragExpr>(std::move(x));
}

std::optional<Value> KernelSema::stagedStore(const ast::Expr& e, const ast::Call& c) {
  std::optional<Value> dst = expr(*c.args[0].value);
  if (!dst) return std::nullopt;
  std::optional<Value> value = expr(*c.args[1].value);
  if (!value) return std::nullopt;
  std::optional<Value> bufs = expr(*c.args[2].value);
  if (!bufs) return std::nullopt;
  const SourceRange valueAt = c.args[1].value->range, bufsAt = c.args[2].value->range;
  if (dst->kind != Value::Kind::View || k_.tensors[dst->view.tensor].space != tile::MemSpace::Global) {
    diags_.report(kCopySpaces, c.args[0].value->range,
                  "a staged store writes a register tile to global memory: store_async(C.window(...), acc, "
                  "staging = bufs)");
    return std::nullopt;
  }
  const tile::Tensor& dt = k_.tensors[dst->view.tensor];
  if (bufs->kind != Value::Kind::View || k_.tensors[bufs->view.tensor].space != tile::MemSpace::Shared ||
      k_.tensors[bufs->view.tensor].mbarriers || bufs->view.rank() != dst->view.rank() + 1) {
    const bool shared = bufs->kind == Value::Kind::View && k_.tensors[bufs->view.tensor].space == tile::MemSpace::Shared &&
                        !k_.tensors[bufs->view.tensor].mbarriers;
    diags_.report(shared ? kCopyShape : kCopySpaces, bufsAt,
                  fmt::format("the staging buffers are a shared tensor of {} dimensions: the number of buffers, then "
                              "the shape of a sub-tile of the destination",
                              dst->view.rank() + 1));
    return std::nullopt;
  }
  const tile::Tensor& bt = k_.tensors[bufs->view.tensor];
  if (bt.dtype != dt.dtype) {
    diags_.report(kTypeMismatch, bufsAt,
                  fmt::format("the staging buffers hold {} but '{}' holds {}: a TMA store copies the bytes as they are",
                              tile::dtypeName(bt.dtype), dt.name, tile::dtypeName(dt.dtype)));
    return std::nullopt;
  }
  std::optional<tile::FragRef> f = toFrag(*value, valueAt, true);
  if (!f) return std::nullopt;
  const tile::FragExpr* leaf = tile::layoutLeaf(*f);
  if (!leaf) {
    diags_.report(kTypeMismatch, valueAt,
                  "a staged store's value is a register fragment or arithmetic on one, which gives its layout");
    return std::nullopt;
  }
  const tile::View whole = leaf->part ? *leaf->part : wholeView(leaf->tensor, valueAt);
  if (whole.shape != dst->view.shape) {
    diags_.report(kCopyShape, e.range,
                  fmt::format("store_async from shape {} to shape {}", shapeText(whole), shapeText(dst->view)));
    return std::nullopt;
  }
  if (!noFloatIntoInt(dt, (*f)->dtype, valueAt, "value")) return std::nullopt;
  // The sub-tiles, in row-major order over the grid of them.
  const std::vector<int64_t> sub(bufs->view.shape.begin() + 1, bufs->view.shape.end());
  const int64_t buffers = bufs->view.shape[0];
  std::vector<int64_t> counts;
  int64_t total = 1;
  for (size_t d = 0; d < sub.size(); ++d) {
    if (dst->view.shape[d] % sub[d] != 0) {
      diags_.report(kCopyShape, bufsAt,
                    fmt::format("a staging buffer's extent {} along dimension {} does not divide the tile's {}", sub[d],
                                d, dst->view.shape[d]));
      return std::nullopt;
    }
    counts.push_back(dst->view.shape[d] / sub[d]);
    total *= counts.back();
  }
  // The issuing thread: the first that runs the store.
  const int64_t issuer = consumerThreads_ > 0 ? consumerFirstThread_ : 0;
  const ExprRef isIssuer = tir::binary(tir::BinOp::Eq, threadIndex(), tir::intConst(issuer, Type::I32));
  auto byIssuer = [&](const std::function<void()>& body) {
    tile::If branch{isIssuer, {}, {}};
    out_.push_back(&branch.then);
    body();
    out_.pop_back();
    emit(e.range, std::move(branch));
  };
  for (int64_t j = 0; j < total && countUnrolledIteration(e.range); ++j) {
    std::vector<int64_t> at(sub.size());
    for (size_t d = sub.size(), rest = static_cast<size_t>(j); d-- > 0;) {
      at[d] = static_cast<int64_t>(rest % static_cast<size_t>(counts[d])) * sub[d];
      rest /= static_cast<size_t>(counts[d]);
    }
    std::optional<tile::FragRef> part = subTile(*f, at, sub, valueAt);
    if (!part) return std::nullopt;
    // Buffer j % S of the staging tensor, and sub-tile j of the destination.
    tile::View buffer = bufs->view;
    buffer.origin[bufs->view.dims[0]] =
        tir::add(buffer.origin[bufs->view.dims[0]], tir::intConst(j % buffers, tir::Type::I64));
    buffer.dims.erase(buffer.dims.begin());
    buffer.shape.erase(buffer.shape.begin());
    buffer.loc = bufsAt;
    tile::View out = dst->view;
    for (size_t d = 0; d < sub.size(); ++d) {
      out.origin[out.dims[d]] = tir::add(out.origin[out.dims[d]], tir::intConst(at[d], tir::Type::I64));
      out.shape[d] = sub[d];
    }
    tile::Copy write;
    write.dst = buffer;
    write.value = *part;
    emit(e.range, std::move(write));
    // (A wait leaves at most 8 groups in flight; with more buffers it waits for more than it must.)
    if (buffers > 1) byIssuer([&] { emit(e.range, tile::WaitStores{static_cast<int>(std::min<int64_t>(buffers - 2, 8))}); });
    emitBlockBarrier(e.range, kStaged);
    byIssuer([&] {
      tile::Copy store;
      store.dst = out;
      store.src = buffer;
      store.async = true;
      store.tmaStore = true;
      emit(e.range, std::move(store));
      emit(e.range, tile::CommitStores{});
      if (buffers == 1) emit(e.range, tile::WaitStores{0});
    });
    if (buffers == 1) emitBlockBarrier(e.range, kStaged);
  }
  // When the buffers do not divide the sub-tiles, the last stores may still read buffer 0, which
  // the next staged store through them writes first: wait for them here.
  if (total % buffers != 0 && buffers > 1) {
    byIssuer([&] { emit(e.range, tile::WaitStores{0}); });
    emitBlockBarrier(e.range, kStaged);
  }
  stagedIssuers_.try_emplace(issuer, e.range);
  return Value{};
}

}  // namespace sema
}  // namespace tyl
