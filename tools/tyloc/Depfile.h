// The dependency file of `--depfile`: one Make rule, `targets: prerequisites`, written the way
// GCC and Clang write theirs, so that Make, Ninja and CMake read the paths back.
#pragma once

#include <string>
#include <vector>

namespace tyl::driver {

// The rule's line, newline included. A space, a tab or a '#' in a path is preceded by a
// backslash, and so is each backslash right before one of them; '$' is written '$$'. Other
// characters, ':' and '%' among them, are written as they are (Ninja and CMake take them
// literally). A path holding a line break, or ending with a backslash or ':', cannot be
// written: the line is then empty and `*problem` says which path and why.
std::string dependencyLine(const std::vector<std::string>& targets, const std::vector<std::string>& prerequisites,
                           std::string* problem);

}  // namespace tyl::driver
