#include "tools/tyloc/Depfile.h"

#include <fmt/format.h>

namespace tyl::driver {

namespace {

// `path` as one word of a rule, or why it cannot be one.
std::string appendEscaped(std::string& out, const std::string& path) {
  if (path.find_first_of("\n\r") != std::string::npos)
    return fmt::format("the path '{}' holds a line break", path);
  // A backslash before the blank or ':' that ends the word would escape that instead, and a
  // ':' before a blank ends the targets.
  if (!path.empty() && path.back() == '\\') return fmt::format("the path '{}' ends with a backslash", path);
  if (!path.empty() && path.back() == ':') return fmt::format("the path '{}' ends with ':'", path);
  size_t backslashes = 0;  // how many backslashes were just written
  for (char c : path) {
    if (c == ' ' || c == '\t' || c == '#') {
      // 2N + 1 backslashes before a blank or '#' stand for N backslashes and the character.
      out.append(backslashes + 1, '\\');
    } else if (c == '$') {
      out += '$';
    }
    out += c;
    backslashes = c == '\\' ? backslashes + 1 : 0;
  }
  return "";
}

}  // namespace

std::string dependencyLine(const std::vector<std::string>& targets, const std::vector<std::string>& prerequisites,
                           std::string* problem) {
  std::string line;
  problem->clear();
  auto words = [&](const std::vector<std::string>& paths, const char* before) {
    for (size_t i = 0; i < paths.size() && problem->empty(); ++i) {
      line += i == 0 ? before : " ";
      *problem = appendEscaped(line, paths[i]);
    }
  };
  words(targets, "");
  line += ':';
  words(prerequisites, " ");
  if (!problem->empty()) return "";
  return line + "\n";
}

}  // namespace tyl::driver
