// The compiler pipeline, stage by stage, as every user of the compiler runs it:
//
//   .tyl --parse--> AST --imports, analyze--> tile IR --lower, optimize--> thread IR --emit--> .cu + .cuh
//
// `runPipeline` is the one function that runs the stages: `tyloc`, `tyloc check`, `tyloc run`,
// the examples' emulator checks, the fuzzer and the tests all call it, so they all see the same
// checks in the same order. It stops after any stage (`stopAfter`, for --emit) and keeps what
// each stage made; it reads the imported files but writes nothing. `compile` is `tyloc` itself:
// it runs the pipeline, prints the stage asked for or writes the outputs, and maps the outcome
// to an exit code.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/cuda/EmitCuda.h"
#include "base/Diagnostics.h"
#include "frontend/Ast.h"
#include "frontend/Imports.h"
#include "ir/thread/ThreadIR.h"
#include "ir/tile/TileIR.h"
#include "tools/tyloc/OutputFiles.h"

namespace tyl::driver {

// In pipeline order: a run that stops after stage S runs every stage up to S (`stage <= S`).
enum class Stage { Tokens, Ast, TileIR, ThreadIR, Cuda };

inline constexpr int kExitOk = 0;
inline constexpr int kExitUserError = 1;
inline constexpr int kExitMisuse = 2;
inline constexpr int kExitInternal = 3;

struct PipelineOptions {
  Stage stopAfter = Stage::Cuda;
  // Only these instantiations of generic kernels ("kernel:type[,type]"); empty: all. A name
  // that is no instantiation of the file is command-line misuse.
  std::vector<std::string> instantiate;
  // Only the kernel of this name (SemaOptions::only); empty: all.
  std::string only;
  // How imports are read; null: from the file system, relative to the importing file.
  ImportLoader imports;
  // Files the caller will write, with the flag that named each ("--output"): one that is also
  // an imported file is command-line misuse, found once the imports are known.
  std::vector<std::pair<std::string, std::string>> outputs;
  // The CUDA backend's options (emit.arch: the target; instructions it lacks are errors);
  // `lineOf` is filled from the sources when left empty.
  cuda::EmitOptions emit;
  // For tests: changes the thread IR right after lowering, before it is verified (how a test
  // plants a defect that the verifier must report as an internal error).
  std::function<void(tir::Module&)> changeThreadIR;
};

struct PipelineResult {
  std::string tokens;                    // Tokens: the token dump
  std::optional<ast::Module> ast;        // from Ast on: the module (its imports resolved after Ast)
  std::vector<std::string> imported;     // every file the imports read
  std::optional<tile::Module> tileIR;    // from TileIR on
  std::optional<tir::Module> threadIR;   // from ThreadIR on, optimized
  std::optional<cuda::EmitResult> cuda;  // Cuda
  // Command-line misuse found on the way (an --instantiate name the file does not have, an
  // output that is an imported file); the run stopped there.
  std::optional<std::string> misuse;

  // Every stage up to the requested one ran, without errors or misuse.
  bool ok = false;
};

// Runs the stages on `file` (in `sources`, which receives the imported files too) up to
// `options.stopAfter`, reporting to `diags`. Errors stop the run after the stage that reported
// them. The IR is verified after analysis, lowering and every thread-IR pass: a broken
// invariant is an InternalError, a bug of tyloc's (base/InternalError.h).
PipelineResult runPipeline(SourceManager& sources, FileId file, DiagnosticEngine& diags,
                           const PipelineOptions& options = {});

// The thread IR of a file, as `tyloc run` sees it: runPipeline up to Stage::ThreadIR, lowered
// for `arch` (sm_90 and sm_90a store 16-bit fragments with stmatrix where it applies).
std::optional<tir::Module> compileToThreadIR(SourceManager& sources, FileId file, DiagnosticEngine& diags,
                                             cuda::Arch arch = cuda::Arch::Sm80, const std::string& only = "");

// The target an --arch value names: sm_80, sm_90 or sm_90a (the option checks the spelling).
cuda::Arch archOf(const std::string& name);

// `tyloc FILE.tyl` and `tyloc check FILE.tyl`.
struct CompileOptions {
  std::string input;
  std::string output;  // empty: stdout
  std::string header;
  std::string depfile;
  cuda::Arch arch = cuda::Arch::Sm80;
  Stage emit = Stage::Cuda;
  bool lineDirectives = true;
  bool checkOnly = false;  // `tyloc check`: run every stage but write nothing
  bool diagnosticsJson = false;
  std::vector<std::string> instantiate;  // "kernel:type[,type]"; empty: all
  DiagnosticOptions diag;
  std::function<void(tir::Module&)> changeThreadIR;  // for tests (PipelineOptions)
};

int compile(const CompileOptions& options);

// Reads the input .tyl into `sources`; says why on stderr and returns nothing when it
// cannot be read (command-line misuse, not a diagnostic of the input).
std::optional<FileId> loadInput(SourceManager& sources, const std::string& path);

// Prints an internal error (a bug of tyloc's) and returns kExitInternal.
int reportInternalError(const std::exception& error);

}  // namespace tyl::driver
