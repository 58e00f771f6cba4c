// Runs every example kernel on the CPU emulator and checks every element it writes against a
// CPU reference, one line per kernel: what the main job (scripts/run-examples.sh) runs on a
// machine without a GPU. The kernels are compiled from the .tyl files by the same pipeline as
// `tyloc`, and the emulator runs the thread IR that the CUDA backend prints. The checks
// themselves (ExampleChecks.h) are the ones the test suite runs.
//
//   tylo_emulate_examples [EXAMPLES_DIR]     (default: the source tree's examples/)
//
// Exit status: 0 when every kernel is right, 1 when one is wrong or reports a finding, 2 when
// an example does not compile.
#include <cstdio>
#include <string>

#include "examples/emulate/ExampleChecks.h"

using namespace tyl;
using tir::Type;

namespace {

int failures = 0;

void report(const examples::Check& c) {
  std::fprintf(stderr, "%s", c.findings.c_str());
  std::printf("%s: %s\n", c.line.c_str(), c.ok ? "OK" : "WRONG");
  std::fflush(stdout);
  if (!c.ok) ++failures;
}

bool compileOrSay(const std::string& path, examples::Example& ex) {
  if (examples::compile(path, ex)) return true;
  std::fprintf(stderr, "tylo_emulate_examples: %s\n%s", path.c_str(), ex.diagnostics.c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : TYLO_EXAMPLES_DIR;
  examples::Example addOneTyl, gemmTyl, stagesTyl, sm90Tyl, softmaxTyl, attentionTyl;
  if (!compileOrSay(dir + "/add_one/add_one.tyl", addOneTyl) || !compileOrSay(dir + "/gemm/gemm.tyl", gemmTyl) ||
      !compileOrSay(dir + "/gemm/gemm_stages.tyl", stagesTyl) || !compileOrSay(dir + "/gemm/gemm_sm90.tyl", sm90Tyl) ||
      !compileOrSay(dir + "/softmax/softmax.tyl", softmaxTyl) ||
      !compileOrSay(dir + "/attention/attention.tyl", attentionTyl))
    return 2;
  // The Hopper kernels persistent on 3 SMs: one cluster of two blocks steps through all the units
  // of work (6 pairs of 128 x 256 tiles for 520 x 392).
  sm90Tyl.smCount = 3;
  report(examples::addOne(addOneTyl));
  report(examples::addOneN(addOneTyl, {0, 1, 1023, 1025, 4096 + 5}));
  // Sizes that are not tile multiples (M, N, K = 200, 136, 72 with 128 x 256 x 32 tiles).
  const examples::Problem odd{200, 136, 72};
  for (Type t : {Type::F16, Type::BF16}) {
    report(examples::gemm(gemmTyl, "gemm", t, {64, 64, 32}, false));
    report(examples::gemm(gemmTyl, "gemm", t, odd, true));
    report(examples::gemm(stagesTyl, "gemm_two_stage", t, odd, false));
    report(examples::gemm(stagesTyl, "gemm_one_stage", t, odd, false));
    report(examples::gemm(stagesTyl, "gemm_prefetch", t, odd, true));
    report(examples::gemmBeta(gemmTyl, t, odd));
    report(examples::gemm(gemmTyl, "gemm_any", t, {200, 137, 75}, true));  // rows not whole 16-byte vectors
    report(examples::gemm(gemmTyl, "gemm_bt", t, odd, t == Type::F16, examples::Stored::BNxK));
    report(examples::gemm(gemmTyl, "gemm_at", t, odd, t == Type::BF16, examples::Stored::AKxM));
    report(examples::gemm(sm90Tyl, "gemm_sm90", t, {520, 392, 200}, t == Type::BF16));
    report(examples::gemmBeta(sm90Tyl, t, {520, 392, 72}, -2.0, "gemm_sm90_beta"));
    report(examples::gemm(sm90Tyl, "gemm_sm90_bt", t, {520, 392, 72}, false, examples::Stored::BNxK));
  }
  // Rows of one column, of a chunk and a bit, and of several chunks with a tail.
  report(examples::softmax(softmaxTyl, "softmax", Type::F32, 19, 1));
  report(examples::softmax(softmaxTyl, "softmax", Type::F16, 19, 33));
  report(examples::softmax(softmaxTyl, "softmax", Type::F32, 9, 1000));
  report(examples::softmax(softmaxTyl, "softmax_v4", Type::F32, 9, 4100));
  // One block a row: rows of one chunk and of several with a tail.
  report(examples::softmax(softmaxTyl, "softmax_block", Type::F32, 3, 2052));
  report(examples::softmax(softmaxTyl, "softmax_block", Type::F16, 3, 700));
  // Sequences of part of a tile and of several tiles with a tail, causal and not, both head
  // dimensions.
  for (Type t : {Type::F16, Type::BF16})
    for (bool causal : {false, true}) report(examples::attention(attentionTyl, t, 64, 1, 2, 77, causal));
  report(examples::attention(attentionTyl, Type::F16, 64, 2, 1, 300, true));
  report(examples::attention(attentionTyl, Type::BF16, 128, 1, 2, 200, false));
  report(examples::attention(attentionTyl, Type::F16, 128, 2, 1, 300, true));
  if (failures) std::printf("%d kernel runs were wrong\n", failures);
  return failures ? 1 : 0;
}
