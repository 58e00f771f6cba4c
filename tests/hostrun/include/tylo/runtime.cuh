// The runtime of the generated code for the host-thread harness: the real runtime's portable
// part (runtime/tylo/portable.cuh: integer helpers, 16-bit registers, element addresses,
// launch errors) as it is, and its PTX wrappers done by the harness, which holds each warp's
// lanes at a collective instruction until all have arrived (tests/hostrun/HostThreads.h).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <bit>
#include <cstdint>

#include "tylo/portable.cuh"

// The generated code's wgmma functions call the harness instead of their inline PTX.
#define TYLO_HOST_THREADS 1

namespace tylo {

inline uint32_t smem_addr(const void* p) { return ::tylo_host::shared_address(p); }

inline void cp_async_16(uint32_t dst, const void* src, uint32_t src_bytes) { ::tylo_host::cp_async(dst, src, 16, src_bytes); }
inline void cp_async_8(uint32_t dst, const void* src, uint32_t src_bytes) { ::tylo_host::cp_async(dst, src, 8, src_bytes); }
inline void cp_async_4(uint32_t dst, const void* src, uint32_t src_bytes) { ::tylo_host::cp_async(dst, src, 4, src_bytes); }
inline void cp_async_commit() { ::tylo_host::cp_async_commit(); }
template <int N>
void cp_async_wait() {
  ::tylo_host::cp_async_wait(N);
}

inline void ldmatrix_x1(uint32_t addr, uint32_t& r0) { ::tylo_host::ldmatrix(addr, false, {&r0}); }
inline void ldmatrix_x2(uint32_t addr, uint32_t& r0, uint32_t& r1) { ::tylo_host::ldmatrix(addr, false, {&r0, &r1}); }
inline void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  ::tylo_host::ldmatrix(addr, false, {&r0, &r1, &r2, &r3});
}
inline void ldmatrix_x1_trans(uint32_t addr, uint32_t& r0) { ::tylo_host::ldmatrix(addr, true, {&r0}); }
inline void ldmatrix_x2_trans(uint32_t addr, uint32_t& r0, uint32_t& r1) { ::tylo_host::ldmatrix(addr, true, {&r0, &r1}); }
inline void ldmatrix_x4_trans(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  ::tylo_host::ldmatrix(addr, true, {&r0, &r1, &r2, &r3});
}

inline void stmatrix_x1(uint32_t addr, uint32_t r0) { ::tylo_host::stmatrix(addr, false, {r0}); }
inline void stmatrix_x2(uint32_t addr, uint32_t r0, uint32_t r1) { ::tylo_host::stmatrix(addr, false, {r0, r1}); }
inline void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  ::tylo_host::stmatrix(addr, false, {r0, r1, r2, r3});
}
inline void stmatrix_x1_trans(uint32_t addr, uint32_t r0) { ::tylo_host::stmatrix(addr, true, {r0}); }
inline void stmatrix_x2_trans(uint32_t addr, uint32_t r0, uint32_t r1) { ::tylo_host::stmatrix(addr, true, {r0, r1}); }
inline void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  ::tylo_host::stmatrix(addr, true, {r0, r1, r2, r3});
}

inline void mma_m16n8k16_f16(float& d0, float& d1, float& d2, float& d3, uint32_t a0, uint32_t a1, uint32_t a2,
                             uint32_t a3, uint32_t b0, uint32_t b1, float c0, float c1, float c2, float c3) {
  ::tylo_host::mma(false, {&d0, &d1, &d2, &d3}, {a0, a1, a2, a3}, {b0, b1}, {c0, c1, c2, c3});
}
inline void mma_m16n8k16_bf16(float& d0, float& d1, float& d2, float& d3, uint32_t a0, uint32_t a1, uint32_t a2,
                              uint32_t a3, uint32_t b0, uint32_t b1, float c0, float c1, float c2, float c3) {
  ::tylo_host::mma(true, {&d0, &d1, &d2, &d3}, {a0, a1, a2, a3}, {b0, b1}, {c0, c1, c2, c3});
}

inline void mbarrier_init(uint32_t bar, uint32_t count) { ::tylo_host::mbarrier_init(bar, count); }
inline void mbarrier_arrive(uint32_t bar) { ::tylo_host::mbarrier_arrive(bar); }
inline void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) { ::tylo_host::mbarrier_arrive(bar, bytes); }
inline void mbarrier_wait(uint32_t bar, uint32_t parity) { ::tylo_host::mbarrier_wait(bar, parity); }
inline void mbarrier_arrive_cluster(uint32_t bar, uint32_t cta) {
  ::tylo_host::mbarrier_arrive(bar, -1, static_cast<int>(cta));
}
inline void mbarrier_arrive_expect_tx_cluster(uint32_t bar, uint32_t bytes, uint32_t cta) {
  ::tylo_host::mbarrier_arrive(bar, bytes, static_cast<int>(cta));
}
inline int32_t cluster_rank() { return static_cast<int32_t>(::tylo_host::cluster_rank()); }
inline void cluster_barrier() { ::tylo_host::cluster_barrier(); }
template <int id, int threads>
inline void named_barrier() {
  ::tylo_host::named_barrier(id, threads);
}
inline int sm_count() { return ::tylo_host::sm_count(); }
inline void fence_mbarrier_init() {}

inline bool encode_tensor_map(CUtensorMap* map, const void* base, int elemBytes, int rank, const uint64_t* dims,
                              const uint64_t* strides, const uint32_t* box, int swizzleBytes) {
  return ::tylo_host::encode_tensor_map(map->opaque, base, elemBytes, rank, dims, strides, box, swizzleBytes);
}
inline void tma_load_2d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar) {
  ::tylo_host::tma_load(dst, map->opaque, {c0, c1}, bar);
}
inline void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar,
                                  uint16_t ctas) {
  ::tylo_host::tma_load(dst, map->opaque, {c0, c1}, bar, ctas);
}
inline void tma_load_3d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, uint32_t bar) {
  ::tylo_host::tma_load(dst, map->opaque, {c0, c1, c2}, bar);
}
inline void tma_load_3d_multicast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, uint32_t bar,
                                  uint16_t ctas) {
  ::tylo_host::tma_load(dst, map->opaque, {c0, c1, c2}, bar, ctas);
}
inline void tma_load_4d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, uint32_t bar) {
  ::tylo_host::tma_load(dst, map->opaque, {c0, c1, c2, c3}, bar);
}
inline void tma_load_4d_multicast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, uint32_t bar,
                                  uint16_t ctas) {
  ::tylo_host::tma_load(dst, map->opaque, {c0, c1, c2, c3}, bar, ctas);
}
inline void tma_load_5d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4, uint32_t bar) {
  ::tylo_host::tma_load(dst, map->opaque, {c0, c1, c2, c3, c4}, bar);
}
inline void tma_load_5d_multicast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4, uint32_t bar,
                                  uint16_t ctas) {
  ::tylo_host::tma_load(dst, map->opaque, {c0, c1, c2, c3, c4}, bar, ctas);
}

inline bool elect_one() { return ::tylo_host::elect_one(); }
inline float shfl_bfly(float v, int lane_mask) {
  return std::bit_cast<float>(::tylo_host::shfl_bfly(std::bit_cast<uint32_t>(v), lane_mask));
}
inline int32_t shfl_bfly(int32_t v, int lane_mask) {
  return static_cast<int32_t>(::tylo_host::shfl_bfly(static_cast<uint32_t>(v), lane_mask));
}
template <int N>
void setmaxnreg_inc() {
  ::tylo_host::setmaxnreg(true, N);
}
template <int N>
void setmaxnreg_dec() {
  ::tylo_host::setmaxnreg(false, N);
}

inline void tma_store_2d(const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t src) {
  ::tylo_host::tma_store(map->opaque, {c0, c1}, src);
}
inline void tma_store_3d(const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, uint32_t src) {
  ::tylo_host::tma_store(map->opaque, {c0, c1, c2}, src);
}
inline void tma_store_4d(const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, uint32_t src) {
  ::tylo_host::tma_store(map->opaque, {c0, c1, c2, c3}, src);
}
inline void tma_store_5d(const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4,
                         uint32_t src) {
  ::tylo_host::tma_store(map->opaque, {c0, c1, c2, c3, c4}, src);
}
// A TMA store is performed when issued: its group has nothing left to wait for, and the harness
// has one proxy.
inline void bulk_commit_group() {}
template <int N>
void bulk_wait_group_read() {}
inline void fence_proxy_async_shared() {}

enum class WgmmaType { f16, bf16 };
inline void wgmma_on_host(int n, WgmmaType type, int transA, int transB, uint64_t descA, uint64_t descB,
                          int32_t scale, std::initializer_list<float*> d) {
  ::tylo_host::wgmma(n, type == WgmmaType::bf16, transA != 0, transB != 0, descA, descB, scale, d);
}
inline void wgmma_on_host_ra(int n, WgmmaType type, int transB, std::initializer_list<uint32_t> a, uint64_t descB,
                             int32_t scale, std::initializer_list<float*> d) {
  ::tylo_host::wgmma_ra(n, type == WgmmaType::bf16, transB != 0, a, descB, scale, d);
}
// The harness performs a wgmma when a wait_group retires its group; it reads D then, so there is
// nothing to fence.
inline void wgmma_fence() {}
inline void wgmma_commit_group() { ::tylo_host::wgmma_commit(); }
template <int N>
void wgmma_wait_group() {
  ::tylo_host::wgmma_wait(N);
}

}  // namespace tylo
