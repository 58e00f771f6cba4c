// Errors raised by the layout algebra. The algebra is a pure library: it reports
// invalid layouts and operations by throwing these, and the compiler turns them into
// diagnostics at the source location that built the layout.
#pragma once

#include <stdexcept>
#include <string>

namespace tyl::layout {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Arithmetic on extents, strides or offsets left the 64-bit range.
class OverflowError : public Error {
 public:
  using Error::Error;
};

}  // namespace tyl::layout
