// Runs every example kernel on the CPU emulator and checks every element it writes against a
// CPU reference, one line per kernel: what the main job (scripts/run-examples.sh) runs on a
// machine without a GPU. The kernels are compiled from the .tyl files by the same pipeline as
// `tyloc`, and the emulator runs the thread IR that the CUDA backend prints.
//
//   tylo_emulate_examples [EXAMPLES_DIR]     (default: the source tree's examples/)
//
// Exit status: 0 when every kernel is right, 1 when one is wrong or reports a finding, 2 when
// an example does not compile.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "backend/emu/Emulator.h"
#include "tools/tyloc/Pipeline.h"

using namespace tyl;
using tir::Type;

namespace {

struct Example {
  SourceManager sources;
  std::optional<tir::Module> module;
};

bool compile(const std::string& path, Example& ex) {
  std::string error;
  std::optional<std::string> text = driver::readFile(path, error);
  if (!text) {
    std::fprintf(stderr, "tylo_emulate_examples: %s\n", error.c_str());
    return false;
  }
  FileId file = ex.sources.add(path, std::move(*text));
  DiagnosticEngine diags(ex.sources);
  ex.module = driver::compileToThreadIR(file, diags);
  if (!ex.module) {
    diags.renderText(std::cerr);
    return false;
  }
  return true;
}

const tir::Kernel* find(const Example& ex, const std::string& name) {
  for (const tir::Kernel& k : ex.module->kernels)
    if (k.name == name) return &k;
  std::fprintf(stderr, "tylo_emulate_examples: no kernel %s\n", name.c_str());
  return nullptr;
}

// Runs one kernel; prints the emulator's findings, if any, and returns whether there were none.
bool runClean(const Example& ex, const tir::Kernel& k, const std::vector<emu::Arg>& args,
              std::vector<emu::Buffer>& buffers) {
  emu::RunResult r = emu::run(k, args, buffers);
  if (r.ok()) return true;
  std::fprintf(stderr, "%s", emu::renderFindings(r.findings, ex.sources).c_str());
  return false;
}

int failures = 0;

void report(bool ok, const std::string& line) {
  std::printf("%s: %s\n", line.c_str(), ok ? "OK" : "WRONG");
  std::fflush(stdout);
  if (!ok) ++failures;
}

// ---- add_one.tyl ----------------------------------------------------------------------------

void addOne(const Example& ex) {
  if (const tir::Kernel* k = find(ex, "add_one")) {
    std::vector<emu::Buffer> b{emu::makeBuffer(Type::F32, 128), emu::makeBuffer(Type::F32, 128, false)};
    emu::fillRandom(b[0], Type::F32, 7);
    bool clean = runClean(ex, *k, {emu::Arg::pointer(0), emu::Arg::pointer(1)}, b);
    int64_t right = 0;
    for (int64_t i = 0; clean && i < 128; ++i)
      right += emu::getElement(b[1], Type::F32, i) ==
               static_cast<double>(static_cast<float>(emu::getElement(b[0], Type::F32, i)) + 1.0f);
    report(clean && right == 128, "add_one (emulator): " + std::to_string(right) + "/128 elements correct");
  }
  if (const tir::Kernel* k = find(ex, "add_one_n")) {
    const std::vector<int64_t> sizes{0, 1, 1023, 1025, 4096 + 5};
    int64_t bad = 0;
    for (int64_t n : sizes) {
      std::vector<emu::Buffer> b{emu::makeBuffer(Type::F32, n), emu::makeBuffer(Type::F32, n, false)};
      emu::fillRandom(b[0], Type::F32, 11 + static_cast<uint64_t>(n));
      bool clean = runClean(ex, *k, {emu::Arg::integer(n), emu::Arg::pointer(0), emu::Arg::pointer(1)}, b);
      for (int64_t i = 0; i < n; ++i)
        bad += !clean || emu::getElement(b[1], Type::F32, i) !=
                             static_cast<double>(static_cast<float>(emu::getElement(b[0], Type::F32, i)) + 1.0f);
    }
    report(bad == 0, "add_one_n (emulator): n = 0, 1, 1023, 1025, 4101: " +
                         (bad == 0 ? std::string("all elements correct") : std::to_string(bad) + " wrong"));
  }
}

// ---- gemm.tyl and gemm_stages.tyl -----------------------------------------------------------

struct Problem {
  int64_t M, N, K;
};

// Relative Frobenius error of `got` against the float64 reference, and whether it is within
// what f32 accumulation (or, for 16-bit outputs, the final rounding) allows.
struct Error {
  double rel = 0;
  bool ok = false;
};

Error compare(const std::function<double(int64_t, int64_t)>& got, const std::function<double(int64_t, int64_t)>& ref,
              const Problem& p, double elementTolerance) {
  double errSq = 0, refSq = 0;
  bool ok = true;
  for (int64_t i = 0; i < p.M; ++i)
    for (int64_t j = 0; j < p.N; ++j) {
      double g = got(i, j), r = ref(i, j);
      errSq += (g - r) * (g - r);
      refSq += r * r;
      ok = ok && std::abs(g - r) <= elementTolerance * std::max(1.0, std::abs(r));
    }
  Error e;
  e.rel = std::sqrt(errSq / std::max(refSq, 1e-30));
  e.ok = ok && e.rel < 1e-5 + elementTolerance;
  return e;
}

std::string describe(const std::string& name, const Problem& p, const std::string& extra, const Error& e) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s %lldx%lldx%lld%s (emulator): relative error %.2g vs a float64 CPU reference",
                name.c_str(), static_cast<long long>(p.M), static_cast<long long>(p.N), static_cast<long long>(p.K),
                extra.c_str(), e.rel);
  return buf;
}

// gemm, gemm_two_stage, gemm_one_stage: C (f32) = epilogue(alpha * A @ B).
void gemm(const Example& ex, const std::string& base, Type t, const Problem& p, bool relu) {
  std::string name = base + "_" + std::string(tir::typeName(t));
  const tir::Kernel* k = find(ex, name);
  if (!k) return report(false, name + ": missing");
  std::vector<emu::Buffer> b{emu::makeBuffer(t, p.M * p.K), emu::makeBuffer(t, p.K * p.N),
                             emu::makeBuffer(Type::F32, p.M * p.N, false)};
  emu::fillRandom(b[0], t, 100 + static_cast<uint64_t>(p.M));
  emu::fillRandom(b[1], t, 200 + static_cast<uint64_t>(p.N));
  const double alpha = 1.5;
  bool clean = runClean(ex, *k,
                        {emu::Arg::integer(p.M), emu::Arg::integer(p.N), emu::Arg::integer(p.K), emu::Arg::pointer(0),
                         emu::Arg::pointer(1), emu::Arg::pointer(2), emu::Arg::real(alpha),
                         emu::Arg::integer(relu ? 1 : 0)},
                        b);
  auto ref = [&](int64_t i, int64_t j) {
    double s = 0;
    for (int64_t q = 0; q < p.K; ++q) s += emu::getElement(b[0], t, i * p.K + q) * emu::getElement(b[1], t, q * p.N + j);
    s *= alpha;
    return relu ? std::max(s, 0.0) : s;
  };
  auto got = [&](int64_t i, int64_t j) { return emu::getElement(b[2], Type::F32, i * p.N + j); };
  Error e = clean ? compare(got, ref, p, 1e-4) : Error{};
  report(clean && e.ok, describe(name, p, relu ? " relu" : "", e));
}

// gemm_beta: D (16-bit) = alpha * A @ B + beta * C.
void gemmBeta(const Example& ex, Type t, const Problem& p) {
  std::string name = "gemm_beta_" + std::string(tir::typeName(t));
  const tir::Kernel* k = find(ex, name);
  if (!k) return report(false, name + ": missing");
  std::vector<emu::Buffer> b{emu::makeBuffer(t, p.M * p.K), emu::makeBuffer(t, p.K * p.N),
                             emu::makeBuffer(t, p.M * p.N), emu::makeBuffer(t, p.M * p.N, false)};
  emu::fillRandom(b[0], t, 300 + static_cast<uint64_t>(p.M));
  emu::fillRandom(b[1], t, 400 + static_cast<uint64_t>(p.N));
  emu::fillRandom(b[2], t, 500 + static_cast<uint64_t>(p.K));
  const double alpha = 0.75, beta = -2.0;
  bool clean = runClean(ex, *k,
                        {emu::Arg::integer(p.M), emu::Arg::integer(p.N), emu::Arg::integer(p.K), emu::Arg::pointer(0),
                         emu::Arg::pointer(1), emu::Arg::pointer(2), emu::Arg::pointer(3), emu::Arg::real(alpha),
                         emu::Arg::real(beta)},
                        b);
  auto ref = [&](int64_t i, int64_t j) {
    double s = 0;
    for (int64_t q = 0; q < p.K; ++q) s += emu::getElement(b[0], t, i * p.K + q) * emu::getElement(b[1], t, q * p.N + j);
    return alpha * s + beta * emu::getElement(b[2], t, i * p.N + j);
  };
  auto got = [&](int64_t i, int64_t j) { return emu::getElement(b[3], t, i * p.N + j); };
  // The result is rounded to 16 bits: half a unit in the last place, 2^-11 (f16) or 2^-8 (bf16).
  Error e = clean ? compare(got, ref, p, t == Type::F16 ? 1.0 / 1024 : 1.0 / 128) : Error{};
  report(clean && e.ok, describe(name, p, " beta", e));
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : TYLO_EXAMPLES_DIR;
  Example addOneTyl, gemmTyl, stagesTyl;
  if (!compile(dir + "/add_one/add_one.tyl", addOneTyl) || !compile(dir + "/gemm/gemm.tyl", gemmTyl) ||
      !compile(dir + "/gemm/gemm_stages.tyl", stagesTyl))
    return 2;
  addOne(addOneTyl);
  // Sizes that are not tile multiples (M, N, K = 200, 136, 72 with 128 x 128 x 32 tiles).
  const Problem odd{200, 136, 72};
  for (Type t : {Type::F16, Type::BF16}) {
    gemm(gemmTyl, "gemm", t, {64, 64, 32}, false);
    gemm(gemmTyl, "gemm", t, odd, true);
    gemm(stagesTyl, "gemm_two_stage", t, odd, false);
    gemm(stagesTyl, "gemm_one_stage", t, odd, false);
    gemmBeta(gemmTyl, t, odd);
  }
  if (failures) std::printf("%d kernel runs were wrong\n", failures);
  return failures ? 1 : 0;
}
