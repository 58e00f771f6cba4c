// The dependency file's rule (tools/tyloc/Depfile.h), read back the way Ninja and Make read
// such a line: every path comes back as it was written.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tools/tyloc/Depfile.h"

namespace {

using Paths = std::vector<std::string>;

// Words end at blanks that no backslash escapes; 2N + 1 backslashes before a blank or '#' are N
// backslashes and that character, other backslashes are themselves; '$$' is '$'; a ':'
// followed by a blank or the end of the line ends the targets.
std::pair<Paths, Paths> readRule(const std::string& line) {
  REQUIRE(!line.empty());
  REQUIRE(line.back() == '\n');
  const size_t n = line.size() - 1;
  Paths words[2];
  int part = 0;
  std::string word;
  bool inWord = false;
  auto endWord = [&] {
    if (inWord) words[part].push_back(word);
    word.clear();
    inWord = false;
  };
  for (size_t i = 0; i < n;) {
    const char c = line[i];
    if (c == '\\') {
      size_t run = 0;
      while (i < n && line[i] == '\\') ++run, ++i;
      const char next = i < n ? line[i] : '\n';
      inWord = true;
      if (next == ' ' || next == '\t' || next == '#') {
        word.append(run / 2, '\\');
        if (run % 2 == 1) word += line[i++];
      } else {
        word.append(run, '\\');
      }
      continue;
    }
    if (c == '$') {
      REQUIRE(i + 1 < n);
      REQUIRE(line[i + 1] == '$');
      word += '$';
      inWord = true;
      i += 2;
      continue;
    }
    if (c == ':' && part == 0 && (i + 1 == n || line[i + 1] == ' ' || line[i + 1] == '\t')) {
      endWord();
      part = 1;
      ++i;
      continue;
    }
    REQUIRE(c != '#');  // a comment: the rest of the line would be lost
    if (c == ' ' || c == '\t') {
      endWord();
    } else {
      word += c;
      inWord = true;
    }
    ++i;
  }
  endWord();
  REQUIRE(part == 1);
  return {words[0], words[1]};
}

void roundTrip(const Paths& targets, const Paths& prerequisites) {
  std::string problem;
  const std::string line = tyl::driver::dependencyLine(targets, prerequisites, &problem);
  INFO(line);
  REQUIRE(problem.empty());
  const auto [readTargets, readPrerequisites] = readRule(line);
  CHECK(readTargets == targets);
  CHECK(readPrerequisites == prerequisites);
}

}  // namespace

TEST_CASE("depfile: plain paths are written as they are") {
  std::string problem;
  CHECK(tyl::driver::dependencyLine({"out/k.cu", "out/k.cuh"}, {"k.tyl", "tiles.tyl"}, &problem) ==
        "out/k.cu out/k.cuh: k.tyl tiles.tyl\n");
  CHECK(problem.empty());
}

TEST_CASE("depfile: blanks, '#', '$' and backslashes before them are escaped") {
  std::string problem;
  CHECK(tyl::driver::dependencyLine({"a b.cu"}, {"x#1.tyl", "$HOME.tyl", "c\\ d.tyl", "c:%.tyl"}, &problem) ==
        "a\\ b.cu: x\\#1.tyl $$HOME.tyl c\\\\\\ d.tyl c:%.tyl\n");
  roundTrip({"a b.cu", "t\tab.cuh"}, {"x#1.tyl", "$HOME.tyl", "c\\ d.tyl", "c\\\\#e", "c:%.tyl", "a\\b"});
}

TEST_CASE("depfile: random paths come back as they were") {
  std::mt19937 rng(20261204);
  const std::string alphabet = "ab/. \t#$\\:%";
  auto path = [&] {
    std::string p;
    const int length = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < length; ++i) p += alphabet[rng() % alphabet.size()];
    if (p.back() == '\\' || p.back() == ':') p += 'z';
    return p;
  };
  for (int i = 0; i < 2000; ++i) {
    Paths targets{path()}, prerequisites{path()};
    if (rng() % 2) targets.push_back(path());
    for (unsigned j = rng() % 3; j > 0; --j) prerequisites.push_back(path());
    roundTrip(targets, prerequisites);
  }
}

TEST_CASE("depfile: a path that a rule cannot name is refused, and which one says why") {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"a\nb.tyl", "the path 'a\nb.tyl' holds a line break"},
      {"a\rb.tyl", "the path 'a\rb.tyl' holds a line break"},
      {"dir\\", "the path 'dir\\' ends with a backslash"},
      {"c:", "the path 'c:' ends with ':'"},
  };
  for (const auto& [bad, why] : cases) {
    std::string problem;
    CHECK(tyl::driver::dependencyLine({"k.cu"}, {"k.tyl", bad}, &problem).empty());
    CHECK(problem == why);
    CHECK(tyl::driver::dependencyLine({bad}, {"k.tyl"}, &problem).empty());
    CHECK(problem == why);
  }
}
