// The warp-specialized pipeline:
//
//   pipeline(stages = S, producer = warpgroup(P), registers = (rp, rc)) for k in range(a, b, step) { body }
//
// The body's copy_async statements (the producer) become TMA copies issued by one elected thread of
// warpgroup P into a ring of S stages; the other statements (the consumer) run in every other
// warpgroup. It expands to exactly what one writes by hand with the primitives, i ranging over
// the iterations (i = (k - a) / step), stage s = i % S:
//
//   full = alloc_barriers(S); empty = alloc_barriers(S)
//   init_barriers(full, arrivals = 1)                  // the producer's arrive, with the bytes
//   init_barriers(empty, arrivals = consumer threads)
//   if warpgroup_id() == P {
//       decrease_registers(rp)
//       if warp_id() == 4 P { if elect_one() {
//           for k in range(a, b, step) {
//               wait_barrier(empty[s], ((i / S) & 1) ^ 1)   // a fresh barrier passes parity 1
//               arrive(full[s], expect_tx = the bytes of the stage's copies)
//               producer(k, stage = s), each copy completing on full[s]
//           } } }
//   } else {
//       increase_registers(rc)
//       for k in range(a, b, step) {
//           wait_barrier(full[s], (i / S) & 1)
//           consumer(k, stage = s)
//           arrive(empty[s])
//       }
//   }
//
// Without `registers` the two register calls are left out. When the consumer has warpgroup MMAs,
// they are async and one group stays in flight: a stage is handed back once the MMA reading it is
// retired, which is one iteration later,
//
//       for k in range(a, b, step) {
//           wait_barrier(full[s], (i / S) & 1)
//           consumer(k, stage = s), its MMAs async
//           wait_mmas(1)
//           if k != a { arrive(empty[(i - 1) % S]) }
//       }
//       wait_mmas(0)
//       if a < b { arrive(empty[the last i % S]) }
//
// Nested form: when the copies are not directly in the pipeline's body but in one range loop of
// it (the pipeline's loop steps through tiles, the inner one through K), that inner loop is the
// stage loop, and i counts its iterations over the whole pipeline in a variable `ring` (from 0,
// plus 1 after each), so that the ring goes on from tile to tile. Both sides run the outer loop:
// the consumers with every statement of its body, the producer with its lets of scalars only
// (which its copies may use). tests/emu/kernels/ws_gemm.tyl writes this expansion by hand. The
// outer loop may be `for (m, n) in tiles(...)` (SemaPersistent.cpp), which both sides run.
//
// In a cluster, a copy with `multicast = true` is shared by the cluster's c blocks: each loads one
// part of it into all of them (SemaCall.cpp, multicastParts). The empty barriers then count the
// consumers of every block (c x consumer threads), each consumer arrives on the empty barrier of
// every block (arrive(empty[s], cta = r) for r < c), and the pipeline ends with cluster_barrier(),
// so that no block exits while a peer may still signal it. The loops' bounds must be the same in
// every block of the cluster (clusterVarying).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/CommonDiags.h"
#include "frontend/SemaImpl.h"

namespace tyl {
namespace sema {

using tir::ExprRef;

namespace {

constexpr int64_t kWarpgroup = 128;

// The first warpgroup MMA in `s` and the blocks nested in it, or null.
const tile::WarpgroupMma* firstWarpgroupMma(const tile::Stmt& s) {
  auto in = [](const tile::Block& b) -> const tile::WarpgroupMma* {
    for (const tile::Stmt& st : b)
      if (const tile::WarpgroupMma* m = firstWarpgroupMma(st)) return m;
    return nullptr;
  };
  if (const auto* m = std::get_if<tile::WarpgroupMma>(&s.node)) return m;
  if (const auto* f = std::get_if<tile::For>(&s.node)) return in(f->body);
  if (const auto* i = std::get_if<tile::If>(&s.node)) {
    const tile::WarpgroupMma* m = in(i->then);
    return m ? m : in(i->otherwise);
  }
  return nullptr;
}

// A `let` of a scalar computed from ids, parameters and constants, which the producer of a nested
// warp-specialized pipeline runs too: calls only of scalar functions, no indexing.
bool scalarExpr(const ast::Expr& e) {
  static const std::set<std::string, std::less<>> kScalar = {
      "min", "max", "cdiv", "i32", "i64", "u32", "u64", "cluster_rank", "warpgroup_id", "warp_id", "lane_id",
      "thread_index"};
  return std::visit(
      [](const auto& n) -> bool {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ast::IntLit> || std::is_same_v<T, ast::FloatLit> ||
                      std::is_same_v<T, ast::Name>) {
          return true;
        } else if constexpr (std::is_same_v<T, ast::Member>) {
          return scalarExpr(*n.base);
        } else if constexpr (std::is_same_v<T, ast::Unary>) {
          return scalarExpr(*n.operand);
        } else if constexpr (std::is_same_v<T, ast::Binary>) {
          return scalarExpr(*n.lhs) && scalarExpr(*n.rhs);
        } else if constexpr (std::is_same_v<T, ast::Call>) {
          const auto* name = n.callee->template as<ast::Name>();
          if (!name || !kScalar.count(name->name)) return false;
          for (const ast::Arg& a : n.args)
            if (!a.name.empty() || !scalarExpr(*a.value)) return false;
          return true;
        } else {
          return false;
        }
      },
      e.node);
}

}  // namespace

bool KernelSema::scalarLet(const ast::Stmt& s) {
  const auto* let = std::get_if<ast::Let>(&s.node);
  return let && scalarExpr(*let->value);
}

void KernelSema::warpSpecializedPipeline(const ast::Stmt& s, const ast::For& f, const ast::Call& range,
                                         int64_t stages, const ast::Arg& producerArg, const ast::Arg* registersArg) {
  // producer = warpgroup(P), of a block of whole warpgroups, at least two.
  const auto* call = producerArg.value->as<ast::Call>();
  const auto* callee = call ? call->callee->as<ast::Name>() : nullptr;
  if (!callee || callee->name != "warpgroup" || call->args.size() != 1 || !call->args[0].name.empty()) {
    diags_.report(kBadLoop, producerArg.value->range, "a pipeline's producer is a warpgroup: producer = warpgroup(2)");
    return;
  }
  std::optional<int64_t> producer = constInt(*call->args[0].value, "the producer's warpgroup");
  if (!producer) return;
  const int64_t threads = k_.skeleton.threadsPerBlock();
  const int64_t groups = threads / kWarpgroup;
  if (threads % kWarpgroup != 0 || groups < 2) {
    diags_.report(kBadLoop, producerArg.value->range,
                  fmt::format("a warp-specialized pipeline needs a block of two or more whole warpgroups (128 threads "
                              "each); this block has {} threads",
                              threads));
    return;
  }
  if (*producer < 0 || *producer >= groups) {
    diags_.report(kBadLoop, call->args[0].value->range,
                  fmt::format("the block has warpgroups 0..{}, not {}", groups - 1, *producer));
    return;
  }
  // registers = (producer's, consumers'): each a setmaxnreg count, together within the launch's.
  int64_t regs[2] = {0, 0};
  if (registersArg) {
    std::optional<std::vector<Entry>> pair = entries(*registersArg->value);
    if (!pair) return;
    if (pair->size() != 2) {
      diags_.report(kBadLoop, registersArg->value->range,
                    "registers takes the producer's and the consumers' registers per thread: registers = (40, 232)");
      return;
    }
    for (int i = 0; i < 2; ++i) {
      std::optional<int64_t> n = constInt((*pair)[i], "a register count");
      if (!n) return;
      if (*n < 24 || *n > 256 || *n % 8 != 0) {
        diags_.report(kSetmaxnregRange, (*pair)[i].range,
                      fmt::format("setmaxnreg takes a multiple of 8 from 24 to 256 registers per thread, not {}", *n));
        return;
      }
      regs[i] = *n;
    }
    const int64_t perThread = tir::launchRegistersPerThread(threads);
    // setmaxnreg.dec lowers a warp's registers and .inc raises them: from the launch's count.
    for (int i = 0; i < 2; ++i)
      if (i == 0 ? regs[0] > perThread : regs[1] < perThread) {
        diags_.report(kSetmaxnregRange, (*pair)[i].range,
                      fmt::format("the {} registers, {}, are {} than the {} the launch gives each of the {} threads: "
                                  "setmaxnreg.{} can only {} them",
                                  i == 0 ? "producer's" : "consumers'", regs[i], i == 0 ? "more" : "fewer", perThread,
                                  threads, i == 0 ? "dec" : "inc", i == 0 ? "lower" : "raise"));
        return;
      }
    const int64_t asked = kWarpgroup * (regs[0] + (groups - 1) * regs[1]);
    if (asked > perThread * threads) {
      diags_.report(kRegisterBudget, registersArg->value->range,
                    fmt::format("{} registers per thread for the producer and {} for each of the {} consumer "
                                "warpgroups make {} registers, but the launch gives the block {} ({} per thread for "
                                "{} threads): the consumers' increase would wait forever",
                                regs[0], regs[1], groups - 1, asked, perThread * threads, perThread, threads));
      return;
    }
  }
  // The stage loop: the pipeline's own loop when copy_async calls are written directly in its
  // body, else the one loop of its body that has them (the pipeline's loop then steps through
  // tiles, say, and the ring goes on from one to the next).
  auto hasCopies = [](const ast::Block& b) {
    for (const ast::StmtPtr& st : b.stmts) {
      const auto* es = std::get_if<ast::ExprStmt>(&st->node);
      const auto* c = es ? es->expr->as<ast::Call>() : nullptr;
      const auto* n = c ? c->callee->as<ast::Name>() : nullptr;
      if (n && n->name == "copy_async") return true;
    }
    return false;
  };
  const ast::For* inner = nullptr;
  const ast::Call* innerRange = nullptr;
  if (!hasCopies(f.body)) {
    for (const ast::StmtPtr& st : f.body.stmts) {
      const auto* loop = std::get_if<ast::For>(&st->node);
      if (!loop || !hasCopies(loop->body)) continue;
      const auto* c = loop->iterable->as<ast::Call>();
      const auto* n = c ? c->callee->as<ast::Name>() : nullptr;
      if (inner || loop->pipeline || !n || n->name != "range") {
        diags_.report(kBadLoop, loop->iterable->range,
                      inner ? "a warp-specialized pipeline's copies are in one loop: its own, or one range loop of "
                              "its body"
                            : "the loop of a warp-specialized pipeline's copies is a plain range loop");
        return;
      }
      inner = loop;
      innerRange = c;
    }
  }
  // The pipeline's loop over tiles(...): each tile's stages in an inner loop.
  std::optional<TileOrder> tiles;
  if (const auto* n = range.callee->as<ast::Name>(); n->name == "tiles") {
    if (!inner) {
      diags_.report(kBadLoop, f.iterable->range,
                    "a pipeline over tiles(...) loads each tile's stages in a range loop of its body: "
                    "for k in range(...) { copy_async(...); ... }");
      return;
    }
    if (!(tiles = tileOrder(f, range))) return;
  }
  std::optional<PipelineParts> parts =
      inner ? pipelineParts(*inner, *innerRange, stages) : pipelineParts(f, range, stages);
  if (!parts) return;
  const PipelineParts& p = *parts;
  std::optional<RangeBounds> outer;
  if (tiles) {
    outer = tiles->range;
  } else if (inner && !(outer = rangeBounds(range))) {
    return;
  }

  // The ring: a full and an empty barrier per stage.
  const ast::Expr& at = *producerArg.value;
  uint32_t barriers[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    tile::Tensor t;
    t.space = tile::MemSpace::Shared;
    t.dtype = tile::DType::I64;
    t.staticShape = {stages};
    t.shape = {tir::intConst(stages, tir::Type::I64)};
    t.layout = layout::Layout(layout::TileLayout::rowMajor(t.staticShape));
    t.loc = f.pipelineRange;
    t.layoutLoc = f.pipelineRange;
    t.mbarriers = true;
    std::optional<Value> v = placeShared(std::move(t), at);
    if (!v) return;
    barriers[i] = v->view.tensor;
    nameTensor(barriers[i], i == 0 ? "full" : "empty");
  }
  const int64_t consumers = threads - kWarpgroup;
  for (int i = 0; i < 2; ++i)
    emit(f.pipelineRange, tile::MbarrierOp{tile::MbarrierOp::Kind::Init, wholeView(barriers[i], f.pipelineRange),
                                           tir::intConst(i == 0 ? 1 : consumers, tir::Type::I32), nullptr});
  // The empty barriers' init, whose count becomes every block's consumers once a copy turns out to
  // be multicast (the producers of all the cluster's blocks write each block's stages).
  tile::Block* const top = out_.back();
  const size_t emptyInit = top->size();  // one past it (the statement limit may have left it out)
  pipelineMulticast_ = false;
  // Iteration i of k (in the nested form, the count of stage-loop iterations so far, kept in
  // `counter`), its stage and the parity of the stage's current use.
  std::optional<uint32_t> counter;
  auto iteration = [&](const ExprRef& k) {
    if (counter) return tir::varRef(k_.skeleton, *counter);
    ExprRef i = k;
    if (int64_t b = 0; !tir::isIntConst(p.begin, &b) || b != 0) i = tir::sub(i, p.begin);
    if (p.step != 1) i = tir::binary(tir::BinOp::Div, i, tir::intConst(p.step, p.type));
    return i;
  };
  // (i is of the loop's type, or I32 for the nested form's counter.)
  auto stageOf = [&](const ExprRef& i) { return tir::binary(tir::BinOp::Rem, i, tir::intConst(stages, i->type)); };
  auto parityOf = [&](const ExprRef& i) {
    return tir::cast(tir::Type::I32, tir::binary(tir::BinOp::And, tir::binary(tir::BinOp::Div, i, tir::intConst(stages, i->type)),
                                                 tir::intConst(1, i->type)));
  };
  auto barrier = [&](int which, const ExprRef& stage) {
    tile::View v;
    v.tensor = barriers[which];
    v.origin = {tir::cast(tir::Type::I64, stage)};
    v.loc = f.pipelineRange;
    return v;
  };
  auto wait = [&](int which, const ExprRef& stage, ExprRef parity) {
    emit(f.pipelineRange, tile::MbarrierOp{tile::MbarrierOp::Kind::Wait, barrier(which, stage), std::move(parity), nullptr});
  };
  // One stage loop, the body given the loop's k; in the nested form, inside the pipeline's loop,
  // whose other statements run too: all of them for the consumers, the lets of scalars for the
  // producer (its copies may use them).
  const ast::For& stageLoop = inner ? *inner : f;
  // After the stage loop (in the nested form, after each tile's), what the consumers still do.
  std::function<void()> afterStageLoop;
  auto ringLoop = [&](const std::function<void(const ExprRef&)>& body) {
    uint32_t var = newVar(stageLoop.var, p.type);
    ExprRef k = tir::varRef(k_.skeleton, var);
    tile::For l{var, p.begin, p.end, tir::intConst(p.step, p.type), {}};
    out_.push_back(&l.body);
    enterLoop(var, stageLoop.var, stageLoop.varRange, p.begin, p.end, p.step);
    body(k);
    if (counter)
      emit(stageLoop.iterable->range,
           tile::ScalarSet{tir::Reg::var(*counter),
                           tir::add(tir::varRef(k_.skeleton, *counter), tir::intConst(1, tir::Type::I32))});
    leaveLoop();
    out_.pop_back();
    emit(inner ? inner->iterable->range : s.range, std::move(l));
    if (afterStageLoop) afterStageLoop();
  };
  auto loop = [&](bool producerSide, const std::function<void(const ExprRef&)>& body) {
    if (!inner) return ringLoop(body);
    counter = newVar("ring", tir::Type::I32);
    emit(f.pipelineRange, tile::ScalarSet{tir::Reg::var(*counter), tir::intConst(0, tir::Type::I32)});
    const std::string name = tiles ? "tile" : f.var;
    uint32_t var = newVar(name, outer->type);
    tile::For l{var, outer->begin, outer->end, tir::intConst(outer->step, outer->type), {}};
    out_.push_back(&l.body);
    enterLoop(var, name, f.varRange, outer->begin, outer->end, outer->step);
    pushScope();
    if (tiles) {
      bindTile(f, *tiles, tir::varRef(k_.skeleton, var));
    } else {
      Binding b;
      b.value = Value::runtime(tir::varRef(k_.skeleton, var));
      b.declared = f.varRange;
      bind(f.var, std::move(b));
    }
    for (const ast::StmtPtr& st : f.body.stmts) {
      if (const auto* l2 = std::get_if<ast::For>(&st->node); l2 == inner) {
        ringLoop(body);
      } else if (!producerSide || scalarLet(*st)) {
        stmt(*st);
      }
    }
    popScope();
    leaveLoop();
    out_.pop_back();
    emit(s.range, std::move(l));
    counter.reset();
  };
  auto branch = [&](ExprRef cond, const std::function<void()>& then, const std::function<void()>& otherwise) {
    tile::If i{std::move(cond), {}, {}};
    out_.push_back(&i.then);
    then();
    out_.pop_back();
    if (otherwise) {
      out_.push_back(&i.otherwise);
      otherwise();
      out_.pop_back();
    }
    emit(f.pipelineRange, std::move(i));
  };
  using tir::Special;
  const ExprRef warpgroup = tir::binary(tir::BinOp::Shr, tir::special(Special::WarpId), tir::intConst(2, tir::Type::I32));
  branch(
      tir::binary(tir::BinOp::Eq, warpgroup, tir::intConst(*producer, tir::Type::I32)),
      [&] {
        if (registersArg) emit(f.pipelineRange, tile::SetMaxNReg{false, static_cast<int>(regs[0])});
        branch(tir::binary(tir::BinOp::Eq, tir::special(Special::WarpId), tir::intConst(*producer * 4, tir::Type::I32)),
               [&] {
                 branch(tir::special(Special::ElectOne), [&] {
                   loop(true, [&](const ExprRef& k) {
                     const ExprRef i = iteration(k), stage = stageOf(i);
                     wait(1, stage, tir::binary(tir::BinOp::Xor, parityOf(i), tir::intConst(1, tir::Type::I32)));
                     // The copies first, aside, for the bytes the arrive announces.
                     tile::Block copies;
                     out_.push_back(&copies);
                     copyBarrier_ = barrier(0, stage);
                     pipelineBytes_ = 0;
                     runPipelinePart(stageLoop, p.producer, Value::runtime(k), Value::runtime(stage));
                     copyBarrier_.reset();
                     out_.pop_back();
                     const int64_t bytes = pipelineBytes_;
                     if (bytes > (1 << 20) - 1)
                       diags_.report(kBadLoop, f.body.range,
                                     fmt::format("the copies of a stage move {} bytes; an mbarrier counts at most "
                                                 "1048575",
                                                 bytes));
                     emit(f.pipelineRange, tile::MbarrierOp{tile::MbarrierOp::Kind::Arrive, barrier(0, stage),
                                                            tir::intConst(bytes, tir::Type::I32), nullptr});
                     for (tile::Stmt& st : copies) out_.back()->push_back(std::move(st));
                   });
                 }, {});
               }, {});
      },
      [&] {
        consumerThreads_ = consumers;
        consumerFirstThread_ = *producer == 0 ? kWarpgroup : 0;
        if (registersArg) emit(f.pipelineRange, tile::SetMaxNReg{true, static_cast<int>(regs[1])});
        // A stage is handed back to this block's producer, or with multicast copies to the producers
        // of every block of the cluster: arrive(empty[s], cta = r) for each rank r.
        const int64_t blocks = pipelineMulticast_ ? k_.skeleton.clusterSize() : 1;
        auto arriveEmpty = [&](const ExprRef& stage) {
          for (int64_t r = 0; r < blocks; ++r)
            emit(f.pipelineRange,
                 tile::MbarrierOp{tile::MbarrierOp::Kind::Arrive, barrier(1, stage), nullptr,
                                  pipelineMulticast_ ? tir::intConst(r, tir::Type::I32) : nullptr});
        };
        auto release = [&](const ExprRef& i) { arriveEmpty(stageOf(i)); };
        // The stage of iteration i - 1, as (i + S - 1) % S computed in 64 bits, as an index written
        // in the source is (so that the expansion is the program written by hand).
        auto releasePrevious = [&](const ExprRef& i) {
          const ExprRef previous =
              tir::binary(tir::BinOp::Rem,
                          tir::add(tir::cast(tir::Type::I64, i), tir::intConst(stages - 1, tir::Type::I64)),
                          tir::intConst(stages, tir::Type::I64));
          arriveEmpty(tir::cast(tir::Type::I32, previous));
        };
        // With warpgroup MMAs the consumers keep one group in flight: iteration i's MMAs are issued
        // async, and its stage is handed back at iteration i + 1, once wait_mmas(1) has retired them.
        bool queued = false, producerOverlap = false;
        afterStageLoop = [&] {
          if (!queued) return;
          emit(f.pipelineRange, tile::WaitMmas{0});
          // The last iteration's stage, when the loop ran.
          const ExprRef last = counter ? tir::varRef(k_.skeleton, *counter) : iteration(p.end);
          branch(tir::lt(p.begin, p.end), [&] { releasePrevious(last); }, {});
        };
        loop(false, [&](const ExprRef& k) {
          const ExprRef i = iteration(k), stage = stageOf(i);
          wait(0, stage, parityOf(i));
          const tile::Block& body = *out_.back();
          const size_t first = body.size();
          asyncMmas_ = true;
          runPipelinePart(stageLoop, p.consumer, Value::runtime(k), Value::runtime(stage));
          asyncMmas_ = false;
          for (auto st = body.begin() + static_cast<std::ptrdiff_t>(first); st != body.end(); ++st)
            if (const tile::WarpgroupMma* m = firstWarpgroupMma(*st)) {
              queued = true;
              // The MMA's warpgroups hold its accumulator: none of them may be the producer.
              if (const int64_t holders = m->mma.groupsM * m->mma.groupsN; *producer < holders && !producerOverlap) {
                producerOverlap = true;
                diags_.report(kBadLoop, producerArg.value->range,
                              fmt::format("warpgroup {} produces, but the warpgroup MMA of the consumer runs on "
                                          "warpgroups 0..{}, which hold its accumulator: the producer must be "
                                          "another warpgroup (producer = warpgroup({}))",
                                          *producer, holders - 1, holders));
              }
            }
          if (!queued) return release(stage);
          emit(f.pipelineRange, tile::WaitMmas{1});
          branch(tir::binary(tir::BinOp::Ne, k, p.begin),
                 [&] { releasePrevious(i); }, {});
        });
        consumerThreads_ = 0;
      });
  // With multicast copies: each empty barrier counts the consumers of every block, and no block
  // exits while a peer may still arrive on its barriers or multicast into its stages.
  if (pipelineMulticast_) {
    // Every block of the cluster must run the same iterations: each waits for the others' parts
    // of the tiles and for their consumers' releases.
    std::vector<std::pair<const ast::Expr*, ExprRef>> bounds = {{f.iterable.get(), p.begin}, {f.iterable.get(), p.end}};
    if (inner)
      bounds = {{f.iterable.get(), outer->begin}, {f.iterable.get(), outer->end}, {inner->iterable.get(), p.begin},
                {inner->iterable.get(), p.end}};
    for (const auto& [where, bound] : bounds)
      if (std::optional<std::string> varying = clusterVarying(bound)) {
        diags_.report(kBadLoop, where->range,
                      fmt::format("with a multicast copy, the blocks of a cluster run the pipeline's iterations "
                                  "together, but this loop's bounds depend on {}, which differs between them",
                                  *varying));
        break;
      }
    if (emptyInit > 0 && emptyInit <= top->size())
      if (auto* init = std::get_if<tile::MbarrierOp>(&(*top)[emptyInit - 1].node))
        init->value = tir::intConst(consumers * k_.skeleton.clusterSize(), tir::Type::I32);
    emit(f.pipelineRange, tile::Barrier{true});
  }
  pipelineMulticast_ = false;
}

}  // namespace sema
}  // namespace tyl
