// The example kernels run on the CPU emulator and checked against CPU references: shared by
// the main job's emulator runner (emulate.cpp) and the test suite (tests/emu/examples_test.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/emu/HostData.h"
#include "base/Source.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::examples {

// Runs `kernel` with one Arg per parameter on `buffers` (read and written in place): whether
// the run was clean, with what went wrong appended to `problems`.
using Runner = std::function<bool(const tir::Kernel& kernel, const std::vector<emu::Arg>& args,
                                  std::vector<emu::Buffer>& buffers, std::string& problems)>;

// A .tyl file compiled to thread IR (as `tyloc` does); `diagnostics` is what it printed. The
// checks run its kernels on the emulator, or with `runner` where one is set (the test suite
// runs the generated CUDA on the host that way), and name `where` in their lines.
struct Example {
  SourceManager sources;
  std::optional<tir::Module> module;
  std::string diagnostics;
  Runner runner;
  std::string where = "emulator";
  int smCount = 132;  // what sm_count() is on the emulator (a runner sets its own)
};

// Compiles the .tyl file at `path` into `ex`; false (with `ex.diagnostics`) when it fails.
bool compile(const std::string& path, Example& ex);

// The outcome of running one kernel: whether every element is right and the emulator found
// nothing, a one-line summary, and the emulator's findings.
struct Check {
  bool ok = false;
  std::string line;
  std::string findings;
};

// add_one (one 32 x 4 tile) and add_one_n at each of `sizes`: B = A + 1, every element exact.
Check addOne(const Example& ex);
Check addOneN(const Example& ex, const std::vector<int64_t>& sizes);

struct Problem {
  int64_t M, N, K;
};

// How A and B are stored: row-major as the problem reads them, B stored N x K (C = A @ B^T of the
// stored matrix, as linear layers keep weights: gemm_bt, gemm_sm90_bt), or A stored K x M (gemm_at).
enum class Stored { RowMajor, BNxK, AKxM };

// `<base>_<type>` of gemm.tyl, gemm_stages.tyl or gemm_sm90.tyl: C (f32) = alpha A @ B, with relu
// when `relu` and the kernel has the flag, with alpha = 1.5, against a float64 product (relative
// Frobenius error and every element).
Check gemm(const Example& ex, const std::string& base, tir::Type type, const Problem& p, bool relu,
           Stored stored = Stored::RowMajor);
// `<base>_<type>` (gemm_beta, gemm_sm90_beta): D (16-bit) = alpha A @ B + beta C with alpha =
// 0.75, every element within the final 16-bit rounding of the float64 value. With beta = 0, C is
// filled with NaN, which must not reach D (C is not read).
Check gemmBeta(const Example& ex, tir::Type type, const Problem& p, double beta = -2.0,
               const std::string& base = "gemm_beta");

// `<base>_<type>` of softmax.tyl (softmax, softmax_v4, softmax_block; f32 or f16): Y = the row
// softmax of an M x N X and LSE its log-sum-exp, X random in [-8, 8), against float64 within the
// bounds of examples/softmax/softmax_check.h.
Check softmax(const Example& ex, const std::string& base, tir::Type type, int64_t M, int64_t N);

// `attention_<type>_<D>` of attention.tyl, causal or not: O = softmax(Q Kᵀ ·
// scale) V and LSE for Q, K, V of shape (B, H, N, D), random in [-1, 1), scale = 1/8, against
// float64: O within 2u of max |V| plus u of |O| (u = 2^-11 for f16, 2^-8 for bf16: the scores
// rounded to the input type for P V, and O rounded), LSE within 1e-4 relative.
Check attention(const Example& ex, tir::Type type, int64_t D, int64_t B, int64_t H, int64_t N, bool causal);

}  // namespace tyl::examples
