// Lowering, kernel by kernel: the tile IR of a checked kernel becomes its thread IR in the
// steps of KernelLowering::run, one line each.
#include <fmt/format.h>

#include "ir/lower/Convergence.h"
#include "ir/lower/LowerImpl.h"
#include "ir/thread/Walk.h"

namespace tyl::lower {

std::optional<tir::Kernel> KernelLowering::run() {
  const size_t errors = diags_.errorCount();
  if (!checkLayouts()) return std::nullopt;                              // CheckLayouts.cpp
  checkExpectTx(tk_.body);                                               // CheckExpectTx.cpp
  checkInFlight();                                                       // CheckInFlight.cpp
  hasTmaStores_ = hasTmaStores(tk_.body);                                // LowerTma.cpp
  std::vector<tir::LaunchCheck> analysisChecks = takeAnalysisChecks();  // LaunchChecks.cpp: they go last
  addAlignmentChecks();                                                  // LaunchChecks.cpp
  addDimensionChecks();                                                  // LaunchChecks.cpp
  addGridDivisorChecks();                                                // LaunchChecks.cpp
  const size_t bodyChecks = k_.checks.size();
  lowerBody();                                                           // LowerStatements.cpp
  checkRegisterBudget();                                                 // CheckRegisterBudget.cpp
  markReadOnlyBuffers();                                                 // ReadOnlyBuffers.cpp
  addDisjointChecks(bodyChecks);                                         // LaunchChecks.cpp
  checkConvergence(k_, diags_);                                          // Convergence.cpp
  tir::removeCooperative(k_.body);                                       // ir/thread/Walk.h
  appendAnalysisChecks(std::move(analysisChecks));                       // LaunchChecks.cpp
  if (diags_.errorCount() > errors) return std::nullopt;
  return std::move(k_);
}

std::optional<tir::Module> lower(const tile::Module& module, DiagnosticEngine& diags, const Options& options) {
  tir::Module out;
  out.sourceName = module.sourceName;
  LayoutTables tables;
  for (const tile::Kernel& k : module.kernels) {
    if (!k.instantiation.empty())
      diags.setContext(k.skeleton.loc, fmt::format("in the instantiation '{}' ({})", k.skeleton.name, k.instantiation));
    KernelLowering kl(k, diags, tables, options);
    if (std::optional<tir::Kernel> lowered = kl.run()) out.kernels.push_back(std::move(*lowered));
    diags.clearContext();
  }
  if (diags.hasErrors()) return std::nullopt;
  return out;
}

}  // namespace tyl::lower