// Spelling thread IR types and expressions as CUDA C++. Shared by the kernel and the
// launcher printers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/thread/KernelRanges.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::cuda {

// The C++ type of a scalar (16-bit floats as __half / __nv_bfloat16).
const char* cppType(tir::Type t);
// The C++ element type of a pointer parameter.
const char* pointerElemType(tir::Type t);

class ExprPrinter {
 public:
  // Prints expressions of `k`, in its kernel or in its host launcher (which has no registers or ids).
  explicit ExprPrinter(const tir::Kernel& k);
  std::string print(const tir::ExprRef& e) const;
  // Whether a loop's `var += step` must be printed as a saturating tylo::loop_next (KernelRanges).
  bool stepMayOverflow(const tir::For& loop) const { return ranges().stepMayOverflow(loop); }
  // A register operand, as an rvalue.
  std::string reg(const tir::Reg& r) const;

  // The C++ names of the kernel's entities: safeName() of the IR names, made unique
  // (parameters first, then shared buffers, register arrays and variables; a later
  // entity whose name is taken gets a numeric suffix).
  const std::string& paramName(size_t id) const { return params_.at(id); }
  const std::string& bufferName(size_t id) const { return locals().buffers.at(id); }
  const std::string& arrayName(size_t id) const { return locals().arrays.at(id); }
  const std::string& varName(size_t id) const { return locals().vars.at(id); }

 private:
  // The kernel's own names, worked out on first use (host code never needs them).
  struct Locals {
    std::vector<std::string> buffers, arrays, vars;
  };
  const Locals& locals() const;
  std::string binary(const tir::Expr& e) const;
  std::string castTo(tir::Type to, const tir::ExprRef& a) const;
  // The kernel's value ranges, worked out on first use (printing names needs none).
  const tir::KernelRanges& ranges() const;
  const tir::Kernel& k_;
  mutable std::optional<tir::KernelRanges> ranges_;
  std::vector<std::string> params_;
  mutable std::optional<Locals> locals_;
};

std::string intLiteral(int64_t v, tir::Type t);
std::string floatLiteral(double v);
// A C++ identifier that cannot clash with CUDA or C++ names.
std::string safeName(const std::string& name);

}  // namespace tyl::cuda
