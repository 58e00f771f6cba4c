#include "examples/emulate/ExampleChecks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <sstream>

#include "backend/emu/Emulator.h"
#include "examples/softmax/softmax_check.h"
#include "base/Source.h"
#include "tools/tyloc/Pipeline.h"

namespace tyl::examples {

using tir::Type;

bool compile(const std::string& path, Example& ex) {
  std::string error;
  std::optional<std::string> text = readSourceText(path, error);
  if (!text) {
    ex.diagnostics = error;
    return false;
  }
  FileId file = ex.sources.add(path, std::move(*text));
  DiagnosticEngine diags(ex.sources);
  ex.module = driver::compileToThreadIR(ex.sources, file, diags);
  std::ostringstream os;
  diags.renderText(os);
  ex.diagnostics = os.str();
  return ex.module.has_value();
}

namespace {

const tir::Kernel* find(const Example& ex, const std::string& name) {
  if (!ex.module) return nullptr;
  for (const tir::Kernel& k : ex.module->kernels)
    if (k.name == name) return &k;
  return nullptr;
}

// Runs one kernel; whether nothing went wrong (what did goes to `check.findings`).
bool runClean(const Example& ex, const tir::Kernel& k, const std::vector<emu::Arg>& args,
              std::vector<emu::Buffer>& buffers, Check& check) {
  if (ex.runner) return ex.runner(k, args, buffers, check.findings);
  emu::Options options;
  options.smCount = ex.smCount;
  emu::RunResult r = emu::run(k, args, buffers, options);
  check.findings += emu::renderFindings(r.findings, ex.sources);
  return r.ok();
}

Check missing(const std::string& name) { return Check{false, name + ": no such kernel", ""}; }

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

std::string describe(const Example& ex, const std::string& name, const Problem& p, const std::string& extra,
                     const Error& e) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s %lldx%lldx%lld%s (%s): relative error %.2g vs a float64 CPU reference",
                name.c_str(), static_cast<long long>(p.M), static_cast<long long>(p.N), static_cast<long long>(p.K),
                extra.c_str(), ex.where.c_str(), e.rel);
  return buf;
}

bool plusOne(const emu::Buffer& a, const emu::Buffer& b, int64_t i) {
  return emu::getElement(b, Type::F32, i) ==
         static_cast<double>(static_cast<float>(emu::getElement(a, Type::F32, i)) + 1.0f);
}

}  // namespace

Check addOne(const Example& ex) {
  const tir::Kernel* k = find(ex, "add_one");
  if (!k) return missing("add_one");
  Check c;
  std::vector<emu::Buffer> b{emu::makeBuffer(Type::F32, 128), emu::makeBuffer(Type::F32, 128, false)};
  emu::fillRandom(b[0], Type::F32, 7);
  bool clean = runClean(ex, *k, {emu::Arg::pointer(0), emu::Arg::pointer(1)}, b, c);
  int64_t right = 0;
  for (int64_t i = 0; clean && i < 128; ++i) right += plusOne(b[0], b[1], i);
  c.ok = clean && right == 128;
  c.line = "add_one (" + ex.where + "): " + std::to_string(right) + "/128 elements correct";
  return c;
}

Check addOneN(const Example& ex, const std::vector<int64_t>& sizes) {
  const tir::Kernel* k = find(ex, "add_one_n");
  if (!k) return missing("add_one_n");
  Check c;
  int64_t bad = 0;
  bool clean = true;
  std::string list;
  for (int64_t n : sizes) {
    list += (list.empty() ? "" : ", ") + std::to_string(n);
    std::vector<emu::Buffer> b{emu::makeBuffer(Type::F32, n), emu::makeBuffer(Type::F32, n, false)};
    emu::fillRandom(b[0], Type::F32, 11 + static_cast<uint64_t>(n));
    clean &= runClean(ex, *k, {emu::Arg::integer(n), emu::Arg::pointer(0), emu::Arg::pointer(1)}, b, c);
    for (int64_t i = 0; i < n; ++i) bad += !plusOne(b[0], b[1], i);
  }
  c.ok = clean && bad == 0;
  c.line = "add_one_n (" + ex.where + "): n = " + list + ": " +
           (bad == 0 ? std::string("all elements correct") : std::to_string(bad) + " wrong");
  return c;
}

Check gemm(const Example& ex, const std::string& base, Type t, const Problem& p, bool relu, Stored stored) {
  std::string name = base + "_" + std::string(tir::typeName(t));
  const tir::Kernel* k = find(ex, name);
  if (!k) return missing(name);
  Check c;
  const bool hasRelu = std::any_of(k->params.begin(), k->params.end(),
                                   [](const tir::Param& q) { return q.name == "apply_relu"; });
  relu = relu && hasRelu;
  std::vector<emu::Buffer> b{emu::makeBuffer(t, p.M * p.K), emu::makeBuffer(t, p.K * p.N),
                             emu::makeBuffer(Type::F32, p.M * p.N, false)};
  emu::fillRandom(b[0], t, 100 + static_cast<uint64_t>(p.M));
  emu::fillRandom(b[1], t, 200 + static_cast<uint64_t>(p.N));
  const double alpha = 1.5;
  std::vector<emu::Arg> args{emu::Arg::integer(p.M), emu::Arg::integer(p.N), emu::Arg::integer(p.K),
                             emu::Arg::pointer(0),   emu::Arg::pointer(1),   emu::Arg::pointer(2),
                             emu::Arg::real(alpha)};
  if (hasRelu) args.push_back(emu::Arg::integer(relu ? 1 : 0));
  bool clean = runClean(ex, *k, args, b, c);
  auto aAt = [&](int64_t i, int64_t q) {
    return emu::getElement(b[0], t, stored == Stored::AKxM ? q * p.M + i : i * p.K + q);
  };
  auto bAt = [&](int64_t q, int64_t j) {
    return emu::getElement(b[1], t, stored == Stored::BNxK ? j * p.K + q : q * p.N + j);
  };
  auto ref = [&](int64_t i, int64_t j) {
    double s = 0;
    for (int64_t q = 0; q < p.K; ++q) s += aAt(i, q) * bAt(q, j);
    s *= alpha;
    return relu ? std::max(s, 0.0) : s;
  };
  auto got = [&](int64_t i, int64_t j) { return emu::getElement(b[2], Type::F32, i * p.N + j); };
  Error e = clean ? compare(got, ref, p, 1e-4) : Error{};
  c.ok = clean && e.ok;
  c.line = describe(ex, name, p,
                    std::string(relu ? " relu" : "") +
                        (stored == Stored::BNxK   ? " (B stored N x K)"
                         : stored == Stored::AKxM ? " (A stored K x M)"
                                                  : ""),
                    e);
  return c;
}

Check gemmBeta(const Example& ex, Type t, const Problem& p, double beta, const std::string& base) {
  std::string name = base + "_" + std::string(tir::typeName(t));
  const tir::Kernel* k = find(ex, name);
  if (!k) return missing(name);
  Check c;
  std::vector<emu::Buffer> b{emu::makeBuffer(t, p.M * p.K), emu::makeBuffer(t, p.K * p.N),
                             emu::makeBuffer(t, p.M * p.N), emu::makeBuffer(t, p.M * p.N, false)};
  emu::fillRandom(b[0], t, 300 + static_cast<uint64_t>(p.M));
  emu::fillRandom(b[1], t, 400 + static_cast<uint64_t>(p.N));
  if (beta == 0)
    for (int64_t i = 0; i < p.M * p.N; ++i) emu::setElement(b[2], t, i, std::numeric_limits<double>::quiet_NaN());
  else
    emu::fillRandom(b[2], t, 500 + static_cast<uint64_t>(p.K));
  const double alpha = 0.75;
  bool clean = runClean(ex, *k,
                        {emu::Arg::integer(p.M), emu::Arg::integer(p.N), emu::Arg::integer(p.K), emu::Arg::pointer(0),
                         emu::Arg::pointer(1), emu::Arg::pointer(2), emu::Arg::pointer(3), emu::Arg::real(alpha),
                         emu::Arg::real(beta)},
                        b, c);
  auto ref = [&](int64_t i, int64_t j) {
    double s = 0;
    for (int64_t q = 0; q < p.K; ++q) s += emu::getElement(b[0], t, i * p.K + q) * emu::getElement(b[1], t, q * p.N + j);
    return beta == 0 ? alpha * s : alpha * s + beta * emu::getElement(b[2], t, i * p.N + j);
  };
  auto got = [&](int64_t i, int64_t j) { return emu::getElement(b[3], t, i * p.N + j); };
  // The result is rounded to 16 bits: half a unit in the last place, 2^-11 (f16) or 2^-8 (bf16).
  Error e = clean ? compare(got, ref, p, t == Type::F16 ? 1.0 / 1024 : 1.0 / 128) : Error{};
  c.ok = clean && e.ok;
  c.line = describe(ex, name, p, beta == 0 ? " beta = 0 (C is NaN)" : " beta", e);
  return c;
}

Check softmax(const Example& ex, const std::string& base, Type t, int64_t M, int64_t N) {
  const std::string name = fmt::format("{}_{}", base, tir::typeName(t));
  const tir::Kernel* k = find(ex, name);
  if (!k) return missing(name);
  Check c;
  std::vector<emu::Buffer> b{emu::makeBuffer(t, M * N), emu::makeBuffer(t, M * N, false),
                             emu::makeBuffer(Type::F32, M, false)};
  emu::fillRandom(b[0], t, 300 + static_cast<uint64_t>(N));
  for (int64_t i = 0; i < M * N; ++i) emu::setElement(b[0], t, i, 8 * emu::getElement(b[0], t, i));
  const bool clean = runClean(ex, *k,
                              {emu::Arg::integer(M), emu::Arg::integer(N), emu::Arg::pointer(0), emu::Arg::pointer(1),
                               emu::Arg::pointer(2)},
                              b, c);
  const softmax_check::Rounding rounding = t == Type::F16 ? softmax_check::Rounding::half() : softmax_check::Rounding{};
  const double tolerance = softmax_check::tolerance(N, rounding.roundoff);
  int64_t bad = 0;
  double worst = 0;
  std::vector<float> x(static_cast<size_t>(N)), y(static_cast<size_t>(N));
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      x[static_cast<size_t>(j)] = static_cast<float>(emu::getElement(b[0], t, i * N + j));
      y[static_cast<size_t>(j)] = static_cast<float>(emu::getElement(b[1], t, i * N + j));
    }
    const float lse = static_cast<float>(emu::getElement(b[2], Type::F32, i));
    bad += softmax_check::wrongInRow(x.data(), y.data(), &lse, N, &worst, rounding);
  }
  c.ok = clean && bad == 0;
  c.line = fmt::format("{} ({}): M = {}, N = {}: {}", name, ex.where, M, N,
                       bad == 0 ? fmt::format("every element within {:.1e} (largest relative error {:.1e})", tolerance,
                                              worst)
                                : fmt::format("{} wrong", bad));
  return c;
}

Check attention(const Example& ex, Type t, int64_t D, int64_t B, int64_t H, int64_t N, bool causal) {
  const std::string name = fmt::format("attention_{}_{}", tir::typeName(t), D);
  const tir::Kernel* k = find(ex, name);
  if (!k) return missing(name);
  Check c;
  const int64_t count = B * H * N * D;
  std::vector<emu::Buffer> b{emu::makeBuffer(t, count), emu::makeBuffer(t, count), emu::makeBuffer(t, count),
                             emu::makeBuffer(t, count, false), emu::makeBuffer(Type::F32, B * H * N, false)};
  for (int i = 0; i < 3; ++i) emu::fillRandom(b[static_cast<size_t>(i)], t, 500 + static_cast<uint64_t>(N * 3 + i));
  const double scale = 0.125;
  const bool clean = runClean(ex, *k,
                              {emu::Arg::integer(B), emu::Arg::integer(H), emu::Arg::integer(N), emu::Arg::real(scale),
                               emu::Arg::integer(causal ? 1 : 0), emu::Arg::pointer(0), emu::Arg::pointer(1), emu::Arg::pointer(2), emu::Arg::pointer(3),
                               emu::Arg::pointer(4)},
                              b, c);
  const double u = t == Type::F16 ? 0x1p-11 : 0x1p-8;
  int64_t bad = 0;
  double worst = 0;
  std::vector<double> s(static_cast<size_t>(N));
  for (int64_t bh = 0; bh < B * H; ++bh) {
    auto at = [&](size_t buf, int64_t row, int64_t d) { return emu::getElement(b[buf], t, (bh * N + row) * D + d); };
    double vmax = 0;
    for (int64_t j = 0; j < N; ++j)
      for (int64_t d = 0; d < D; ++d) vmax = std::max(vmax, std::fabs(at(2, j, d)));
    for (int64_t i = 0; i < N; ++i) {
      const int64_t keys = causal ? i + 1 : N;
      double hi = -1e300, sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += at(0, i, d) * at(1, j, d);
        s[static_cast<size_t>(j)] = dot * scale;
        hi = std::max(hi, s[static_cast<size_t>(j)]);
      }
      for (int64_t j = 0; j < keys; ++j) sum += std::exp(s[static_cast<size_t>(j)] - hi);
      for (int64_t d = 0; d < D; ++d) {
        double o = 0;
        for (int64_t j = 0; j < keys; ++j) o += std::exp(s[static_cast<size_t>(j)] - hi) / sum * at(2, j, d);
        const double err = std::fabs(at(3, i, d) - o);
        worst = std::max(worst, err / std::max(vmax, 1e-30));
        bad += !(err <= 2 * u * vmax + u * std::fabs(o));
      }
      const double lse = hi + std::log(sum), got = emu::getElement(b[4], Type::F32, bh * N + i);
      bad += !(std::fabs(got - lse) <= 1e-4 * (1 + std::fabs(lse)));
    }
  }
  c.ok = clean && bad == 0;
  c.line = fmt::format("{}{} ({}): B = {}, H = {}, N = {}: {}", name, causal ? " causal" : "", ex.where, B, H, N,
                       bad == 0 ? fmt::format("every element within bounds (largest error {:.1e} of max |V|)", worst)
                                : fmt::format("{} wrong", bad));
  return c;
}

}  // namespace tyl::examples
