// Semantic analysis of statements in kernel bodies.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "base/CommonDiags.h"
#include "frontend/SemaImpl.h"

namespace tyl {

TYL_DIAG(kBadAssign, Error, "bad-assignment", "an assignment to something that cannot be assigned");
TYL_DIAG(kUnusedValue, Warning, "unused-value", "an expression statement whose value is discarded");

namespace sema {

using tir::ExprRef;
using tir::Type;

void KernelSema::block(const ast::Block& b) {
  for (const ast::StmtPtr& s : b.stmts) {
    if (tooLarge_) return;
    stmt(*s);
  }
}

void KernelSema::stmt(const ast::Stmt& s) {
  // Layout arithmetic on the statement's shapes and layouts may leave 64 bits; the
  // statement is then reported, not the compiler.
  try {
    stmtNode(s);
  } catch (const layout::OverflowError&) {
    diags_.report(kIntegerOverflow, s.range,
                  "the sizes or offsets this statement computes overflow 64-bit integers");
  }
}

void KernelSema::stmtNode(const ast::Stmt& s) {
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ast::Let>) {
          let(s, n);
        } else if constexpr (std::is_same_v<T, ast::Assign>) {
          assign(s, n);
        } else if constexpr (std::is_same_v<T, ast::For>) {
          forLoop(s, n);
        } else if constexpr (std::is_same_v<T, ast::If>) {
          ifStmt(s, n);
        } else if constexpr (std::is_same_v<T, ast::ExprStmt>) {
          exprStmt(s, n);
        } else {
          pushScope();
          block(n);
          popScope();
        }
      },
      s.node);
}

void KernelSema::let(const ast::Stmt& s, const ast::Let& l) {
  auto poison = [&]() {
    Binding b;
    b.declared = l.nameRange;
    b.poisoned = true;
    bind(l.name, std::move(b));
  };
  std::optional<Value> v = expr(*l.value);
  if (!v) return poison();
  if (v->kind == Value::Kind::Void) {
    diags_.report(kTypeMismatch, l.value->range, "this expression has no value to bind");
    return poison();
  }
  Binding b;
  b.declared = l.nameRange;
  if (v->kind == Value::Kind::Scalar) {
    // A run-time scalar gets its own register, so it can be assigned later.
    uint32_t var = newVar(l.name, v->scalar->type);
    emit(s.range, tile::ScalarSet{tir::Reg::var(var), v->scalar});
    if (!assignedNames_.count(l.name)) letValues_[var] = v->scalar;
    b.value = Value::runtime(tir::varRef(k_.skeleton, var));
    b.mutableScalar = true;
    b.reg = tir::Reg::var(var);
  } else if (v->kind == Value::Kind::MmaResult) {
    // `let d = mma(acc, a, b)`: a new accumulator.
    const tile::Tensor& c = k_.tensors[v->mmaArgs[0]];
    std::optional<uint32_t> d =
        allocFragment("acc", tile::DType::F32, c.staticShape, *c.layout, s.range, "mma's accumulator");
    if (!d) return poison();
    nameTensor(*d, l.name);
    emitMma(s.range, *d, *v);
    b.value = Value::ofView(wholeView(*d, s.range));
  } else if (v->kind == Value::Kind::Frag) {
    // Fragment arithmetic bound to a name is computed into a new fragment of its type, in the
    // layout of its fragments (`let p = f16(acc)`).
    const tile::FragExpr* shaped = tile::layoutLeaf(v->frag);
    if (!shaped || shaped->part || v->frag->dtype == tile::DType::Bool) {
      diags_.report(kBadAssign, s.range,
                    !shaped || shaped->part
                        ? "this arithmetic has no whole register fragment to give its layout: allocate the result "
                          "and assign it (let y = alloc_local(...); y = ...)"
                        : "a comparison of fragments is only the condition of where(...)");
      return poison();
    }
    // Copies: allocating may move the tensors.
    const tile::Tensor like = k_.tensors[shaped->tensor];
    const layout::Layout lay =
        like.layout ? *like.layout : layout::Layout(layout::TileLayout::rowMajor(like.staticShape));
    std::optional<uint32_t> d = allocFragment("val", v->frag->dtype, like.staticShape, lay, s.range,
                                              fmt::format("a fragment in the layout of {}", tensorRef(like)));
    if (!d) return poison();
    nameTensor(*d, l.name);
    emit(s.range, tile::FragAssign{*d, v->frag});
    b.value = Value::ofView(wholeView(*d, s.range));
  } else {
    if (v->kind == Value::Kind::View) nameTensor(v->view.tensor, l.name);
    b.value = std::move(*v);
  }
  bind(l.name, std::move(b));
}

// A tensor allocated by a `let` takes the binding's name (made unique), so diagnostics
// and generated code speak of `acc`, not of an internal name.
void KernelSema::nameTensor(uint32_t id, const std::string& name) {
  tile::Tensor& t = k_.tensors[id];
  if (!t.autoNamed) return;
  t.autoNamed = false;
  t.madeBy.clear();
  int n = nameCounts_[name]++;
  std::string unique = n == 0 ? name : fmt::format("{}_{}", name, n);
  // Parameters keep their names in the generated code; stay clear of them.
  for (const tir::Param& p : k_.skeleton.params)
    if (p.name == unique) unique += "_";
  t.name = unique;
  if (t.space == tile::MemSpace::Local)
    k_.skeleton.arrays[t.array].name = unique;
  else if (t.buffer != ~0u)
    k_.skeleton.buffers[t.buffer].name = unique;
}

static std::optional<tir::BinOp> compoundOp(ast::AssignOp op) {
  switch (op) {
    case ast::AssignOp::Add: return tir::BinOp::Add;
    case ast::AssignOp::Sub: return tir::BinOp::Sub;
    case ast::AssignOp::Mul: return tir::BinOp::Mul;
    case ast::AssignOp::Set: return std::nullopt;
  }
  return std::nullopt;
}

void KernelSema::assign(const ast::Stmt& s, const ast::Assign& a) {
  std::optional<tir::BinOp> op = compoundOp(a.op);
  // `x = load_a(...)` or `x = load_b(...)` may load into x directly (loadOperand decides).
  std::optional<uint32_t> into;
  if (const auto* nm = a.target->as<ast::Name>(); nm && !op) {
    const auto* c = a.value->as<ast::Call>();
    const auto* callee = c ? c->callee->as<ast::Name>() : nullptr;
    const Binding* b = lookup(nm->name);
    if (callee && (callee->name == "load_a" || callee->name == "load_b") && b && !b->poisoned &&
        isWholeLocal(k_, b->value))
      into = b->value.view.tensor;
  }
  loadInto_ = into;
  // `x += v` is `x = x + v`.
  std::optional<Value> value = expr(*a.value);
  loadInto_.reset();
  if (!value) return;
  if (into && value->kind == Value::Kind::View && value->view.tensor == *into) return;  // loaded in place
  if (const auto* ix = a.target->as<ast::Index>()) {
    std::optional<ExprRef> v = toScalar(*value, a.value->range, std::nullopt);
    if (!v) return;
    if (op) {
      std::optional<Value> old = expr(*a.target);
      if (!old) return;
      std::optional<ExprRef> o = toScalar(*old, a.target->range, std::nullopt);
      if (!o) return;
      std::optional<ExprRef> r = arith(*op, *o, *v, s.range);
      if (!r) return;
      v = r;
    }
    storeElement(s, *ix, *v, a.value->range);
    return;
  }
  const auto* nm = a.target->as<ast::Name>();
  Binding* b = nm ? lookup(nm->name) : nullptr;
  if (b && b->poisoned) return;
  if (!b) {
    if (nm && !expr(*a.target)) return;
    diags_.report(kBadAssign, a.target->range, "only variables, tensor elements and fragments can be assigned");
    return;
  }
  if (b->mutableScalar) {
    std::optional<ExprRef> v = toScalar(*value, a.value->range, std::nullopt);
    if (!v) return;
    if (op) {
      std::optional<ExprRef> r = arith(*op, tir::varRef(k_.skeleton, b->reg.id), *v, s.range);
      if (!r) return;
      v = r;
    }
    Type t = k_.skeleton.vars[b->reg.id].type;
    if (tir::isInt(t) && tir::isFloat((*v)->type)) {
      diags_.report(kTypeMismatch, a.value->range,
                    fmt::format("'{}' is {}, but the value is {}", nm->name, tir::typeName(t), tir::typeName((*v)->type)));
      return;
    }
    emit(s.range, tile::ScalarSet{b->reg, tir::cast(t, *v)});
    return;
  }
  if (b->value.kind == Value::Kind::View && k_.tensors[b->value.view.tensor].space == tile::MemSpace::Local &&
      value->kind == Value::Kind::MmaResult) {
    if (op) {
      diags_.report(kBadAssign, s.range, "an MMA result is assigned with '=', the accumulation is part of the MMA");
      return;
    }
    emitMma(s.range, b->value.view.tensor, *value);
    return;
  }
  if (b->value.kind == Value::Kind::View && k_.tensors[b->value.view.tensor].space == tile::MemSpace::Local) {
    uint32_t dst = b->value.view.tensor;
    Value rhs = *value;
    if (op) {
      Value lhs = b->value;
      std::optional<tile::FragRef> fl = toFrag(lhs, a.target->range);
      std::optional<tile::FragRef> fr = toFrag(rhs, a.value->range);
      if (!fl || !fr || !alignFragments(s.range, *fl, *fr)) return;
      rhs = fragBinary(*op, *fl, *fr);
    }
    std::optional<tile::FragRef> f = toFrag(rhs, a.value->range);
    if (!f || !wholeInRegisters(*f, k_.tensors[dst], a.value->range)) return;
    // As for an element: a float does not become an integer without a conversion.
    if (!noFloatIntoInt(k_.tensors[dst], (*f)->dtype, a.value->range, "value")) return;
    // The value may broadcast to the destination's shape (`o = row_sum`).
    std::optional<tile::FragRef> d = toFrag(b->value, a.target->range);
    if (!d || !alignFragments(s.range, *d, *f)) return;
    if (!tile::layoutLeaf(*d)) {
      diags_.report(kBadAssign, s.range,
                    fmt::format("'{}' has shape ({}) and the value is larger: a register fragment receives values "
                                "of its shape, or broadcast from extents of 1 (reduce the value first)",
                                k_.tensors[dst].name, fmt::join(k_.tensors[dst].staticShape, ", ")));
      return;
    }
    emit(s.range, tile::FragAssign{dst, *f});
    return;
  }
  diags_.report(kBadAssign, a.target->range,
                fmt::format("'{}' is {} and cannot be assigned{}", nm->name, describe(b->value),
                            b->generic ? " (a generic parameter is a constant of each instantiation)"
                            : b->value.kind == Value::Kind::Const ? " (a 'let' of a compile-time value is constant)"
                                                                  : ""))
      .note(b->declared, "it is declared here");
}

bool KernelSema::storeElement(const ast::Stmt& s, const ast::Index& target, ExprRef value, SourceRange valueRange) {
  std::optional<Value> base = expr(*target.base);
  if (!base) return false;
  if (base->kind != Value::Kind::View) {
    diags_.report(kBadAssign, target.base->range, fmt::format("{} cannot be assigned through an index", describe(*base)));
    return false;
  }
  const tile::View& view = base->view;
  const tile::Tensor& t = k_.tensors[view.tensor];
  if (target.indices.size() != view.rank()) {
    diags_.report(kBadAssign, s.range,
                  fmt::format("'{}' has {} dimensions; an element assignment needs {} indices", t.name, view.rank(),
                              view.rank()));
    return false;
  }
  Type elem = tile::toTir(t.dtype);
  if (tir::isInt(elem) && tir::isFloat(value->type)) {
    diags_.report(kTypeMismatch, valueRange,
                  fmt::format("'{}' holds {} but the value is {}", t.name, tile::dtypeName(t.dtype),
                              tir::typeName(value->type)));
    return false;
  }
  std::optional<std::vector<ExprRef>> idx = indices(target.indices);
  if (!idx || !indicesInside(view, *idx, target.indices)) return false;
  if (t.space == tile::MemSpace::Local) {
    std::optional<tir::Reg> reg = registerElement(s.range, view, *idx, target.indices);
    if (!reg) return false;
    emit(s.range, tile::ScalarSet{*reg, tir::cast(elem, value)});
    return true;
  }
  emit(s.range, tile::ElemStore{view, *idx, tir::cast(elem, value)});
  return true;
}

// The bounds of `for f.var in unroll(...)`, c being the call; its arity and keyword
// arguments are checked by the caller.
std::optional<KernelSema::UnrollRange> KernelSema::unrollRange(const ast::For& f, const ast::Call& c) {
  int64_t bounds[3] = {0, 0, 1};
  size_t n = c.args.size();
  for (size_t i = 0; i < n; ++i) {
    std::optional<int64_t> v = constInt(*c.args[i].value, "an unroll bound");
    if (!v) return std::nullopt;
    bounds[n == 1 ? 1 : i] = *v;
  }
  if (bounds[2] == 0) {
    diags_.report(kBadLoop, c.args[2].value->range, "the step of a loop cannot be zero");
    return std::nullopt;
  }
  int64_t count = bounds[2] > 0 ? (bounds[1] - bounds[0] + bounds[2] - 1) / bounds[2]
                                : (bounds[0] - bounds[1] - bounds[2] - 1) / -bounds[2];
  if (count > kMaxUnrollCount) {
    diags_.report(kBadLoop, f.iterable->range,
                  fmt::format("unroll of {} iterations; the limit is {} (use range for a run-time loop)", count,
                              kMaxUnrollCount));
    return std::nullopt;
  }
  return UnrollRange{bounds[0], bounds[2], std::max<int64_t>(count, 0)};
}

std::optional<KernelSema::RangeBounds> KernelSema::rangeBounds(const ast::Call& range) {
  std::vector<ExprRef> bounds;
  for (const ast::Arg& a : range.args) {
    std::optional<ExprRef> v = scalar(*a.value);
    if (!v) return std::nullopt;
    if (!tir::isInt((*v)->type)) {
      diags_.report(kBadLoop, a.value->range, "loop bounds must be integers");
      return std::nullopt;
    }
    bounds.push_back(*v);
  }
  if (bounds.size() == 1) bounds.insert(bounds.begin(), tir::intConst(0));
  if (bounds.size() == 2) bounds.push_back(tir::intConst(1));
  RangeBounds r;
  if (!tir::isIntConst(bounds[2], &r.step) || r.step <= 0) {
    diags_.report(kBadLoop, range.args.back().value->range, "the step of a range loop must be a positive constant");
    return std::nullopt;
  }
  for (const ExprRef& b : bounds)
    if (b->type == Type::I64) r.type = Type::I64;
  r.begin = tir::cast(r.type, bounds[0]);
  r.end = tir::cast(r.type, bounds[1]);
  return r;
}

void KernelSema::forLoop(const ast::Stmt& s, const ast::For& f) {
  const auto* c = f.iterable->as<ast::Call>();
  const auto* callee = c ? c->callee->as<ast::Name>() : nullptr;
  const bool tiles = callee && callee->name == "tiles";
  if (!callee || (callee->name != "range" && callee->name != "unroll" && !tiles)) {
    diags_.report(kBadLoop, f.iterable->range, "a for loop iterates over range(...), unroll(...) or tiles(...)");
    return;
  }
  if (!tiles && f.var.empty()) {
    diags_.report(kBadLoop, f.varRange,
                  fmt::format("{} gives one value per iteration: a pair of names is for tiles(...)", callee->name));
    return;
  }
  bool unrolled = callee->name == "unroll";
  // (tiles' arguments are checked by tileOrder.)
  if (!tiles && (c->args.empty() || c->args.size() > 3)) {
    diags_.report(kBadLoop, f.iterable->range,
                  fmt::format("{} takes (end), (begin, end) or (begin, end, step)", callee->name));
    return;
  }
  for (const ast::Arg& a : c->args) {
    if (!a.name.empty() && !tiles) {
      diags_.report(kBadLoop, a.nameRange, fmt::format("{} takes no keyword arguments", callee->name));
      return;
    }
  }
  if (f.pipeline) {
    if (unrolled) {
      diags_.report(kBadLoop, f.iterable->range, "a pipeline iterates over range(...), not unroll(...)");
      return;
    }
    // The body's lets, which the copies issued ahead cannot see: an unknown name says so.
    std::map<std::string, SourceRange> outer = pipelineLets_;
    for (const ast::StmtPtr& st : f.body.stmts)
      if (const auto* let = std::get_if<ast::Let>(&st->node)) pipelineLets_.insert_or_assign(let->name, let->nameRange);
    pipelineLoop(s, f, *c);
    pipelineLets_ = std::move(outer);
    return;
  }
  if (tiles) return tilesLoop(s, f, *c);
  if (unrolled) {
    std::optional<UnrollRange> r = unrollRange(f, *c);
    if (!r) return;
    for (int64_t i = 0; i < r->count && countUnrolledIteration(f.iterable->range); ++i) {
      pushScope();
      Binding b;
      b.value = Value::constant(ConstValue{r->begin + i * r->step});
      b.declared = f.varRange;
      bind(f.var, std::move(b));
      block(f.body);
      popScope();
    }
    return;
  }
  std::optional<RangeBounds> r = rangeBounds(*c);
  if (!r) return;
  uint32_t var = newVar(f.var, r->type);
  tile::For loop{var, r->begin, r->end, tir::intConst(r->step, r->type), {}};
  out_.push_back(&loop.body);
  enterLoop(var, f.var, f.varRange, loop.begin, loop.end, r->step);
  pushScope();
  Binding b;
  b.value = Value::runtime(tir::varRef(k_.skeleton, var));
  b.declared = f.varRange;
  bind(f.var, std::move(b));
  block(f.body);
  popScope();
  leaveLoop();
  out_.pop_back();
  emit(s.range, std::move(loop));
}

// `pipeline(stages = S) for k in range(a, b) { ... }`: the body's copy_async statements
// (the producer) run S - 1 iterations ahead of the rest (the consumer), each iteration
// writing stage (iteration % S) of the shared buffers. The expansion is what one would
// write by hand with the primitives, except that a producer past the end of the loop is
// disabled (`if`: its copies read nothing and zero-fill) instead of branched around. With
// two or more stages one barrier per iteration does both jobs:
//
//   for s in 0 .. S-2:  producer(k = a + s, stage = s) if a + s < b;  commit_copies()
//   for k in range(a, b):
//     wait_copies(S - 2)   // this iteration's copies have landed ...
//     barrier()            // ... for every thread, and every warp is done with k - 1
//     producer(k = k + S - 1, stage = (k + S - 1) % S) if k + S - 1 < b  // refills k - 1's
//     commit_copies()
//     consumer(k, stage = k % S)
//   wait_copies(0); barrier()
//
// With one stage the copies of the next iteration must wait for the consumer:
//
//   for k in range(a, b):
//     producer(k, stage = 0); commit_copies(); wait_copies(0); barrier()
//     consumer(k, stage = 0)
//     barrier()
//
// `prefetch_loads = true` (two or more stages) also moves the consumer's fragment loads
// ahead: see prefetchedLoop.
void KernelSema::pipelineLoop(const ast::Stmt& s, const ast::For& f, const ast::Call& range) {
  int64_t stages = 0;
  bool prefetch = false;
  const ast::Arg* prefetchArg = nullptr;
  const ast::Arg* producerArg = nullptr;
  const ast::Arg* registersArg = nullptr;
  for (const ast::Arg& a : f.pipelineArgs) {
    if ((a.name == "producer" && !producerArg) || (a.name == "registers" && !registersArg)) {
      (a.name == "producer" ? producerArg : registersArg) = &a;
      continue;
    }
    if (a.name == "prefetch_loads" && !prefetchArg) {
      std::optional<int64_t> v = constInt(*a.value, "prefetch_loads");
      if (!v) return;
      prefetch = *v != 0;
      prefetchArg = &a;
      continue;
    }
    if (a.name != "stages" || stages) {
      diags_.report(kBadLoop, a.name.empty() ? a.value->range : a.nameRange,
                    "pipeline takes 'stages = N' and optionally 'prefetch_loads = true', or 'producer = "
                    "warpgroup(P)' and 'registers = (producer's, consumers')' for a warp-specialized one");
      return;
    }
    std::optional<int64_t> n = constInt(*a.value, "the number of pipeline stages");
    if (!n) return;
    if (*n < 1 || *n > 8) {
      diags_.report(kBadLoop, a.value->range, fmt::format("a pipeline has 1 to 8 stages, found {}", *n));
      return;
    }
    stages = *n;
  }
  if (!stages) {
    diags_.report(kBadLoop, f.pipelineRange, "pipeline needs 'stages = N'");
    return;
  }
  if (const auto* n = range.callee->as<ast::Name>(); n && n->name == "tiles" && !producerArg) {
    diags_.report(kBadLoop, f.pipelineRange,
                  "a pipeline over tiles(...) is warp-specialized: give 'producer = warpgroup(P)', and step through "
                  "each tile's stages in a range loop of its body");
    return;
  }
  if (producerArg || registersArg) {
    if (!producerArg || prefetchArg) {
      diags_.report(kBadLoop, (producerArg ? prefetchArg : registersArg)->nameRange,
                    producerArg ? "a warp-specialized pipeline (producer = ...) does not prefetch loads"
                                : "'registers = ...' belongs to a warp-specialized pipeline: give 'producer = "
                                  "warpgroup(P)' too");
      return;
    }
    warpSpecializedPipeline(s, f, range, stages, *producerArg, registersArg);
    return;
  }
  if (prefetch && stages < 2) {
    diags_.report(kBadLoop, prefetchArg->value->range,
                  "prefetching loads needs two or more stages: with one, the next step's copies overwrite the "
                  "buffer the loads read");
    return;
  }
  std::optional<PipelineParts> parts = pipelineParts(f, range, stages);
  if (!parts) return;
  const PipelineParts& p = *parts;
  if (prefetch) {
    prefetchedLoop(s, f, p);
    return;
  }
  // Prologue: fill stages 0 .. S-2 (nothing with one stage).
  pipelinePrologue(f, p, stages - 1);
  uint32_t var = newVar(f.var, p.type);
  ExprRef k = tir::varRef(k_.skeleton, var);
  tile::For loop{var, p.begin, p.end, tir::intConst(p.step, p.type), {}};
  out_.push_back(&loop.body);
  enterLoop(var, f.var, f.varRange, p.begin, p.end, p.step);
  if (stages == 1) {
    runPipelinePart(f, p.producer, Value::runtime(k), Value::constant(ConstValue{int64_t{0}}));
    emit(f.pipelineRange, tile::CommitCopies{});
    emit(f.pipelineRange, tile::WaitCopies{0});
    emit(f.pipelineRange, tile::Barrier{false, 0, 0, "the pipeline"});
    runPipelinePart(f, p.consumer, Value::runtime(k), Value::constant(ConstValue{int64_t{0}}));
    emit(f.pipelineRange, tile::Barrier{false, 0, 0, "the pipeline"});
  } else {
    emit(f.pipelineRange, tile::WaitCopies{static_cast<int>(stages - 2)});
    emit(f.pipelineRange, tile::Barrier{false, 0, 0, "the pipeline"});
    ExprRef kp = tir::add(k, tir::intConst((stages - 1) * p.step, p.type));
    guardedCopies(tir::lt(kp, p.end),
                  [&] { runPipelinePart(f, p.producer, Value::runtime(kp), Value::runtime(p.stageOf(kp))); });
    emit(f.pipelineRange, tile::CommitCopies{});
    runPipelinePart(f, p.consumer, Value::runtime(k), Value::runtime(p.stageOf(k)));
  }
  leaveLoop();
  out_.pop_back();
  emit(s.range, std::move(loop));
  if (stages > 1) {
    // Nothing stays in flight, and the buffers are free again, after the loop.
    emit(f.pipelineRange, tile::WaitCopies{0});
    emit(f.pipelineRange, tile::Barrier{false, 0, 0, "the pipeline"});
  }
}

// The body split into producer (the copy_async calls written directly in it) and consumer (the
// rest), and the loop's bounds.
std::optional<KernelSema::PipelineParts> KernelSema::pipelineParts(const ast::For& f, const ast::Call& range,
                                                                   int64_t stages) {
  PipelineParts p;
  p.stages = stages;
  for (const ast::StmtPtr& st : f.body.stmts) {
    const auto* es = std::get_if<ast::ExprStmt>(&st->node);
    const auto* call = es ? es->expr->as<ast::Call>() : nullptr;
    const auto* callee = call ? call->callee->as<ast::Name>() : nullptr;
    (callee && callee->name == "copy_async" ? p.producer : p.consumer).push_back(st.get());
  }
  if (p.producer.empty()) {
    diags_.report(kBadLoop, f.body.range, "a pipeline prefetches with copy_async; this body has none");
    return std::nullopt;
  }
  std::optional<RangeBounds> r = rangeBounds(range);
  if (!r) return std::nullopt;
  p.step = r->step;
  p.type = r->type;
  p.begin = r->begin;
  p.end = r->end;
  return p;
}

ExprRef KernelSema::PipelineParts::iteration(int64_t i) const {
  return tir::add(begin, tir::intConst(i * step, type));
}

// The stage of iteration k: ((k - begin) / step) % stages.
ExprRef KernelSema::PipelineParts::stageOf(ExprRef k) const {
  ExprRef i = tir::binary(tir::BinOp::Div, tir::sub(k, begin), tir::intConst(step, type));
  return tir::binary(tir::BinOp::Rem, i, tir::intConst(stages, type));
}

void KernelSema::runPipelinePart(const ast::For& f, const std::vector<const ast::Stmt*>& list, Value k, Value stage,
                                 const std::function<void()>& prelude) {
  pushScope();
  Binding kb, sb;
  kb.value = std::move(k);
  kb.declared = f.varRange;
  sb.value = std::move(stage);
  sb.declared = f.pipelineRange;
  bind(f.var, std::move(kb));
  bind("stage", std::move(sb));
  if (prelude) prelude();
  for (const ast::Stmt* st : list) stmt(*st);
  popScope();
}

// The producer of iterations 0 .. count-1 into stages 0 .. count-1, one copy group each.
void KernelSema::pipelinePrologue(const ast::For& f, const PipelineParts& p, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    ExprRef kp = p.iteration(i);
    guardedCopies(tir::lt(kp, p.end),
                  [&] { runPipelinePart(f, p.producer, Value::runtime(kp), Value::constant(ConstValue{i})); });
    emit(f.pipelineRange, tile::CommitCopies{});
  }
}

// The producer of an iteration past the end is disabled rather than skipped: its copies
// read nothing and zero-fill a stage no one reads (in the loop, a stage every warp finished
// before the barrier), and the loop body stays straight-line code.
void KernelSema::guardedCopies(ExprRef cond, const std::function<void()>& body) {
  copyEnable_ = std::move(cond);
  body();
  copyEnable_ = nullptr;
}

// `pipeline(stages = S, prefetch_loads = true)`: the consumer is one `for kk in unroll(...)`
// over sub-steps whose body starts with the sub-step's fragment loads, `let x = load_a(...)`
// or `load_b(...)`, followed by the computation. The loads of sub-step kk + 1 run while
// sub-step kk computes, and those of the next iteration's first sub-step right after that
// iteration's barrier, so the last sub-step, whose operands are already in registers,
// computes while the warp passes the barrier and issues its copies. Two sets of fragments
// alternate between sub-steps. Every read of stage k % S precedes iteration k's barrier, so
// the producer after it refills that very stage, S iterations ahead:
//
//   for s in 0 .. S-1:  producer(k = a + s, stage = s) if a + s < b;  commit_copies()
//   wait_copies(S - 1); barrier()
//   set 0 = loads(k = a, stage = 0, kk = first)
//   for k in range(a, b):
//     for each sub-step i (kk = its value):
//       if i is not the last:  set (i + 1) % 2 = loads(k, stage = k % S, kk of sub-step i + 1)
//       else:  wait_copies(S - 2); barrier()           // iteration k + 1's copies have landed
//              set n % 2 = loads(k + 1, stage = (k + 1) % S, kk = first)   (n sub-steps)
//              producer(k + S, stage = k % S) if k + S < b; commit_copies()
//       compute(k, stage = k % S, kk), the loads' names bound to set i % 2
//     (n odd: set 0 = set 1)
//   wait_copies(0); barrier()
//
// The loads past the last iteration read a zero-filled stage and are not used.
void KernelSema::prefetchedLoop(const ast::Stmt& s, const ast::For& f, const PipelineParts& p) {
  const ast::For* sub = nullptr;
  if (p.consumer.size() == 1) sub = std::get_if<ast::For>(&p.consumer[0]->node);
  const auto* subRange = sub ? sub->iterable->as<ast::Call>() : nullptr;
  const auto* subCallee = subRange ? subRange->callee->as<ast::Name>() : nullptr;
  if (!sub || sub->pipeline || !subCallee || subCallee->name != "unroll") {
    diags_.report(kBadLoop, p.consumer.empty() ? f.body.range : p.consumer[0]->range,
                  "with prefetch_loads, the body holds the copies and then one 'for kk in unroll(...)' over the "
                  "sub-steps, whose loads it moves ahead");
    return;
  }
  // The sub-step loop's leading `let x = load_a(...)` / `load_b(...)`: the loads moved ahead.
  std::vector<const ast::Stmt*> loads, compute;
  for (const ast::StmtPtr& st : sub->body.stmts) {
    const auto* l = std::get_if<ast::Let>(&st->node);
    const auto* call = l ? l->value->as<ast::Call>() : nullptr;
    const auto* callee = call ? call->callee->as<ast::Name>() : nullptr;
    bool isLoad = callee && (callee->name == "load_a" || callee->name == "load_b");
    (isLoad && compute.empty() ? loads : compute).push_back(st.get());
  }
  if (loads.empty()) {
    diags_.report(kBadLoop, sub->body.range,
                  "with prefetch_loads, the sub-step loop starts with its loads: let a = load_a(...); ...");
    return;
  }
  if (subRange->args.empty() || subRange->args.size() > 3) {
    diags_.report(kBadLoop, sub->iterable->range, "unroll takes (end), (begin, end) or (begin, end, step)");
    return;
  }
  for (const ast::Arg& a : subRange->args) {
    if (!a.name.empty()) {
      diags_.report(kBadLoop, a.nameRange, "unroll takes no keyword arguments");
      return;
    }
  }
  std::optional<UnrollRange> r = unrollRange(*sub, *subRange);
  if (!r) return;
  if (r->step < 0) {
    diags_.report(kBadLoop, subRange->args.back().value->range,
                  "with prefetch_loads, the sub-step loop counts up: its step must be positive");
    return;
  }
  if (r->count == 0) {
    diags_.report(kBadLoop, sub->iterable->range, "the sub-step loop has no iterations");
    return;
  }
  std::vector<int64_t> steps;
  for (int64_t i = 0; i < r->count; ++i) steps.push_back(r->begin + i * r->step);
  const int64_t n = static_cast<int64_t>(steps.size());
  const int64_t stages = p.stages;

  // The two sets of fragments: set[j][i] holds the fragment of loads[i]. The first loads of
  // a set allocate it; later ones load into it.
  std::vector<std::optional<uint32_t>> set[2];
  set[0].resize(loads.size());
  set[1].resize(loads.size());
  bool failed = false;
  auto kkBinding = [&](int64_t kk) {
    Binding b;
    b.value = Value::constant(ConstValue{kk});
    b.declared = sub->varRange;
    bind(sub->var, std::move(b));
  };
  // The name of loads[i] for what follows it: the fragment of set j.
  auto bindLoad = [&](size_t i, int j) {
    Binding b;
    b.value = Value::ofView(wholeView(*set[j][i], loads[i]->range));
    b.declared = std::get<ast::Let>(loads[i]->node).nameRange;
    bind(std::get<ast::Let>(loads[i]->node).name, std::move(b));
  };
  auto runLoads = [&](int j, Value k, Value stage, int64_t kk) {
    runPipelinePart(f, {}, std::move(k), std::move(stage), [&] {
      kkBinding(kk);
      for (size_t i = 0; i < loads.size() && !failed; ++i) {
        const auto& l = std::get<ast::Let>(loads[i]->node);
        loadInto_ = set[j][i];
        std::optional<Value> v = expr(*l.value);
        loadInto_.reset();
        if (!v) {
          failed = true;
          return;
        }
        if (!set[j][i]) {
          set[j][i] = v->view.tensor;
          nameTensor(v->view.tensor, l.name);
        } else if (v->view.tensor != *set[j][i]) {
          diags_.report(kBadLoop, loads[i]->range,
                        "with prefetch_loads, each load must give a fragment of the same shape and layout in "
                        "every sub-step");
          failed = true;
          return;
        }
        bindLoad(i, j);  // for the loads after it in the same sub-step
      }
    });
  };
  auto runCompute = [&](int j, Value k, Value stage, int64_t kk) {
    runPipelinePart(f, compute, std::move(k), std::move(stage), [&] {
      kkBinding(kk);
      for (size_t i = 0; i < loads.size(); ++i) bindLoad(i, j);
    });
  };

  // Prologue: every stage, then the first sub-step's loads.
  pipelinePrologue(f, p, stages);
  emit(f.pipelineRange, tile::WaitCopies{static_cast<int>(stages - 1)});
  emit(f.pipelineRange, tile::Barrier{false, 0, 0, "the pipeline"});
  runLoads(0, Value::runtime(p.begin), Value::constant(ConstValue{int64_t{0}}), steps[0]);
  if (failed) return;

  uint32_t var = newVar(f.var, p.type);
  ExprRef k = tir::varRef(k_.skeleton, var);
  tile::For loop{var, p.begin, p.end, tir::intConst(p.step, p.type), {}};
  out_.push_back(&loop.body);
  enterLoop(var, f.var, f.varRange, p.begin, p.end, p.step);
  ExprRef next = tir::add(k, tir::intConst(p.step, p.type));
  for (int64_t i = 0; i < n && !failed && !tooLarge_; ++i) {
    if (i + 1 < n) {
      runLoads(static_cast<int>((i + 1) % 2), Value::runtime(k), Value::runtime(p.stageOf(k)), steps[i + 1]);
    } else {
      emit(f.pipelineRange, tile::WaitCopies{static_cast<int>(stages - 2)});
      emit(f.pipelineRange, tile::Barrier{false, 0, 0, "the pipeline"});
      runLoads(static_cast<int>(n % 2), Value::runtime(next), Value::runtime(p.stageOf(next)), steps[0]);
      ExprRef kp = tir::add(k, tir::intConst(stages * p.step, p.type));
      guardedCopies(tir::lt(kp, p.end),
                    [&] { runPipelinePart(f, p.producer, Value::runtime(kp), Value::runtime(p.stageOf(k))); });
      emit(f.pipelineRange, tile::CommitCopies{});
    }
    if (failed) break;
    runCompute(static_cast<int>(i % 2), Value::runtime(k), Value::runtime(p.stageOf(k)), steps[i]);
  }
  if (n % 2 == 1 && !failed) {
    // The next iteration's first loads went to set 1; its first sub-step reads set 0.
    for (size_t i = 0; i < loads.size(); ++i)
      if (std::optional<tile::FragRef> from = toFrag(Value::ofView(wholeView(*set[1][i], loads[i]->range)),
                                                     loads[i]->range))
        emit(loads[i]->range, tile::FragAssign{*set[0][i], *from});
  }
  leaveLoop();
  out_.pop_back();
  if (failed) return;
  emit(s.range, std::move(loop));
  // As without prefetching: nothing stays in flight, and the buffers are free again.
  emit(f.pipelineRange, tile::WaitCopies{0});
  emit(f.pipelineRange, tile::Barrier{false, 0, 0, "the pipeline"});
}

void KernelSema::ifStmt(const ast::Stmt& s, const ast::If& i) {
  std::optional<Value> cond = expr(*i.cond);
  if (!cond) return;
  if (cond->kind == Value::Kind::Const) {
    // A compile-time condition keeps only the branch taken.
    const auto* c = std::get_if<int64_t>(&cond->cv.v);
    if (!c) {
      diags_.report(kTypeMismatch, i.cond->range, fmt::format("a condition must be a boolean, found {}", describe(*cond)));
      return;
    }
    pushScope();
    if (*c)
      block(i.then);
    else if (i.otherwise)
      block(*i.otherwise);
    popScope();
    return;
  }
  std::optional<ExprRef> p = toScalar(*cond, i.cond->range, Type::Pred);
  if (!p) return;
  tile::If node{*p, {}, {}};
  ++conditions_;
  out_.push_back(&node.then);
  pushScope();
  block(i.then);
  popScope();
  out_.pop_back();
  if (i.otherwise) {
    out_.push_back(&node.otherwise);
    pushScope();
    block(*i.otherwise);
    popScope();
    out_.pop_back();
  }
  --conditions_;
  emit(s.range, std::move(node));
}

void KernelSema::exprStmt(const ast::Stmt& s, const ast::ExprStmt& e) {
  std::optional<Value> v = expr(*e.expr);
  if (!v) return;
  if (v->kind != Value::Kind::Void)
    diags_.report(kUnusedValue, s.range, fmt::format("the value of this expression ({}) is not used", describe(*v)));
}

}  // namespace sema
}  // namespace tyl
