// file_tests: runs tyloc on .tyl file tests and compares what it prints with the
// expectations written inside each file (tests/file/README.md).
//
//   file_tests [--tyloc PATH] FILE.tyl...              check each file
//   file_tests [--tyloc PATH] --update [--force] FILE.tyl...
//                                                      rewrite the CHECK lines from tyloc's output
//   file_tests [--tyloc PATH] --coverage DIR --allowlist FILE --root DIR
//                                                      every diagnostic ID has a test
//
// Exit status: 0 when every file passes (or fails as its XFAIL line says), 1 otherwise,
// 2 on misuse.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "tests/file/TestFile.h"
#include "tests/support/Process.h"

namespace fs = std::filesystem;
using namespace tyl::filetest;

namespace {

struct Options {
  std::string tyloc = TYLOC_PATH;
  bool update = false;
  bool force = false;
  std::string coverageDir;
  std::string allowlist;
  std::string root = ".";
  std::vector<std::string> files;
};

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string indent(const std::string& text, const std::string& by = "    ") {
  std::string out;
  for (const std::string& line : splitLines(text)) out += by + line + "\n";
  return out;
}

// A scratch directory, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tyl-file-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// ---- What tyloc printed ------------------------------------------------------------

// The folder of the test file, with its trailing separator: diagnostics in files it imports,
// and paths in messages, are checked relative to it (`imports/cycle_a.tyl:1:8: error: ...`).
std::string folderOf(const std::string& path) { return fs::path(path).parent_path().string() + "/"; }

std::string relativeTo(std::string line, const std::string& folder) {
  for (size_t at = line.find(folder); at != std::string::npos; at = line.find(folder, at))
    line.erase(at, folder.size());
  return line;
}

// The diagnostic lines of a text rendering, as CHECK lines: the file name dropped (other
// files' names made relative to the test's folder), the source excerpts (`   12 | ...` and
// the caret line) skipped.
std::vector<std::string> textLines(const std::string& err, const std::string& path) {
  static const std::regex excerpt(R"(^ *[0-9]* \| )");
  std::vector<std::string> out;
  std::string prefix = path + ":";
  std::string folder = folderOf(path);
  for (const std::string& line : splitLines(err)) {
    if (line.rfind(prefix, 0) == 0)
      out.push_back(relativeTo(line.substr(prefix.size()), folder));
    else if (!std::regex_search(line, excerpt))
      out.push_back(relativeTo(line, folder));
  }
  return out;
}

// The same lines from the JSON rendering, or a description of what is wrong with it.
// `dropped` errors are counted but not listed (past the error limit).
std::vector<std::string> jsonLines(const std::string& err, const std::string& path, int dropped,
                                   std::string& problem) {
  using nlohmann::json;
  std::vector<std::string> out;
  json doc;
  try {
    doc = json::parse(err);
  } catch (const json::exception& e) {
    problem = std::string("--diagnostics-format json printed no valid JSON document: ") + e.what();
    return out;
  }
  auto where = [&](const json& loc) -> std::optional<std::string> {
    if (loc.is_null()) return "tyloc: ";
    for (const char* key : {"line", "column", "end_line", "end_column"})
      if (!loc.contains(key) || !loc[key].is_number_integer()) return std::nullopt;
    if (!loc.contains("file") || !loc["file"].is_string()) return std::nullopt;
    const std::string file = loc["file"], folder = folderOf(path);
    std::string name;
    if (file != path) {
      if (file.rfind(folder, 0) != 0) return std::nullopt;
      name = file.substr(folder.size()) + ":";
    }
    return name + std::to_string(loc["line"].get<int>()) + ":" + std::to_string(loc["column"].get<int>()) + ": ";
  };
  if (!doc.is_object() || !doc.contains("diagnostics") || !doc["diagnostics"].is_array() ||
      !doc.contains("errors") || !doc.contains("warnings")) {
    problem = "the JSON document lacks 'diagnostics', 'errors' or 'warnings'";
    return out;
  }
  int errors = 0, warnings = 0;
  for (const json& d : doc["diagnostics"]) {
    std::optional<std::string> at = d.contains("location") ? where(d["location"]) : std::nullopt;
    if (!at || !d.contains("severity") || !d.contains("id") || !d.contains("message") || !d.contains("notes") ||
        !d["notes"].is_array()) {
      problem = "a JSON diagnostic lacks one of severity, id, message, location, notes: " + d.dump();
      return out;
    }
    std::string severity = d["severity"];
    errors += severity == "error";
    warnings += severity == "warning";
    out.push_back(*at + severity + ": " + relativeTo(d["message"].get<std::string>(), folderOf(path)) + " [" +
                  d["id"].get<std::string>() + "]");
    for (const json& n : d["notes"]) {
      std::optional<std::string> nat = n.contains("location") ? where(n["location"]) : std::nullopt;
      if (!nat || !n.contains("message")) {
        problem = "a JSON note lacks its message or location: " + n.dump();
        return out;
      }
      const std::string message = n["message"];
      out.push_back(*nat + "note: " + relativeTo(message, folderOf(path)));
      // "93 more like this here, not shown (...)": the counts include those.
      const size_t more = message.find(" more like this here, not shown");
      if (more != std::string::npos && more > 0 && message.find_first_not_of("0123456789") == more) {
        const int repeats = std::stoi(message.substr(0, more));
        errors += severity == "error" ? repeats : 0;
        warnings += severity == "warning" ? repeats : 0;
      }
    }
  }
  if (doc["errors"] != errors + dropped || doc["warnings"] != warnings)
    problem = "the JSON counts (errors " + doc["errors"].dump() + ", warnings " + doc["warnings"].dump() +
              ") differ from the diagnostics it lists";
  return out;
}

struct Actual {
  int exitCode = 0;
  std::vector<std::string> lines;
  std::vector<std::string> problems;  // wrong whatever the expectations say
};

std::vector<std::string> command(const Options& o, const std::vector<std::string>& head, const std::string& path,
                                 const std::vector<std::string>& flags) {
  std::vector<std::string> argv{o.tyloc};
  argv.insert(argv.end(), head.begin(), head.end());
  argv.push_back(path);
  argv.insert(argv.end(), flags.begin(), flags.end());
  return argv;
}

std::string spell(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

// Runs `tyloc check` on the file with the run's flags, in text and in JSON; when the
// check succeeds, also compiles it, which must print the same and write the outputs.
Actual runTyloc(const Options& o, const std::string& path, const Run& run) {
  Actual a;
  std::vector<std::string> argv = command(o, {"check"}, path, run.flags);
  tyl::test::ProcessResult text = tyl::test::run(argv);
  a.exitCode = text.exitCode;
  a.lines = textLines(text.err, path);
  if (text.exitCode >= 3)
    a.problems.push_back("tyloc " + std::string(text.exitCode == 3 ? "reported an internal compiler error"
                                                                     : "crashed") +
                         " (exit " + std::to_string(text.exitCode) + ") running: " + spell(argv) + "\n" +
                         indent(text.err));
  if (text.exitCode == 2)
    a.problems.push_back("tyloc rejected the command line (exit 2) running: " + spell(argv) + "\n" + indent(text.err));
  if (!text.out.empty()) a.problems.push_back("tyloc check printed on stdout:\n" + indent(text.out));
  if (text.exitCode != 0 && text.exitCode != 1) return a;

  // The JSON rendering must say the same.
  std::vector<std::string> jsonArgv = argv;
  jsonArgv.insert(jsonArgv.end(), {"--diagnostics-format", "json"});
  tyl::test::ProcessResult json = tyl::test::run(jsonArgv);
  std::vector<std::string> fromText;
  int dropped = 0;
  static const std::regex more(R"(^tyloc: note: ([0-9]+) more errors not shown$)");
  for (const std::string& l : a.lines) {
    std::smatch m;
    if (std::regex_match(l, m, more))
      dropped = std::stoi(m[1]);
    else
      fromText.push_back(l);
  }
  std::string problem;
  std::vector<std::string> fromJson = jsonLines(json.err, path, dropped, problem);
  if (!problem.empty())
    a.problems.push_back(problem);
  else if (fromJson != fromText)
    a.problems.push_back("the text and JSON renderings disagree:\n" +
                         indent(unifiedDiff(fromText, fromJson, "text", "json")));
  if (json.exitCode != text.exitCode)
    a.problems.push_back("exit " + std::to_string(json.exitCode) + " with --diagnostics-format json but " +
                         std::to_string(text.exitCode) + " without");

  // What checks cleanly also compiles, with the same diagnostics.
  if (text.exitCode == 0) {
    TempDir dir;
    std::string cu = (dir.path / "out.cu").string(), cuh = (dir.path / "out.cuh").string();
    std::vector<std::string> compileArgv = command(o, {}, path, run.flags);
    compileArgv.insert(compileArgv.end(), {"-o", cu, "--header", cuh});
    tyl::test::ProcessResult compiled = tyl::test::run(compileArgv);
    if (compiled.exitCode != 0)
      a.problems.push_back("tyloc check succeeds but compiling fails (exit " + std::to_string(compiled.exitCode) +
                           "): " + spell(compileArgv) + "\n" + indent(compiled.err));
    else if (textLines(compiled.err, path) != a.lines)
      a.problems.push_back("compiling prints other diagnostics than tyloc check:\n" +
                           indent(unifiedDiff(a.lines, textLines(compiled.err, path), "check", "compile")));
    else if (!fs::exists(cu) || fs::file_size(cu) == 0 || !fs::exists(cuh))
      a.problems.push_back("compiling succeeds but writes no output: " + spell(compileArgv));
  }
  return a;
}

// ---- Checking one file -------------------------------------------------------------

bool anyWithSeverity(const std::vector<std::string>& lines, const std::string& severity) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return severityOf(l) == severity; });
}

// The file's name says what kind of test it is; its default run must agree.
std::optional<std::string> namingProblem(const std::string& path, const Run& run) {
  std::string name = fs::path(path).filename().string();
  const std::vector<std::string>& e = run.expected;
  if (name.rfind("fail_", 0) == 0)
    return anyWithSeverity(e, "error") ? std::nullopt : std::optional<std::string>("a fail_ test expects an error");
  if (name.rfind("ok_", 0) == 0)
    return anyWithSeverity(e, "error") || anyWithSeverity(e, "warning")
               ? std::optional<std::string>("an ok_ test expects no errors and no warnings")
               : std::nullopt;
  if (name.rfind("warn_", 0) == 0)
    return anyWithSeverity(e, "warning") && !anyWithSeverity(e, "error")
               ? std::nullopt
               : std::optional<std::string>("a warn_ test expects a warning and no errors (in its default run)");
  if (name.rfind("remark_", 0) == 0)
    return anyWithSeverity(e, "remark") && !anyWithSeverity(e, "error")
               ? std::nullopt
               : std::optional<std::string>("a remark_ test expects a remark and no errors (in its default run)");
  return "file tests are named fail_*, ok_*, warn_* or remark_*";
}

std::string runLabel(const Run& r) { return r.name.empty() ? "default run" : "run '" + r.name + "'"; }

// 0: pass or expected failure; 1: failure or unexpected pass.
int checkFile(const Options& o, const std::string& path) {
  std::string text = readText(path);
  if (text.empty() && !fs::exists(path)) {
    std::cout << "FAIL " << path << ": cannot read the file\n";
    return 1;
  }
  TestFile f = parseTestFile(path, text);
  if (!f.errors.empty()) {
    std::cout << "FAIL " << path << ": malformed directives\n";
    for (const std::string& e : f.errors) std::cout << "    " << e << "\n";
    return 1;
  }
  if (std::optional<std::string> p = namingProblem(path, f.runs[0])) {
    std::cout << "FAIL " << path << ": " << *p << "\n";
    return 1;
  }
  std::ostringstream report;
  bool ok = true;
  for (const Run& run : f.runs) {
    Actual a = runTyloc(o, path, run);
    int expectedExit = anyWithSeverity(run.expected, "error") ? 1 : 0;
    std::string label = runLabel(run) + " (tyloc check " + fs::path(path).filename().string() +
                        (run.flags.empty() ? "" : " " + spell(run.flags)) + ")";
    for (const std::string& p : a.problems) {
      ok = false;
      report << label << ": " << p << (p.back() == '\n' ? "" : "\n");
    }
    if (!linesMatch(run.expected, a.lines)) {
      ok = false;
      report << label << ": the diagnostics differ from the CHECK lines\n"
             << indent(unifiedDiff(run.expected, a.lines, "expected", "actual"));
    }
    if (a.exitCode != expectedExit && a.exitCode < 2) {
      ok = false;
      report << label << ": exit " << a.exitCode << ", expected " << expectedExit << "\n";
    }
  }
  if (f.xfail) {
    if (ok) {
      std::cout << "XPASS " << path << ": passes although it is marked XFAIL (" << *f.xfail
                << "); remove the XFAIL line\n";
      return 1;
    }
    std::cout << "XFAIL " << path << ": " << *f.xfail << "\n" << indent(report.str());
    return 0;
  }
  if (!ok) {
    std::cout << "FAIL " << path << "\n" << indent(report.str())
              << "    (to accept tyloc's output: file_tests --update " << path << ")\n";
    return 1;
  }
  std::cout << "PASS " << path << "\n";
  return 0;
}

// ---- Updating one file -------------------------------------------------------------

int updateFile(const Options& o, const std::string& path) {
  std::string text = readText(path);
  TestFile f = parseTestFile(path, text);
  if (!f.errors.empty()) {
    std::cout << "FAIL " << path << ": malformed directives, not updated\n";
    for (const std::string& e : f.errors) std::cout << "    " << e << "\n";
    return 1;
  }
  if (f.xfail && !o.force) {
    std::cout << "SKIP " << path << ": marked XFAIL, so its CHECK lines say what tyloc should print; "
              << "--force rewrites them anyway\n";
    return 0;
  }
  std::string stripped = withoutChecks(text);
  // The scratch copy sits beside the file (hidden, removed afterwards), so that the files it
  // imports are found where the file itself finds them.
  std::string scratch = (fs::path(path).parent_path() / (".update." + fs::path(path).filename().string())).string();
  struct Remove {
    std::string path;
    ~Remove() {
      std::error_code ec;
      fs::remove(path, ec);
    }
  } removeScratch{scratch};
  std::string current = text;
  // Rewriting moves the CHECK lines to the end, which may move what a diagnostic points
  // at (the end of the input); repeat until the file describes itself.
  for (int round = 0; round < 4; ++round) {
    std::ofstream(scratch, std::ios::binary) << current;
    TestFile now = parseTestFile(scratch, current);
    std::vector<Run> runs = now.runs;
    for (Run& r : runs) {
      Actual a = runTyloc(o, scratch, r);
      if (!a.problems.empty()) {
        std::cout << "FAIL " << path << ": not updated; " << runLabel(r) << ":\n";
        for (const std::string& p : a.problems) std::cout << indent(p);
        return 1;
      }
      // Keep hand-written lines (with {{...}}) that still match.
      for (size_t i = 0; i < a.lines.size(); ++i)
        if (i < r.expected.size() && lineMatches(r.expected[i], a.lines[i])) a.lines[i] = r.expected[i];
      r.expected = a.lines;
    }
    std::string next = withChecks(stripped, runs);
    if (next == current) break;
    current = next;
  }
  if (current == text) {
    std::cout << "UNCHANGED " << path << "\n";
    return 0;
  }
  std::ofstream(path, std::ios::binary) << current;
  std::cout << "UPDATED " << path << "\n";
  return 0;
}

// ---- Coverage ----------------------------------------------------------------------

int coverage(const Options& o) {
  static const std::regex idForm("^[a-z][a-z0-9]*(-[a-z0-9]+)*$");
  std::vector<std::string> failures;
  std::vector<std::string> notes;

  // The registry, as tyloc lists it.
  tyl::test::ProcessResult list = tyl::test::run({o.tyloc, "--list-diagnostics"});
  if (list.exitCode != 0) {
    std::cout << "FAIL tyloc --list-diagnostics exits " << list.exitCode << "\n" << indent(list.err);
    return 1;
  }
  std::map<std::string, std::string> severity;  // id -> severity
  for (const std::string& line : splitLines(list.out)) {
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string field; std::getline(in, field, '\t');) fields.push_back(field);
    if (fields.size() != 3 || fields[2].empty()) {
      failures.push_back("--list-diagnostics line is not 'id<TAB>severity<TAB>summary': " + line);
      continue;
    }
    const std::string& id = fields[0];
    if (!std::regex_match(id, idForm)) failures.push_back("ID '" + id + "' is not lowercase-dashed (e.g. bank-conflict)");
    if (fields[1] != "error" && fields[1] != "warning" && fields[1] != "remark" && fields[1] != "note")
      failures.push_back("ID '" + id + "' has an unknown severity '" + fields[1] + "'");
    if (severity.count(id)) failures.push_back("ID '" + id + "' is registered twice");
    severity[id] = fields[1];
  }

  // What the file tests expect.
  std::map<std::string, std::set<std::string>> testedBy, xfailedBy;  // id -> files
  std::set<std::string> werror, wno;  // warning IDs tested as errors / silenced
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(o.coverageDir))
    if (e.path().extension() == ".tyl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& p : files) {
    TestFile f = parseTestFile(p.string(), readText(p.string()));
    std::string name = p.filename().string();
    if (!f.errors.empty()) failures.push_back(name + " has malformed directives");
    for (const Run& r : f.runs) {
      bool isWerror = std::find(r.flags.begin(), r.flags.end(), "-Werror") != r.flags.end();
      for (const std::string& flag : r.flags)
        if (flag.rfind("-Wno-", 0) == 0) wno.insert(flag.substr(5));
      for (const std::string& line : r.expected) {
        std::string sev = severityOf(line);
        if (sev.empty() || sev == "note") continue;
        std::string id = idOf(line);
        if (id.empty() && line.find("{{...}}") != std::string::npos) continue;  // any ID
        if (!severity.count(id)) {
          failures.push_back(name + " expects '" + id + "', which tyloc does not register: " + line);
          continue;
        }
        (f.xfail ? xfailedBy : testedBy)[id].insert(name);
        if (isWerror && sev == "error" && severity[id] == "warning") werror.insert(id);
      }
    }
  }

  // IDs tested elsewhere, each with the test file and a string that file must contain.
  std::map<std::string, std::string> allowed;  // id -> where
  std::ifstream al(o.allowlist);
  if (!al) failures.push_back("cannot read the allowlist " + o.allowlist);
  int lineNo = 0;
  for (std::string line; std::getline(al, line);) {
    ++lineNo;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string id, file, evidence;
    in >> id >> file;
    std::getline(in, evidence);
    evidence = evidence.substr(std::min(evidence.size(), evidence.find_first_not_of(" \t")));
    std::string at = o.allowlist + ":" + std::to_string(lineNo);
    if (id.empty() || file.empty() || evidence.empty()) {
      failures.push_back(at + ": expected 'id  test-file  text-the-test-file-contains'");
      continue;
    }
    if (!std::regex_match(id, idForm)) failures.push_back(at + ": '" + id + "' is not lowercase-dashed");
    if (allowed.count(id)) failures.push_back(at + ": '" + id + "' is listed twice");
    std::string content = readText((fs::path(o.root) / file).string());
    if (content.empty())
      failures.push_back(at + ": cannot read " + file);
    else if (content.find(evidence) == std::string::npos)
      failures.push_back(at + ": " + file + " does not contain '" + evidence + "', so it does not test '" + id + "'");
    if (testedBy.count(id))
      failures.push_back(at + ": '" + id + "' has a file test (" + *testedBy[id].begin() +
                         "); remove it from the allowlist");
    if (!severity.count(id)) notes.push_back("'" + id + "' is allowlisted but tyloc does not register it (yet)");
    allowed[id] = file;
  }

  int covered = 0, xfailOnly = 0, allowlisted = 0;
  for (const auto& [id, sev] : severity) {
    if (testedBy.count(id)) {
      ++covered;
    } else if (xfailedBy.count(id)) {
      ++xfailOnly;
      notes.push_back("'" + id + "' is only tested by XFAIL files: " + *xfailedBy[id].begin());
    } else if (allowed.count(id)) {
      ++allowlisted;
    } else {
      failures.push_back("'" + id + "' (" + sev + ") has no file test and is not in the allowlist");
    }
    if (sev == "warning" && !allowed.count(id)) {
      if (!werror.count(id)) failures.push_back("warning '" + id + "' has no file test of -Werror turning it into an error");
      if (!wno.count(id)) failures.push_back("warning '" + id + "' has no file test run with -Wno-" + id);
    }
  }
  for (const std::string& n : notes) std::cout << "note: " << n << "\n";
  std::cout << severity.size() << " diagnostic IDs: " << covered << " with file tests, " << allowlisted
            << " tested elsewhere (allowlist), " << xfailOnly << " only by XFAIL file tests\n";
  if (failures.empty()) {
    std::cout << "PASS coverage\n";
    return 0;
  }
  std::cout << "FAIL coverage\n";
  for (const std::string& f : failures) std::cout << "    " << f << "\n";
  return 1;
}

int usage(const std::string& why) {
  std::cerr << "file_tests: " << why << "\n"
            << "usage: file_tests [--tyloc PATH] [--update [--force]] FILE.tyl...\n"
            << "       file_tests [--tyloc PATH] --coverage DIR --allowlist FILE [--root DIR]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    if (a == "--tyloc" || a == "--coverage" || a == "--allowlist" || a == "--root") {
      std::optional<std::string> v = value();
      if (!v) return usage(a + " needs a value");
      (a == "--tyloc" ? o.tyloc : a == "--coverage" ? o.coverageDir : a == "--allowlist" ? o.allowlist : o.root) = *v;
    } else if (a == "--update") {
      o.update = true;
    } else if (a == "--force") {
      o.force = true;
    } else if (a == "--help" || a == "-h") {
      usage("runs .tyl file tests (tests/file/README.md)");
      return 0;
    } else if (a.rfind("-", 0) == 0) {
      return usage("unknown option " + a);
    } else {
      o.files.push_back(a);
    }
  }
  try {
    if (!o.coverageDir.empty()) {
      if (!o.files.empty() || o.update) return usage("--coverage takes no files");
      if (o.allowlist.empty()) return usage("--coverage needs --allowlist");
      return coverage(o);
    }
    if (o.files.empty()) return usage("no files");
    int status = 0;
    for (const std::string& f : o.files) status |= o.update ? updateFile(o, f) : checkFile(o, f);
    return status;
  } catch (const std::exception& e) {
    std::cerr << "file_tests: " << e.what() << "\n";
    return 2;
  }
}
