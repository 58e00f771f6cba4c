#include "backend/emu/Emulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "backend/emu/Block.h"
#include "backend/emu/Eval.h"
#include "backend/emu/Launch.h"
#include "base/InternalError.h"
#include "ir/thread/Builder.h"
#include "ir/thread/ValueRange.h"
#include "ir/thread/Verify.h"

namespace tyl::emu {

LaunchContext::LaunchContext(const tir::Kernel& kernel_, const Options& options_,
                             std::vector<Buffer>& buffers)
    : kernel(kernel_),
      options(options_),
      layout(kernel_),
      global(buffers),
      // A launch asking for too much is refused before any block runs; never allocate it.
      shared(static_cast<size_t>(std::clamp<int64_t>(kernel_.clusterSize(), 1, 16)),
             SharedMemory(std::clamp<int64_t>(kernel_.sharedBytes, 0, options_.maxSharedBytes))),
      findings(options_.maxFindings) {}

namespace {

// Turns the arguments into canonical parameter values and pointer bindings.
void bindArgs(LaunchContext& ctx, const std::vector<Arg>& args, const std::vector<Buffer>& buffers) {
  const tir::Kernel& k = ctx.kernel;
  if (args.size() != k.params.size())
    throw std::invalid_argument(
        fmt::format("kernel '{}' takes {} arguments, {} given", k.name, k.params.size(), args.size()));
  ctx.params.assign(args.size(), 0);
  ctx.pointers.assign(args.size(), PointerBinding{});
  for (size_t i = 0; i < args.size(); ++i) {
    const tir::Param& p = k.params[i];
    const Arg& a = args[i];
    auto mismatch = [&](const char* what) {
      return std::invalid_argument(
          fmt::format("argument {} ('{}') of kernel '{}': {}", i, p.name, k.name, what));
    };
    if (p.isPointer) {
      if (a.kind != Arg::Kind::Pointer) throw mismatch("expected a pointer");
      if (a.buffer < 0 || static_cast<size_t>(a.buffer) >= buffers.size()) throw mismatch("no such buffer");
      if (a.offsetBytes < 0 || static_cast<size_t>(a.offsetBytes) > buffers[a.buffer].bytes.size())
        throw mismatch("pointer offset outside its buffer");
      ctx.pointers[i] = PointerBinding{a.buffer, a.offsetBytes};
    } else if (a.kind == Arg::Kind::Pointer) {
      throw mismatch("expected a scalar");
    } else if (a.kind == Arg::Kind::Float) {
      if (!tir::isFloat(p.type)) throw mismatch("a floating-point value for an integer parameter");
      ctx.params[i] = fromDouble(p.type, a.f);
    } else {
      ctx.params[i] = tir::isFloat(p.type) ? fromDouble(p.type, static_cast<double>(a.i))
                                           : canonical(p.type, static_cast<uint64_t>(a.i));
    }
  }
}

void launchFailure(LaunchContext& ctx, SourceRange loc, const void* site, std::string message) {
  Finding f = Finding::make(FindingKind::LaunchFailure, std::move(message));
  f.loc = loc.valid() ? loc : ctx.kernel.loc;
  ctx.findings.add(std::move(f), site);
}

// The bytes [first, last) of its buffer that pointer parameter `p`'s elements cover (empty when
// it has none), from its shape and strides at launch time; nullopt when they do not evaluate.
std::optional<std::pair<__int128, __int128>> footprint(const LaunchContext& ctx, Evaluator& launchTime, int p) {
  const tir::Param& param = ctx.kernel.params.at(static_cast<size_t>(p));
  __int128 first = ctx.pointers.at(static_cast<size_t>(p)).offset, last = first;
  for (size_t d = 0; d < param.shape.size(); ++d) {
    std::optional<int64_t> extent = launchTime.scalar(param.shape[d]);
    std::optional<int64_t> stride = launchTime.scalar(param.strides.at(d));
    if (!extent || !stride) return std::nullopt;
    if (*extent <= 0) return std::pair{first, first};
    __int128 reach = static_cast<__int128>(*extent - 1) * *stride * tir::typeBytes(param.type);
    (reach < 0 ? first : last) += reach;
  }
  return std::pair{first, last + tir::typeBytes(param.type)};
}

// Whether pointer parameters `a` and `b` point into one buffer at elements that share a byte.
bool overlap(const LaunchContext& ctx, Evaluator& launchTime, int a, int b) {
  if (ctx.pointers.at(static_cast<size_t>(a)).buffer != ctx.pointers.at(static_cast<size_t>(b)).buffer) return false;
  auto fa = footprint(ctx, launchTime, a), fb = footprint(ctx, launchTime, b);
  if (!fa || !fb || fa->first == fa->second || fb->first == fb->second) return false;
  return fa->first < fb->second && fb->first < fa->second;
}

// The launch configuration and the launcher's own checks, in the generated launcher's
// order: size checks, then the grid (an empty grid launches nothing and succeeds), then
// the remaining checks. False when nothing is to be run.
bool checkLaunch(LaunchContext& ctx) {
  const tir::Kernel& k = ctx.kernel;
  Evaluator launchTime(ctx, nullptr, nullptr, nullptr);
  size_t before = ctx.findings.findings().size();
  // The message ends with the values the check read, as the generated launcher words them
  // (backend/cuda/EmitLauncher.cpp, refusal()).
  auto check = [&](const tir::LaunchCheck& c) {
    if (c.kind == tir::LaunchCheck::Kind::PointerAlignment) {
      // Buffers start 256-byte aligned, so only the argument's offset matters.
      if (c.param < 0 || static_cast<size_t>(c.param) >= ctx.pointers.size() || c.alignBytes <= 0)
        TYL_UNREACHABLE("{}", "emulator: malformed pointer alignment check");
      const int64_t past = ctx.pointers[c.param].offset % c.alignBytes;
      if (past != 0)
        launchFailure(ctx, c.loc, &c,
                      fmt::format("{}; {} is {} bytes past a multiple of {}", c.message,
                                  k.params.at(static_cast<size_t>(c.param)).name, past, c.alignBytes));
    } else if (c.kind == tir::LaunchCheck::Kind::Disjoint) {
      if (overlap(ctx, launchTime, c.param, c.other)) launchFailure(ctx, c.loc, &c, c.message);
    } else {
      std::optional<int64_t> holds = launchTime.scalar(c.cond);
      if (holds && *holds) return;
      std::string values;
      for (int id : tir::paramsRead(c.cond)) {
        const tir::Param& p = k.params.at(static_cast<size_t>(id));
        if (p.isPointer || tir::isFloat(p.type)) continue;
        std::optional<int64_t> v = launchTime.scalar(tir::paramRef(k, id));
        if (!v) continue;
        values += fmt::format("{}{} = {}", values.empty() ? " (" : ", ", p.name,
                              p.type == tir::Type::Pred ? (*v ? "true" : "false") : std::to_string(*v));
      }
      launchFailure(ctx, c.loc, &c, c.message + (values.empty() ? "" : values + ")"));
    }
  };
  for (const tir::LaunchCheck& c : k.checks)
    if (c.beforeGrid) check(c);
  if (ctx.findings.findings().size() != before) return false;
  static const char* axes[] = {"x", "y", "z"};
  static const int64_t maxBlock[] = {1024, 1024, 64}, maxGrid[] = {2147483647, 65535, 65535};
  bool empty = false;
  for (int d = 0; d < 3; ++d) {
    if (k.block[d] < 1 || k.block[d] > maxBlock[d])
      launchFailure(ctx, k.loc, &k.block[d], fmt::format("block dimension {} is {}", axes[d], k.block[d]));
    std::optional<int64_t> g = k.grid[d] ? launchTime.scalar(k.grid[d]) : std::optional<int64_t>(1);
    if (!g)
      launchFailure(ctx, k.loc, &k.grid[d], fmt::format("grid dimension {} divides by zero", axes[d]));
    else if (*g < 0 || *g > maxGrid[d])
      launchFailure(ctx, k.loc, &k.grid[d],
                    fmt::format("grid dimension {} is {} (must be 0 to {})", axes[d], *g, maxGrid[d]));
    else
      ctx.grid[d] = *g;
    empty |= g && *g == 0;
  }
  if (ctx.findings.findings().size() != before) return false;
  if (empty) return false;  // nothing to do: the launcher returns success
  if (k.threadsPerBlock() > ctx.options.maxThreadsPerBlock)
    launchFailure(ctx, k.loc, &k.block, fmt::format("{} threads per block", k.threadsPerBlock()));
  if (k.sharedBytes < 0 || k.sharedBytes > ctx.options.maxSharedBytes)
    launchFailure(ctx, k.loc, &k.sharedBytes,
                  fmt::format("{} bytes of shared memory per block (at most {})", k.sharedBytes,
                              ctx.options.maxSharedBytes));
  for (const tir::LaunchCheck& c : k.checks)
    if (!c.beforeGrid) check(c);
  // What CUDA refuses of clusters, where the launcher's checks have let it through.
  if (ctx.findings.findings().size() != before) return false;
  for (int d = 0; d < 3; ++d)
    if (k.cluster[d] < 1 || ctx.grid[d] % k.cluster[d] != 0)
      launchFailure(ctx, k.loc, &k.cluster[d],
                    fmt::format("grid dimension {} is {}, not a multiple of the cluster's {}", axes[d], ctx.grid[d],
                                k.cluster[d]));
  if (k.clusterSize() > 8)
    launchFailure(ctx, k.loc, &k.cluster, fmt::format("a cluster of {} blocks (at most 8)", k.clusterSize()));
  return ctx.findings.findings().size() == before;
}

}  // namespace

RunResult run(const tir::Kernel& kernel, const std::vector<Arg>& args, std::vector<Buffer>& buffers,
              const Options& options) {
  tir::verify(kernel, "given to the emulator");
  LaunchContext ctx(kernel, options, buffers);
  bindArgs(ctx, args, buffers);
  RunResult result;
  size_t before = ctx.findings.findings().size();
  if (checkLaunch(ctx)) {
    // Each block counts as a step too, so that a huge grid of blocks doing nothing stops.
    auto startBlock = [&]() {
      if (ctx.stats.warpInstructions + ctx.stats.blocks < options.maxWarpInstructions) return true;
      Finding f = Finding::make(FindingKind::StepLimit,
                                fmt::format("the run exceeded {} steps (warp instructions, and one per block) after "
                                            "{} blocks of the grid",
                                            options.maxWarpInstructions, ctx.stats.blocks));
      f.loc = ctx.kernel.loc;
      ctx.findings.add(std::move(f), &ctx.kernel);
      ctx.findings.stop();
      return false;
    };
    const auto& cluster = kernel.cluster;
    for (int64_t z = 0; z < ctx.grid[2] && !ctx.findings.stopped(); z += cluster[2])
      for (int64_t y = 0; y < ctx.grid[1] && !ctx.findings.stopped(); y += cluster[1])
        for (int64_t x = 0; x < ctx.grid[0] && !ctx.findings.stopped(); x += cluster[0])
          if (startBlock()) runCluster(ctx, {x, y, z});
    result.completed = !ctx.findings.stopped();
  } else {
    // An empty grid is a successful launch of nothing.
    result.completed = ctx.findings.findings().size() == before;
  }
  result.stats = ctx.stats;
  result.findings = ctx.findings.take();
  return result;
}

std::optional<int64_t> hostValue(const tir::ExprRef& e, const std::vector<Arg>& args, std::string* why) {
  const auto fail = [&](const char* reason) -> std::optional<int64_t> {
    if (why && why->empty()) *why = reason;
    return std::nullopt;
  };
  switch (e->kind) {
    case tir::ExprKind::IntConst: return e->value;
    case tir::ExprKind::ParamRef:
      if (e->id >= args.size() || args[e->id].kind != Arg::Kind::Int)
        return fail("it uses a parameter that is not an integer");
      return args[e->id].i;
    case tir::ExprKind::Cast: return hostValue(e->args[0], args, why);
    case tir::ExprKind::Binary: {
      std::optional<int64_t> a = hostValue(e->args[0], args, why);
      if (!a) return std::nullopt;
      std::optional<int64_t> b = hostValue(e->args[1], args, why);
      if (!b) return std::nullopt;
      const char* reason = nullptr;
      std::optional<int64_t> r = tir::exactBinary(e->bin, *a, *b, &reason);
      return r ? r : fail(reason);
    }
    case tir::ExprKind::Unary: {
      std::optional<int64_t> a = hostValue(e->args[0], args, why);
      if (!a) return std::nullopt;
      if (e->un == tir::UnOp::Not) return int64_t{*a == 0};
      if (e->un == tir::UnOp::Neg && *a != INT64_MIN) return -*a;
      if (e->un == tir::UnOp::Neg) return fail("a result leaves 64 bits");
      return fail("it uses an operation a host does not compute");
    }
    case tir::ExprKind::Select: {
      std::optional<int64_t> c = hostValue(e->args[0], args, why);
      if (!c) return std::nullopt;
      return hostValue(*c ? e->args[1] : e->args[2], args, why);
    }
    default: return fail("it uses a value a host does not have");
  }
}

std::optional<TensorExtent> tensorExtent(const tir::Param& p, const std::vector<Arg>& args, std::string* why) {
  TensorExtent t;
  t.span = 1;
  bool empty = false;
  for (size_t d = 0; d < p.shape.size(); ++d) {
    std::string reason;
    std::optional<int64_t> extent = hostValue(p.shape[d], args, &reason);
    if (!extent) {
      if (why) *why = fmt::format("dimension {}: {}", d, reason);
      return std::nullopt;
    }
    std::optional<int64_t> stride = hostValue(p.strides.at(d), args, &reason);
    if (!stride) {
      if (why) *why = fmt::format("the stride of dimension {}: {}", d, reason);
      return std::nullopt;
    }
    t.shape.push_back(*extent);
    t.strides.push_back(*stride);
    empty |= *extent <= 0;
    int64_t reach = 0;
    if (*extent > 0 && *stride > 0 &&
        (__builtin_mul_overflow(*extent - 1, *stride, &reach) || __builtin_add_overflow(t.span, reach, &t.span)))
      t.span = INT64_MAX;
  }
  if (empty) t.span = 0;
  return t;
}

}  // namespace tyl::emu
