// Semantic analysis of mbarriers: alloc_barriers, init_barriers, arrive and wait_barrier.
#include <fmt/format.h>

#include "base/CommonDiags.h"
#include "frontend/SemaImpl.h"

namespace tyl {
namespace sema {


namespace {

constexpr int64_t kMaxBarriers = 64;
// The named barrier (bar.sync id, n) that barrier() becomes among a pipeline's consumers.
constexpr int kConsumerBarrier = 1;

}  // namespace

std::optional<Value> KernelSema::allocBarriers(const ast::Expr& e, const ast::Call& c) {
  if (c.args.size() != 1 || !c.args[0].name.empty()) {
    diags_.report(kBadArgument, e.range, "alloc_barriers takes the number of barriers: alloc_barriers(4)");
    return std::nullopt;
  }
  std::optional<int64_t> n = constInt(*c.args[0].value, "the number of barriers");
  if (!n) return std::nullopt;
  if (*n < 1 || *n > kMaxBarriers) {
    diags_.report(kBadArgument, c.args[0].value->range,
                  fmt::format("alloc_barriers takes 1 to {} barriers, found {}", kMaxBarriers, *n));
    return std::nullopt;
  }
  tile::Tensor t;
  t.space = tile::MemSpace::Shared;
  t.dtype = tile::DType::I64;  // an mbarrier is 8 bytes
  t.staticShape = {*n};
  t.shape = {tir::intConst(*n, tir::Type::I64)};
  t.layout = layout::Layout(layout::TileLayout::rowMajor(t.staticShape));
  t.loc = e.range;
  t.layoutLoc = e.range;
  t.mbarriers = true;
  return placeShared(std::move(t), e);
}

std::optional<Value> KernelSema::barrierOp(const ast::Expr& e, const ast::Call& c, const std::string& fn) {
  const bool init = fn == "init_barriers", wait = fn == "wait_barrier";
  const char* usage = init   ? "init_barriers(bars, arrivals = n)"
                      : wait ? "wait_barrier(bars[i], parity)"
                             : "arrive(bars[i]), with 'expect_tx = bytes' and 'cta = rank' as needed";
  auto wrong = [&](SourceRange where) {
    diags_.report(kBadArgument, where, fmt::format("{} is called as {}", fn, usage));
    return std::nullopt;
  };
  if (c.args.empty() || !c.args[0].name.empty() || c.args.size() > (init || wait ? 2 : 3)) return wrong(e.range);
  const ast::Arg* valueArg = nullptr;  // arrivals, parity or expect_tx
  const ast::Arg* ctaArg = nullptr;
  for (size_t i = 1; i < c.args.size(); ++i) {
    const std::string& name = c.args[i].name;
    const ast::Arg*& slot = !init && !wait && name == "cta" ? ctaArg : valueArg;
    const bool ok = (init && name == "arrivals") || (wait && name.empty()) || (!init && !wait && name == "expect_tx") ||
                    (!init && !wait && name == "cta");
    if (!ok || slot) return wrong(c.args[i].value ? c.args[i].value->range : e.range);
    slot = &c.args[i];
  }
  if ((init || wait) && !valueArg) return wrong(e.range);
  std::optional<Value> bar = expr(*c.args[0].value);
  if (!bar) return std::nullopt;
  const bool isBarriers = bar->kind == Value::Kind::View && k_.tensors[bar->view.tensor].mbarriers;
  if (!isBarriers || (init ? bar->view.rank() != 1 || !isWholeTensor(bar->view) : bar->view.rank() != 0)) {
    diags_.report(kTypeMismatch, c.args[0].value->range,
                  fmt::format("{} takes {}, found {}", fn,
                              init ? "a whole array of alloc_barriers" : "one barrier of an alloc_barriers array, bars[i]",
                              isBarriers ? "a part of a barrier array" : describe(*bar)));
    return std::nullopt;
  }
  tile::MbarrierOp op;
  op.kind = init ? tile::MbarrierOp::Kind::Init : wait ? tile::MbarrierOp::Kind::Wait : tile::MbarrierOp::Kind::Arrive;
  op.bar = bar->view;
  if (ctaArg) {
    op.cta = clusterRankArg(*ctaArg, "cta");
    if (!op.cta) return std::nullopt;
  }
  if (valueArg) {
    std::optional<Value> v = expr(*valueArg->value);
    if (!v) return std::nullopt;
    std::optional<tir::ExprRef> s = toScalar(*v, valueArg->value->range, tir::Type::I32);
    if (!s) return std::nullopt;
    if (!tir::isInt((*s)->type)) {
      diags_.report(kTypeMismatch, valueArg->value->range, fmt::format("{} takes an integer", fn));
      return std::nullopt;
    }
    int64_t k = 0;
    if (tir::isIntConst(*s, &k) && (init ? k < 1 || k > (1 << 20) - 1 : wait ? k < 0 || k > 1 : k < 0 || k > (1 << 20) - 1)) {
      diags_.report(kBadArgument, valueArg->value->range,
                    fmt::format("{} {} must lie in {}, found {}", fn,
                                init ? "arrivals" : wait ? "parity" : "expect_tx",
                                wait ? "0..1" : init ? "1..1048575" : "0..1048575", k));
      return std::nullopt;
    }
    op.value = tir::cast(tir::Type::I32, *s);
  }
  emit(e.range, std::move(op));
  return Value{};
}

// A cluster rank (`cta = r`) or a mask of ranks (`multicast = m`): an integer, which a constant
// must fit: a rank below the kernel's cluster size, a mask of its ranks. Null when reported.
tir::ExprRef KernelSema::clusterRankArg(const ast::Arg& a, const char* what) {
  std::optional<Value> v = expr(*a.value);
  if (!v) return nullptr;
  std::optional<tir::ExprRef> s = toScalar(*v, a.value->range, tir::Type::I32);
  if (!s) return nullptr;
  if (!tir::isInt((*s)->type)) {
    diags_.report(kTypeMismatch, a.value->range, fmt::format("'{}' takes an integer", what));
    return nullptr;
  }
  const int64_t blocks = k_.skeleton.clusterSize();
  const bool mask = std::string_view(what) == "multicast";
  int64_t k = 0;
  if (tir::isIntConst(*s, &k) && (mask ? k < 1 || k >= (int64_t{1} << blocks) : k < 0 || k >= blocks)) {
    diags_.report(kBadArgument, a.value->range,
                  mask ? fmt::format("multicast takes a mask of the cluster's {} ranks, 1..{}, found {}", blocks,
                                     (int64_t{1} << blocks) - 1, k)
                       : fmt::format("cta takes a rank of the cluster's {} blocks, 0..{}, found {}", blocks, blocks - 1, k));
    return nullptr;
  }
  return tir::cast(tir::Type::I32, *s);
}

// increase_registers(n) / decrease_registers(n): setmaxnreg.inc / .dec, the registers per thread
// of the warps that run it.
std::optional<Value> KernelSema::setMaxRegisters(const ast::Expr& e, const ast::Call& c, bool increase) {
  const char* fn = increase ? "increase_registers" : "decrease_registers";
  if (c.args.size() != 1 || !c.args[0].name.empty()) {
    diags_.report(kBadArgument, e.range,
                  fmt::format("{} takes the registers per thread: {}({})", fn, fn, increase ? 232 : 40));
    return std::nullopt;
  }
  std::optional<int64_t> n = constInt(*c.args[0].value, "the number of registers");
  if (!n) return std::nullopt;
  if (*n < 24 || *n > 256 || *n % 8 != 0) {
    diags_.report(kSetmaxnregRange, c.args[0].value->range,
                  fmt::format("setmaxnreg takes a multiple of 8 from 24 to 256 registers per thread, not {}", *n));
    return std::nullopt;
  }
  emit(e.range, tile::SetMaxNReg{increase, static_cast<int>(*n)});
  return Value{};
}

// barrier(): bar.sync 0, or in a warp-specialized pipeline's consumer the consumers' named
// barrier. barrier(threads = n[, id = i]): the named barrier i (1 by default) of n threads.
void KernelSema::emitBlockBarrier(SourceRange loc, const char* origin) {
  tile::Barrier b;
  b.origin = origin;
  if (consumerThreads_ > 0) {
    b.id = kConsumerBarrier;
    b.threads = static_cast<int>(consumerThreads_);
  }
  emit(loc, b);
}

std::optional<Value> KernelSema::blockBarrier(const ast::Expr& e, const ast::Call& c) {
  const ast::Expr *threadsArg = nullptr, *idArg = nullptr;
  bool ok = true;
  for (const ast::Arg& a : c.args) {
    const ast::Expr** slot = a.name == "threads" && !threadsArg ? &threadsArg : a.name == "id" && !idArg ? &idArg : nullptr;
    if (slot) *slot = a.value.get();
    ok = ok && slot;
  }
  if (!ok || (idArg && !threadsArg)) {
    diags_.report(kBadArgument, e.range,
                  "barrier takes no arguments (every thread of the block), or the threads of a named barrier: "
                  "barrier(threads = 256) or barrier(threads = 256, id = 2)");
    return std::nullopt;
  }
  if (!threadsArg) {
    emitBlockBarrier(e.range);
    return Value{};
  }
  std::optional<int64_t> n = constInt(*threadsArg, "the number of threads");
  std::optional<int64_t> id = idArg ? constInt(*idArg, "the barrier's id") : std::optional<int64_t>(kConsumerBarrier);
  if (!n || !id) return std::nullopt;
  // bar.sync counts whole warps, a partial last warp as 32.
  const int64_t warps = (k_.skeleton.threadsPerBlock() + 31) / 32;
  if (*n < 32 || *n % 32 != 0 || *n > 32 * warps) {
    diags_.report(kBadArgument, threadsArg->range,
                  fmt::format("a named barrier counts whole warps: threads must be a multiple of 32 from 32 to {} "
                              "(the block's {} warps), not {}",
                              32 * warps, warps, *n));
    return std::nullopt;
  }
  if (*id < 1 || *id > 15) {
    diags_.report(kBadArgument, idArg->range,
                  fmt::format("a named barrier's id is 1 to 15 (0 is the block's barrier), not {}", *id));
    return std::nullopt;
  }
  if (consumerThreads_ > 0 && *id == kConsumerBarrier && *n != consumerThreads_) {
    diags_.report(kBadArgument, idArg ? idArg->range : e.range,
                  fmt::format("named barrier {} is this pipeline's consumer barrier (barrier() here is bar.sync {}, "
                              "{}): a barrier of other threads needs another id, 2 to 15",
                              kConsumerBarrier, kConsumerBarrier, consumerThreads_));
    return std::nullopt;
  }
  emit(e.range, tile::Barrier{false, static_cast<int>(*id), static_cast<int>(*n)});
  return Value{};
}

}  // namespace sema
}  // namespace tyl
