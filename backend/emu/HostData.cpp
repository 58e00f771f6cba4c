#include "backend/emu/HostData.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "backend/emu/Values.h"

namespace tyl::emu {

Buffer makeBuffer(tir::Type elem, int64_t count, bool initialized) {
  if (count < 0) throw std::invalid_argument("makeBuffer: negative element count");
  Buffer b;
  b.bytes.resize(static_cast<size_t>(count) * tir::typeBytes(elem));
  b.initialized = initialized;
  return b;
}

int64_t elementCount(const Buffer& buffer, tir::Type elem) {
  return static_cast<int64_t>(buffer.bytes.size()) / tir::typeBytes(elem);
}

namespace {

size_t byteIndex(const Buffer& buffer, tir::Type elem, int64_t index) {
  if (index < 0 || index >= elementCount(buffer, elem))
    throw std::out_of_range("buffer element " + std::to_string(index) + " out of range");
  return static_cast<size_t>(index) * tir::typeBytes(elem);
}

}  // namespace

// Memory is little-endian, as on the GPU; so is every host this runs on.
double getElement(const Buffer& buffer, tir::Type elem, int64_t index) {
  uint64_t bits = 0;
  std::memcpy(&bits, buffer.bytes.data() + byteIndex(buffer, elem, index), tir::typeBytes(elem));
  return toDouble(elem, canonical(elem, bits));
}

void setElement(Buffer& buffer, tir::Type elem, int64_t index, double value) {
  uint64_t bits = fromDouble(elem, value);
  std::memcpy(buffer.bytes.data() + byteIndex(buffer, elem, index), &bits, tir::typeBytes(elem));
}

namespace {

// splitmix64: tiny, well mixed, and fully specified (unlike std:: distributions).
uint64_t nextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

void fillRandom(Buffer& buffer, tir::Type elem, uint64_t seed) {
  uint64_t state = seed;
  int64_t n = elementCount(buffer, elem);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = nextRandom(state);
    double value;
    if (tir::isFloat(elem))
      value = static_cast<double>(r >> 11) * 0x1p-52 - 1.0;  // 53 random bits
    else if (elem == tir::Type::U32)
      value = static_cast<double>(r % 17);
    else if (elem == tir::Type::Pred)
      value = static_cast<double>(r & 1);
    else
      value = static_cast<double>(r % 17) - 8.0;
    setElement(buffer, elem, i, value);
  }
}

}  // namespace tyl::emu
