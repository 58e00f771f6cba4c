// The launchers of launch_checks.tyl refuse the launches in which a shared-memory index would
// leave its tensor, with the message tyloc wrote, and only those. The checks run on the host
// before anything is launched, so the refusals are checked without a GPU (each launcher clears
// tylo::last_launch_error() first, so every case sees its own message); the accepted
// launches run when there is one (without, they fail with a CUDA error, not a refusal).
// Exit code: 0 when every case behaves, 1 otherwise.
#include "launch_checks.cuh"

#include <tylo/runtime.cuh>

#include <cstdio>
#include <cstring>

namespace {

int failures = 0;

void expect(const char* what, int value, cudaError_t err, bool refused, const char* message, bool gpu) {
  const char* got = tylo::last_launch_error();
  // Accepted: no check failed. Without a GPU the launch itself fails, and says so.
  bool launchFailed = got && std::strstr(got, ": the kernel launch failed");
  bool ok = refused ? err == cudaErrorInvalidValue && got && std::strstr(got, message) == got
          : gpu     ? got == nullptr && err == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess
                    : err == cudaSuccess ? got == nullptr : launchFailed;
  std::printf("%s(%d): %s%s%s (%s)\n", what, value, refused ? "refused" : "accepted", got ? ": " : "",
              got ? got : "", ok ? "ok" : "WRONG");
  failures += !ok;
}

}  // namespace

int main() {
  int devices = 0;
  const bool gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  int32_t* out = nullptr;
  if (gpu && cudaMalloc(&out, 32 * sizeof(int32_t)) != cudaSuccess) return 1;
  for (int n : {-3, 0, 1, 8, 9, 100, 2147483647}) {
    cudaError_t err = rows(out, n);
    expect("rows", n, err, n > 8,
           "rows: index 0 into 's' leaves [0, 256) at launch_checks.tyl:8 for the last value of 'k'", gpu);
  }
  // With n = 2^31 - 1 the index at the last k is (n - 1) * 32 + t, which wraps in 32 bits, on the
  // GPU as in the IR: to -64 for thread 0, the first corner checked. The launcher computes the
  // same wrapped value (C++ would leave the overflow undefined), so thread 0's check is the one
  // that fails.
  cudaError_t wrapped = rows(out, 2147483647);
  expect("rows", 2147483647, wrapped, true,
         "rows: index 0 into 's' leaves [0, 256) at launch_checks.tyl:8 for the last value of 'k' and thread 0", gpu);
  for (int m : {-2147483647 - 1, -1, 0, 100, 224, 225, 2147483647}) {
    cudaError_t err = offset(out, m);
    expect("offset", m, err, m < 0 || m > 224,
           "offset: index 0 into 's' leaves [0, 256) at launch_checks.tyl:17 for thread", gpu);
  }
  // No check of an index that divides by a parameter, and no division by zero in the launcher
  // when the loop is empty.
  cudaError_t err = divided(out, 0, 0);
  expect("divided", 0, err, false, "", gpu);
  // The last block of a run-time grid is a corner too: cdiv(n, 32) - 1 at thread 0 first. An
  // empty grid (n <= 0) launches nothing and is never refused.
  for (int n : {-5, 0, 1, 200, 256, 257, 100000}) {
    cudaError_t e = per_block(out, n);
    expect("per_block", n, e, n > 256,
           "per_block: index 0 into 's' leaves [0, 256) at launch_checks.tyl:35 for thread 0 and the last block", gpu);
  }
  // Each thread's own last value: thread 31's, n + 30, decides. With n <= -31 no thread's
  // loop runs.
  for (int n : {-100, -31, 0, 225, 226, 1000}) {
    cudaError_t e = thread_end(out, n);
    expect("thread_end", n, e, n > 225,
           "thread_end: index 0 into 's' leaves [0, 256) at launch_checks.tyl:43 for the last value of 'k' and thread",
           gpu);
  }
  if (out) cudaFree(out);
  return failures == 0 ? 0 : 1;
}
