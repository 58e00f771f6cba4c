// The kernel of tests/emu/kernels/math.tyl, its inputs and the check of its outputs against the
// bounds docs/language.md states for each math function, shared by the emulator's test
// (tests/emu/math_test.cpp) and the host run of the generated CUDA (tests/hostrun).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "backend/emu/HostData.h"
#include "backend/emu/Values.h"

namespace tyl::test {

// Function f of math.tyl, in the order of Y and Z; `shifted`: applied to x - 4.
struct MathFunction {
  const char* name;
  double (*exact)(double);
  bool shifted;
  double ulps;     // the bound in units in the last place of the exact f32 result
  double absolute; // lg2.approx: an absolute bound for x in (0.5, 2); 0: none
};

inline const MathFunction kMathFunctions[] = {
    {"abs", [](double x) { return std::fabs(x); }, true, 0, 0},
    {"sqrt", [](double x) { return std::sqrt(x); }, false, 0.5, 0},
    {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, false, 2, 0},
    {"exp2", [](double x) { return std::exp2(x); }, true, 2, 0},
    {"exp", [](double x) { return std::exp(x); }, true, 2, 0},
    {"log2", [](double x) { return std::log2(x); }, false, 1, 0},
    {"log", [](double x) { return std::log(x); }, false, 1, 0},
    // sqrt.approx: relative 2^-23, one ulp at most.
    {"fast_sqrt", [](double x) { return std::sqrt(x); }, false, 1, 0},
    // rsqrt.approx: relative 2^-22.9, under two ulps.
    {"fast_rsqrt", [](double x) { return 1 / std::sqrt(x); }, false, 2, 0},
    {"fast_exp2", [](double x) { return std::exp2(x); }, true, 2, 0},
    // ex2.approx of x log2(e): two ulps, and the product's rounding, |x log2 e| 2^-24 relative,
    // which is under 6 ulps for |x| < 4.
    {"fast_exp", [](double x) { return std::exp(x); }, true, 8, 0},
    // lg2.approx: absolute 2^-22 in (0.5, 2), relative 2^-22 (two ulps) elsewhere.
    {"fast_log2", [](double x) { return std::log2(x); }, false, 2, 0x1p-22},
    // lg2.approx times ln 2, rounded: the same bounds scaled by ln 2, and half an ulp.
    {"fast_log", [](double x) { return std::log(x); }, false, 2.5, 0x1p-22 * 0.6931471805599453 + 0x1p-25},
};

inline constexpr float kMathScalar = 2.75f;

// X in (0, 8), Y and Z not yet written.
inline std::vector<emu::Buffer> mathInputs() {
  std::vector<emu::Buffer> b{emu::makeBuffer(tir::Type::F32, 256), emu::makeBuffer(tir::Type::F32, 13 * 256, false),
                             emu::makeBuffer(tir::Type::F32, 13, false)};
  for (int64_t i = 0; i < 256; ++i) emu::setElement(b[0], tir::Type::F32, i, 8.0 * (i + 0.5) / 256);
  return b;
}

// "" when every result lies within its function's bound, else the first that does not.
inline std::string mathError(const std::vector<emu::Buffer>& b) {
  auto check = [](const MathFunction& f, float input, double got) -> std::string {
    const float x = f.shifted ? input - 4.0f : input;  // as the kernel computes it, in f32
    const double exact = f.exact(x);
    const double ulp = exact == 0 ? 0x1p-149 : std::ldexp(1.0, std::ilogb(static_cast<float>(exact)) - 23);
    double bound = f.ulps * ulp;
    if (f.absolute > 0 && x > 0.5f && x < 2.0f) bound = std::max(bound, f.absolute);
    if (std::fabs(got - exact) <= bound) return "";
    return std::string(f.name) + "(" + std::to_string(x) + ") = " + std::to_string(got) + ", exact " +
           std::to_string(exact) + ", outside the bound";
  };
  for (size_t f = 0; f < std::size(kMathFunctions); ++f) {
    for (int64_t i = 0; i < 256; ++i) {
      const float x = static_cast<float>(emu::getElement(b[0], tir::Type::F32, i));
      std::string why = check(kMathFunctions[f], x, emu::getElement(b[1], tir::Type::F32, static_cast<int64_t>(f) * 256 + i));
      if (!why.empty()) return "Y: " + why;
    }
    std::string why = check(kMathFunctions[f], kMathScalar, emu::getElement(b[2], tir::Type::F32, static_cast<int64_t>(f)));
    if (!why.empty()) return "Z: " + why;
  }
  return "";
}

}  // namespace tyl::test
