// Runs the kernels of add_one.tyl on the GPU and checks every element of every output.
//
// Exit codes: 0 all correct, 1 a wrong element or a CUDA error, 77 no CUDA device (the code
// ctest reports as skipped).
#include "add_one.cuh"

#include <tylo/runtime.cuh>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

// Fails the program on any CUDA error, naming the call that failed.
#define CHECK_CUDA(call) checkCuda((call), #call, __FILE__, __LINE__)

void checkCuda(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s", file, line, what, cudaGetErrorString(err));
  // A launcher's own checks explain themselves.
  if (err == cudaErrorInvalidValue && tylo::last_launch_error())
    std::fprintf(stderr, " (%s)", tylo::last_launch_error());
  std::fprintf(stderr, "\n");
  std::exit(1);
}

// Random values with fractional parts and both signs, never zero, so that a kernel that writes
// nothing, writes zeros or misplaces elements cannot pass.
std::vector<float> randomValues(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  std::vector<float> v(count);
  for (float& x : v) {
    do x = dist(rng);
    while (x == 0.0f);
  }
  return v;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Bytes written into outputs before every run: an element the kernel does not write reads as
// this NaN pattern, which no correct result has.
constexpr int kPoisonByte = 0xff;

// Compares out[0, n) with in + 1 bit for bit, and out[n, n + guard) with the poison.
// Prints the first few differences under `label`; returns the number of wrong elements.
size_t check(const char* label, const std::vector<float>& in, const std::vector<float>& out, size_t n,
             size_t guard) {
  size_t wrong = 0;
  for (size_t i = 0; i < n + guard; ++i) {
    const bool inRange = i < n;
    const uint32_t expected = inRange ? bits(in[i] + 1.0f) : 0xffffffffu;
    const uint32_t got = bits(out[i]);
    if (got == expected) continue;
    if (wrong < 5) {
      if (inRange)
        std::fprintf(stderr, "%s: element %zu: A = %.9g, expected %.9g, got %.9g\n", label, i, in[i], in[i] + 1.0f,
                     out[i]);
      else
        std::fprintf(stderr, "%s: element %zu is past the end (n = %zu) but was written: %.9g\n", label, i, n,
                     out[i]);
    }
    ++wrong;
  }
  return wrong;
}

// add_one: one warp, a fixed 32x4 tile.
bool runAddOne() {
  constexpr size_t kCount = 32 * 4;
  const std::vector<float> hostA = randomValues(kCount, 1);
  std::vector<float> hostB(kCount);
  float* A = nullptr;
  float* B = nullptr;
  CHECK_CUDA(cudaMalloc(&A, kCount * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&B, kCount * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(A, hostA.data(), kCount * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(B, kPoisonByte, kCount * sizeof(float)));
  CHECK_CUDA(add_one(A, B));
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(hostB.data(), B, kCount * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));

  const size_t wrong = check("add_one", hostA, hostB, kCount, 0);
  std::printf("add_one: %zu/%zu elements correct\n", kCount - wrong, kCount);
  return wrong == 0;
}

// add_one_n: n elements, 16-byte accesses, the last block's tail predicated. Sizes around the
// 1024-element block and a large non-multiple; past the end of each output lies a poisoned
// guard that must stay untouched.
bool runAddOneN() {
  const std::vector<size_t> sizes = {0, 1, 5, 1023, 1024, 1025, size_t(1) << 20, size_t(3) * 1024 * 1024 + 7};
  constexpr size_t kGuard = 1024;
  size_t maxN = 0;
  for (size_t n : sizes) maxN = n > maxN ? n : maxN;

  const std::vector<float> hostA = randomValues(maxN + kGuard, 2);
  std::vector<float> hostB(maxN + kGuard);
  float* A = nullptr;
  float* B = nullptr;
  CHECK_CUDA(cudaMalloc(&A, (maxN + kGuard) * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&B, (maxN + kGuard) * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(A, hostA.data(), (maxN + kGuard) * sizeof(float), cudaMemcpyHostToDevice));

  size_t failedSizes = 0;
  for (size_t n : sizes) {
    CHECK_CUDA(cudaMemset(B, kPoisonByte, (n + kGuard) * sizeof(float)));
    CHECK_CUDA(add_one_n(static_cast<int64_t>(n), A, B));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(hostB.data(), B, (n + kGuard) * sizeof(float), cudaMemcpyDeviceToHost));
    char label[64];
    std::snprintf(label, sizeof label, "add_one_n (n = %zu)", n);
    const size_t wrong = check(label, hostA, hostB, n, kGuard);
    if (wrong != 0) {
      std::printf("add_one_n: n = %zu: %zu/%zu elements correct, %zu wrong\n", n, n + kGuard - wrong, n + kGuard,
                  wrong);
      ++failedSizes;
    }
  }
  CHECK_CUDA(cudaFree(A));
  CHECK_CUDA(cudaFree(B));

  if (failedSizes == 0)
    std::printf("add_one_n: %zu sizes (0 to %zu), all elements correct\n", sizes.size(), maxN);
  else
    std::printf("add_one_n: %zu of %zu sizes have wrong elements\n", failedSizes, sizes.size());
  return failedSizes == 0;
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    return 77;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);

  bool ok = runAddOne();
  ok = runAddOneN() && ok;
  return ok ? 0 : 1;
}
