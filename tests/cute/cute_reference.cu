// The CuTe side of the cross-check (CuteReference.h): each shared tile built from CuTe's GMMA
// layout atoms with tile_to_shape, on a shared-memory pointer at a given address, and CuTe's own
// functions asked for its descriptors, its element addresses and its TMA swizzle. Host code only:
// nothing here runs on a GPU, and the pointers are never dereferenced.
#include <cstdint>

// CuTe turns a shared pointer into its shared-window address with an NVVM intrinsic on the
// device; on the host it has no conversion and writes a start address of 0 into every
// descriptor. The tiles here are placed at pointers whose value is the shared address itself, so
// the conversion is the identity on the low 32 bits: this file supplies it for the host pass
// through CuTe's __nvvm_get_smem_pointer path, so that the start address of each descriptor is
// the one make_gmma_desc computes.
#if !defined(__CUDA_ARCH__)
#define CUTE_NVVM_GET_SMEM_POINTER_ACTIVATED 1
extern "C" inline uint32_t __nvvm_get_smem_pointer(void const* pointer) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(pointer));
}
#endif

#include <cute/atom/copy_traits_sm90_tma_swizzle.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/tensor.hpp>

#include <stdexcept>
#include <type_traits>

#include "tests/cute/CuteReference.h"

namespace tyl::cute_reference {
namespace {

using namespace cute;
namespace GMMA = SM90::GMMA;
using Elem = half_t;  // bf16 and f16 tiles are laid out alike: only the 16 bits count

// What a tile is for: a wgmma operand of the given major whose atoms are AtomMN x 16 elements,
// or a TMA destination.
template <GMMA::Major Major, int AtomMN>
struct Operand {};
struct TmaDestination {};

// Calls f(layout, purpose) with the CuTe layout of `tile`.
template <class F>
auto withTile(Tile tile, F&& f) {
  switch (tile) {
    case Tile::AK128_64x64:
      return f(tile_to_shape(GMMA::Layout_K_SW128_Atom<Elem>{}, Shape<_64, _64>{}), Operand<GMMA::Major::K, 64>{});
    case Tile::AK64_64x32:
      return f(tile_to_shape(GMMA::Layout_K_SW64_Atom<Elem>{}, Shape<_64, _32>{}), Operand<GMMA::Major::K, 64>{});
    case Tile::AK32_64x16:
      return f(tile_to_shape(GMMA::Layout_K_SW32_Atom<Elem>{}, Shape<_64, _16>{}), Operand<GMMA::Major::K, 64>{});
    case Tile::AK128_128x64:
      return f(tile_to_shape(GMMA::Layout_K_SW128_Atom<Elem>{}, Shape<_128, _64>{}), Operand<GMMA::Major::K, 64>{});
    case Tile::BMN128_Panels_64x128:
      // (N, K) = (128, 64): the atoms run down K first, so the two N-panels of 64 are 4096 apart.
      return f(tile_to_shape(GMMA::Layout_MN_SW128_Atom<Elem>{}, Shape<_128, _64>{}, Step<_2, _1>{}),
               Operand<GMMA::Major::MN, 128>{});
    case Tile::BMN128_64x64:
      return f(tile_to_shape(GMMA::Layout_MN_SW128_Atom<Elem>{}, Shape<_64, _64>{}), Operand<GMMA::Major::MN, 64>{});
    case Tile::BK64_32x64:
      // (N, K) = (64, 32).
      return f(tile_to_shape(GMMA::Layout_K_SW64_Atom<Elem>{}, Shape<_64, _32>{}), Operand<GMMA::Major::K, 64>{});
    case Tile::BMNNone_16x32:
      // (N, K) = (32, 16): 8 x 8 core matrices, four along N, then two along K.
      return f(tile_to_shape(GMMA::Layout_MN_INTER_Atom<Elem>{}, Shape<_32, _16>{}), Operand<GMMA::Major::MN, 32>{});
    case Tile::Tma128_32x64:
      return f(tile_to_shape(GMMA::Layout_K_SW128_Atom<Elem>{}, Shape<_32, _64>{}), TmaDestination{});
    case Tile::Tma64_Panels_32x64:
      // Two panels of 32 columns, 1024 elements apart.
      return f(tile_to_shape(GMMA::Layout_K_SW64_Atom<Elem>{}, Shape<_32, _64>{}), TmaDestination{});
  }
  throw std::invalid_argument("unknown CuTe tile");
}

template <class Layout>
auto tensorAt(Layout const& layout, uint32_t smemAddress) {
  return make_tensor(make_smem_ptr(reinterpret_cast<Elem*>(static_cast<uintptr_t>(smemAddress))), layout);
}

// The address an iterator of a shared tensor reads, with its swizzle (if any) applied.
template <class Pointer>
uint32_t addressOf(Pointer const& p) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(raw_pointer_cast(p)));
}
template <class SwizzleFn, class Pointer>
uint32_t addressOf(swizzle_ptr<SwizzleFn, Pointer> const& p) {
  return addressOf(swizzle_ptr<SwizzleFn, Pointer>::apply_swizzle(p.get()));
}

// CuTe's descriptor of the k16 step `step` of MN atom `atom`: make_gmma_desc on that AtomMN x 16
// slice of the tensor, as CuTe's GMMA partitioning hands it over.
template <GMMA::Major Major, int AtomMN, class Layout>
uint64_t descriptorOf(Layout const& layout, uint32_t smemAddress, int atom, int step, Operand<Major, AtomMN>) {
  if (atom < 0 || step < 0 || atom >= int(size<0>(layout)) / AtomMN || step >= int(size<1>(layout)) / 16)
    throw std::out_of_range("no such wgmma atom in the tile");
  auto slice = local_tile(tensorAt(layout, smemAddress), Shape<Int<AtomMN>, _16>{}, make_coord(atom, step));
  return GMMA::make_gmma_desc<Major>(slice);
}
template <class Layout>
uint64_t descriptorOf(Layout const&, uint32_t, int, int, TmaDestination) {
  throw std::invalid_argument("a TMA destination tile is no wgmma operand");
}

int bytesOf(TMA::SmemSwizzleBits bits) {
  switch (bits) {
    case TMA::SmemSwizzleBits::DISABLE: return 0;
    case TMA::SmemSwizzleBits::B32: return 32;
    case TMA::SmemSwizzleBits::B64: return 64;
    case TMA::SmemSwizzleBits::B128: return 128;
  }
  return -1;
}

template <class F>
auto withSwizzle(int bits, F&& f) {
  switch (bits) {
    case 0: return f(Swizzle<0, 4, 3>{});
    case 1: return f(Swizzle<1, 4, 3>{});
    case 2: return f(Swizzle<2, 4, 3>{});
    case 3: return f(Swizzle<3, 4, 3>{});
  }
  throw std::invalid_argument("a wgmma or TMA swizzle has 0 to 3 bits");
}

}  // namespace

uint64_t gmmaDescriptor(Tile tile, uint32_t smemAddress, int atom, int step) {
  return withTile(tile, [&](auto const& layout, auto purpose) {
    return descriptorOf(layout, smemAddress, atom, step, purpose);
  });
}

uint32_t elementAddress(Tile tile, uint32_t smemAddress, int i, int j) {
  return withTile(tile, [&](auto const& layout, auto) {
    if (i < 0 || j < 0 || i >= int(size<0>(layout)) || j >= int(size<1>(layout)))
      throw std::out_of_range("no such element in the tile");
    auto tensor = tensorAt(layout, smemAddress);
    return addressOf(tensor.data() + tensor.layout()(i, j));
  });
}

int tmaSwizzleBytes(Tile tile) {
  return withTile(tile, [](auto const& layout, auto) { return bytesOf(detail::get_tma_swizzle_bits(layout)); });
}

int tmaSwizzleBytesOf(int bits) {
  return withSwizzle(bits, [](auto swizzle) { return bytesOf(detail::get_tma_swizzle_bits(swizzle)); });
}

uint32_t swizzleAddress(int bits, uint32_t byteAddress) {
  return withSwizzle(bits, [&](auto swizzle) { return static_cast<uint32_t>(swizzle(byteAddress)); });
}

namespace {

// The (row, col) of the element a column-major (M, K) fragment layout maps (thread, value) to.
template <class FragmentLayout>
void elementOf(FragmentLayout const& layout, int rows, int thread, int value, int* row, int* col) {
  const int index = static_cast<int>(layout(thread, value));
  *row = index % rows;
  *col = index / rows;
}

}  // namespace

void gmmaRegisterA(int thread, int value, int* row, int* col) {
  using Traits = MMA_Traits<SM90_64x64x16_F32F16F16_RS<GMMA::Major::K, GMMA::Major::K>>;
  elementOf(typename Traits::ALayout{}, 64, thread, value, row, col);
}

void gmmaAccumulator(int n, int thread, int value, int* row, int* col) {
  switch (n) {
    case 64: return elementOf(GMMA::CLayout_64x64{}, 64, thread, value, row, col);
    case 128: return elementOf(GMMA::CLayout_64x128{}, 64, thread, value, row, col);
    case 256: return elementOf(GMMA::CLayout_64x256{}, 64, thread, value, row, col);
  }
  throw std::invalid_argument("an accumulator of N = 64, 128 or 256");
}

}  // namespace tyl::cute_reference
