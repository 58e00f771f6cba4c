// The launchers of the Hopper test kernels (tests/gpu/hopper_test.cpp), behind a plain interface
// so that the test itself, which shares the emulator's case tables, is C++20 built by the host
// compiler.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "tests/gpu/HopperLaunch.h"
#include "tma_tiles.cuh"
#include "wgmma_tiles.cuh"
#include "cluster_gemm.cuh"
#include "tma_batched.cuh"
#include "gemm_sm90.cuh"
#include "ws_gemm.cuh"

namespace {

template <class T>
T* as(void* p) {
  return static_cast<T*>(p);
}

}  // namespace

int hopperLaunch(const std::string& name, const std::vector<void*>& p, const std::vector<int32_t>& i) {
  using bf16 = __nv_bfloat16;
  using f16 = __half;
  cudaError_t e = cudaErrorInvalidValue;
  if (name == "k128_mn128_f16") e = k128_mn128_f16(as<f16>(p[0]), as<f16>(p[1]), as<float>(p[2]), nullptr);
  if (name == "k128_mn128_bf16") e = k128_mn128_bf16(as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), nullptr);
  if (name == "k64_k64") e = k64_k64(as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), nullptr);
  if (name == "k64_bt") e = k64_bt(as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), nullptr);
  if (name == "a_regs") e = a_regs(as<f16>(p[0]), as<f16>(p[1]), as<float>(p[2]), nullptr);
  if (name == "a_regs_groups") e = a_regs_groups(as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), nullptr);
  if (name == "k32_none") e = k32_none(as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), nullptr);
  if (name == "groups_m") e = groups_m(as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), nullptr);
  if (name == "groups_n_stage") e = groups_n_stage(as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), i[0], nullptr);
  if (name == "tma_b128") e = tma_b128(i[0], i[1], i[2], i[3], as<bf16>(p[0]), as<bf16>(p[1]), nullptr);
  if (name == "tma_b64_panels") e = tma_b64_panels(i[0], i[1], i[2], i[3], as<f16>(p[0]), as<f16>(p[1]), nullptr);
  if (name == "tma_f32_b32") e = tma_f32_b32(i[0], i[1], i[2], i[3], as<float>(p[0]), as<float>(p[1]), nullptr);
  if (name == "tma_tall") e = tma_tall(i[0], i[1], i[2], i[3], as<bf16>(p[0]), as<bf16>(p[1]), nullptr);
  if (name == "tma_stage") e = tma_stage(i[0], i[1], i[2], i[3], as<bf16>(p[0]), as<bf16>(p[1]), i[4], nullptr);
  if (name == "tma_store_b128") e = tma_store_b128(i[0], i[1], i[2], i[3], as<bf16>(p[0]), as<bf16>(p[1]), nullptr);
  if (name == "tma_transposed") e = tma_transposed(i[0], i[1], i[2], i[3], as<bf16>(p[0]), as<bf16>(p[1]), nullptr);
  if (name == "tma_store_transposed")
    e = tma_store_transposed(i[0], i[1], i[2], i[3], as<bf16>(p[0]), as<bf16>(p[1]), nullptr);
  if (name == "tma_gemm") e = tma_gemm(i[0], i[1], i[2], as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), nullptr);
  if (name == "ws_gemm")
    e = ws_gemm(i[0], i[1], i[2], as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), i[3], nullptr);
  if (name == "ws_async")
    e = ws_async(i[0], i[1], i[2], as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), i[3], nullptr);
  if (name == "ws_flat") e = ws_flat(i[0], i[1], i[2], as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), nullptr);
  if (name == "ws_pipeline")
    e = ws_pipeline(i[0], i[1], i[2], as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), nullptr);
  if (name == "gemm_sm90")
    e = gemm_sm90_bf16(i[0], i[1], i[2], as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), 1.0f, false, nullptr);
  if (name == "tma_batched")
    e = tma_batched(i[0], i[1], i[2], i[3], i[4], as<bf16>(p[0]), as<bf16>(p[1]), nullptr);
  if (name == "tma_box3d") e = tma_box3d(i[0], i[1], i[2], i[3], i[4], as<bf16>(p[0]), as<bf16>(p[1]), nullptr);
  if (name == "tma_store_box3d")
    e = tma_store_box3d(i[0], i[1], i[2], i[3], i[4], as<bf16>(p[0]), as<bf16>(p[1]), nullptr);
  if (name == "tma_store_4d")
    e = tma_store_4d(i[0], i[1], i[2], i[3], i[4], i[5], as<bf16>(p[0]), as<bf16>(p[1]), nullptr);
  if (name == "cluster_gemm")
    e = cluster_gemm(i[0], i[1], i[2], as<bf16>(p[0]), as<bf16>(p[1]), as<float>(p[2]), i[3], nullptr);
  return static_cast<int>(e);
}
