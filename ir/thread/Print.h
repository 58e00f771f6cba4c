// A readable text form of the thread IR (for --emit thread-ir and tests).
#pragma once

#include <string>

#include "ir/thread/ThreadIR.h"

namespace tyl::tir {

std::string print(const Module& module);
std::string print(const Kernel& kernel);
std::string print(const Kernel& kernel, const ExprRef& e);

}  // namespace tyl::tir
