#include "tests/file/TestFile.h"

#include <algorithm>
#include <regex>
#include <sstream>

namespace tyl::filetest {

namespace {

const std::regex kDirective(R"(^\s*//\s*(CHECK|RUN-FLAGS|XFAIL)(\[([a-z0-9_-]+)\])?:(.*)$)");
// Anything that looks like it was meant to be a directive: a typo must not silently
// turn a test into one that expects nothing.
const std::regex kNearMiss(R"(^\s*//\s*(CHECK|RUN|XFAIL))");
const std::regex kTrailing(R"(\S.*//\s*(CHECK|RUN-FLAGS|XFAIL)\b)");
const std::regex kSeverity(R"(^(?:[0-9]+:[0-9]+|tyloc): (error|warning|remark|note): )");
const std::string kWildcard = "{{...}}";

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trimRight(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string trimLeft(std::string s) {
  size_t i = s.find_first_not_of(" \t");
  return i == std::string::npos ? "" : s.substr(i);
}

bool isCheckLine(const std::string& line) {
  std::smatch m;
  return std::regex_match(line, m, kDirective) && m[1] == "CHECK";
}

}  // namespace

TestFile parseTestFile(const std::string& path, const std::string& text) {
  TestFile f;
  f.path = path;
  f.runs.push_back(Run{});
  std::vector<std::pair<std::string, std::string>> checks;  // (run, line)
  bool defaultFlagsSeen = false;
  std::vector<std::string> lines = splitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    std::string where = "line " + std::to_string(i + 1);
    std::smatch m;
    if (!std::regex_match(line, m, kDirective)) {
      if (std::regex_search(line, kNearMiss))
        f.errors.push_back(where + ": looks like a directive but is not one of '// CHECK:', '// CHECK[run]:', "
                                   "'// RUN-FLAGS:', '// RUN-FLAGS[run]:', '// XFAIL:'");
      else if (std::regex_search(line, kTrailing))
        f.errors.push_back(where + ": a directive must be on a line of its own");
      continue;
    }
    std::string kind = m[1];
    std::string run = m[3];
    std::string value = trimRight(trimLeft(m[4]));
    if (kind == "CHECK") {
      if (value.empty()) f.errors.push_back(where + ": an empty CHECK line");
      checks.emplace_back(run, value);
    } else if (kind == "RUN-FLAGS") {
      std::vector<std::string> flags;
      std::istringstream words(value);
      for (std::string w; words >> w;) flags.push_back(w);
      if (run.empty()) {
        if (defaultFlagsSeen) f.errors.push_back(where + ": a second '// RUN-FLAGS:' line");
        defaultFlagsSeen = true;
        f.runs[0].flags = flags;
      } else {
        bool twice = std::any_of(f.runs.begin(), f.runs.end(), [&](const Run& r) { return r.name == run; });
        if (twice) f.errors.push_back(where + ": run '" + run + "' is declared twice");
        f.runs.push_back(Run{run, flags, {}});
      }
    } else {
      if (!run.empty()) f.errors.push_back(where + ": XFAIL applies to the whole file and takes no run name");
      if (value.empty()) f.errors.push_back(where + ": XFAIL needs a reason");
      if (f.xfail) f.errors.push_back(where + ": a second XFAIL line");
      f.xfail = value;
    }
  }
  for (const auto& check : checks) {
    const std::string& run = check.first;
    const auto& line = check.second;
    auto it = std::find_if(f.runs.begin(), f.runs.end(), [&](const Run& r) { return r.name == run; });
    if (it == f.runs.end()) {
      f.errors.push_back("CHECK[" + run + "] names a run no '// RUN-FLAGS[" + run + "]:' line declares");
      continue;
    }
    it->expected.push_back(line);
  }
  return f;
}

std::string withoutChecks(const std::string& text) {
  std::vector<std::string> kept;
  for (const std::string& line : splitLines(text))
    if (!isCheckLine(line)) kept.push_back(line);
  while (!kept.empty() && trimRight(kept.back()).empty()) kept.pop_back();
  std::string out;
  for (const std::string& line : kept) out += line + "\n";
  return out;
}

std::string withChecks(const std::string& stripped, const std::vector<Run>& runs) {
  std::string block;
  for (const Run& r : runs)
    for (const std::string& line : r.expected)
      block += (r.name.empty() ? "// CHECK: " : "// CHECK[" + r.name + "]: ") + line + "\n";
  if (block.empty()) return stripped;
  return stripped + "\n" + block;
}

bool lineMatches(const std::string& expected, const std::string& actual) {
  std::vector<std::string> parts;
  size_t pos = 0;
  for (size_t next; (next = expected.find(kWildcard, pos)) != std::string::npos; pos = next + kWildcard.size())
    parts.push_back(expected.substr(pos, next - pos));
  parts.push_back(expected.substr(pos));
  if (parts.size() == 1) return expected == actual;
  const std::string& first = parts.front();
  const std::string& last = parts.back();
  if (actual.size() < first.size() + last.size()) return false;
  if (actual.compare(0, first.size(), first) != 0) return false;
  if (actual.compare(actual.size() - last.size(), last.size(), last) != 0) return false;
  size_t at = first.size();
  size_t end = actual.size() - last.size();
  for (size_t i = 1; i + 1 < parts.size(); ++i) {
    size_t found = actual.find(parts[i], at);
    if (found == std::string::npos || found + parts[i].size() > end) return false;
    at = found + parts[i].size();
  }
  return true;
}

bool linesMatch(const std::vector<std::string>& expected, const std::vector<std::string>& actual) {
  if (expected.size() != actual.size()) return false;
  for (size_t i = 0; i < expected.size(); ++i)
    if (!lineMatches(expected[i], actual[i])) return false;
  return true;
}

std::string severityOf(const std::string& line) {
  std::smatch m;
  return std::regex_search(line, m, kSeverity) ? std::string(m[1]) : "";
}

std::string idOf(const std::string& line) {
  if (line.empty() || line.back() != ']') return "";
  size_t open = line.rfind(" [");
  if (open == std::string::npos) return "";
  return line.substr(open + 2, line.size() - open - 3);
}

std::string unifiedDiff(const std::vector<std::string>& expected, const std::vector<std::string>& actual,
                        const std::string& expectedName, const std::string& actualName) {
  // Longest common subsequence, with wildcard matching; the lists are short.
  size_t n = expected.size(), m = actual.size();
  std::vector<std::vector<size_t>> lcs(n + 1, std::vector<size_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = lineMatches(expected[i], actual[j]) ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::ostringstream os;
  os << "--- " << expectedName << "\n+++ " << actualName << "\n";
  os << "@@ -" << (n ? 1 : 0) << "," << n << " +" << (m ? 1 : 0) << "," << m << " @@\n";
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && lineMatches(expected[i], actual[j])) {
      os << " " << actual[j] << "\n";
      ++i, ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      os << "-" << expected[i++] << "\n";
    } else {
      os << "+" << actual[j++] << "\n";
    }
  }
  return os.str();
}

}  // namespace tyl::filetest
