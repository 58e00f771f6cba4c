// NumPy .npy files (format versions 1.0 and 2.0), for handing tensors to and from the
// emulator: little-endian '<f4' (f32), '<f2' (f16), '<i4' (i32), '<u4' (u32), '<i8' (i64),
// in C order. NumPy has no bfloat16, so bf16 tensors are stored as their raw bits with
// descr '<u2' (what ml_dtypes' arrays become under .view(np.uint16)); reading '<u2' gives bf16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/thread/ThreadIR.h"

namespace tyl::emu {

struct NpyArray {
  tir::Type type = tir::Type::F32;
  std::vector<int64_t> shape;   // empty: a scalar
  std::vector<std::byte> data;  // C order, little-endian

  int64_t elements() const;
};

// A malformed or unsupported file: a user error to report, not a bug.
struct NpyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// '<f4' etc.; nullopt for Pred, which has no .npy form here.
std::optional<std::string> npyDescr(tir::Type type);
std::optional<tir::Type> npyType(std::string_view descr);

// The bytes of a .npy file: version 1.0, or 2.0 when the header needs it. Throws NpyError
// when the data size does not match the shape.
std::string encodeNpy(const NpyArray& array);
NpyArray decodeNpy(std::string_view file);

void writeNpy(const std::filesystem::path& path, const NpyArray& array);
// Throws NpyError, with a message that does not repeat the path, for a file that cannot be
// read (a directory, a device) or is not a .npy array.
NpyArray readNpy(const std::filesystem::path& path);

}  // namespace tyl::emu
