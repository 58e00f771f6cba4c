// What the benchmarks that take only --json, --reps and --commit share (softmax_bench,
// attention_bench): CUDA error checks, their command line, the device line, medians and the
// JSON file.
#pragma once

#include <tylo/runtime.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace bench {

#define CHECK_CUDA(call) ::bench::checkCuda((call), #call, __FILE__, __LINE__)

inline void checkCuda(cudaError_t err, const char* what, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: %s failed: %s", file, line, what, cudaGetErrorString(err));
  if (err == cudaErrorInvalidValue && tylo::last_launch_error()) std::fprintf(stderr, " (%s)", tylo::last_launch_error());
  std::fprintf(stderr, "\n");
  std::exit(1);
}

inline float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5f * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct Args {
  std::string jsonPath, commit = "unknown";
  int reps;
};

// `name [--json PATH] [--reps R] [--commit SHA]`; exits with 2 on anything else.
inline Args parseArgs(int argc, char** argv, const char* name, int reps) {
  Args args{{}, "unknown", reps};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc)
      args.jsonPath = argv[++i];
    else if (a == "--reps" && i + 1 < argc)
      args.reps = std::atoi(argv[++i]);
    else if (a == "--commit" && i + 1 < argc)
      args.commit = argv[++i];
    else
      args.reps = 0;
  }
  if (args.reps < 1) {
    std::fprintf(stderr, "usage: %s [--json PATH] [--reps R] [--commit SHA]   (R >= 1)\n", name);
    std::exit(2);
  }
  return args;
}

// The device's properties, printed; exits with 77 (skipped) without a CUDA device.
inline cudaDeviceProp deviceOrSkip() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device\n");
    std::exit(77);
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
  return prop;
}

// The JSON document's start, up to its list of rows: {"commit": ..., "device": ..., "rows": [
inline std::string jsonStart(const Args& args, const cudaDeviceProp& prop) {
  return "{\"commit\": \"" + args.commit + "\", \"device\": \"" + prop.name + "\", \"rows\": [";
}

inline void writeJson(const Args& args, const std::string& json) {
  if (args.jsonPath.empty()) return;
  if (FILE* f = std::fopen(args.jsonPath.c_str(), "w")) {
    std::fputs(json.c_str(), f);
    std::fclose(f);
  }
}

}  // namespace bench
