// Replays saved inputs (tests/fuzz/regressions/) through the fuzz harness, in child
// processes, so that a crash or a hang is an outcome rather than the end of the run.
//
//   fuzz_replay [--known-open LIST] [--timeout SECONDS] FILE...
//
// A file ending in .tyl is compiled as a source file (with default options, then with
// every stage dumped, -Werror, remarks, --no-line and JSON diagnostics, for sm_80 and
// sm_90a); one ending in .layout is a layout request (FuzzHarness.h: the expression, then
// `shape ..`, `apply ..`, `json`, `svg` lines); anything else is a raw fuzzer input. A file
// named in LIST (Isolated.h: KnownOpen) is a known-open bug: it is expected to fail, and
// passing is an error that asks for its name to be removed from the list.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/FuzzHarness.h"
#include "tests/fuzz/Isolated.h"

namespace {

using namespace tyl::fuzz;

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The runs one saved input stands for.
std::vector<std::function<Result()>> runsOf(const std::string& path) {
  std::string bytes = readAll(path);
  std::string ext = std::filesystem::path(path).extension().string();
  std::vector<std::function<Result()>> runs;
  if (ext == ".tyl") {
    CompileKnobs all{true, true, false, true, true};
    CompileKnobs hopper = all;
    hopper.sm90a = true;
    runs.push_back([bytes] { return compileSource(bytes); });
    runs.push_back([bytes, all] { return compileSource(bytes, all); });
    runs.push_back([bytes, hopper] { return compileSource(bytes, hopper); });
  } else if (ext == ".layout") {
    runs.push_back([bytes] { return layoutCommand(parseLayoutRequest(bytes)); });
  } else {
    runs.push_back([bytes] { return runFuzzInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()); });
  }
  return runs;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<KnownOpen> knownOpen;
  int timeoutSeconds = 60;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--known-open" && i + 1 < argc) {
      knownOpen = readKnownOpen(argv[++i]);
    } else if (a == "--timeout" && i + 1 < argc) {
      timeoutSeconds = std::stoi(argv[++i]);
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: fuzz_replay [--known-open LIST] [--timeout SECONDS] FILE...\n");
    return 2;
  }
  int failures = 0;
  for (const std::string& f : files) {
    std::string name = std::filesystem::path(f).filename().string();
    bool expectFailure = false;
    for (const KnownOpen& k : knownOpen) expectFailure |= k.name == name;
    std::vector<std::function<Result()>> runs = runsOf(f);
    // One run after the other, stopping at the first failure (a hang costs one timeout).
    std::vector<Outcome> outcomes;
    bool ok = true;
    std::string why;
    for (size_t i = 0; i < runs.size() && ok; ++i) {
      outcomes.push_back(runIsolated(1, [&](size_t) { return runs[i](); }, timeoutSeconds).front());
      ok = outcomes.back().ok;
      why = outcomes.back().what;
    }
    if (ok && expectFailure) {
      std::printf("FIXED: %s now passes (%s); remove it from KNOWN_OPEN.txt\n", name.c_str(),
                  verdictName(outcomes.back().verdict));
      ++failures;
    } else if (!ok && !expectFailure) {
      std::printf("FAIL: %s: %s\n", name.c_str(), why.c_str());
      ++failures;
    } else if (!ok) {
      std::printf("known open (expected to fail): %s: %s\n", name.c_str(), why.c_str());
    } else {
      std::printf("ok: %s: %s %s\n", name.c_str(), verdictName(outcomes.back().verdict),
                  outcomes.back().what.c_str());
    }
  }
  return failures == 0 ? 0 : 1;
}
