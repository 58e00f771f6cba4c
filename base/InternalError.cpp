#include "base/InternalError.h"

namespace tyl {

// The build maps the repository root out of __FILE__ (-fmacro-prefix-map in CMakeLists.txt),
// so the place reads "ir/lower/LowerKernel.cpp:42" on every machine.
InternalError::InternalError(const std::string& message, const char* file, int line)
    : std::logic_error(fmt::format("{} (at {}:{})", message, file, line)),
      message_(message),
      place_(fmt::format("{}:{}", file, line)) {}

void internalError(const char* file, int line, const std::string& message) {
  throw InternalError(message, file, line);
}

}  // namespace tyl
