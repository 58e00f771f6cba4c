// The host-thread harness: runs the CUDA C++ that tyloc generates, compiled as host C++, with
// every thread of a block as a fiber (tests/hostrun/README.md). Blocks run one after another (the
// blocks of a cluster together, with their own shared memories, mbarriers that the others may arrive
// on and TMA multicast into); within a block the harness runs each thread until it reaches
// __syncthreads() or a warp
// collective (ldmatrix, stmatrix, mma.sync), and performs the collective once every lane of
// the warp has arrived, with the emulator's PTX semantics (backend/emu/Ptx.h). A cp.async
// lands when a cp.async.wait_group retires its group, the latest moment PTX allows, so that
// a kernel that waits too little reads stale shared memory.
//
// What a GPU would reject or leave undefined (a shared address outside the block's dynamic
// shared memory, a misaligned ldmatrix row, lanes of a warp at different collectives, a
// deadlocked barrier, more than 48 KB of shared memory without the launcher's attribute) is
// reported as a problem: the launch then returns cudaErrorLaunchFailure and take_problems()
// says what happened. Single-threaded; one launch at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>

// The runtime types the launcher's signature needs, as the CUDA runtime spells them.
enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorLaunchFailure = 719 };
using cudaStream_t = struct CUstream_st*;

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};

namespace tylo_host {

// The running thread's ids and the launch's sizes.
const uint3& thread_idx();
const uint3& block_idx();
const dim3& block_dim();
const dim3& grid_dim();

void syncthreads();
// bar.sync id, threads: the threads that reach barrier `id` wait until `threads` of them have.
void named_barrier(uint32_t id, uint32_t threads);

// The block's dynamic shared memory (what `extern __shared__ ... tylo_smem[]` declares), and
// the 32-bit shared address of a pointer into it.
unsigned char* shared_memory();
uint32_t shared_address(const void* p);

void cp_async(uint32_t dst, const void* src, int bytes, uint32_t src_bytes);
void cp_async_commit();
void cp_async_wait(int pending);

void ldmatrix(uint32_t addr, bool trans, std::initializer_list<uint32_t*> dst);
void stmatrix(uint32_t addr, bool trans, std::initializer_list<uint32_t> src);
void mma(bool bf16, std::initializer_list<float*> d, std::initializer_list<uint32_t> a,
         std::initializer_list<uint32_t> b, std::initializer_list<float> c);
// mbarriers, with the emulator's model (backend/emu/Mbarrier.h): init, arrive (expectTx >= 0:
// with that many expected transaction bytes), and a wait for the phase of `parity` that holds
// the thread until it completes.
void mbarrier_init(uint32_t addr, uint32_t count);
// With `cta` >= 0: on the barrier at `addr` in the cluster's block of that rank.
void mbarrier_arrive(uint32_t addr, int64_t expectTx = -1, int cta = -1);
void mbarrier_wait(uint32_t addr, uint32_t parity);

// The tensor-map stand-in: what the launcher passes cuTensorMapEncodeTiled, kept in the map's 128
// bytes (the real encoding is the driver's), refused as the driver documents (false): rank 1..5,
// a 16-byte aligned base, extents 1..2^32, strides multiples of 16 below 2^40, boxes 1..256 with
// rows of whole 16-byte chunks no longer than the swizzle span.
bool encode_tensor_map(uint64_t (&map)[16], const void* base, int elemBytes, int rank, const uint64_t* dims,
                       const uint64_t* strides, const uint32_t* box, int swizzleBytes);
// cp.async.bulk.tensor by the running thread: the box of `map` at `coords` (innermost first),
// zeros outside the tensor, written at shared address `dst` as TMA writes it (the swizzle on
// absolute addresses, ir/layout/Tma.h), then its bytes completed on the mbarrier at `bar`.
// With `ctaMask` >= 0 (.multicast::cluster): into the shared memory of each block of the cluster
// whose rank is in the mask, completing on the barrier at `bar` in each.
void tma_load(uint32_t dst, const uint64_t (&map)[16], std::initializer_list<int32_t> coords, uint32_t bar,
              int ctaMask = -1);

// elect.sync and setmaxnreg, warp collectives: the elected lane is the highest of the warp (as
// in the emulator); the register count is only checked (the emulator models the pool).
bool elect_one();
// shfl.sync.bfly over the whole warp, on the 32 bits of a value: those of lane laneid ^ laneMask.
uint32_t shfl_bfly(uint32_t bits, int laneMask);
void setmaxnreg(bool increase, int count);

// cp.async.bulk.tensor, shared to global: the box at shared address `src` (where TMA reads it)
// into the tensor of `map` at `coords`, elements outside the tensor skipped; performed at once.
void tma_store(const uint64_t (&map)[16], std::initializer_list<int32_t> coords, uint32_t src);

// wgmma m64nNk16 for the running lane's warp: its n / 2 registers of D (d), issued when the warp's
// 32 lanes have arrived and performed when a wait_group retires its group (reading shared memory
// then); the descriptors are decoded as the emulator decodes them. commit_group and wait_group are
// warp collectives too.
void wgmma(int n, bool bf16, bool transA, bool transB, uint64_t descA, uint64_t descB, int32_t scale,
           std::initializer_list<float*> d);
// The same with A from registers: `a` are this lane's four words of its warp's 16 rows of A (as
// mma.sync m16n8k16 holds its A), taken when the wgmma is issued.
void wgmma_ra(int n, bool bf16, bool transB, std::initializer_list<uint32_t> a, uint64_t descB, int32_t scale,
              std::initializer_list<float*> d);
void wgmma_commit();
void wgmma_wait(int pending);

// Clusters: the block's rank in its cluster, and barrier.cluster (every thread of the cluster).
unsigned cluster_rank();
void cluster_barrier();
// What the launchers' sm_count() reads (132 unless set).
int sm_count();
void set_sm_count(int sms);

cudaError_t set_kernel_attribute(const void* kernel, int attribute, int value);
cudaError_t take_last_error();

// Runs `body` for every thread of the grid, the blocks of each cluster together. `kernel`
// identifies the kernel (its shared-memory attribute).
cudaError_t launch_kernel(const void* kernel, const std::function<void()>& body, dim3 grid, dim3 block,
                          size_t shared_bytes, dim3 cluster = dim3(1, 1, 1));

// What `kernel<<<grid, block, shared_bytes, stream>>>(args...)` becomes in the host build, and for
// a kernel declared with __cluster_dims__(cluster) (hostify.py passes them).
template <class... P, class... A>
cudaError_t launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t, A... args) {
  return launch_kernel(reinterpret_cast<const void*>(kernel), [&] { kernel(args...); }, grid, block, shared_bytes);
}
template <class... P, class... A>
cudaError_t launch_cluster(void (*kernel)(P...), dim3 cluster, dim3 grid, dim3 block, size_t shared_bytes,
                           cudaStream_t, A... args) {
  return launch_kernel(reinterpret_cast<const void*>(kernel), [&] { kernel(args...); }, grid, block, shared_bytes,
                       cluster);
}

// What went wrong in the launches since the last call (one line each), and the launches run.
std::string take_problems();
int launches();
// The bytes cp.async copies have written to shared memory since the last call (as the
// emulator's Stats::asyncBytesLanded counts them).
int64_t take_async_bytes_landed();

}  // namespace tylo_host
