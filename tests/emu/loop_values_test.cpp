// The loop-value check of indices into shared memory (frontend/SemaLoops.cpp) against a
// brute-force reference, on random loops and index forms: tyloc refuses a kernel exactly
// when an index surely taken lies outside the tensor, and the emulator, running what it
// accepts, finds an access outside exactly when some iteration makes one.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <random>
#include <sstream>

#include "backend/emu/Emulator.h"
#include "tools/tyloc/Pipeline.h"

using namespace tyl;

namespace {

// An index form f(k), in .tyl and in C++ (with the IR's truncating division and remainder).
struct Form {
  std::string text;
  std::function<int64_t(int64_t)> eval;
  bool monotone = false;
};

std::string lit(int64_t v) { return v < 0 ? fmt::format("(-{})", -v) : fmt::format("{}", v); }

Form randomForm(std::mt19937& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int64_t a = pick(1, 3) * (pick(0, 1) ? 1 : -1), c = pick(-20, 40), m = pick(2, 9), q = pick(2, 4);
  switch (pick(0, 3)) {
    case 0: return {fmt::format("k * {} + {}", lit(a), lit(c)), [=](int64_t k) { return k * a + c; }, true};
    case 1:
      return {fmt::format("((k + {}) % {}) * {} + {}", lit(c), m, lit(a), lit(c / 2)),
              [=](int64_t k) { return ((k + c) % m) * a + c / 2; }};
    case 2: return {fmt::format("k * k + {}", lit(c)), [=](int64_t k) { return k * k + c; }};
    default:
      return {fmt::format("(k * {} + {}) / {}", lit(a), lit(c), q), [=](int64_t k) { return (k * a + c) / q; }};
  }
}

struct Case {
  int64_t begin = 0, end = 0, step = 1, size = 0;
  bool runtimeEnd = false, guarded = false;
  Form f;

  std::string source() const {
    std::string store = fmt::format("s[{}] = k;", f.text);
    if (guarded) store = "if n > 0 { " + store + " }";
    return fmt::format(
        "kernel t(out: global i32[1], n: i32) launch(grid = 1, block = 1) {{\n"
        "    let s = alloc_shared(i32[{}]);\n"
        "    for k in range({}, {}, {}) {{\n"
        "        {}\n"
        "    }}\n"
        "    out[0] = n;\n"
        "}}\n",
        size, lit(begin), runtimeEnd ? "n" : lit(end), step, store);
  }
  std::vector<int64_t> values() const {
    std::vector<int64_t> v;
    for (int64_t k = begin; k < end; k += step) v.push_back(k);
    return v;
  }
  bool outside(int64_t k) const {
    const int64_t i = f.eval(k);
    return i < 0 || i >= size;
  }
  // What tyloc must refuse: the values surely taken (see docs/language.md, "Loop values").
  bool refused() const {
    if (guarded) return false;
    if (runtimeEnd) return outside(begin);
    std::vector<int64_t> v = values();
    if (v.empty()) return false;
    if (v.size() <= 256) return std::any_of(v.begin(), v.end(), [&](int64_t k) { return outside(k); });
    return outside(v.front()) || outside(v.back());
  }
  // What the emulator must find, run with n = end.
  bool escapes() const {
    if (guarded && end <= 0) return false;
    std::vector<int64_t> v = values();
    return std::any_of(v.begin(), v.end(), [&](int64_t k) { return outside(k); });
  }
};

}  // namespace

TEST_CASE("indices into shared memory are refused exactly when a loop value surely puts them outside",
          "[sema][loop-values]") {
  std::mt19937 rng(20261201);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int refusals = 0, escapes = 0, accepted = 0;
  for (int n = 0; n < 400; ++n) {
    Case c;
    c.begin = pick(-6, 20);
    c.step = pick(1, 3);
    c.end = c.begin + (pick(0, 9) == 0 ? pick(280, 420) : pick(-2, 30));
    c.size = pick(4, 64);
    c.runtimeEnd = pick(0, 3) == 0;
    c.guarded = pick(0, 4) == 0;
    c.f = randomForm(rng);
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
    emu::RunResult r = emu::run(module->kernels[0], {emu::Arg::pointer(0), emu::Arg::integer(c.end)}, buffers);
    INFO(emu::renderFindings(r.findings, sources));
    const bool escaped = std::any_of(r.findings.begin(), r.findings.end(),
                                     [](const emu::Finding& f) { return f.kind == emu::FindingKind::OutOfBounds; });
    REQUIRE(escaped == c.escapes());
    REQUIRE((escaped || r.ok()));
    escapes += escaped;
    ++accepted;
  }
  // The cases cover every outcome.
  CHECK(refusals > 40);
  CHECK(escapes > 20);
  CHECK(accepted - escapes > 40);
}
