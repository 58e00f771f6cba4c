#include "tests/support/Process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tyl::test {

std::string shellQuote(const std::string& arg) {
  std::string q = "'";
  for (char c : arg) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ProcessResult run(const std::vector<std::string>& argv) {
  char outPath[] = "/tmp/tyl-test-out-XXXXXX";
  char errPath[] = "/tmp/tyl-test-err-XXXXXX";
  int outFd = mkstemp(outPath);
  int errFd = mkstemp(errPath);
  if (outFd < 0 || errFd < 0) throw std::runtime_error("cannot create temporary files");
  close(outFd);
  close(errFd);
  std::string cmd;
  for (const std::string& a : argv) cmd += shellQuote(a) + " ";
  cmd += "> " + shellQuote(outPath) + " 2> " + shellQuote(errPath);
  int status = std::system(cmd.c_str());
  ProcessResult r;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = readFile(outPath);
  r.err = readFile(errPath);
  std::remove(outPath);
  std::remove(errPath);
  return r;
}

}  // namespace tyl::test
