// Diagnostic kinds reported from more than one place in the compiler.
#pragma once

#include "base/Diagnostics.h"

namespace tyl {

TYL_DIAG(kUnknownName, Error, "unknown-name", "a name that is not declared");
TYL_DIAG(kTypeMismatch, Error, "type-mismatch", "a value of the wrong kind (integer, layout, tuple, ...)");
TYL_DIAG(kIntegerOverflow, Error, "integer-overflow", "compile-time integer arithmetic overflows 64 bits");
TYL_DIAG(kNotConstant, Error, "not-constant", "an expression that must be known at compile time is not");
TYL_DIAG(kInputLimit, Error, "input-limit", "the input exceeds a size or nesting limit");
TYL_DIAG(kDivisionByZero, Error, "division-by-zero", "a division or modulo by a divisor known to be zero");
TYL_DIAG(kTooLarge, Error, "too-large", "an input that expands beyond a limit of the compiler (unrolling, enumeration)");
TYL_DIAG(kNegativeOffset, Error, "negative-offset",
         "a shared-memory or register layout that places an element before the start of its storage");
TYL_DIAG(kRegisterLimit, Error, "register-limit", "a register fragment that needs too many registers per thread");
TYL_DIAG(kRegisterBudget, Error, "register-budget",
         "warpgroups whose registers after setmaxnreg exceed what the launch allocates to the block");
TYL_DIAG(kBadArgument, Error, "bad-argument", "a call with missing, extra, duplicate or unknown arguments");

}  // namespace tyl
