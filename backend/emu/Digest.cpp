#include "backend/emu/Digest.h"

#include <fmt/format.h>

namespace tyl::emu {

uint64_t digest(std::span<const std::byte> bytes) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64 offset basis and prime
  for (std::byte b : bytes) {
    h ^= std::to_integer<uint64_t>(b);
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string digestHex(uint64_t digest) { return fmt::format("{:016x}", digest); }

}  // namespace tyl::emu
