// Random kernels (random_kernels.py, written at build time from fixed seeds: scalar arithmetic,
// and fragment arithmetic over tiles of global tensors), compiled by
// tyloc, run on the emulator and, as generated CUDA compiled to host C++, by the host-thread
// harness: every output element must be the same, bit for bit. The host build stops at any
// operation C++ leaves undefined (UndefinedBehaviorSanitizer), so an operation the backend
// printed as a plain C++ operator must also be one whose operands cannot overflow, shift past
// the width or divide by zero or -1.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>

#include "backend/emu/Emulator.h"
#include "random_kernels.h"
#include "tests/hostrun/HostRunner.h"

using namespace tyl;
using tir::Type;

namespace {

const std::map<std::string, examples::Runner>& randomLaunchers() {
  static const std::map<std::string, examples::Runner> all = [] {
    std::map<std::string, examples::Runner> m;
#define TYLO_ADD_RANDOM(name) m.emplace(#name, tylo_host::runner(name));
    TYLO_RANDOM_KERNELS(TYLO_ADD_RANDOM)
#undef TYLO_ADD_RANDOM
    return m;
  }();
  return all;
}

// The scalar parameters of a run, by name: a, c, w and x of the scalar kernels; M (rows),
// alpha and beta of the fragment kernels. Zeros, small values, the ends of the types, values
// that make shifts and divisions odd, NaN; M around the tiles' 32 and 64 rows.
struct Scalars {
  int32_t a, c;
  int64_t w;
  float x;
  int32_t M;
  float alpha, beta;
};
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const Scalars kScalars[] = {
    {0, 0, 0, 0.0f, 1, 1.5f, -0.5f},
    {7, -3, 5000000000, 1.5f, 33, -0.75f, 2.0f},
    {2147483647, -2147483647 - 1, std::numeric_limits<int64_t>::min(), -1e30f, 64, 0.25f, 0.0f},
    {-1, 31, -1, 3.0e9f, 70, 1e30f, -1e30f},
    {33, 64, 63, -0.75f, 31, -0.0f, 1.0f},
    {-123456, 1, 9223372036854775807, kNaN, 128, 3.0f, kNaN},
};

emu::Arg scalarArg(const tir::Param& p, const Scalars& s) {
  if (p.name == "a") return emu::Arg::integer(s.a);
  if (p.name == "c") return emu::Arg::integer(s.c);
  if (p.name == "w") return emu::Arg::integer(s.w);
  if (p.name == "x") return emu::Arg::real(s.x);
  if (p.name == "M") return emu::Arg::integer(s.M);
  if (p.name == "alpha") return emu::Arg::real(s.alpha);
  if (p.name == "beta") return emu::Arg::real(s.beta);
  throw std::invalid_argument("random_test: no value for parameter " + p.name);
}

// The arguments of `k` for `s`, and its buffers: inputs random, outputs never written.
std::vector<emu::Arg> arguments(const tir::Kernel& k, const Scalars& s, std::vector<emu::Buffer>& buffers) {
  std::vector<emu::Arg> args;
  int pointers = 0;
  for (const tir::Param& p : k.params) args.push_back(p.isPointer ? emu::Arg::pointer(pointers++) : scalarArg(p, s));
  for (const tir::Param& p : k.params) {
    if (!p.isPointer) continue;
    const bool input = k.buffers.at(static_cast<size_t>(p.buffer)).readOnly;
    buffers.push_back(emu::makeBuffer(p.type, emu::tensorExtent(p, args).value().span, input));
    if (input) emu::fillRandom(buffers.back(), p.type, buffers.size());
  }
  return args;
}

bool isNaN(Type t, uint64_t bits) {
  switch (t) {
    case Type::F32: return (bits & 0x7fffffffu) > 0x7f800000u;
    case Type::F16: return (bits & 0x7fffu) > 0x7c00u;
    case Type::BF16: return (bits & 0x7fffu) > 0x7f80u;
    default: return false;
  }
}

// Where two runs' outputs differ: "" when every element has the same bits (any NaN equals
// any NaN), else the first difference.
std::string difference(const tir::Kernel& k, const std::vector<emu::Buffer>& a, const std::vector<emu::Buffer>& b) {
  size_t buffer = 0;
  for (const tir::Param& p : k.params) {
    if (!p.isPointer) continue;
    const size_t i = buffer++;
    if (k.buffers.at(static_cast<size_t>(p.buffer)).readOnly) continue;
    const size_t bytes = static_cast<size_t>(tir::typeBytes(p.type));
    for (size_t at = 0; at < a[i].bytes.size(); at += bytes) {
      uint64_t x = 0, y = 0;
      std::memcpy(&x, a[i].bytes.data() + at, bytes);
      std::memcpy(&y, b[i].bytes.data() + at, bytes);
      if (x == y || (isNaN(p.type, x) && isNaN(p.type, y))) continue;
      const int64_t e = static_cast<int64_t>(at / bytes);
      return p.name + "[" + std::to_string(e) + "]: emulator " + std::to_string(emu::getElement(a[i], p.type, e)) +
             ", generated code " + std::to_string(emu::getElement(b[i], p.type, e));
    }
  }
  return "";
}

}  // namespace

TEST_CASE("the generated CUDA of random kernels computes what the emulator does") {
  int kernels = 0;
  for (const char* path : {TYLO_RANDOM_FILES}) {
    examples::Example ex;
    bool compiled = examples::compile(path, ex);
    INFO(path << "\n" << ex.diagnostics);
    REQUIRE(compiled);
    for (const tir::Kernel& k : ex.module->kernels) {
      auto launcher = randomLaunchers().find(k.name);
      REQUIRE(launcher != randomLaunchers().end());
      ++kernels;
      for (const Scalars& s : kScalars) {
        INFO(k.name << " with a = " << s.a << ", c = " << s.c << ", w = " << s.w << ", x = " << s.x
                    << ", M = " << s.M << ", alpha = " << s.alpha << ", beta = " << s.beta);
        std::vector<emu::Buffer> emulated;
        const std::vector<emu::Arg> args = arguments(k, s, emulated);
        std::vector<emu::Buffer> hosted = emulated;
        emu::RunResult r = emu::run(k, args, emulated);
        // A division by zero is defined (it gives 0); the emulator reports it all the same.
        std::vector<emu::Finding> other;
        for (const emu::Finding& f : r.findings)
          if (f.kind != emu::FindingKind::DivisionByZero) other.push_back(f);
        INFO(emu::renderFindings(other, ex.sources));
        REQUIRE(r.completed);
        REQUIRE(other.empty());
        std::string problems;
        bool clean = launcher->second(k, args, hosted, problems);
        INFO(problems);
        REQUIRE(clean);
        CHECK(difference(k, emulated, hosted) == "");
      }
    }
  }
  CHECK(kernels >= 8);
}
