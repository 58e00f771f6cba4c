// The unfused attention reference on the GPU: S = Q Kᵀ · scale by a batched cuBLAS GEMM (f32
// out), a row softmax of S into P in the input type (with the causal mask, and the log-sum-exp of
// each row), and O = P V by a second batched GEMM (f32 accumulate, O in the input type). It is
// what the fused kernel of attention.tyl is checked against at sizes a float64 reference on the
// host cannot reach, and timed against in bench/attention_bench.cu.
//
// Tensors are (batch, heads, seq, d) row-major, as attention.tyl takes them; S (f32) and P (the
// input type) are (batch · heads) seq x seq workspaces of the caller.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

// A cuBLAS call checked, for the callers of unfused(): a failure prints where and why and exits 1.
#define CHECK_CUBLAS(call) ::attention_reference::checkCublas((call), #call, __FILE__, __LINE__)

namespace attention_reference {

inline void checkCublas(cublasStatus_t status, const char* what, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, what, cublasGetStatusString(status));
  std::exit(1);
}

template <class T>
constexpr cudaDataType_t cudaType();
template <>
constexpr cudaDataType_t cudaType<__half>() { return CUDA_R_16F; }
template <>
constexpr cudaDataType_t cudaType<__nv_bfloat16>() { return CUDA_R_16BF; }

// One block a row: P[r, j] = exp(S[r, j] - m) / l over the row's visible keys (all N, or j <= r
// with causal), 0 past them, and LSE[r] = m + log(l).
template <class T>
__global__ void softmaxRows(const float* __restrict__ S, T* __restrict__ P, float* __restrict__ LSE, int N,
                            int causal) {
  __shared__ float partial[32];
  const size_t row = blockIdx.x;
  const int r = static_cast<int>(row % static_cast<size_t>(N));
  const int keys = causal ? r + 1 : N;
  const float* s = S + row * N;
  auto blockReduce = [&](float v, bool isMax) {
    for (int o = 16; o > 0; o /= 2) {
      const float w = __shfl_xor_sync(0xffffffffu, v, o);
      v = isMax ? fmaxf(v, w) : v + w;
    }
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    v = isMax ? -FLT_MAX : 0.0f;
    for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) v = isMax ? fmaxf(v, partial[w]) : v + partial[w];
    __syncthreads();
    return v;
  };
  float m = -FLT_MAX;
  for (int j = threadIdx.x; j < keys; j += blockDim.x) m = fmaxf(m, s[j]);
  m = blockReduce(m, true);
  float l = 0;
  for (int j = threadIdx.x; j < keys; j += blockDim.x) l += expf(s[j] - m);
  l = blockReduce(l, false);
  for (int j = threadIdx.x; j < N; j += blockDim.x) P[row * N + j] = T(j < keys ? expf(s[j] - m) / l : 0.0f);
  if (threadIdx.x == 0) LSE[row] = m + logf(l);
}

// The bytes of the S and P workspaces for B x H heads of N keys.
template <class T>
size_t workspaceBytes(int B, int H, int N) {
  return static_cast<size_t>(B) * H * N * N * (sizeof(float) + sizeof(T));
}

// O and LSE from Q, K, V, in three launches on the handle's stream. `workspace` holds
// workspaceBytes<T>(B, H, N).
template <class T>
cublasStatus_t unfused(cublasHandle_t handle, cudaStream_t stream, int B, int H, int N, int D, float scale,
                       bool causal, const T* Q, const T* K, const T* V, T* O, float* LSE, void* workspace) {
  const int batch = B * H;
  const long long qkv = static_cast<long long>(N) * D, nn = static_cast<long long>(N) * N;
  float* S = static_cast<float*>(workspace);
  T* P = reinterpret_cast<T*>(S + static_cast<size_t>(batch) * nn);
  const float zero = 0.0f, one = 1.0f;
  cublasSetStream(handle, stream);
  // Column-major: S (row-major N x N) is Sᵀ = K Qᵀ, with K and Q read as their d x N transposes.
  cublasStatus_t st = cublasGemmStridedBatchedEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, N, N, D, &scale, K, cudaType<T>(), D,
                                                 qkv, Q, cudaType<T>(), D, qkv, &zero, S, CUDA_R_32F, N, nn, batch,
                                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS) return st;
  softmaxRows<T><<<static_cast<unsigned>(static_cast<size_t>(batch) * N), 256, 0, stream>>>(S, P, LSE, N, causal);
  // Oᵀ = Vᵀ Pᵀ.
  return cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, D, N, N, &one, V, cudaType<T>(), D, qkv, P,
                                    cudaType<T>(), N, nn, &zero, O, cudaType<T>(), D, qkv, batch, CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT);
}

}  // namespace attention_reference
