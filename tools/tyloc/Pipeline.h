// The compiler pipeline, stage by stage:
//
//   .tyl --parse--> AST --analyze--> tile IR --lower--> thread IR --emit--> .cu + .cuh
//
// `compile` runs the stages in order and can stop after any of them to print its IR
// (--emit). It reads and writes files and maps outcomes to exit codes; the stages
// themselves live in frontend/, ir/ and backend/.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend/cuda/EmitCuda.h"
#include "base/Diagnostics.h"
#include "ir/thread/ThreadIR.h"
#include "tools/tyloc/OutputFiles.h"

namespace tyl::driver {

// In pipeline order, so "stop after X" is one comparison.
enum class Stage { Tokens, Ast, TileIR, ThreadIR, Cuda };

inline constexpr int kExitOk = 0;
inline constexpr int kExitUserError = 1;
inline constexpr int kExitMisuse = 2;
inline constexpr int kExitInternal = 3;

struct CompileOptions {
  std::string input;
  std::string output;  // empty: stdout
  std::string header;
  std::string depfile;
  cuda::Arch arch = cuda::Arch::Sm80;
  Stage emit = Stage::Cuda;
  bool lineDirectives = true;
  bool checkOnly = false;  // `tyloc check`: run every stage but emit nothing
  bool diagnosticsJson = false;
  std::vector<std::string> instantiate;  // "kernel:type[,type]"; empty: all
  DiagnosticOptions diag;
};

int compile(const CompileOptions& options);

// For tests and `tyloc run`: the thread IR of a .tyl file (read into `sources`, which also
// receives the files it imports), or nullopt with diagnostics.
std::optional<tir::Module> compileToThreadIR(SourceManager& sources, FileId file, DiagnosticEngine& diags);

// Reads the input .tyl into `sources`; says why on stderr and returns nothing when it
// cannot be read (command-line misuse, not a diagnostic of the input).
std::optional<FileId> loadInput(SourceManager& sources, const std::string& path);

}  // namespace tyl::driver
