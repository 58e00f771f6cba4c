// Runs many inputs through the fuzz harness in child processes, so that a crash, a
// sanitizer abort or a hang becomes an outcome of one input instead of the end of the
// whole run (the robustness tests and fuzz_replay use it).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tests/fuzz/FuzzHarness.h"

namespace tyl::fuzz {

struct Outcome {
  bool ok = false;          // accepted, rejected or misuse: the contract held
  Verdict verdict = Verdict::Bug;
  std::string what;         // the verdict's detail, or what went wrong: an exception, a
                            // broken contract, "signal ...", "timeout ..."
};

// Runs job(0) .. job(n - 1) in forked children, `workers` at a time (each child runs as
// many inputs as it survives, then a new one takes over). An exception escaping a job is
// a failed outcome; so is a job that runs longer than `timeoutSeconds` (it is killed).
// Children get an 8 MiB stack and, without AddressSanitizer, 4 GiB of address space.
std::vector<Outcome> runIsolated(size_t n, const std::function<Result(size_t)>& job, int timeoutSeconds,
                                 int workers = 1);

// Known-open bugs (tests/fuzz/regressions/KNOWN_OPEN.txt): one a line, `NAME SIGNATURE`,
// `#` starts a comment. NAME is a file in regressions/ that still fails; SIGNATURE (the
// rest of the line, optional) is text that the failure's description contains, which
// lets the robustness tests tolerate other inputs that hit the same bug.
struct KnownOpen {
  std::string name;
  std::string signature;
};
std::vector<KnownOpen> readKnownOpen(const std::string& path);

}  // namespace tyl::fuzz
