// The CUDA backend: prints thread IR as CUDA C++ with inline PTX (.cu) and a header of
// host launchers (.cuh).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/Diagnostics.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::cuda {

enum class Arch { Sm80, Sm90, Sm90a };

struct EmitOptions {
  Arch arch = Arch::Sm80;
  bool lineDirectives = true;
  std::string headerName;  // how the .cu includes the header, e.g. "add_one.cuh"
  std::string sourcePath;  // the .tyl path for #line directives
  std::string outputName;  // the .cu file's own name, to point host code back at it
  // The source line of a location (0 when unknown), for #line directives.
  std::function<uint32_t(SourceRange)> lineOf;
};

struct EmitResult {
  std::string source;  // the .cu file
  std::string header;  // the .cuh file
};

EmitResult emit(const tir::Module& module, const EmitOptions& options);

// The C++ name of a kernel's host launcher: its own name, with a trailing underscore where
// C++ or the CUDA headers reserve that (`int_`, `half_`, `NAN_`).
std::string launcherName(const tir::Kernel& k);

// Reports (arch-feature) each kernel that uses an instruction `arch` does not have (wgmma needs
// sm_90a); false when there is one. The pipeline runs it before emit().
bool checkArchFeatures(const tir::Module& module, Arch arch, DiagnosticEngine& diags);

// Reports (launcher-name) each kernel whose launcher would have the name of an earlier one's
// (`int_` after `int`); false when there is one. The pipeline runs it before emit().
bool checkLauncherNames(const tir::Module& module, DiagnosticEngine& diags);

const char* archName(Arch a);

}  // namespace tyl::cuda
