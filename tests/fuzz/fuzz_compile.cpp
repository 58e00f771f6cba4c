// libFuzzer target: every input goes through what `tyloc FILE.tyl` or `tyloc layout EXPR`
// runs (tests/fuzz/FuzzHarness.h describes the input format). A crash, a sanitizer report,
// an escaping exception, a timeout, or a broken diagnostic contract is a bug.
//
// Exceptions are left uncaught, so the report shows the stack of the throw. For long runs
// past a known-open bug, TYLO_FUZZ_TOLERATE='text|other text' makes an exception or a
// broken contract whose message contains one of the texts count as handled (the run goes on
// exploring).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "tests/fuzz/FuzzHarness.h"

namespace {

std::vector<std::string> readTolerated() {
  std::vector<std::string> texts;
  const char* env = std::getenv("TYLO_FUZZ_TOLERATE");
  std::string s = env ? env : "";
  size_t pos = 0;
  while (pos < s.size()) {
    size_t bar = s.find('|', pos);
    if (bar == std::string::npos) bar = s.size();
    if (bar > pos) texts.push_back(s.substr(pos, bar - pos));
    pos = bar + 1;
  }
  return texts;
}

const std::vector<std::string>& tolerated() {
  static const std::vector<std::string> texts = readTolerated();
  return texts;
}

tyl::fuzz::Result run(const uint8_t* data, size_t size) {
  const std::vector<std::string>& known = tolerated();
  if (known.empty()) return tyl::fuzz::runFuzzInput(data, size);
  try {
    return tyl::fuzz::runFuzzInput(data, size);
  } catch (const std::exception& e) {
    std::string what = e.what();
    for (const std::string& k : known)
      if (what.find(k) != std::string::npos) return tyl::fuzz::Result{tyl::fuzz::Verdict::Rejected, what};
    std::fprintf(stderr, "tylo fuzz: exception escaped: %s\n", e.what());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tyl::fuzz::Result r = run(data, size);
  if (r.verdict == tyl::fuzz::Verdict::Bug) {
    for (const std::string& k : tolerated())
      if (r.detail.find(k) != std::string::npos) return 0;
    std::fprintf(stderr, "tylo fuzz: the compiler broke its contract: %s\n", r.detail.c_str());
    std::abort();
  }
  return 0;
}
