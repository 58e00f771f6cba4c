// Runs a command line in a shell and captures its exit code, stdout and stderr.
#pragma once

#include <string>
#include <vector>

namespace tyl::test {

struct ProcessResult {
  int exitCode = -1;
  std::string out;
  std::string err;
};

// Quotes one argument for /bin/sh.
std::string shellQuote(const std::string& arg);
// Runs `argv` (quoted) and waits for it.
ProcessResult run(const std::vector<std::string>& argv);
std::string readFile(const std::string& path);

}  // namespace tyl::test
