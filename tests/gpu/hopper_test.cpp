// The Hopper kernels on a GPU (sm_90): the wgmma tiles of tests/emu/kernels/wgmma_tiles.tyl, the
// TMA copies, stores and TMA-fed GEMM of tma_tiles.tyl and the warp-specialized GEMM of
// ws_gemm.tyl and cluster_gemm.tyl, with the cases and CPU checks the emulator and the host run use
// (tests/support/WgmmaTiles.h, TmaTiles.h). Exits 77 (skipped) without an sm_90 device.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/gpu/HopperLaunch.h"
#include "tests/support/TmaTiles.h"
#include "tests/support/WgmmaTiles.h"

namespace {

using tyl::emu::Arg;
using tyl::emu::Buffer;

int failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    ++failures;
    std::printf("FAIL %s\n", what.c_str());
  }
}

// Runs kernel `name` on copies of `buffers` with the emulator's arguments (pointers by buffer
// index, integers in order) and copies the results back.
void onDevice(const std::string& name, const std::vector<Arg>& args, std::vector<Buffer>& buffers) {
  std::vector<void*> device(buffers.size(), nullptr);
  for (size_t i = 0; i < buffers.size(); ++i) {
    cudaMalloc(&device[i], buffers[i].bytes.size());
    cudaMemcpy(device[i], buffers[i].bytes.data(), buffers[i].bytes.size(), cudaMemcpyHostToDevice);
  }
  std::vector<void*> pointers;
  std::vector<int32_t> ints;
  for (const Arg& a : args) {
    if (a.kind == Arg::Kind::Pointer)
      pointers.push_back(device[static_cast<size_t>(a.buffer)]);
    else
      ints.push_back(static_cast<int32_t>(a.i));
  }
  const auto launched = static_cast<cudaError_t>(hopperLaunch(name, pointers, ints));
  const cudaError_t done = cudaDeviceSynchronize();
  check(launched == cudaSuccess && done == cudaSuccess,
        name + ": " + cudaGetErrorString(launched != cudaSuccess ? launched : done));
  for (size_t i = 0; i < buffers.size(); ++i) {
    cudaMemcpy(buffers[i].bytes.data(), device[i], buffers[i].bytes.size(), cudaMemcpyDeviceToHost);
    cudaFree(device[i]);
  }
}

}  // namespace

int main() {
  int devices = 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::printf("skipped: no GPU\n");
    return 77;
  }
  if (prop.major != 9) {
    std::printf("skipped: the Hopper kernels need an sm_90 GPU, this one is sm_%d%d\n", prop.major, prop.minor);
    return 77;
  }
  for (const tyl::test::WgmmaTile& c : tyl::test::kWgmmaTiles) {
    std::vector<Buffer> b = tyl::test::wgmmaTileInputs(c);
    std::vector<Arg> args = {Arg::pointer(0), Arg::pointer(1), Arg::pointer(2)};
    if (c.stage >= 0) args.push_back(Arg::integer(c.stage));
    onDevice(c.kernel, args, b);
    const std::string error = tyl::test::wgmmaTileError(c, b);
    check(error.empty(), std::string(c.kernel) + ": " + error);
  }
  for (const tyl::test::TmaCopyCase& c : tyl::test::kTmaCopyCases) {
    std::vector<Buffer> b = tyl::test::tmaCopyInputs(c);
    onDevice(c.kernel, tyl::test::tmaCopyArgs(c), b);
    const std::string error = tyl::test::tmaCopyError(c, b);
    check(error.empty(), std::string(c.kernel) + " " + std::to_string(c.m) + " x " + std::to_string(c.n) + ": " + error);
  }
  for (const tyl::test::TmaGemmCase& g : tyl::test::kTmaGemmCases) {
    std::vector<Buffer> b = tyl::test::tmaGemmInputs(g);
    onDevice("tma_gemm", tyl::test::tmaGemmArgs(g), b);
    const std::string error = tyl::test::tmaGemmError(g, b);
    check(error.empty(), "tma_gemm " + std::to_string(g.m) + " x " + std::to_string(g.n) + " x " + std::to_string(g.k) + ": " + error);
  }
  for (const tyl::test::TmaGemmCase& g : tyl::test::kWsGemmCases) {
    std::vector<Buffer> b = tyl::test::tmaGemmInputs(g);
    onDevice("ws_gemm", tyl::test::wsGemmArgs(g), b);
    const std::string error = tyl::test::tmaGemmError(g, b);
    check(error.empty(), "ws_gemm " + std::to_string(g.m) + " x " + std::to_string(g.n) + " x " + std::to_string(g.k) + ": " + error);
  }
  // MMAs kept in flight: by hand, by the pipeline construct's flat form, and persistent.
  for (const tyl::test::TmaGemmCase& g : tyl::test::kWsAsyncCases) {
    std::vector<Buffer> b = tyl::test::tmaGemmInputs(g);
    onDevice("ws_async", tyl::test::wsGemmArgs(g), b);
    const std::string error = tyl::test::tmaGemmError(g, b);
    check(error.empty(), "ws_async " + std::to_string(g.m) + " x " + std::to_string(g.n) + " x " + std::to_string(g.k) + ": " + error);
  }
  for (const char* kernel : {"ws_flat", "ws_pipeline"})
    for (const tyl::test::TmaGemmCase& g : tyl::test::kWsPipelineCases) {
      std::vector<Buffer> b = tyl::test::tmaGemmInputs(g);
      onDevice(kernel, tyl::test::tmaGemmArgs(g), b);
      const std::string error = tyl::test::tmaGemmError(g, b);
      check(error.empty(), std::string(kernel) + " " + std::to_string(g.m) + " x " + std::to_string(g.n) + " x " +
                               std::to_string(g.k) + ": " + error);
    }
  // The Hopper GEMM example (bf16, alpha 1, no relu: C = A @ B), at the emulator's sizes and at one
  // with more 128 x 256 tiles than the device has SMs.
  std::vector<tyl::test::TmaGemmCase> sm90Cases(std::begin(tyl::test::kWsPipelineCases),
                                                std::end(tyl::test::kWsPipelineCases));
  sm90Cases.push_back({2200, 4104, 520});
  for (const tyl::test::TmaGemmCase& g : sm90Cases) {
    std::vector<Buffer> b = tyl::test::tmaGemmInputs(g);
    onDevice("gemm_sm90", tyl::test::tmaGemmArgs(g), b);
    const std::string error = tyl::test::tmaGemmError(g, b);
    check(error.empty(), "gemm_sm90 " + std::to_string(g.m) + " x " + std::to_string(g.n) + " x " +
                             std::to_string(g.k) + ": " + error);
  }
  for (const tyl::test::TmaBatchedCase& t : tyl::test::kTmaBatchedCases) {
    std::vector<Buffer> b = tyl::test::tmaBatchedInputs(t);
    onDevice(t.kernel, tyl::test::tmaBatchedArgs(t), b);
    const std::string error = tyl::test::tmaBatchedError(t, b);
    check(error.empty(), std::string(t.kernel) + " " + std::to_string(t.m) + " x " + std::to_string(t.n) + ": " + error);
  }
  // The device's own SM count sizes cluster_gemm's grid: the emulator's cases, and one with more
  // units of work (pairs of tiles) than an H100 has pairs of SMs.
  std::vector<tyl::test::ClusterGemmCase> clusterCases(std::begin(tyl::test::kClusterGemmCases),
                                                       std::end(tyl::test::kClusterGemmCases));
  clusterCases.push_back({{2048, 2304, 136}, 0});
  for (const tyl::test::ClusterGemmCase& g : clusterCases) {
    std::vector<Buffer> b = tyl::test::tmaGemmInputs(g.size);
    onDevice("cluster_gemm", tyl::test::clusterGemmArgs(g), b);
    const std::string error = tyl::test::tmaGemmError(g.size, b);
    check(error.empty(), "cluster_gemm " + std::to_string(g.size.m) + " x " + std::to_string(g.size.n) + " x " +
                             std::to_string(g.size.k) + ": " + error);
  }
  std::printf("%s: %d failures\n", failures ? "FAIL" : "ok", failures);
  return failures ? 1 : 0;
}
