#include "backend/emu/Wgmma.h"

#include <array>
#include <cstddef>

#include "backend/emu/Values.h"
#include "ir/layout/MmaAtom.h"

namespace tyl::emu {

MatrixDescriptor decodeMatrixDescriptor(uint64_t bits) {
  auto bytes = [&](int lowBit) { return static_cast<int64_t>((bits >> lowBit) & 0x3FFF) << 4; };
  MatrixDescriptor d;
  d.start = bytes(0);
  d.lbo = bytes(16);
  d.sbo = bytes(32);
  d.baseOffset = static_cast<int>((bits >> 49) & 0x7);
  d.layoutType = static_cast<int>(bits >> 62);
  return d;
}

namespace {

// One mode of a CuTe layout: extents and strides (bytes), the first fastest; the last extent is
// unbounded.
struct Mode {
  std::array<int64_t, 3> extent;
  std::array<int64_t, 3> stride;
  int count;
};

int64_t evaluate(const Mode& mode, int64_t index) {
  int64_t offset = 0;
  for (int i = 0; i < mode.count; ++i) {
    const bool last = i == mode.count - 1;
    const int64_t digit = last ? index : index % mode.extent[static_cast<size_t>(i)];
    offset += digit * mode.stride[static_cast<size_t>(i)];
    if (!last) index /= mode.extent[static_cast<size_t>(i)];
  }
  return offset;
}

}  // namespace

int64_t matrixElementAddress(const MatrixDescriptor& d, bool mnMajor, int elemBytes, int64_t mn, int64_t k) {
  const int64_t t = 16, perChunk = 16 / elemBytes;
  // The swizzle's row width in 16-byte chunks: 1 (none), 2 (32 B), 4 (64 B), 8 (128 B).
  const int64_t chunks = d.layoutType == 1 ? 8 : d.layoutType == 2 ? 4 : d.layoutType == 3 ? 2 : 1;
  Mode mnMode, kMode;
  if (!mnMajor) {
    mnMode = {{8, 0, 0}, {chunks * t, d.sbo, 0}, 2};
    kMode = d.layoutType == 0 ? Mode{{perChunk, 0, 0}, {elemBytes, d.lbo, 0}, 2}
                              : Mode{{perChunk, 0, 0}, {elemBytes, t, 0}, 2};
  } else if (d.layoutType == 0) {
    mnMode = {{perChunk, 1, 0}, {elemBytes, t, d.sbo}, 3};
    kMode = {{8, 0, 0}, {t, d.lbo, 0}, 2};
  } else {
    mnMode = {{perChunk, chunks, 0}, {elemBytes, t, d.lbo}, 3};
    kMode = {{8, 0, 0}, {chunks * t, d.sbo, 0}, 2};
  }
  int64_t address = d.start + evaluate(mnMode, mn) + evaluate(kMode, k);
  switch (d.layoutType) {
    case 1: address ^= ((address >> 7) & 0x7) << 4; break;
    case 2: address ^= ((address >> 7) & 0x3) << 4; break;
    case 3: address ^= ((address >> 7) & 0x1) << 4; break;
    default: break;
  }
  return address;
}

std::array<double, 256> registerA(tir::Type type, const std::function<uint32_t(int lane, int word)>& word) {
  std::array<double, 256> a{};
  for (int lane = 0; lane < 32; ++lane)
    for (int slot = 0; slot < 8; ++slot) {
      const layout::RowCol rc = layout::mmaAtomA(lane, slot);
      a[static_cast<size_t>(rc.row * 16 + rc.col)] = toFloat(type, (word(lane, slot / 2) >> (16 * (slot % 2))) & 0xffff);
    }
  return a;
}

}  // namespace tyl::emu
