#include "frontend/Sema.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "base/CommonDiags.h"
#include "frontend/AstPrint.h"
#include "frontend/SemaImpl.h"
#include "ir/layout/CheckedMath.h"
#include "ir/thread/Print.h"

namespace tyl {

TYL_DIAG(kBadParam, Error, "bad-param", "a kernel parameter with an unknown type, space or alignment");
TYL_DIAG(kBadLaunch, Error, "bad-launch", "a launch configuration that is missing, malformed or too large");
TYL_DIAG(kBadTypeParam, Error, "bad-type-param", "a generic kernel parameter with an unknown element type");
TYL_DIAG(kGlobalLayout, Error, "global-layout", "a global tensor layout that does not match its shape");

namespace sema {

using tir::ExprRef;

namespace {

// Whether the host launcher can compute `e` before any thread runs: it reads scalar
// parameters and constants only (no thread or block ids, no variables of the body).
bool knownAtLaunch(const ExprRef& e) {
  if (!e) return true;
  switch (e->kind) {
    case tir::ExprKind::IntConst:
    case tir::ExprKind::FloatConst:
    case tir::ExprKind::ParamRef: return true;
    case tir::ExprKind::SpecialReg: return e->special == tir::Special::SmCount;
    case tir::ExprKind::Binary:
    case tir::ExprKind::Unary:
    case tir::ExprKind::Select:
    case tir::ExprKind::Cast: return knownAtLaunch(e->args[0]) && knownAtLaunch(e->args[1]) && knownAtLaunch(e->args[2]);
    default: return false;
  }
}

}  // namespace

const char* describe(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Void: return "nothing";
    case Value::Kind::Const: return constKindName(v.cv).data();
    case Value::Kind::Scalar: return "a run-time scalar";
    case Value::Kind::View: return "a tensor";
    case Value::Kind::Frag: return "a fragment expression";
    case Value::Kind::DType: return "a type";
    case Value::Kind::TensorType: return "a tensor type";
    case Value::Kind::Namespace: return "a group of ids";
    case Value::Kind::Atom: return "an MMA atom";
    case Value::Kind::Mma: return "a tiled MMA";
    case Value::Kind::MmaResult: return "an MMA result";
  }
  return "a value";
}

KernelSema::Binding* KernelSema::lookup(const std::string& n) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->find(n);
    if (found != it->end()) return &found->second;
  }
  return nullptr;
}

ConstEvaluator KernelSema::constEvaluator() {
  return ConstEvaluator(
      diags_,
      [this](std::string_view n) -> const ConstValue* {
        // block_dim.x, .y and .z are the launch's block extents, unless a name shadows block_dim.
        if (n.starts_with("block_dim.") && !lookup("block_dim") && !env_.consts.count("block_dim")) {
          std::string_view field = n.substr(10);
          int axis = field == "x" ? 0 : field == "y" ? 1 : field == "z" ? 2 : -1;
          if (axis < 0 || !blockKnown_) return nullptr;
          blockDim_[axis] = ConstValue{k_.skeleton.block[axis]};
          return &blockDim_[axis];
        }
        if (Binding* b = lookup(std::string(n)))
          return b->value.kind == Value::Kind::Const && !b->poisoned ? &b->value.cv : nullptr;
        auto it = env_.consts.find(n);
        return it == env_.consts.end() ? nullptr : &it->second;
      },
      [this](std::string_view n) {
        if (Binding* b = lookup(std::string(n))) return b->poisoned;
        return env_.poisoned.count(n) > 0;
      });
}

std::string KernelSema::tensorRef(const tile::Tensor& t) { return t.ref(); }

uint32_t KernelSema::newVar(const std::string& base, tir::Type type) {
  int n = nameCounts_[base]++;
  if (n == 0) return tir::addVar(k_.skeleton, base, type);
  uint32_t v = tir::addVar(k_.skeleton, fmt::format("{}_{}", base, n), type);
  k_.skeleton.vars[v].sourceName = base;
  return v;
}

uint32_t KernelSema::addTensor(tile::Tensor t) {
  k_.tensors.push_back(std::move(t));
  return static_cast<uint32_t>(k_.tensors.size() - 1);
}

tile::View KernelSema::wholeView(uint32_t tensor, SourceRange loc) const {
  const tile::Tensor& t = k_.tensors[tensor];
  tile::View v;
  v.tensor = tensor;
  v.loc = loc;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    v.origin.push_back(tir::intConst(0, tir::Type::I64));
    v.dims.push_back(static_cast<int>(d));
    v.shape.push_back(t.staticShape[d]);
  }
  return v;
}

// Counts one more towards `limit`; past it, reports `message` (its {} the limit) once.
bool KernelSema::withinLimit(int64_t& count, int64_t limit, SourceRange where, std::string_view message) {
  if (tooLarge_) return false;
  if (++count <= limit) return true;
  diags_.report(kTooLarge, where, fmt::format(fmt::runtime(message), limit));
  tooLarge_ = true;
  return false;
}

bool KernelSema::countUnrolledIteration(SourceRange where) {
  return withinLimit(unrolledIterations_, kMaxUnrolledIterations, where,
                     "the kernel's unrolled loops run more than {} iterations in all");
}

bool KernelSema::countStmt(SourceRange where) {
  return withinLimit(expanded_, kMaxExpandedStmts, where, "the kernel expands to more than {} statements after unrolling");
}

// ---- Parameters ------------------------------------------------------------------

static std::optional<tir::Type> scalarParamType(std::string_view n, tile::DType* dtype) {
  std::optional<tile::DType> t = tile::dtypeFromName(n);
  if (!t) return std::nullopt;
  *dtype = *t;
  return tile::toTir(*t);
}

bool KernelSema::declareParams() {
  // Scalars first, so tensor shapes may name any scalar parameter.
  std::vector<int> paramOf(decl_.params.size(), -1);
  bool ok = true;
  std::map<std::string, SourceRange> seen;
  for (const ast::Param& p : decl_.params) {
    auto [it, fresh] = seen.emplace(p.name.name, p.name.range);
    if (!fresh) {
      diags_.report(kDuplicateName, p.name.range, fmt::format("parameter '{}' is declared twice", p.name.name))
          .note(it->second, "the first declaration is here");
      ok = false;
    }
  }
  for (size_t i = 0; i < decl_.params.size(); ++i) {
    const ast::Param& p = decl_.params[i];
    tir::Param tp;
    tp.name = p.name.name;
    std::string dtypeName = p.dtype.name;
    tile::DType dtype = tile::DType::F32;
    if (auto it = typeArgs_.find(dtypeName); it != typeArgs_.end()) dtypeName = tile::dtypeName(it->second);
    std::optional<tir::Type> type = scalarParamType(dtypeName, &dtype);
    if (!type) {
      diags_.report(kBadParam, p.dtype.range,
                    fmt::format("unknown element type '{}' (known: f32, f16, bf16, i32, i64, bool)", p.dtype.name));
      ok = false;
      type = tir::Type::I32;
    }
    tp.type = *type;
    tp.isPointer = p.isTensor;
    k_.skeleton.params.push_back(tp);
    paramOf[i] = static_cast<int>(i);
    if (!p.isTensor) {
      Binding b;
      b.value = Value::runtime(tir::paramRef(k_.skeleton, static_cast<int>(i)));
      b.declared = p.name.range;
      bind(p.name.name, std::move(b));
    }
  }
  if (!ok) return false;
  // CUDA passes a kernel at most 32764 bytes of parameters, each at its natural alignment.
  constexpr int64_t kMaxParamBytes = 32764;
  int64_t bytes = 0;
  for (size_t i = 0; i < decl_.params.size(); ++i) {
    const tir::Param& tp = k_.skeleton.params[i];
    const int64_t size = tp.isPointer ? 8 : tir::typeBytes(tp.type);
    bytes = (bytes + size - 1) / size * size + size;
    if (bytes > kMaxParamBytes) {
      diags_.report(kTooLarge, decl_.params[i].name.range,
                    fmt::format("the parameters up to '{}' take {} bytes, more than the {} bytes CUDA passes to a "
                                "kernel",
                                decl_.params[i].name.name, bytes, kMaxParamBytes));
      return false;
    }
  }
  for (size_t i = 0; i < decl_.params.size(); ++i) {
    const ast::Param& p = decl_.params[i];
    if (!p.isTensor) continue;
    std::optional<tile::Tensor> t = tensorParam(p, static_cast<int>(i));
    if (!t) {
      ok = false;
      continue;
    }
    uint32_t id = addTensor(std::move(*t));
    Binding b;
    b.value = Value::ofView(wholeView(id, p.name.range));
    b.declared = p.name.range;
    bind(p.name.name, std::move(b));
  }
  return ok;
}

std::optional<tile::Tensor> KernelSema::tensorParam(const ast::Param& p, int paramIndex) {
  if (p.space.name != "global") {
    diags_.report(kBadParam, p.space.range,
                  fmt::format("tensor parameters live in 'global' memory, not '{}'", p.space.name));
    return std::nullopt;
  }
  tile::Tensor t;
  t.name = p.name.name;
  t.space = tile::MemSpace::Global;
  std::string dtypeName = p.dtype.name;
  if (auto it = typeArgs_.find(dtypeName); it != typeArgs_.end()) dtypeName = tile::dtypeName(it->second);
  std::optional<tile::DType> dtype = tile::dtypeFromName(dtypeName);
  if (!dtype || *dtype == tile::DType::Bool) {
    diags_.report(kBadParam, p.dtype.range,
                  fmt::format("unknown tensor element type '{}' (known: f32, f16, bf16, i32, i64)", p.dtype.name));
    return std::nullopt;
  }
  t.dtype = *dtype;
  t.loc = p.range;
  if (p.shape.empty()) {
    diags_.report(kBadParam, p.range, "a tensor parameter needs at least one dimension");
    return std::nullopt;
  }
  // How each dimension is written, for the global layout's diagnostics.
  std::vector<std::string> dimTexts;
  for (const ast::ExprPtr& written : p.shape) {
    std::optional<std::vector<Entry>> dims = entries(*written);
    if (!dims) return std::nullopt;
    for (const Entry& d : *dims) {
      if (d.value.kind == Value::Kind::Const) {
        std::optional<int64_t> n = constInt(d, "a tensor dimension");
        if (!n) return std::nullopt;
        if (*n <= 0) {
          diags_.report(kBadParam, d.range, fmt::format("a static tensor dimension must be positive, found {}", *n));
          return std::nullopt;
        }
        t.staticShape.push_back(*n);
        t.shape.push_back(tir::intConst(*n, tir::Type::I64));
        dimTexts.push_back(dims->size() == 1 ? printExpr(*written) : fmt::format("{}", *n));
        continue;
      }
      std::optional<ExprRef> s = toScalar(d.value, d.range, tir::Type::I64);
      if (!s) return std::nullopt;
      if (!tir::isInt((*s)->type)) {
        diags_.report(kTypeMismatch, d.range, "a tensor dimension must be an integer");
        return std::nullopt;
      }
      // The launcher checks dimensions, and `tyloc run` allocates tensors, before any thread runs.
      if (!knownAtLaunch(*s)) {
        diags_.report(kBadParam, d.range,
                      "a tensor dimension may use only scalar parameters and constants: it must be known "
                      "when the kernel is launched");
        return std::nullopt;
      }
      t.staticShape.push_back(-1);
      t.shape.push_back(*s);
      dimTexts.push_back(printExpr(*written));
    }
  }
  if (t.shape.empty()) {  // `f32[()]`, or an empty tuple constant
    diags_.report(kBadParam, p.range, "a tensor parameter needs at least one dimension");
    return std::nullopt;
  }
  t.alignBytes = tile::dtypeBytes(t.dtype);
  if (p.align) {
    std::optional<int64_t> a = constInt(*p.align, "an alignment");
    if (!a) return std::nullopt;
    if (*a < t.alignBytes || *a > 256 || (*a & (*a - 1)) != 0) {
      diags_.report(kBadParam, p.align->range,
                    fmt::format("alignment must be a power of two between the element size ({}) and 256, found {}",
                                t.alignBytes, *a));
      return std::nullopt;
    }
    t.alignBytes = *a;
  }
  // Default layout: row-major strides, computed at run time when the shape is.
  t.strides.assign(t.shape.size(), nullptr);
  ExprRef stride = tir::intConst(1, tir::Type::I64);
  for (size_t d = t.shape.size(); d-- > 0;) {
    t.strides[d] = stride;
    stride = tir::mul(stride, t.shape[d]);
  }
  if (p.layout && !globalLayout(*p.layout, dimTexts, t)) return std::nullopt;
  if (t.isStatic()) {
    // A static global tensor also gets a static layout, so every layout check applies.
    layout::TileLayout tl;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      int64_t s = 0;
      if (!tir::isIntConst(t.strides[d], &s)) break;
      tl.shard.push_back({t.staticShape[d], s, layout::Axis::m});
    }
    if (tl.shard.size() == t.shape.size()) t.layout = layout::Layout(tl);
    // Addresses into the tensor, in bytes, must fit 64 bits.
    try {
      int64_t elems = layout::shapeSize(t.staticShape);
      if (t.layout) elems = std::max(elems, layout::cosize(*t.layout, layout::Axis::m));
      (void)layout::checkedMul(elems, tile::dtypeBytes(t.dtype));
    } catch (const layout::OverflowError&) {
      diags_.report(kIntegerOverflow, p.range,
                    fmt::format("the size in bytes of '{}' overflows 64-bit integers", t.name));
      return std::nullopt;
    }
  }
  tir::Buffer buf;
  buf.name = t.name;
  buf.space = tir::Space::Global;
  buf.elem = tile::toTir(t.dtype);
  buf.param = paramIndex;
  buf.alignBytes = t.alignBytes;
  k_.skeleton.buffers.push_back(buf);
  t.buffer = static_cast<uint32_t>(k_.skeleton.buffers.size() - 1);
  k_.skeleton.params[paramIndex].buffer = static_cast<int>(t.buffer);
  k_.skeleton.params[paramIndex].shape = t.shape;
  k_.skeleton.params[paramIndex].strides = t.strides;
  return t;
}

// `: S[(M, K) : (K, 1)]` on a global tensor: one iter per dimension, extents equal to
// the dimensions, strides on `m` that may use scalar parameters.
bool KernelSema::globalLayout(const ast::Expr& e, const std::vector<std::string>& dims, tile::Tensor& t) {
  t.layoutLoc = e.range;
  const auto* spec = e.as<ast::IterSpec>();
  if (!spec || spec->replica) {
    diags_.report(kGlobalLayout, e.range,
                  "a global tensor's layout is written S[(d0, d1, ...) : (s0, s1, ...)], one iter per dimension");
    return false;
  }
  // Each extent or stride: the expression written, or for a name its value, with the
  // elements of a tuple, written out or named, taken one by one.
  struct Leaf {
    const ast::Expr* expr;
    std::optional<Value> value;  // for names and the elements of tuple constants
    bool element = false;        // an element of the tuple constant `expr` names
    std::string text() const {
      const int64_t* i = element ? std::get_if<int64_t>(&value->cv.v) : nullptr;
      return i ? fmt::format("{}", *i) : printExpr(*expr);
    }
  };
  auto flatten = [&](const std::vector<ast::ExprPtr>& list, std::vector<Leaf>& out) {
    std::function<bool(const ast::Expr&)> walk = [&](const ast::Expr& x) {
      if (const auto* tup = x.as<ast::Tuple>()) {
        for (const ast::ExprPtr& el : tup->elems)
          if (!walk(*el)) return false;
        return true;
      }
      const auto* n = x.as<ast::Name>();
      if (!n) {
        out.push_back({&x, std::nullopt});
        return true;
      }
      std::optional<Value> v = name(x, n->name);
      if (!v) return false;
      std::function<void(const ConstValue&, bool)> add = [&](const ConstValue& c, bool element) {
        if (const auto* t = std::get_if<TupleValue>(&c.v)) {
          for (const ConstValue& el : t->elems) add(el, true);
        } else {
          out.push_back({&x, Value::constant(c), element});
        }
      };
      if (v->kind == Value::Kind::Const)
        add(v->cv, false);
      else
        out.push_back({&x, std::move(*v)});
      return true;
    };
    for (const ast::ExprPtr& x : list)
      if (!walk(*x)) return false;
    return true;
  };
  std::vector<Leaf> extents, strides;
  if (!flatten(spec->extents, extents) || !flatten(spec->strides, strides)) return false;
  if (extents.size() != t.shape.size()) {
    diags_.report(kGlobalLayout, e.range,
                  fmt::format("the layout has {} iters but the tensor has {} dimensions; a global layout has one "
                              "iter per dimension",
                              extents.size(), t.shape.size()));
    return false;
  }
  if (spec->hasStrides && strides.size() != extents.size()) {
    diags_.report(kGlobalLayout, e.range,
                  fmt::format("the layout has {} extents but {} strides", extents.size(), strides.size()));
    return false;
  }
  auto toScalarLeaf = [&](const Leaf& leaf) {
    return leaf.value ? toScalar(*leaf.value, leaf.expr->range, tir::Type::I64) : scalar(*leaf.expr, tir::Type::I64);
  };
  for (size_t d = 0; d < extents.size(); ++d) {
    std::optional<ExprRef> ext = toScalarLeaf(extents[d]);
    if (!ext) return false;
    if (!tir::sameExpr(*ext, t.shape[d])) {
      diags_.report(kGlobalLayout, extents[d].expr->range,
                    fmt::format("iter {} has extent {} but dimension {} of the tensor is {}", d, extents[d].text(), d,
                                dims[d]));
      return false;
    }
  }
  if (!spec->hasStrides) return true;  // S[(M, K)] is the default row-major layout
  for (size_t d = 0; d < strides.size(); ++d) {
    Leaf leaf = strides[d];
    const ast::Expr* s = leaf.expr;
    if (leaf.value && leaf.value->kind == Value::Kind::Const)
      if (const auto* a = std::get_if<AxisValue>(&leaf.value->cv.v)) {
        if (a->axis != layout::Axis::m) {
          diags_.report(kGlobalLayout, s->range,
                        fmt::format("a global tensor's layout maps onto memory ('m'), not '{}'",
                                    layout::axisName(a->axis)));
          return false;
        }
        leaf.value = Value::constant(ConstValue{a->value});
      }
    if (const auto* on = s->as<ast::OnAxis>()) {
      if (on->axis != "m") {
        diags_.report(kGlobalLayout, on->axisRange,
                      fmt::format("a global tensor's layout maps onto memory ('m'), not '{}'", on->axis));
        return false;
      }
      if (!on->value) {
        t.strides[d] = tir::intConst(1, tir::Type::I64);
        continue;
      }
      s = on->value.get();
      leaf = {s, std::nullopt};
    }
    std::optional<ExprRef> v = toScalarLeaf(leaf);
    if (!v) return false;
    if (!knownAtLaunch(*v)) {
      diags_.report(kGlobalLayout, s->range,
                    "a global stride may use only scalar parameters and constants: it must be known when the "
                    "kernel is launched");
      return false;
    }
    int64_t c = 0;
    if (tir::isIntConst(*v, &c) && c < 0) {
      diags_.report(kGlobalLayout, s->range, fmt::format("a global stride must not be negative, found {}", c));
      return false;
    }
    t.strides[d] = *v;
  }
  return true;
}

// ---- Launch ----------------------------------------------------------------------

bool KernelSema::declareLaunch() {
  const ast::Expr* grid = nullptr;
  const ast::Expr* block = nullptr;
  const ast::Expr* cluster = nullptr;
  for (const ast::Arg& a : decl_.launch) {
    const ast::Expr** slot = a.name == "grid"      ? &grid
                             : a.name == "block"   ? &block
                             : a.name == "cluster" ? &cluster
                                                   : nullptr;
    if (!slot) {
      diags_.report(kBadLaunch, a.name.empty() ? a.value->range : a.nameRange,
                    "launch takes 'grid = ...', 'block = ...' and optionally 'cluster = ...'");
      return false;
    }
    if (*slot) {
      diags_.report(kBadLaunch, a.nameRange, fmt::format("'{}' is given twice", a.name));
      return false;
    }
    *slot = a.value.get();
  }
  if (!grid || !block) {
    diags_.report(kBadLaunch, decl_.launchRange, "launch needs both 'grid = ...' and 'block = ...'");
    return false;
  }
  // A grid's or block's entries: one to three.
  auto dims = [&](const ast::Expr& e) -> std::optional<std::vector<Entry>> {
    std::optional<std::vector<Entry>> list = entries(e);
    if (list && (list->empty() || list->size() > 3)) {
      diags_.report(kBadLaunch, e.range, "grid and block take one to three dimensions");
      return std::nullopt;
    }
    return list;
  };
  // The block first: the grid may use block_dim.
  std::optional<std::vector<Entry>> blockEntries = dims(*block);
  if (!blockEntries) return false;
  const std::vector<Entry>& b = *blockEntries;
  int64_t threads = 1;
  for (size_t i = 0; i < b.size(); ++i) {
    std::optional<int64_t> n = constInt(b[i], "a block dimension");
    if (!n) return false;
    if (*n <= 0 || *n > 1024) {
      diags_.report(kBadLaunch, b[i].range, fmt::format("a block dimension must lie in 1..1024, found {}", *n));
      return false;
    }
    k_.skeleton.block[i] = *n;
    threads *= *n;
  }
  if (threads > 1024) {
    diags_.report(kBadLaunch, block->range, fmt::format("a block has at most 1024 threads, this one has {}", threads));
    return false;
  }
  blockKnown_ = true;
  // A cluster: blocks that run together on neighbouring SMs (sm_90); at most 8, the portable size.
  if (cluster) {
    std::optional<std::vector<Entry>> clusterEntries = dims(*cluster);
    if (!clusterEntries) return false;
    int64_t blocks = 1;
    for (size_t i = 0; i < clusterEntries->size(); ++i) {
      std::optional<int64_t> n = constInt((*clusterEntries)[i], "a cluster dimension");
      if (!n) return false;
      if (*n < 1) {
        diags_.report(kBadLaunch, (*clusterEntries)[i].range, fmt::format("a cluster dimension must be positive, found {}", *n));
        return false;
      }
      k_.skeleton.cluster[i] = *n;
      blocks *= *n;
    }
    if (blocks > 8) {
      diags_.report(kBadLaunch, cluster->range,
                    fmt::format("a cluster has at most 8 blocks (the portable size), this one has {}", blocks));
      return false;
    }
  }
  std::optional<std::vector<Entry>> gridEntries = dims(*grid);
  if (!gridEntries) return false;
  const std::vector<Entry>& g = *gridEntries;
  for (size_t i = 0; i < 3; ++i) {
    if (i >= g.size()) {
      k_.skeleton.grid[i] = tir::intConst(1, tir::Type::I64);
      continue;
    }
    std::optional<ExprRef> v = toScalar(g[i].value, g[i].range, tir::Type::I64);
    if (!v) return false;
    if (!tir::isInt((*v)->type)) {
      diags_.report(kBadLaunch, g[i].range, "a grid dimension must be an integer");
      return false;
    }
    // The launcher computes the grid on the host, before any thread exists.
    if (!knownAtLaunch(*v)) {
      diags_.report(kBadLaunch, g[i].range,
                    "a grid dimension may use only scalar parameters, constants and sm_count(): the launcher "
                    "computes it before any thread runs");
      return false;
    }
    int64_t c = 0;
    if (tir::isIntConst(*v, &c) && c <= 0) {
      diags_.report(kBadLaunch, g[i].range, fmt::format("a grid dimension must be positive, found {}", c));
      return false;
    }
    // What CUDA allows (for a computed grid, the launcher checks the same).
    const int64_t most = i == 0 ? int64_t{2147483647} : 65535;
    if (tir::isIntConst(*v, &c) && c > most) {
      diags_.report(kBadLaunch, g[i].range,
                    fmt::format("grid dimension {} is {}, more than the {} CUDA allows", "xyz"[i], c, most));
      return false;
    }
    if (tir::isIntConst(*v, &c) && c % k_.skeleton.cluster[i] != 0) {
      diags_.report(kBadLaunch, g[i].range,
                    fmt::format("grid dimension {} is {}, not a multiple of the cluster's {}", "xyz"[i], c,
                                k_.skeleton.cluster[i]));
      return false;
    }
    k_.skeleton.grid[i] = tir::cast(tir::Type::I64, *v);
  }
  return true;
}

std::optional<tile::Kernel> KernelSema::run(std::string name) {
  k_.skeleton.name = std::move(name);
  k_.skeleton.loc = decl_.name.range;
  k_.skeleton.launchLoc = decl_.launchRange;
  pushScope();
  // Integer generic arguments are constants, visible from the parameters' shapes on.
  for (const auto& [n, v] : valueArgs_) {
    Binding b;
    b.value = Value::constant(ConstValue{v});
    b.generic = true;
    for (const ast::TypeParam& tp : decl_.typeParams)
      if (tp.name.name == n) b.declared = tp.name.range;
    bind(n, std::move(b));
  }
  if (!declareParams() || !declareLaunch()) return std::nullopt;
  out_.push_back(&k_.body);
  pushScope();
  collectAssignedNames(decl_.body);
  block(decl_.body);
  // Staged stores are done reading shared memory before the block ends.
  for (const auto& [issuer, at] : stagedIssuers_) {
    tile::If wait{tir::binary(tir::BinOp::Eq, threadIndex(), tir::intConst(issuer, tir::Type::I32)), {}, {}};
    wait.then.push_back(tile::Stmt{at, tile::WaitStores{0}});
    emit(at, std::move(wait));
  }
  popScope();
  if (diags_.hasErrors()) return std::nullopt;
  return std::move(k_);
}

}  // namespace sema

// ---- Module ----------------------------------------------------------------------

namespace {

// How an instantiation's name spells a choice: the type's name, or the integer in decimal.
std::string choiceName(const ast::GenericChoice& c) {
  return c.value ? std::to_string(*c.value) : c.spelling.name;
}

}  // namespace

std::vector<std::string> instantiationNames(const ast::Module& module) {
  std::vector<std::string> names;
  for (const ast::Decl& d : module.decls) {
    const auto* k = std::get_if<ast::KernelDecl>(&d);
    if (!k || k->typeParams.empty()) continue;
    // In the order analyze() instantiates them: the first parameter's choices vary fastest.
    std::vector<std::string> types{""};
    for (const ast::TypeParam& tp : k->typeParams) {
      std::vector<std::string> next;
      for (const ast::GenericChoice& choice : tp.choices)
        for (const std::string& prefix : types)
          if (static_cast<int64_t>(next.size()) <= kMaxInstances)
            next.push_back(prefix.empty() ? choiceName(choice) : prefix + "," + choiceName(choice));
      types = std::move(next);
    }
    for (const std::string& t : types) names.push_back(k->name.name + ":" + t);
  }
  return names;
}

std::optional<tile::Module> analyze(const ast::Module& module, DiagnosticEngine& diags, const SemaOptions& options) {
  sema::ModuleEnv env;
  if (!module.imports.empty()) throw std::logic_error("sema: imports must be resolved first (frontend/Imports.h)");
  tile::Module out;
  out.sourceName = module.file == kNoFile ? "" : diags.sources().file(module.file).name;
  ConstEvaluator eval(
      diags,
      [&](std::string_view n) -> const ConstValue* {
        auto it = env.consts.find(n);
        return it == env.consts.end() ? nullptr : &it->second;
      },
      [&](std::string_view n) { return env.poisoned.count(n) > 0; });
  auto declare = [&](const std::string& n, SourceRange at) {
    auto [it, fresh] = env.declaredAt.emplace(n, at);
    if (!fresh)
      diags.report(sema::kDuplicateName, at, fmt::format("'{}' is declared twice", n)).note(it->second, "the first declaration is here");
    return fresh;
  };
  std::vector<const ast::KernelDecl*> kernels;
  for (const ast::Decl& d : module.decls) {
    if (const auto* c = std::get_if<ast::ConstDecl>(&d)) {
      if (!declare(c->name, c->nameRange)) continue;
      if (std::optional<ConstValue> v = eval.eval(*c->value))
        env.consts[c->name] = std::move(*v);
      else
        env.poisoned.insert(c->name);
    } else if (const auto* l = std::get_if<ast::LayoutDecl>(&d)) {
      if (!declare(l->name, l->nameRange)) continue;
      std::optional<ConstValue> v = eval.eval(*l->value);
      // A layout declaration must be a complete layout.
      if (!v || !eval.toLayout(*v, l->value->range)) {
        env.poisoned.insert(l->name);
        continue;
      }
      env.consts[l->name] = std::move(*v);
    } else {
      const auto& k = std::get<ast::KernelDecl>(d);
      if (declare(k.name.name, k.name.range)) kernels.push_back(&k);
    }
  }
  if (diags.hasErrors()) return std::nullopt;

  std::set<std::string> matched;
  // The name of every kernel and instantiation, which its launcher and `tyloc run` go by.
  std::map<std::string, const ast::KernelDecl*> kernelNames;
  for (const ast::KernelDecl* k : kernels)
    if (k->typeParams.empty()) kernelNames.emplace(k->name.name, k);
  for (const ast::KernelDecl* k : kernels) {
    // One instantiation per combination of generic arguments, with its arguments spelled as
    // --instantiate names them ("f16,128").
    std::vector<std::pair<sema::GenericArgs, std::string>> instances{{}};
    bool ok = true;
    int64_t count = 1;
    for (const ast::TypeParam& tp : k->typeParams)
      count = std::min<int64_t>(count * static_cast<int64_t>(tp.choices.size()), kMaxInstances + 1);
    if (count > kMaxInstances) {
      diags.report(kTooLarge, k->name.range,
                   fmt::format("kernel '{}' has more than {} instantiations", k->name.name, kMaxInstances));
      continue;
    }
    // A generic parameter's name is unique among the kernel's generic and value parameters.
    std::map<std::string, SourceRange> typeNames;
    for (const ast::TypeParam& tp : k->typeParams) {
      if (auto [it, fresh] = typeNames.emplace(tp.name.name, tp.name.range); !fresh) {
        diags.report(sema::kDuplicateName, tp.name.range, fmt::format("generic parameter '{}' is declared twice", tp.name.name))
            .note(it->second, "the first declaration is here");
        ok = false;
      }
    }
    for (const ast::Param& p : k->params) {
      if (auto it = typeNames.find(p.name.name); it != typeNames.end()) {
        diags.report(sema::kDuplicateName, p.name.range,
                     fmt::format("parameter '{}' has the name of a generic parameter", p.name.name))
            .note(it->second, "the generic parameter is declared here");
        ok = false;
      }
    }
    // The choices of one parameter are all element types or all integers, each listed once.
    for (const ast::TypeParam& tp : k->typeParams) {
      std::vector<std::pair<sema::GenericArgs, std::string>> next;
      std::map<std::string, SourceRange> seenChoice;
      for (const ast::GenericChoice& choice : tp.choices) {
        std::optional<tile::DType> t = tile::dtypeFromName(choice.spelling.name);
        if (!choice.value && (!t || *t == tile::DType::Bool)) {
          diags.report(kBadTypeParam, choice.spelling.range,
                       fmt::format("unknown element type '{}'", choice.spelling.name));
          ok = false;
          continue;
        }
        if (choice.value.has_value() != tp.choices.front().value.has_value()) {
          diags.report(kBadTypeParam, choice.spelling.range,
                       fmt::format("the choices for '{}' mix element types and integers", tp.name.name))
              .note(tp.choices.front().spelling.range, "the first choice is here");
          ok = false;
          continue;
        }
        if (auto [it, fresh] = seenChoice.emplace(choiceName(choice), choice.spelling.range); !fresh) {
          diags.report(sema::kDuplicateName, choice.spelling.range,
                       fmt::format("'{}' is listed twice for '{}'", choice.spelling.name, tp.name.name))
              .note(it->second, "the first is here");
          ok = false;
          continue;
        }
        for (const auto& [args, spelled] : instances) {
          auto extended = args;
          if (choice.value)
            extended.values[tp.name.name] = *choice.value;
          else
            extended.types[tp.name.name] = *t;
          next.emplace_back(std::move(extended), spelled.empty() ? choiceName(choice)
                                                                 : spelled + "," + choiceName(choice));
        }
      }
      instances = std::move(next);
    }
    if (!ok) continue;
    // Only the requested instantiations, when any of this kernel are requested.
    std::vector<std::string> wanted;
    for (const std::string& spec : options.instantiate)
      if (!k->typeParams.empty() && spec.rfind(k->name.name + ":", 0) == 0)
        wanted.push_back(spec.substr(k->name.name.size() + 1));
    for (const auto& [inst, types] : instances) {
      std::string name = k->name.name;
      if (!types.empty()) name += "_" + types;
      std::replace(name.begin(), name.end(), ',', '_');
      if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), types) == wanted.end()) continue;
      if (!k->typeParams.empty()) matched.insert(k->name.name + ":" + types);
      if (auto [it, fresh] = kernelNames.emplace(name, k); !fresh && it->second != k) {
        const ast::KernelDecl* other = it->second;
        diags.report(sema::kDuplicateName, k->name.range,
                     fmt::format("'{}' names two kernels: the instantiation of '{}' for {}, and {}", name,
                                 k->name.name, types,
                                 other->typeParams.empty() ? fmt::format("the kernel '{}'", other->name.name)
                                                           : fmt::format("an instantiation of '{}'", other->name.name)))
            .note(other->name.range, fmt::format("'{}' is declared here", other->name.name));
        continue;
      }
      if (!options.only.empty() && name != options.only) continue;
      // "T = f16, D = 128", for the diagnostics found in it.
      std::string args;
      for (const ast::TypeParam& tp : k->typeParams) {
        auto t = inst.types.find(tp.name.name);
        args += fmt::format("{}{} = {}", args.empty() ? "" : ", ", tp.name.name,
                            t != inst.types.end() ? std::string(tile::dtypeName(t->second))
                                                  : std::to_string(inst.values.at(tp.name.name)));
      }
      if (!args.empty()) diags.setContext(k->name.range, fmt::format("in the instantiation '{}' ({})", name, args));
      sema::KernelSema ks(diags, env, *k, inst);
      std::optional<tile::Kernel> kernel = ks.run(name);
      diags.clearContext();
      if (kernel) {
        kernel->instantiation = std::move(args);
        out.kernels.push_back(std::move(*kernel));
      }
    }
  }
  for (const std::string& spec : options.instantiate)
    if (!matched.count(spec))
      diags.report(kBadTypeParam, {}, fmt::format("--instantiate {} names no generic kernel instantiation", spec));
  if (diags.hasErrors()) return std::nullopt;
  return out;
}

}  // namespace tyl
