// A file test: a .tyl input that carries, as comments, the diagnostics tyloc must print
// for it. The syntax is described in tests/file/README.md:
//
//   // RUN-FLAGS: --remarks                  flags of the default run (`tyloc check FILE ...`)
//   // RUN-FLAGS[werror]: -Werror            a second, named run of the same file
//   // XFAIL: why tyloc is wrong here        a known compiler bug; the test reports XFAIL
//   // CHECK: 12:5: error: message [id]      one line tyloc prints, without the file name
//   // CHECK[werror]: 12:5: error: ...       one line of the named run
//
// In a CHECK line `{{...}}` stands for any text.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tyl::filetest {

struct Run {
  std::string name;  // "" for the default run
  std::vector<std::string> flags;
  std::vector<std::string> expected;  // the CHECK lines of this run, in order
};

struct TestFile {
  std::string path;
  std::vector<Run> runs;  // runs[0] is the default run
  std::optional<std::string> xfail;
  std::vector<std::string> errors;  // malformed directives, with their line numbers
};

TestFile parseTestFile(const std::string& path, const std::string& text);

// The text without its CHECK lines, ending in exactly one newline.
std::string withoutChecks(const std::string& text);
// `stripped` (from withoutChecks) followed by a blank line and every run's CHECK lines.
std::string withChecks(const std::string& stripped, const std::vector<Run>& runs);

// Whether an expected line matches an actual one; `{{...}}` in `expected` matches any text.
bool lineMatches(const std::string& expected, const std::string& actual);
bool linesMatch(const std::vector<std::string>& expected, const std::vector<std::string>& actual);

// The severity word of a diagnostic line ("error", "warning", "remark", "note"), or "".
std::string severityOf(const std::string& line);
// The ID at the end of a diagnostic line (`... [id]`), or "".
std::string idOf(const std::string& line);

// A unified-style diff of two line lists: ' ' common, '-' expected only, '+' actual only.
std::string unifiedDiff(const std::vector<std::string>& expected, const std::vector<std::string>& actual,
                        const std::string& expectedName, const std::string& actualName);

}  // namespace tyl::filetest
