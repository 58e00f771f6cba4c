#include "ir/layout/Wgmma.h"

#include <fmt/format.h>

#include <bit>

#include "ir/layout/CheckedMath.h"

namespace tyl::layout {

// ---- The accumulator ---------------------------------------------------------------

bool validWgmmaN(int64_t n) { return n >= 8 && n <= 256 && n % 8 == 0; }

TileLayout wgmmaLayoutD(int64_t n, int64_t groupsM, int64_t groupsN) {
  if (!validWgmmaN(n)) throw Error(fmt::format("a wgmma atom's N is 8 to 256 in steps of 8, not {}", n));
  if (groupsM < 1 || groupsN < 1) throw Error("a grid of warpgroups has at least one in each direction");
  TileLayout t;
  t.shard = {
      {groupsM, groupsN, Axis::wgid},  // warpgroup row
      {4, 1, Axis::wid_in_wg},  // w: 16 rows per warp
      {2, 2, Axis::m},          // rows l / 4 and l / 4 + 8: register bit 1
      {8, 4, Axis::laneid},     // l / 4
      {groupsN, 1, Axis::wgid},  // warpgroup column
      {n / 8, 4, Axis::m},      // 8-column chunk: registers r >> 2
      {4, 1, Axis::laneid},     // l % 4
      {2, 1, Axis::m},          // columns 2 (l % 4) and 2 (l % 4) + 1: register bit 0
  };
  return t;
}

TileLayout wgmmaLayoutA(int64_t kBlocks, int64_t groupsM, int64_t groupsN) {
  if (kBlocks < 1) throw Error("a wgmma A fragment has at least one k block");
  if (groupsM < 1 || groupsN < 1) throw Error("a grid of warpgroups has at least one in each direction");
  TileLayout t;
  t.shard = {
      {groupsM, groupsN, Axis::wgid},  // warpgroup row
      {4, 1, Axis::wid_in_wg},         // w: 16 rows per warp
      {2, 2, Axis::m},                 // rows l / 4 and l / 4 + 8: register bit 1
      {8, 4, Axis::laneid},            // l / 4
      {kBlocks, 8, Axis::m},           // k block: 8 registers each
      {2, 4, Axis::m},                 // columns and columns + 8: register bit 2
      {4, 1, Axis::laneid},            // l % 4
      {2, 1, Axis::m},                 // columns 2 (l % 4) and 2 (l % 4) + 1: register bit 0
  };
  t.replica = {{groupsN, 1, Axis::wgid}};
  return t;
}

RowCol wgmmaAtomD(int thread, int reg) {
  const int w = thread / 32, l = thread % 32;
  return {16 * w + l / 4 + 8 * ((reg >> 1) & 1), 8 * (reg >> 2) + 2 * (l % 4) + (reg & 1)};
}

// ---- Operand descriptors -----------------------------------------------------------

const char* majorName(WgmmaMajor m) { return m == WgmmaMajor::K ? "K-major" : "MN-major"; }

const char* swizzleName(WgmmaSwizzle s) {
  switch (s) {
    case WgmmaSwizzle::None: return "no swizzle";
    case WgmmaSwizzle::B32: return "32-byte swizzle";
    case WgmmaSwizzle::B64: return "64-byte swizzle";
    case WgmmaSwizzle::B128: return "128-byte swizzle";
  }
  return "?";
}

int64_t swizzlePeriodBytes(WgmmaSwizzle s) { return s == WgmmaSwizzle::None ? 0 : 8 * static_cast<int64_t>(s); }

namespace {

// A descriptor field: a byte value that is a multiple of 16 below 2^18, in 16-byte units.
uint64_t field(int64_t bytes, const char* name) {
  if (bytes < 0 || bytes % 16 != 0 || bytes >= (int64_t{1} << 18))
    throw Error(fmt::format("a wgmma descriptor's {} must be a multiple of 16 bytes below 256 KiB, not {}", name,
                            bytes));
  return static_cast<uint64_t>(bytes) >> 4;
}

uint64_t layoutType(WgmmaSwizzle s) {
  switch (s) {
    case WgmmaSwizzle::None: return 0;
    case WgmmaSwizzle::B128: return 1;
    case WgmmaSwizzle::B64: return 2;
    case WgmmaSwizzle::B32: return 3;
  }
  return 0;
}

}  // namespace

uint64_t WgmmaDescriptor::encode() const {
  return field(start, "start address") | field(lbo, "leading byte offset") << 16 |
         field(sbo, "stride byte offset") << 32 | layoutType(swizzle) << 62;
}

int64_t wgmmaCanonicalOffset(WgmmaMajor major, WgmmaSwizzle swizzle, int64_t lbo, int64_t sbo, int elemBytes,
                             int64_t mn, int64_t k) {
  const int64_t chunk = 16, e = elemBytes, perChunk = chunk / e, span = static_cast<int64_t>(swizzle);
  if (major == WgmmaMajor::K) {
    if (swizzle == WgmmaSwizzle::None) return (mn % 8) * chunk + (mn / 8) * sbo + (k % perChunk) * e + (k / perChunk) * lbo;
    return (mn % 8) * span + (mn / 8) * sbo + (k % perChunk) * e + (k / perChunk) * chunk;
  }
  if (swizzle == WgmmaSwizzle::None) return (mn % perChunk) * e + (mn / perChunk) * sbo + (k % 8) * chunk + (k / 8) * lbo;
  const int64_t perRow = span / e;
  return (mn % perRow) * e + (mn / perRow) * lbo + (k % 8) * span + (k / 8) * sbo;
}

int64_t wgmmaSwizzleAddress(WgmmaSwizzle swizzle, int64_t address) {
  if (swizzle == WgmmaSwizzle::None) return address;
  const int bits = std::countr_zero(static_cast<uint64_t>(swizzle)) - 4;  // 1, 2 or 3
  const int64_t mask = (int64_t{1} << bits) - 1;
  return address ^ (((address >> 7) & mask) << 4);
}

namespace {

// The wgmma swizzle a layout's swizzle is, for `elemBytes`-byte elements: Swizzle<B, 4, 3> on
// byte addresses, B = 1, 2 or 3; nullopt when it is none of them.
std::optional<WgmmaSwizzle> swizzleOf(const Layout& layout, int elemBytes) {
  if (!layout.swizzle || layout.swizzle->len == 0) return WgmmaSwizzle::None;
  const Swizzle& s = *layout.swizzle;
  const int byteShift = std::countr_zero(static_cast<unsigned>(elemBytes));
  if (!s.inner || s.perElement + byteShift != 4 || s.atom != 3 || s.len < 1 || s.len > 3) return std::nullopt;
  return static_cast<WgmmaSwizzle>(16 << s.len);
}

}  // namespace

std::variant<WgmmaOperandForm, WgmmaFormMismatch> wgmmaOperandForm(const WgmmaTile& tile) {
  auto mismatch = [](std::string message, std::optional<std::pair<int64_t, int64_t>> element = std::nullopt) {
    return WgmmaFormMismatch{std::move(message), element};
  };
  const Layout& layout = *tile.layout;
  const int elemBytes = tile.elemBytes;
  const size_t rank = tile.shape.size();
  if (tile.origin.size() != rank || tile.mnDim == tile.kDim || tile.mnDim < 0 || tile.kDim < 0 ||
      static_cast<size_t>(tile.mnDim) >= rank || static_cast<size_t>(tile.kDim) >= rank)
    throw Error("a wgmma tile names dimensions its tensor does not have");
  if (elemBytes != 2) return mismatch("wgmma operands from shared memory are 16-bit here");
  const int64_t extentMN = tile.extentMN, extentK = tile.extentK, atomMN = tile.atomMN;
  if (extentMN <= 0 || extentK <= 0 || extentMN % atomMN != 0 || extentK % kWgmmaK != 0)
    return mismatch(fmt::format("the tile's MN extent {} and K extent {} must be multiples of {} and {}", extentMN,
                                extentK, atomMN, kWgmmaK));
  for (const Iter& it : layout.tile.shard)
    if (it.axis != Axis::m) return mismatch("a wgmma operand tile lies in memory ('m') only");
  if (!layout.tile.replica.empty()) return mismatch("a wgmma operand tile has no replicas");
  const std::optional<WgmmaSwizzle> swizzle = swizzleOf(layout, elemBytes);
  if (!swizzle)
    return mismatch(fmt::format("its swizzle is none of wgmma's: for {}-byte elements, ComposeLayout(per_element = {}, "
                                  "swizzle_len = B, atom_len = 3, ...) "
                                "with B = 1, 2 or 3 (32-, 64- or 128-byte spans)",
                                elemBytes, 4 - std::countr_zero(static_cast<unsigned>(elemBytes))));

  // Byte offsets from the allocation's start of tile element (mn, k): before the swizzle, and
  // where the layout puts it.
  const Layout affine{layout.tile};
  std::vector<int64_t> coord(rank);
  auto at = [&](int64_t mn, int64_t k) -> const std::vector<int64_t>& {
    coord = tile.origin;
    coord[static_cast<size_t>(tile.mnDim)] += mn;
    coord[static_cast<size_t>(tile.kDim)] += k;
    return coord;
  };
  auto linear = [&](int64_t mn, int64_t k) {
    return checkedMul(applyAxis(affine, at(mn, k), tile.shape, Axis::m), elemBytes);
  };
  auto placed = [&](int64_t mn, int64_t k) {
    return checkedMul(applyAxis(layout, at(mn, k), tile.shape, Axis::m), elemBytes);
  };
  auto element = [&](int64_t mn, int64_t k) { return shapeToString(std::vector<int64_t>{mn, k}); };

  WgmmaOperandForm form;
  form.swizzle = *swizzle;
  const int64_t origin = linear(0, 0);
  if (linear(0, 1) - origin == elemBytes)
    form.major = WgmmaMajor::K;
  else if (linear(1, 0) - origin == elemBytes)
    form.major = WgmmaMajor::MN;
  else
    return mismatch("neither its K nor its MN dimension is contiguous in memory", std::pair{0, 1});
  const int64_t perChunk = 16 / elemBytes, span = static_cast<int64_t>(*swizzle);
  if (form.major == WgmmaMajor::K) {
    form.sbo = extentMN > 8 ? linear(8, 0) - origin : 0;  // one group of 8 rows: unused
    form.lbo = *swizzle == WgmmaSwizzle::None ? linear(0, perChunk) - origin : 16;
  } else if (*swizzle == WgmmaSwizzle::None) {
    form.sbo = extentMN > perChunk ? linear(perChunk, 0) - origin : 0;
    form.lbo = linear(0, 8) - origin;
  } else {
    form.sbo = linear(0, 8) - origin;
    form.lbo = extentMN > span / elemBytes ? linear(span / elemBytes, 0) - origin : 0;
  }
  const std::string what = fmt::format("{} {} wgmma operand with {} (LBO {} B, SBO {} B)",
                                       form.major == WgmmaMajor::K ? "a" : "an", majorName(form.major),
                                       swizzleName(form.swizzle), form.lbo, form.sbo);
  if (form.lbo < 0 || form.sbo < 0 || form.lbo % 16 != 0 || form.sbo % 16 != 0 || form.lbo >= (1 << 18) ||
      form.sbo >= (1 << 18))
    return mismatch(fmt::format("{} has offsets a descriptor cannot hold (multiples of 16 bytes below 256 KiB)", what));

  // Every element of every atom must be where the descriptor reads it.
  form.atomsMN = extentMN / atomMN;
  form.stepsK = extentK / kWgmmaK;
  for (int64_t a = 0; a < form.atomsMN; ++a)
    for (int64_t s = 0; s < form.stepsK; ++s) {
      const int64_t mn0 = a * atomMN, k0 = s * kWgmmaK;
      const int64_t start = linear(mn0, k0);
      if (start % 16 != 0 || wgmmaSwizzleAddress(form.swizzle, start) != start)
        return mismatch(fmt::format("{}: the atom at {} starts at byte {}, not at the start of a 16-byte chunk in the "
                                    "first row of its swizzle pattern",
                                    what, element(mn0, k0), start),
                        std::pair{mn0, k0});
      form.starts.push_back(start);
      for (int64_t mn = 0; mn < atomMN; ++mn)
        for (int64_t k = 0; k < kWgmmaK; ++k) {
          const int64_t read = wgmmaSwizzleAddress(
              form.swizzle,
              start + wgmmaCanonicalOffset(form.major, form.swizzle, form.lbo, form.sbo, elemBytes, mn, k));
          const int64_t actual = placed(mn0 + mn, k0 + k);
          if (read != actual)
            return mismatch(fmt::format("{}: element {} is at byte {}, but the descriptor reads it at byte {}", what,
                                        element(mn0 + mn, k0 + k), actual, read),
                            std::pair{mn0 + mn, k0 + k});
        }
    }
  return form;
}

std::variant<WgmmaOperandForm, WgmmaFormMismatch> wgmmaOperandForm(const Layout& layout, const Shape& shape, int mnDim,
                                                                  int64_t atomMN, int elemBytes) {
  if (shape.size() != 2 || (mnDim != 0 && mnDim != 1))
    return WgmmaFormMismatch{"a wgmma operand tile has two dimensions", std::nullopt};
  WgmmaTile tile;
  tile.layout = &layout;
  tile.shape = shape;
  tile.origin = {0, 0};
  tile.mnDim = mnDim;
  tile.kDim = 1 - mnDim;
  tile.extentMN = shape[static_cast<size_t>(mnDim)];
  tile.extentK = shape[static_cast<size_t>(1 - mnDim)];
  tile.atomMN = atomMN;
  tile.elemBytes = elemBytes;
  return wgmmaOperandForm(tile);
}

}  // namespace tyl::layout
