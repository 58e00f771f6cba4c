// Internals of the CUDA backend.
#pragma once

#include <string>
#include <string_view>

#include "backend/cuda/CudaPrinter.h"
#include "backend/cuda/EmitCuda.h"

namespace tyl::cuda {

// `s` as the inside of a C string literal ("..." in a #line directive): backslashes, quotes and
// control characters escaped.
std::string stringLiteralBody(std::string_view s);

// The __global__ function for one kernel.
std::string emitKernel(const tir::Kernel& k, const EmitOptions& options);
// The host launcher's definition (for the .cu) and declaration (for the .cuh).
std::string emitLauncher(const tir::Kernel& k, const EmitOptions& options);
std::string launcherDeclaration(const tir::Kernel& k);

// The device functions holding the inline PTX of the module's wgmma shapes, and the name of the
// one a statement calls (EmitWgmma.cpp).
std::string wgmmaFunctions(const tir::Module& module);
std::string wgmmaFunctionName(const tir::Wgmma& op);

// The kernel parameter holding tensor map `i` (Kernel::tensorMaps), and the launcher's variable.
inline std::string tensorMapName(size_t i) { return "tylo_tmap" + std::to_string(i); }

// The __global__ function: in a name space users cannot spell (safeName escapes `tylo_`).
inline std::string kernelSymbol(const tir::Kernel& k) { return "tylo_kernel_" + k.name; }

}  // namespace tyl::cuda
