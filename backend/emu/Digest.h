// A stable fingerprint of bytes (FNV-1a, 64 bits) for printing results compactly: equal
// on every platform and run, so tests and users can compare outputs by digest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tyl::emu {

uint64_t digest(std::span<const std::byte> bytes);
// Sixteen lowercase hex digits.
std::string digestHex(uint64_t digest);

}  // namespace tyl::emu
