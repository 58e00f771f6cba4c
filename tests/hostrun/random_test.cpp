// Random scalar kernels (random_kernels.py, written at build time from fixed seeds), compiled by
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

struct Scalars {
  int32_t a, c;
  int64_t w;
  float x;
};

// Zeros, small values, the ends of the types, and values that make shifts and divisions odd.
const Scalars kScalars[] = {
    {0, 0, 0, 0.0f},
    {7, -3, 5000000000, 1.5f},
    {2147483647, -2147483647 - 1, std::numeric_limits<int64_t>::min(), -1e30f},
    {-1, 31, -1, 3.0e9f},
    {33, 64, 63, -0.75f},
    {-123456, 1, 9223372036854775807, std::numeric_limits<float>::quiet_NaN()},
};

bool sameFloat(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

}  // namespace

TEST_CASE("the generated CUDA of random scalar kernels computes what the emulator does") {
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
        INFO(k.name << " with a = " << s.a << ", c = " << s.c << ", w = " << s.w << ", x = " << s.x);
        const std::vector<emu::Arg> args = {emu::Arg::integer(s.a), emu::Arg::integer(s.c), emu::Arg::integer(s.w),
                                            emu::Arg::real(s.x),    emu::Arg::pointer(0),   emu::Arg::pointer(1),
                                            emu::Arg::pointer(2)};
        std::vector<emu::Buffer> emulated = {emu::makeBuffer(Type::I32, 128, false),
                                             emu::makeBuffer(Type::I64, 128, false),
                                             emu::makeBuffer(Type::F32, 128, false)};
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
        int wrong = 0;
        std::string first;
        for (int64_t i = 0; i < 128; ++i) {
          int32_t e32, h32;
          int64_t e64, h64;
          float ef, hf;
          std::memcpy(&e32, emulated[0].bytes.data() + 4 * i, 4);
          std::memcpy(&h32, hosted[0].bytes.data() + 4 * i, 4);
          std::memcpy(&e64, emulated[1].bytes.data() + 8 * i, 8);
          std::memcpy(&h64, hosted[1].bytes.data() + 8 * i, 8);
          std::memcpy(&ef, emulated[2].bytes.data() + 4 * i, 4);
          std::memcpy(&hf, hosted[2].bytes.data() + 4 * i, 4);
          const bool bad = e32 != h32 || e64 != h64 || !sameFloat(ef, hf);
          if (bad && first.empty())
            first = "thread " + std::to_string(i) + ": emulator " + std::to_string(e32) + ", " + std::to_string(e64) +
                    ", " + std::to_string(ef) + "; generated code " + std::to_string(h32) + ", " +
                    std::to_string(h64) + ", " + std::to_string(hf);
          wrong += bad;
        }
        INFO(first);
        CHECK(wrong == 0);
      }
    }
  }
  CHECK(kernels >= 8);
}
