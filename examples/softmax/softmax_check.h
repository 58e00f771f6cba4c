// The check of one row of softmax.tyl's output against float64, shared by the example's driver
// (main.cu), the emulator's checks (examples/emulate) and bench/softmax_bench: every element of Y
// within a relative 4e-6 + 2e-7 per 128-column chunk of N (fast_exp's bound for arguments down
// to -16, the sums' rounding, and the running sum's rescaling once a chunk), plus the rounding
// to Y's type: for f16 its unit roundoff 2^-11, and half its smallest subnormal, 2^-25, in
// absolute terms for the probabilities below its normal range. LSE within 1e-5. X is taken as
// stored (for f16, already rounded).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace softmax_check {

inline double tolerance(int64_t n, double roundoff = 0) {
  return 4e-6 + 2e-7 * static_cast<double>((n + 127) / 128) + roundoff;
}

// How Y is stored: f32, or f16 (`half()`).
struct Rounding {
  double roundoff = 0;  // the unit roundoff
  double floor = 0;     // the absolute error of rounding a subnormal
  static Rounding half() { return {0x1p-11, 0x1p-25}; }
};

// Row x of n values, its softmax y and (unless null) its log-sum-exp lse: the number of wrong
// values; *worst rises to the largest relative error of y's values in the normal range.
inline int64_t wrongInRow(const float* x, const float* y, const float* lse, int64_t n, double* worst,
                          Rounding rounding = {}) {
  double hi = -1e300, sum = 0;
  for (int64_t j = 0; j < n; ++j) hi = std::max(hi, static_cast<double>(x[j]));
  for (int64_t j = 0; j < n; ++j) sum += std::exp(x[j] - hi);
  int64_t wrong = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double want = std::exp(x[j] - hi) / sum, err = std::fabs(y[j] - want);
    if (want >= 0x1p-14) *worst = std::max(*worst, err / want);
    wrong += !(err <= tolerance(n, rounding.roundoff) * want + rounding.floor);
  }
  if (lse) {
    const double want = hi + std::log(sum);
    wrong += !(std::fabs(*lse - want) <= 1e-5 * (1 + std::fabs(want)));
  }
  return wrong;
}

}  // namespace softmax_check
