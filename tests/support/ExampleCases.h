// The sizes the test suite checks the examples at, through examples/emulate/ExampleChecks.h:
// on the emulator (tests/emu) and as generated code run on the host (tests/hostrun) alike.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "examples/emulate/ExampleChecks.h"

namespace tyl::test {

// add_one_n: around the block's 1024 elements and not multiples of its 16-byte vectors.
inline const std::vector<int64_t> kAddOneSizes = {1, 3, 1023, 1024, 1025, 4096 + 5};

struct GemmCase {
  examples::Problem problem;
  bool relu;
};
// gemm (each of f16 and bf16): one tile, a tile multiple with relu, and a size that is not.
inline const std::vector<GemmCase> kGemmCases = {
    {{64, 64, 32}, false}, {{128, 256, 64}, true}, {{200, 136, 72}, false}, {{200, 136, 72}, true}};
// gemm_bt and gemm_at (B stored N x K, A stored K x M): a tile multiple, and sizes that are not
// (the transposed operand's tiles partial along K, and along N or M).
inline const std::vector<GemmCase> kGemmTransposedCases = {
    {{128, 256, 64}, true}, {{200, 136, 72}, false}, {{72, 264, 40}, true}};
// gemm_any: sizes whose rows are not whole 16-byte vectors (N, K not multiples of 8), one of a
// single element, and a tile multiple.
inline const std::vector<GemmCase> kGemmAnyCases = {
    {{70, 37, 45}, false}, {{200, 137, 75}, true}, {{1, 1, 1}, false}, {{128, 256, 64}, true}};
// gemm_beta: a tile multiple and not, each with a beta that reads C and with beta = 0.
inline const std::vector<examples::Problem> kGemmBetaProblems = {{128, 256, 64}, {200, 136, 72}};
inline const std::vector<double> kGemmBetas = {-2.0, 0.0};
// gemm_sm90 (128 x 256 tiles, K steps of 64, clusters of two blocks each on a unit of two tiles
// one above the other, persistent, units in groups of 8 rows): a tile multiple, sizes that are not,
// and, on `sms` SMs, more units than clusters (0: the default 132); an odd number of rows of tiles
// (the second block of the last units has no tile: its loads read zeros, its stores are clipped);
// two groups of rows of units, the second of one row; K = 0 (C = 0).
struct Sm90Case {
  GemmCase gemm;
  int sms;
};
inline const std::vector<Sm90Case> kSm90Cases = {{{{128, 256, 64}, false}, 0},
                                                 {{{200, 264, 136}, true}, 0},
                                                 {{{520, 392, 200}, false}, 3},
                                                 {{{2100, 264, 8}, false}, 5},
                                                 {{{130, 8, 0}, true}, 0}};
// gemm_sm90_beta: beta reading C and beta = 0 (C NaN, not read), one with more units than clusters.
struct Sm90BetaCase {
  examples::Problem problem;
  double beta;
  int sms;
};
inline const std::vector<Sm90BetaCase> kSm90BetaCases = {
    {{200, 264, 136}, -2.0, 0}, {{200, 264, 136}, 0.0, 0}, {{520, 392, 72}, 0.5, 3}};
// gemm_stages.tyl's pipelines: several K steps, and a size that is no tile multiple.
inline const std::vector<GemmCase> kPipelineCases = {{{128, 256, 96}, false}, {{200, 136, 72}, true}};

// A gemm_bench variant: a size that is not a multiple of its tiles; a grouped block order also
// over more rows of tiles than a group holds (the last group is partial).
inline std::vector<GemmCase> variantCases(const std::string& name) {
  std::vector<GemmCase> cases = {{{200, 136, 72}, false}};
  if (name.find("grouped") != std::string::npos) cases.push_back({{9 * 128 + 8, 264, 40}, true});
  return cases;
}

// The check passed with nothing found.
inline void requireClean(const examples::Check& c) {
  INFO(c.line);
  INFO(c.findings);
  REQUIRE(c.findings.empty());
  REQUIRE(c.ok);
}

}  // namespace tyl::test
