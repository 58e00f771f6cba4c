// Runs a thread IR kernel on the CPU: a whole grid, every thread of each block, warps in
// lockstep, with PTX semantics for the hardware instructions and checks for the bugs a GPU
// would hide (races, out-of-bounds and uninitialized accesses, misused collectives).
//
//   std::vector<emu::Buffer> buffers = {emu::makeBuffer(F32, n), emu::makeBuffer(F32, n, false)};
//   emu::fillRandom(buffers[0], F32, seed);
//   emu::RunResult r = emu::run(kernel, {Arg::pointer(0), Arg::pointer(1), Arg::integer(n)}, buffers);
//   if (!r.findings.empty()) std::cerr << emu::renderFindings(r.findings, sources);
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/emu/Findings.h"
#include "backend/emu/HostData.h"
#include "ir/thread/ThreadIR.h"

namespace tyl::emu {

struct Options {
  size_t maxFindings = 20;                         // distinct findings before the run stops
  int64_t maxWarpInstructions = int64_t{1} << 31;  // guards against runaway loops
  int64_t maxSharedBytes = tir::kMaxSharedBytesPerBlock;  // per block
  int64_t maxThreadsPerBlock = 1024;
  int smCount = 132;                               // what the launcher's sm_count() reads (an H100 SXM)
};

struct Stats {
  int64_t blocks = 0;
  int64_t warpInstructions = 0;  // statements executed per warp (a loop test counts as one)
  int64_t barriers = 0;          // barrier releases: a block's bar.sync 0, a named barrier's group
  int64_t mmas = 0;              // mma.sync per warp
  int64_t wgmmas = 0;            // wgmma.mma_async per warp
  int64_t tmaBytes = 0;          // bytes of the boxes TMA loads wrote to shared memory
  int64_t globalBytesRead = 0;
  int64_t globalBytesWritten = 0;
  int64_t sharedBytesRead = 0;
  int64_t sharedBytesWritten = 0;
  int64_t asyncBytesLanded = 0;  // written to shared memory by cp.async (at a wait or at exit)
};

struct RunResult {
  std::vector<Finding> findings;
  bool completed = false;  // every block ran to its end (no fatal finding, no finding limit)
  Stats stats;

  bool ok() const { return completed && findings.empty(); }
};

// A tensor parameter's extent or stride (tir::Param::shape, ::strides), computed from the
// scalar arguments (`args` has one Arg per parameter) as a host would; nullopt when it uses
// anything else, divides by zero, shifts by an amount outside 0..62 or leaves 64 bits, and then
// `why` (when given) says which.
std::optional<int64_t> hostValue(const tir::ExprRef& e, const std::vector<Arg>& args, std::string* why = nullptr);

// A tensor parameter at these arguments: its extents and strides, and the elements a buffer for
// it needs, 1 + the sum of (extent - 1) * stride over the dimensions with a positive stride
// (0 when an extent is 0 or negative, INT64_MAX when the sum leaves 64 bits). nullopt when an
// extent or stride cannot be computed (hostValue), and then `why` says which and why.
struct TensorExtent {
  std::vector<int64_t> shape, strides;
  int64_t span = 0;
};
std::optional<TensorExtent> tensorExtent(const tir::Param& p, const std::vector<Arg>& args,
                                         std::string* why = nullptr);

// Launches `kernel` with one Arg per kernel parameter (pointers index `buffers`, which the
// kernel reads and writes in place). Kernel bugs and refused launches come back as findings;
// arguments that do not match the parameters throw std::invalid_argument, and IR that breaks
// the thread IR's invariants (ir/thread/Verify.h, checked first) is an InternalError.
RunResult run(const tir::Kernel& kernel, const std::vector<Arg>& args, std::vector<Buffer>& buffers,
              const Options& options = {});

}  // namespace tyl::emu
