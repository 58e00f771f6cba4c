// The input-robustness harness shared by the fuzzer (fuzz_compile), the fuzz regression
// replay (fuzz_replay) and the robustness tests (tests/e2e/robustness_test.cpp).
//
// It runs text through what `tyloc FILE.tyl` and `tyloc layout EXPR` run, in process, and
// judges the outcome by the compiler's contract: any input is either accepted or
// rejected with an error diagnostic. A rejection without an error, a diagnostic pointing
// outside the source, or an exception is a bug. Exceptions are NOT caught here: the
// fuzzer wants the stack of the throw, and each caller decides what to do with them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tyl::fuzz {

enum class Verdict {
  Accepted,  // compiled (or the layout was shown); warnings allowed
  Rejected,  // refused with at least one error diagnostic: exit 1
  Misuse,    // a request the command line itself refuses (exit 2), e.g. --shape 0
  Bug,       // the contract is broken; `detail` says how
};

const char* verdictName(Verdict v);

struct Result {
  Verdict verdict = Verdict::Accepted;
  std::string detail;  // for a Bug: what went wrong; otherwise the first diagnostic, if any
};

// What `tyloc FILE.tyl -o OUT.cu` varies besides the source.
struct CompileKnobs {
  bool dumpStages = false;       // also print tokens, AST, tile IR and thread IR (--emit ...)
  bool werrorAndRemarks = false;  // -Werror, and remarks enabled (they run extra analyses)
  bool sm90a = false;             // --arch sm_90a instead of sm_80
  bool noLine = false;            // --no-line
  bool jsonDiagnostics = false;   // --diagnostics-format json
  bool emulate = false;           // also run every kernel on the emulator (as `tyloc run` would)
};

// parse -> analyze -> lower -> emit (CUDA text), as driver::compile does, but in memory.
Result compileSource(std::string_view text, const CompileKnobs& knobs = {});

// What `tyloc layout EXPR [--shape ..] [--apply ..] [--json]` and `--svg` take.
struct LayoutRequest {
  std::string expr;
  std::optional<std::vector<int64_t>> shape;
  std::optional<std::vector<int64_t>> apply;
  bool json = false;
  bool svg = false;               // render the picture too (in memory, as --svg would)
  std::string dtype;              // with svg: "f16", "f32", ... (bank colours)
  std::string highlight;          // with dtype: "row:0", "ldmatrix:0,8", ...
};

// Runs driver::runLayoutCommand (stdout and stderr captured) and, with `svg`, the picture.
Result layoutCommand(const LayoutRequest& request);

// The fuzzer's input format. The first byte chooses the path:
//   'L' or 'l'  a layout request: the first line is the expression; each further line is
//               one of `shape A,B,..`, `apply A,B,..`, `json`, `svg`, `dtype T`,
//               `highlight SPEC` (what the command-line flags would carry)
//   anything else: a .tyl source follows; the byte's low bits choose CompileKnobs
//               (bit 0 dumpStages, bit 1 werrorAndRemarks, bit 2 sm90a, bit 3 noLine,
//               bit 4 jsonDiagnostics, bit 5 emulate)
Result runFuzzInput(const uint8_t* data, size_t size);
LayoutRequest parseLayoutRequest(std::string_view payload);

}  // namespace tyl::fuzz
