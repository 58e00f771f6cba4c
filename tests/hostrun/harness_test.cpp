// The host-thread harness itself, on small kernels written here in the generated code's style:
// a cp.async lands when its group is waited for and not before, and what a GPU would reject
// fails the launch with a reason.
#include <catch2/catch.hpp>

#include <tylo/runtime.cuh>

#include <cstring>
#include <vector>

namespace {

// Thread i copies 16 bytes of `src` into shared memory, then records the first word it sees
// there before the wait and after it.
__global__ void copyThenWait(const uint32_t* src, uint32_t* before, uint32_t* after) {
  unsigned char* const smem = ::tylo_host::shared_memory();
  const int i = static_cast<int>(threadIdx.x);
  tylo::cp_async_16(tylo::smem_addr(smem + 16 * i), src + 4 * i, 16);
  tylo::cp_async_commit();
  std::memcpy(&before[i], smem + 16 * i, 4);
  tylo::cp_async_wait<0>();
  std::memcpy(&after[i], smem + 16 * i, 4);
}

__global__ void ldmatrixAt(uint32_t offset) {
  uint32_t r = 0;
  tylo::ldmatrix_x1(offset + 16 * (static_cast<uint32_t>(threadIdx.x) % 8), r);
}

// Lanes 0..15 wait at a barrier, the others at an ldmatrix: neither can complete.
__global__ void divergent() {
  uint32_t r = 0;
  if (threadIdx.x < 16)
    __syncthreads();
  else
    tylo::ldmatrix_x1(0, r);
}

__global__ void nothing() {}

}  // namespace

TEST_CASE("harness: a cp.async lands when its group is waited for, not before") {
  std::vector<uint32_t> src(4 * 32), before(32), after(32);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint32_t>(1000 + i);
  REQUIRE(tylo_host::launch(copyThenWait, dim3(1), dim3(32), 512, nullptr, src.data(), before.data(), after.data()) ==
          cudaSuccess);
  CHECK(tylo_host::take_problems().empty());
  for (int i = 0; i < 32; ++i) {
    CHECK(before[i] == 0xa5a5a5a5u);  // shared memory starts poisoned
    CHECK(after[i] == src[4 * i]);
  }
}

TEST_CASE("harness: an ldmatrix outside shared memory or off a 16-byte row fails the launch") {
  REQUIRE(tylo_host::launch(ldmatrixAt, dim3(1), dim3(32), 256, nullptr, 0u) == cudaSuccess);
  CHECK(tylo_host::take_problems().empty());
  CHECK(tylo_host::launch(ldmatrixAt, dim3(1), dim3(32), 256, nullptr, 256u) == cudaErrorLaunchFailure);
  CHECK_THAT(tylo_host::take_problems(), Catch::Contains("lie outside the block's 256 bytes"));
  CHECK(tylo_host::launch(ldmatrixAt, dim3(1), dim3(32), 256, nullptr, 8u) == cudaErrorLaunchFailure);
  CHECK_THAT(tylo_host::take_problems(), Catch::Contains("is not aligned to 16 bytes"));
}

TEST_CASE("harness: lanes at different barriers or collectives are a deadlock") {
  CHECK(tylo_host::launch(divergent, dim3(2), dim3(32), 64, nullptr) == cudaErrorLaunchFailure);
  CHECK_THAT(tylo_host::take_problems(), Catch::Contains("block (0, 0, 0)") && Catch::Contains("deadlock"));
}

TEST_CASE("harness: more than 48 KB of shared memory needs the kernel's attribute") {
  CHECK(tylo_host::launch(nothing, dim3(1), dim3(32), 64 * 1024, nullptr) == cudaErrorInvalidValue);
  CHECK_THAT(tylo_host::take_problems(), Catch::Contains("over the kernel's limit of 49152"));
  REQUIRE(cudaFuncSetAttribute(nothing, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024) == cudaSuccess);
  CHECK(tylo_host::launch(nothing, dim3(1), dim3(32), 64 * 1024, nullptr) == cudaSuccess);
  CHECK(tylo_host::take_problems().empty());
}
