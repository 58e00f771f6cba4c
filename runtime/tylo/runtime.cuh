// Support code included by the CUDA that tyloc generates: the portable part (portable.cuh:
// launch error reporting, arithmetic as the IR defines it, 16-bit register access, element
// addresses) and thin wrappers around the PTX instructions the backend uses. Header-only;
// needs nothing but the CUDA Toolkit.
#pragma once

#include <cuda.h>  // CUtensorMap and its enumerations: the driver's types (nothing of it is linked)
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "tylo/portable.cuh"

namespace tylo {

// ---- PTX -------------------------------------------------------------------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// The global-space address of a generic pointer into global memory, as cp.async's source
// operand wants it (on current GPUs the two are the same number; the conversion costs nothing).
__device__ __forceinline__ uint64_t gmem_addr(const void* p) {
  return static_cast<uint64_t>(__cvta_generic_to_global(p));
}

// cp.async of 16 bytes, reading only `src_bytes` of them (the rest is zero-filled).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_addr(src)), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_8(uint32_t dst, const void* src, uint32_t src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(gmem_addr(src)), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_4(uint32_t dst, const void* src, uint32_t src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem_addr(src)), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x1(uint32_t addr, uint32_t& r0) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r0) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x2(uint32_t addr, uint32_t& r0, uint32_t& r1) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x1_trans(uint32_t addr, uint32_t& r0) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(r0) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t addr, uint32_t& r0, uint32_t& r1) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n" : "=r"(r0), "=r"(r1) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2,
                                                  uint32_t& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
}

// shfl.sync.bfly over the whole warp: the value of lane laneid ^ lane_mask.
__device__ __forceinline__ float shfl_bfly(float v, int lane_mask) { return __shfl_xor_sync(0xffffffffu, v, lane_mask); }
__device__ __forceinline__ int32_t shfl_bfly(int32_t v, int lane_mask) {
  return __shfl_xor_sync(0xffffffffu, v, lane_mask);
}

// stmatrix needs sm_90. nvcc also parses kernel bodies in its host pass, so the host pass sees
// these declarations (with no body to speak of); a device pass for an older target does not,
// and a call there fails to compile instead of doing nothing.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#if defined(__CUDA_ARCH__)
#define TYLO_STMATRIX_ASM(...) asm volatile(__VA_ARGS__)
#else
#define TYLO_STMATRIX_ASM(...) ((void)0)
#endif
__device__ __forceinline__ void stmatrix_x1(uint32_t addr, uint32_t r0) {
  TYLO_STMATRIX_ASM("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};\n" ::"r"(addr), "r"(r0) : "memory");
}
__device__ __forceinline__ void stmatrix_x2(uint32_t addr, uint32_t r0, uint32_t r1) {
  TYLO_STMATRIX_ASM("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n" ::"r"(addr), "r"(r0), "r"(r1)
                    : "memory");
}
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  TYLO_STMATRIX_ASM("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0),
                    "r"(r1), "r"(r2), "r"(r3)
                    : "memory");
}
__device__ __forceinline__ void stmatrix_x1_trans(uint32_t addr, uint32_t r0) {
  TYLO_STMATRIX_ASM("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};\n" ::"r"(addr), "r"(r0) : "memory");
}
__device__ __forceinline__ void stmatrix_x2_trans(uint32_t addr, uint32_t r0, uint32_t r1) {
  TYLO_STMATRIX_ASM("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};\n" ::"r"(addr), "r"(r0),
                    "r"(r1)
                    : "memory");
}
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                                  uint32_t r3) {
  TYLO_STMATRIX_ASM("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
                    "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                    : "memory");
}
#undef TYLO_STMATRIX_ASM
#endif

// The current device's multiprocessor count, which a persistent kernel's grid reads (sm_count()
// in the launch clause); 1 when the runtime cannot say (the launch then reports the error).
inline int sm_count() {
  int device = 0, count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || count < 1)
    return 1;
  return count;
}

// ---- TMA -------------------------------------------------------------------------

// Encodes a tiled tensor map (dims and the box innermost first, strides in bytes for dims 1 ..)
// with cuTensorMapEncodeTiled, reached through the runtime's driver entry point, so that a
// program links nothing beyond the CUDA runtime. Elements are moved as raw bytes (zeros outside
// the tensor), so only their size matters. False when the driver refuses the map. A tensor with an
// empty dimension has no elements and the driver encodes no map for it: its map is left zero,
// which the kernel must not use (its copies of the tensor are in loops that run no iteration).
inline bool encode_tensor_map(CUtensorMap* map, const void* base, int elemBytes, int rank, const uint64_t* dims,
                              const uint64_t* strides, const uint32_t* box, int swizzleBytes) {
  for (int d = 0; d < rank; ++d)
    if (dims[d] == 0) {
      *map = CUtensorMap{};
      return true;
    }
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (!encode) return false;
  const CUtensorMapDataType type = elemBytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                   : elemBytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                   : elemBytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                                                    : CU_TENSOR_MAP_DATA_TYPE_INT64;
  const CUtensorMapSwizzle swizzle = swizzleBytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                     : swizzleBytes == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                     : swizzleBytes == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                                                          : CU_TENSOR_MAP_SWIZZLE_NONE;
  const cuuint32_t elementStrides[5] = {1, 1, 1, 1, 1};
  return encode(map, type, static_cast<cuuint32_t>(rank), const_cast<void*>(base), dims, strides, box, elementStrides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// cp.async.bulk.tensor: the box of `map` at the coordinates (innermost first) into shared memory
// at `dst`, completing its bytes on the mbarrier `bar` (sm_90).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TYLO_TMA_ASM(...) asm volatile(__VA_ARGS__)
#else
#define TYLO_TMA_ASM(...) ((void)0)
#endif
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
               "[%4];\n" ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, uint32_t bar) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
               "[%5];\n" ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void tma_load_4d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, uint32_t bar) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
               "[%6];\n" ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void tma_load_5d(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4, uint32_t bar) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], "
               "[%7];\n" ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar)
               : "memory");
}
// The same with .multicast::cluster: the box lands at `dst` in the shared memory of every block of
// the cluster whose rank is set in `ctas`, and completes on the mbarrier at `bar` in each (sm_90).
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t bar,
                                                      uint16_t ctas) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
               "[%1, {%2, %3}], [%4], %5;\n" ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar),
               "h"(ctas)
               : "memory");
}
__device__ __forceinline__ void tma_load_3d_multicast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, uint32_t bar,
                                                      uint16_t ctas) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
               "[%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar),
               "h"(ctas)
               : "memory");
}
__device__ __forceinline__ void tma_load_4d_multicast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, uint32_t bar,
                                                      uint16_t ctas) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
               "[%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar),
               "h"(ctas)
               : "memory");
}
__device__ __forceinline__ void tma_load_5d_multicast(uint32_t dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4, uint32_t bar,
                                                      uint16_t ctas) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
               "[%1, {%2, %3, %4, %5, %6}], [%7], %8;\n" ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(bar),
               "h"(ctas)
               : "memory");
}
// cp.async.bulk.tensor, shared to global: the box of `map` at the coordinates from shared memory
// at `src`, in this thread's bulk group; elements outside the tensor are not written (sm_90).
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, int32_t c0, int32_t c1, uint32_t src) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(src)
               : "memory");
}
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, uint32_t src) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(src)
               : "memory");
}
__device__ __forceinline__ void tma_store_4d(const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, uint32_t src) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
               : "memory");
}
__device__ __forceinline__ void tma_store_5d(const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2, int32_t c3, int32_t c4, uint32_t src) {
  TYLO_TMA_ASM("cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4, %5}], [%6];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4), "r"(src)
               : "memory");
}
__device__ __forceinline__ void bulk_commit_group() { TYLO_TMA_ASM("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
  TYLO_TMA_ASM("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// This thread's writes to shared memory become visible to the async proxy (a TMA store).
__device__ __forceinline__ void fence_proxy_async_shared() {
  TYLO_TMA_ASM("fence.proxy.async.shared::cta;\n" ::: "memory");
}
#undef TYLO_TMA_ASM

// mbarriers in shared memory (sm_90): init, arrive (with expected transaction bytes), and a
// wait for a phase by its parity. Under nvcc for an older architecture they are never called:
// tyloc refuses mbarriers there (arch-feature).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TYLO_MBARRIER_ASM(...) asm volatile(__VA_ARGS__)
#else
#define TYLO_MBARRIER_ASM(...) ((void)0)
#endif
__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t count) {
  TYLO_MBARRIER_ASM("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  TYLO_MBARRIER_ASM("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  TYLO_MBARRIER_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// try_wait suspends for a while and may return before the phase completes: hence the loop.
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  TYLO_MBARRIER_ASM(
      "{\n.reg .pred done;\nwait:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n@!done bra wait;\n}\n" ::"r"(
          bar),
      "r"(parity)
      : "memory");
}
__device__ __forceinline__ void fence_mbarrier_init() {
  TYLO_MBARRIER_ASM("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// An arrive on the barrier at the same offset in the shared memory of the cluster's block of rank
// `cta` (mapa gives its shared::cluster address). Its semantics are the instruction's default,
// release at CTA scope: what it orders is this thread's use of its own shared memory (a stage read,
// by wgmma too, before a peer's TMA refills it); the language writes nothing into a peer's shared
// memory but multicast TMA, which completes on the barriers by itself. A release at cluster scope
// would cost a MEMBAR.ALL.GPU per arrive, in the consumers' main loop.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint32_t bar, uint32_t cta) {
  TYLO_MBARRIER_ASM(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx_cluster(uint32_t bar, uint32_t bytes, uint32_t cta) {
  TYLO_MBARRIER_ASM(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %2;\n"
      "mbarrier.arrive.expect_tx.shared::cluster.b64 _, [remote], %1;\n}\n" ::"r"(bar),
      "r"(bytes), "r"(cta)
      : "memory");
}
// The block's rank in its cluster, and the barrier every thread of the cluster reaches, after
// which each sees what all did before it (shared memory of the other blocks included).
__device__ __forceinline__ int32_t cluster_rank() {
  uint32_t r = 0;
  TYLO_MBARRIER_ASM("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return static_cast<int32_t>(r);
}
__device__ __forceinline__ void cluster_barrier() {
  TYLO_MBARRIER_ASM("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
#undef TYLO_MBARRIER_ASM

// The named barrier `id` (1..15) of `threads` threads, whole warps: those that reach it wait until
// that many have (bar.sync id, threads). Barrier 0 is __syncthreads()'s.
template <int id, int threads>
__device__ __forceinline__ void named_barrier() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(id), "n"(threads) : "memory");
}

// wgmma's fence and group operations (sm_90a; the wgmma itself is a function of the generated
// code, one per shape). Under nvcc for an older architecture they are never called: tyloc refuses
// wgmma there (arch-feature).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TYLO_WGMMA_ASM(...) asm volatile(__VA_ARGS__)
#else
#define TYLO_WGMMA_ASM(...) ((void)0)
#endif
__device__ __forceinline__ void wgmma_fence() { TYLO_WGMMA_ASM("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit_group() {
  TYLO_WGMMA_ASM("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
  TYLO_WGMMA_ASM("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// setmaxnreg (sm_90a): this warp's registers per thread become N, taken from or returned to the
// block's pool; every warp of the warpgroup runs it.
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  TYLO_WGMMA_ASM("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  TYLO_WGMMA_ASM("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
#undef TYLO_WGMMA_ASM

// elect.sync over the whole warp (sm_90): true in one lane.
__device__ __forceinline__ bool elect_one() {
  uint32_t elected = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n" : "=r"(elected));
#endif
  return elected != 0;
}

// mma.sync m16n8k16, f32 accumulate: d = a * b + c.
__device__ __forceinline__ void mma_m16n8k16_f16(float& d0, float& d1, float& d2, float& d3, uint32_t a0, uint32_t a1,
                                                 uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1, float c0,
                                                 float c1, float c2, float c3) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};\n"
      : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
}
__device__ __forceinline__ void mma_m16n8k16_bf16(float& d0, float& d1, float& d2, float& d3, uint32_t a0,
                                                  uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1,
                                                  float c0, float c1, float c2, float c3) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};\n"
      : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
}

}  // namespace tylo
