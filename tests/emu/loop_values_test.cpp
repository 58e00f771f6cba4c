// The sure-value check of indices into shared memory (frontend/SemaLoops.cpp) against a
// brute-force reference, on random loops, block sizes, grids (constant or run-time) and index
// forms of the loop variable, the thread and the block id, written inline or through a let,
// and loops whose run-time end depends on the thread: tyloc refuses a kernel exactly when an
// index surely taken lies outside the tensor, the launcher refuses a launch exactly when the
// last value of a loop with a run-time end does, and the emulator, running what both accept,
// finds an access outside exactly when some iteration of some thread makes one.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <random>
#include <sstream>

#include "backend/emu/Emulator.h"
#include "tools/tyloc/Pipeline.h"

using namespace tyl;

namespace {

// An index form f(k, t) of the loop variable k and the thread t (thread_id.x), in .tyl and in
// C++ (with the IR's truncating division and remainder).
struct Form {
  std::string text;
  std::function<int64_t(int64_t, int64_t)> eval;
  bool usesThread = false;
};

std::string lit(int64_t v) { return v < 0 ? fmt::format("(-{})", -v) : fmt::format("{}", v); }

Form randomForm(std::mt19937& rng, bool threads) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t a = pick(1, 3) * (pick(0, 1) ? 1 : -1), c = pick(-20, 40), m = pick(2, 9), q = pick(2, 4);
  // The thread's part: none, b * t, or the first thread of its warp (t - lane).
  const int64_t b = threads ? pick(0, 2) : 0;
  const bool warpBase = threads && pick(0, 3) == 0;
  std::string tt = warpBase ? " + (thread_id.x - lane_id())" : b ? fmt::format(" + thread_id.x * {}", b) : "";
  auto tv = [=](int64_t t) { return warpBase ? t - t % 32 : b * t; };
  Form f;
  switch (pick(0, 3)) {
    case 0:
      f = {fmt::format("k * {} + {}{}", lit(a), lit(c), tt), [=](int64_t k, int64_t t) { return k * a + c + tv(t); }};
      break;
    case 1: {
      // Not * 1, which folds away and leaves a bound the form shows (the other bad-index check).
      const int64_t a2 = a == 1 ? 2 : a;
      f = {fmt::format("((k + {}{}) % {}) * {} + {}", lit(c), tt, m, lit(a2), lit(c / 2)),
           [=](int64_t k, int64_t t) { return ((k + c + tv(t)) % m) * a2 + c / 2; }};
      break;
    }
    case 2:
      f = {fmt::format("k * k + {}{}", lit(c), tt), [=](int64_t k, int64_t t) { return k * k + c + tv(t); }};
      break;
    default:
      f = {fmt::format("(k * {} + {}{}) / {}", lit(a), lit(c), tt, q),
           [=](int64_t k, int64_t t) { return (k * a + c + tv(t)) / q; }};
  }
  f.usesThread = warpBase || b != 0;
  return f;
}

struct Case {
  int64_t begin = 0, end = 0, step = 1, size = 0, threads = 1;
  bool runtimeEnd = false, guarded = false, viaLet = false;
  Form f;
  // The index may add block_id.x * blockCoef, in a grid of `blocks`, a constant or the
  // parameter g (a run-time grid, whose first and last blocks only the launcher knows).
  int64_t blocks = 1, blockCoef = 0;
  bool runtimeGrid = false;
  // A run-time end may add thread_id.x * endThread: each thread's loop has its own last value.
  int64_t endThread = 0;

  std::string source() const {
    const std::string index = blockCoef ? fmt::format("{} + block_id.x * {}", f.text, lit(blockCoef)) : f.text;
    std::string store = viaLet ? fmt::format("let i = {}; s[i] = k;", index) : fmt::format("s[{}] = k;", index);
    if (guarded) store = "if n > 0 { " + store + " }";
    return fmt::format(
        "kernel t(out: global i32[1], n: i32, g: i32) launch(grid = {}, block = {}) {{\n"
        "    let s = alloc_shared(i32[{}]);\n"
        "    for k in range({}, {}, {}) {{\n"
        "        {}\n"
        "    }}\n"
        "    out[0] = n;\n"
        "}}\n",
        runtimeGrid ? "g" : lit(blocks), threads, size, lit(begin),
        !runtimeEnd ? lit(end) : endThread ? fmt::format("n + thread_id.x * {}", lit(endThread)) : "n", step, store);
  }
  // The loop's values in thread t.
  std::vector<int64_t> values(int64_t t = 0) const {
    std::vector<int64_t> v;
    for (int64_t k = begin; k < end + endThread * t; k += step) v.push_back(k);
    return v;
  }
  std::vector<int64_t> allThreads() const {
    std::vector<int64_t> ts;
    for (int64_t t = 0; t < threads; ++t) ts.push_back(t);
    return ts;
  }
  // The threads whose ids the index depends on (thread 0 stands for all when it does not).
  std::vector<int64_t> threadValues() const { return f.usesThread ? allThreads() : std::vector<int64_t>{0}; }
  // The blocks whose ids the index depends on (block 0 stands for all when it does not).
  std::vector<int64_t> allBlocks() const {
    std::vector<int64_t> bs = {0};
    for (int64_t b = 1; blockCoef && b < blocks; ++b) bs.push_back(b);
    return bs;
  }
  bool outside(int64_t k, int64_t t, int64_t b) const {
    const int64_t i = f.eval(k, t) + blockCoef * b;
    return i < 0 || i >= size;
  }
  bool anyOutside(const std::vector<int64_t>& ks, const std::vector<int64_t>& ts, const std::vector<int64_t>& bs) const {
    for (int64_t k : ks)
      for (int64_t t : ts)
        for (int64_t b : bs)
          if (outside(k, t, b)) return true;
    return false;
  }
  static std::vector<int64_t> ends(const std::vector<int64_t>& v) { return {v.front(), v.back()}; }
  // What tyloc must refuse: the values surely taken (see docs/language.md, "Sure values").
  // The block ids of a run-time grid are not known then.
  bool refused() const {
    if (guarded || (runtimeGrid && blockCoef)) return false;
    std::vector<int64_t> ks = values(), ts = threadValues(), bs = allBlocks();
    if (runtimeEnd) ks = {begin};
    if (ks.empty()) return false;
    // Every combination up to 1024 of them, else the first and last of each.
    if (ks.size() * ts.size() * bs.size() > 1024) {
      ks = ends(ks);
      ts = ends(ts);
      bs = ends(bs);
    }
    return anyOutside(ks, ts, bs);
  }
  // What the launcher must refuse, with n = end and g = blocks: when a sure value is known
  // only then (a run-time end, the blocks of a run-time grid) and no condition guards the
  // access, the corners: each loop's first and last value, the first and last thread and
  // block.
  bool refusedAtLaunch() const {
    if (!(runtimeEnd || (runtimeGrid && blockCoef)) || guarded) return false;
    // Each corner where the loop has iterations.
    for (int64_t t : ends(endThread ? allThreads() : threadValues())) {
      const std::vector<int64_t> ks = values(t);
      if (!ks.empty() && anyOutside(ends(ks), {t}, ends(allBlocks()))) return true;
    }
    return false;
  }
  // What the emulator must find, run with n = end and g = blocks.
  bool escapes() const {
    if (guarded && end <= 0) return false;
    for (int64_t t : allThreads())
      if (anyOutside(values(t), {t}, allBlocks())) return true;
    return false;
  }
};

}  // namespace

TEST_CASE("indices into shared memory are refused exactly when a loop value surely puts them outside",
          "[sema][loop-values]") {
  std::mt19937 rng(20261201);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int refusals = 0, launchRefusals = 0, blockRefusals = 0, threadEndRefusals = 0, escapes = 0, accepted = 0;
  for (int n = 0; n < 2000; ++n) {
    Case c;
    c.begin = pick(-6, 20);
    c.step = pick(1, 3);
    // Some loops run past the tensor, some are empty (with an end well before the begin, where
    // a launch check that ignored the loop's emptiness would go wrong).
    const int64_t span = pick(0, 9);
    c.end = c.begin + (span == 0 ? pick(280, 420) : span == 1 ? -pick(1, 40) : pick(-2, 30));
    c.size = pick(4, 64);
    c.runtimeEnd = pick(0, 3) == 0;
    c.guarded = pick(0, 4) == 0;
    c.viaLet = pick(0, 3) == 0;
    c.threads = pick(0, 2) == 0 ? pick(2, 100) : 1;
    c.f = randomForm(rng, c.threads > 1);
    if (c.runtimeEnd && c.threads > 1 && pick(0, 1) == 0) c.endThread = pick(-2, 3);
    if (pick(0, 2) == 0) {
      c.blockCoef = pick(-4, 8);
      c.blocks = pick(1, 4);
      c.runtimeGrid = pick(0, 1);
    }
    const std::string text = c.source();
    INFO(text);

    SourceManager sources;
    FileId file = sources.add("t.tyl", text);
    DiagnosticEngine diags(sources);
    std::optional<tir::Module> module = driver::compileToThreadIR(sources, file, diags);
    std::ostringstream os;
    diags.renderText(os);
    INFO(os.str());
    const bool refused = os.str().find("[bad-index]") != std::string::npos;
    REQUIRE(refused == c.refused());
    if (refused) {
      REQUIRE(os.str().find("this index is ") != std::string::npos);
      ++refusals;
      continue;
    }
    REQUIRE(module);
    REQUIRE(module->kernels.size() == 1);
    std::vector<emu::Buffer> buffers = {emu::makeBuffer(tir::Type::I32, 1, false)};
    emu::Options options;
    options.maxFindings = 1000;  // threads writing the same element race; an escape is still found
    emu::RunResult r =
        emu::run(module->kernels[0], {emu::Arg::pointer(0), emu::Arg::integer(c.end), emu::Arg::integer(c.blocks)},
                 buffers, options);
    INFO(emu::renderFindings(r.findings, sources));
    const bool launchRefused = std::any_of(r.findings.begin(), r.findings.end(), [](const emu::Finding& f) {
      return f.kind == emu::FindingKind::LaunchFailure;
    });
    REQUIRE(launchRefused == c.refusedAtLaunch());
    if (launchRefused) {
      for (const emu::Finding& f : r.findings) {
        REQUIRE(f.kind == emu::FindingKind::LaunchFailure);
        REQUIRE(f.message.find("index 0 into 's' leaves [0, ") == 0);
        // At a corner only the launcher knows: the last value of k, or a block of a run-time grid.
        const bool runtimeBlocks = c.runtimeGrid && c.blockCoef != 0;
        REQUIRE(f.message.find(runtimeBlocks ? "block" : "for the last value of 'k'") != std::string::npos);
      }
      ++launchRefusals;
      blockRefusals += c.runtimeGrid && c.blockCoef != 0;
      threadEndRefusals += c.endThread != 0;
      continue;
    }
    const bool escaped = std::any_of(r.findings.begin(), r.findings.end(),
                                     [](const emu::Finding& f) { return f.kind == emu::FindingKind::OutOfBounds; });
    REQUIRE(escaped == c.escapes());
    for (const emu::Finding& f : r.findings)
      REQUIRE((f.kind == emu::FindingKind::OutOfBounds || f.kind == emu::FindingKind::SharedRace));
    escapes += escaped;
    ++accepted;
  }
  // The cases cover every outcome.
  CHECK(refusals > 200);
  CHECK(launchRefusals > 50);
  CHECK(blockRefusals > 20);
  CHECK(threadEndRefusals > 10);
  CHECK(escapes > 100);
  CHECK(accepted - escapes > 200);
}
