// The written semantics of asynchronous copies (the table in backend/emu/README.md), as cases
// that both executors of the thread program run: the emulator (tests/emu/async_semantics_test.cpp)
// and the generated CUDA compiled for the host (tests/hostrun/host_run_test.cpp). Each case is
// a kernel of tests/support/async_semantics.tyl, run once with A[i] = i + 0.5 and B all zeros,
// and what it must leave: B, and the bytes cp.async wrote to shared memory.
#pragma once

#include <cstdint>

namespace tyl::test {

inline constexpr int64_t kAsyncElements = 128;  // f32 elements of A and B

inline float asyncInput(int64_t i) { return static_cast<float>(i) + 0.5f; }

struct AsyncCase {
  const char* kernel;
  const char* rule;   // the row of the table it checks
  bool bCopiesA;      // B ends as A's first values (else B stays all zeros)
  int64_t bytesLanded;
};

inline constexpr AsyncCase kAsyncCases[] = {
    {"source_read_at_issue", "a cp.async reads its source when issued", true, 512},
    {"oldest_group_first", "a wait retires the oldest committed groups", true, 1024},
    {"in_flight_at_exit", "copies in flight when their thread exits land, committed or not", false, 1024},
};

}  // namespace tyl::test
