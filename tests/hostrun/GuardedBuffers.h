// Global memory for the host-thread harness: each buffer of a run copied into its own pages,
// ending where an inaccessible page begins (and starting after one), so that the generated
// code reading or writing past either end of a tensor faults at once; the few bytes between
// the end of the data and the 16-byte boundary hold a pattern that is checked after the run.
// Output buffers (emu::Buffer::initialized false) are filled with NaNs, so that an element
// the kernel does not write cannot match a reference.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "backend/emu/HostData.h"

namespace tylo_host {

class GuardedBuffers {
 public:
  explicit GuardedBuffers(const std::vector<tyl::emu::Buffer>& buffers);
  ~GuardedBuffers();
  GuardedBuffers(const GuardedBuffers&) = delete;
  GuardedBuffers& operator=(const GuardedBuffers&) = delete;

  // Where buffer `i`'s data starts.
  std::byte* data(int i) const;
  // Copies the data back; what was written past the end of a buffer, one line each.
  std::string copyBack(std::vector<tyl::emu::Buffer>& buffers) const;

 private:
  struct Mapping {
    std::byte* base = nullptr;
    size_t length = 0;
    std::byte* data = nullptr;
    size_t bytes = 0;
  };
  std::vector<Mapping> mappings_;
};

// Makes a fault in a guard page print which access it was and end the process with status 1
// (once per process).
void reportGuardPageFaults();

}  // namespace tylo_host
