// GPU test of the kernels generated from examples/add_one/add_one.tyl: every element of every
// output checked bit for bit against x + 1 in f32, the launchers' run-time checks, and writes
// past the end of the output.
//
// Exit codes: 0 all checks passed, 1 a check failed, 77 no CUDA device (ctest: skipped).
#include "add_one.cuh"

#include <tylo/runtime.cuh>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

int failures = 0;
int runs = 0;

void fail(const std::string& what) {
  std::printf("FAILED: %s\n", what.c_str());
  ++failures;
}

#define CHECK_CUDA(call) checkCuda((call), #call, __LINE__)

void checkCuda(cudaError_t err, const char* what, int line) {
  if (err == cudaSuccess) return;
  std::printf("line %d: %s failed: %s (%s)\n", line, what, cudaGetErrorString(err),
              tylo::last_launch_error() ? tylo::last_launch_error() : "no launcher message");
  std::exit(1);
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

constexpr uint32_t kPoison = 0xffffffffu;  // a NaN no correct result has

std::mt19937 rng(20261129);

std::vector<float> randomValues(size_t count) {
  // Both signs, fractions, and magnitudes where x + 1 rounds (2^24 and above).
  std::uniform_real_distribution<float> small(-1000.0f, 1000.0f);
  std::uniform_real_distribution<float> large(1.0e7f, 1.0e9f);
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) {
    float x;
    do x = (i % 7 == 3) ? -large(rng) : small(rng);
    while (x == 0.0f);
    v[i] = x;
  }
  return v;
}

// Device buffers A and B with room for `count` floats plus a guard, B poisoned.
struct Buffers {
  float* A = nullptr;
  float* B = nullptr;
  size_t count = 0;
  explicit Buffers(size_t n) : count(n) {
    CHECK_CUDA(cudaMalloc(&A, count * sizeof(float) + 64));
    CHECK_CUDA(cudaMalloc(&B, count * sizeof(float) + 64));
  }
  ~Buffers() {
    cudaFree(A);
    cudaFree(B);
  }
};

// Runs add_one_n on n elements starting `offset` floats into the buffers (offset a multiple of 4
// keeps 16-byte alignment), on `stream`, and checks out[0, n) and a guard of `guard` elements.
void checkAddOneN(size_t n, size_t offset, cudaStream_t stream) {
  constexpr size_t kGuard = 1031;
  ++runs;
  Buffers buf(offset + n + kGuard);
  const std::vector<float> in = randomValues(buf.count);
  CHECK_CUDA(cudaMemcpy(buf.A, in.data(), buf.count * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(buf.B, 0xff, buf.count * sizeof(float)));
  CHECK_CUDA(add_one_n(static_cast<int64_t>(n), buf.A + offset, buf.B + offset, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaGetLastError());
  std::vector<float> out(buf.count);
  CHECK_CUDA(cudaMemcpy(out.data(), buf.B, buf.count * sizeof(float), cudaMemcpyDeviceToHost));
  size_t wrong = 0;
  std::string first;
  for (size_t i = 0; i < buf.count; ++i) {
    const bool written = i >= offset && i < offset + n;
    const uint32_t expected = written ? bits(in[i] + 1.0f) : kPoison;
    if (bits(out[i]) == expected) continue;
    if (wrong++ == 0) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "first at buffer index %zu (%s): A = %.9g, got %.9g", i,
                    written ? "in range" : "outside [offset, offset + n)", in[i], out[i]);
      first = msg;
    }
  }
  if (wrong != 0)
    fail("add_one_n n=" + std::to_string(n) + " offset=" + std::to_string(offset) + ": " + std::to_string(wrong) +
         " wrong elements; " + first);
}

void testAddOne() {
  Buffers buf(128);
  const std::vector<float> in = randomValues(128);
  CHECK_CUDA(cudaMemcpy(buf.A, in.data(), 128 * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(buf.B, 0xff, 128 * sizeof(float) + 64));
  CHECK_CUDA(add_one(buf.A, buf.B));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<float> out(128 + 16);
  CHECK_CUDA(cudaMemcpy(out.data(), buf.B, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  size_t wrong = 0;
  for (size_t i = 0; i < out.size(); ++i) wrong += bits(out[i]) != (i < 128 ? bits(in[i] + 1.0f) : kPoison);
  if (wrong != 0) fail("add_one (32x4): " + std::to_string(wrong) + " wrong elements");
}

void testAddOneNSizes() {
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const size_t sizes[] = {0, 1, 2, 3, 4, 5, 255, 256, 1020, 1021, 1023, 1024, 1025, 2047, 2048, 4097, 65535,
                          size_t(1) << 20, (size_t(1) << 20) + 3, size_t(3) * 1024 * 1024 + 7};
  for (size_t n : sizes) {
    checkAddOneN(n, 0, 0);
    checkAddOneN(n, 4, stream);  // 16 bytes in: aligned, but not to a block or a cache line
  }
  std::uniform_int_distribution<size_t> pick(1, 200000);
  for (int i = 0; i < 10; ++i) checkAddOneN(pick(rng), 4 * (i % 3), stream);
  CHECK_CUDA(cudaStreamDestroy(stream));
}

// The launcher refuses what the layout cannot handle, says why, and launches nothing.
void testLauncherChecks() {
  Buffers buf(4096);
  CHECK_CUDA(cudaMemset(buf.B, 0xff, 4096 * sizeof(float)));

  const struct {
    const char* what;
    int64_t n;
    size_t aOffset, bOffset;
    const char* message;
  } cases[] = {
      {"negative n", -1, 0, 0, "must not be negative"},
      {"A misaligned by 4 bytes", 1024, 1, 0, "A must be aligned to 16 bytes"},
      {"B misaligned by 8 bytes", 1024, 0, 2, "B must be aligned to 16 bytes"},
  };
  for (const auto& c : cases) {
    const cudaError_t err = add_one_n(c.n, buf.A + c.aOffset, buf.B + c.bOffset);
    const char* message = tylo::last_launch_error();
    if (err != cudaErrorInvalidValue)
      fail(std::string("launcher with ") + c.what + ": expected cudaErrorInvalidValue, got " +
           cudaGetErrorString(err));
    else if (!message || !std::strstr(message, c.message))
      fail(std::string("launcher with ") + c.what + ": message '" + (message ? message : "(none)") +
           "' does not say '" + c.message + "'");
    // A refused launch leaves no error behind for the next CUDA call.
    if (cudaGetLastError() != cudaSuccess) fail(std::string("launcher with ") + c.what + ": sticky CUDA error");
  }
  CHECK_CUDA(add_one_n(0, buf.A, buf.B));  // nothing to do is not an error

  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<uint32_t> out(4096);
  CHECK_CUDA(cudaMemcpy(out.data(), buf.B, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (uint32_t w : out)
    if (w != kPoison) {
      fail("a refused or empty launch wrote to B");
      break;
    }
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "none found");
    return 77;
  }
  testAddOne();
  testAddOneNSizes();
  testLauncherChecks();
  if (failures != 0) {
    std::printf("%d checks failed\n", failures);
    return 1;
  }
  std::printf("add_one and add_one_n (%d sizes and offsets): all elements correct; launcher checks pass\n", runs);
  return 0;
}
