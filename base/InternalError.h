// Compiler bugs, kept apart from errors in the input.
//
// Whatever a user writes, tyloc answers with diagnostics (base/Diagnostics.h). A broken
// invariant of tyloc's own (an IR the verifier rejects, a case a pass believed impossible)
// is an InternalError instead: the driver prints it with the place in tyloc's sources where it
// was detected and exits with code 3.
//
//   TYL_CHECK(cp.bytes == 16, "a cp.async of {} bytes", cp.bytes);
//   TYL_UNREACHABLE("unknown statement kind");
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace tyl {

class InternalError : public std::logic_error {
 public:
  // `file` and `line`: where in tyloc's sources the bug was detected.
  InternalError(const std::string& message, const char* file, int line);

  const std::string& message() const { return message_; }
  const std::string& place() const { return place_; }  // "ir/lower/LowerKernel.cpp:42"

 private:
  std::string message_;
  std::string place_;
};

[[noreturn]] void internalError(const char* file, int line, const std::string& message);

}  // namespace tyl

// Throws an InternalError: the code reached a case it holds to be impossible.
#define TYL_UNREACHABLE(...) ::tyl::internalError(__FILE__, __LINE__, ::fmt::format(__VA_ARGS__))

// Throws an InternalError when `cond` is false; the message (fmt syntax) says what was expected.
#define TYL_CHECK(cond, ...)                                                                    \
  do {                                                                                          \
    if (!(cond)) [[unlikely]]                                                                   \
      ::tyl::internalError(__FILE__, __LINE__, "check '" #cond "' failed: " + ::fmt::format(__VA_ARGS__)); \
  } while (false)
