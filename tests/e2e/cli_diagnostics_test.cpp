// The tyloc binary as a tool that other programs drive: command-line misuse is one error
// line and exit 2; outputs are written whole or not at all; the same input gives the same
// bytes; --diagnostics-format json is one document with the documented keys; and the
// diagnostics that only `tyloc layout` reports carry their IDs.
//
// Diagnostics of .tyl inputs are tested by the file tests (tests/file); this file covers
// what those cannot: the command line itself and the files tyloc writes.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/Process.h"

namespace fs = std::filesystem;
using nlohmann::json;
using tyl::test::readFile;

namespace {

const std::string kAddOne = std::string(TYLO_SOURCE_DIR) + "/examples/add_one/add_one.tyl";
const std::string kGemm = std::string(TYLO_SOURCE_DIR) + "/examples/gemm/gemm.tyl";

tyl::test::ProcessResult tyloc(std::vector<std::string> args) {
  args.insert(args.begin(), TYLOC_PATH);
  return tyl::test::run(args);
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tyl-cli-diag-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name), std::ios::binary) << text;
    return file(name);
  }
  // Every name in the folder, hidden temporaries included.
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.insert(e.path().filename().string());
    return names;
  }
};

size_t lineCount(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// A kernel with one error (an unknown axis) and one that compiles.
const char* kBroken = "layout L = S[(32, 4) : (1@lane, 1)];\n";
const char* kWarning =
    "kernel k(A: global f32[32, 4]) launch(grid = 1, block = 32) {\n"
    "    lane_id();\n"
    "}\n";

struct Misuse {
  std::vector<std::string> args;
  std::string mentions;  // what the error line must name
};

// Every kind of command-line misuse the issue lists. `dir` holds a valid input (ok.tyl).
std::vector<Misuse> misuses(const TempDir& dir) {
  const std::string ok = dir.file("ok.tyl");
  return {
      {{}, "no input file"},
      {{"check"}, "input"},
      {{dir.file("missing.tyl")}, "missing.tyl"},
      {{"check", dir.file("missing.tyl")}, "missing.tyl"},
      {{dir.path.string()}, "is a directory"},
      {{"check", dir.path.string()}, "is a directory"},
      {{ok, "-o", dir.file("no/such/dir/out.cu")}, "no/such/dir/out.cu"},
      {{ok, "-o", dir.file("out.cu"), "--header", dir.file("no/such/dir/out.cuh")}, "no/such/dir/out.cuh"},
      {{ok, "-o", dir.path.string()}, dir.path.string()},
      {{ok, "--bogus"}, "--bogus"},
      {{"check", ok, "--bogus"}, "--bogus"},
      {{ok, "--arch", "sm_70"}, "sm_70"},
      {{ok, "--emit", "llvm"}, "llvm"},
      {{ok, "--diagnostics-format", "xml"}, "xml"},
      {{ok, "-Wno-no-such-warning"}, "no-such-warning"},
      {{"check", ok, "-Wno-no-such-warning"}, "no-such-warning"},
      {{"check", ok, "-Wno-syntax"}, "syntax"},
      {{"check", ok, "-Wno-copy-vector"}, "copy-vector"},
      {{ok, ok}, "ok.tyl"},
      {{"run", ok}, "tyloc run needs --kernel NAME, the kernel to run; '" + ok + "' has: add_one, add_one_n (see tyloc run --help)"},
      // A subcommand's option without the subcommand, and a subcommand's missing argument.
      {{ok, "--kernel", "add_one"}, "--kernel is an option of 'tyloc run': write tyloc run FILE --kernel"},
      {{ok, "--set=n=4"}, "--set is an option of 'tyloc run'"},
      {{"layout"}, "(see tyloc layout --help)"},
      {{"run", ok, "--kernel", "no_such_kernel"}, "no_such_kernel"},
      {{"run", dir.file("missing.tyl"), "--kernel", "add_one"}, "missing.tyl"},
      // Options before a subcommand belong to compiling and would be ignored.
      {{"-Werror", "check", ok}, "tyloc: error: -Werror comes before 'check'"},
      {{"-Wno-bank-conflict", "check", ok}, "tyloc: error: -Wno-bank-conflict comes before 'check'"},
      {{"--diagnostics-format", "json", "check", ok}, "--diagnostics-format comes before 'check'"},
      {{ok, "check", ok}, "the input file"},
      {{ok, "check"}, "the input file '" + ok + "' comes before 'check'"},
      {{ok, "run", "--kernel", "add_one"}, "comes before 'run'"},
      // Flags given an empty value.
      {{"layout", "S[4]", "--apply", ""}, "--apply: '' is not"},
      {{"layout", "S[4]", "--shape", ""}, "--shape: '' is not"},
      {{"layout", "S[(2, 4) : (4, 1)]", "--shape", "4611686018427387904,4"}, "--shape: the extents multiply past"},
      {{"run", ok, "--kernel", "add_one", "--dump", ""}, "--dump: needs a folder name"},
      {{"--remarks", "run", ok, "--kernel", "add_one"}, "--remarks comes before 'run'"},
      {{"-o", dir.file("x.cu"), "layout", "S[4]"}, "--output comes before 'layout'"},
      // Outputs that are empty, the input, or each other.
      {{ok, "-o", ""}, "--output: the path is empty"},
      {{ok, "-o", dir.file("x.cu"), "--header", ""}, "--header: the path is empty"},
      {{ok, "-o", ok}, "is also the input file"},
      {{ok, "-o", dir.file("sub/../ok.tyl")}, "is also the input file"},
      {{ok, "-o", dir.file("x.cu"), "--header", dir.file("x.cu")}, "is also --output"},
      {{ok, "-o", dir.file("x.cu"), "--depfile", dir.file("./x.cu")}, "is also --output"},
      {{ok, "-o", dir.file("x.cu"), "--header", dir.file("x.cuh"), "--depfile", dir.file("x.cuh")}, "is also --header"},
  };
}

}  // namespace

// ---- Command-line misuse --------------------------------------------------------------

TEST_CASE("command-line misuse exits 2 with an error line that names the problem") {
  TempDir dir;
  dir.write("ok.tyl", readFile(kAddOne));
  for (const Misuse& m : misuses(dir)) {
    auto r = tyloc(m.args);
    std::string cmd;
    for (const std::string& a : m.args) cmd += " " + a;
    INFO("tyloc" << cmd << "\n" << r.err);
    CHECK(r.exitCode == 2);
    CHECK(r.out.empty());
    CHECK(r.err.rfind("tyloc: error: ", 0) == 0);
    const std::string first = r.err.substr(0, r.err.find('\n'));
    CHECK(first.find(m.mentions) != std::string::npos);
    // One line: never CLI11's help text or a diagnostic with a source excerpt.
    CHECK(lineCount(r.err) == 1);
    CHECK(r.err.find(" | ") == std::string::npos);
  }
}

TEST_CASE("help text spells the warning flags as they are written, where a command takes them") {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"}, {"check", "--help"}}) {
    auto r = tyloc(args);
    INFO(args.front() << "\n" << r.out);
    CHECK(r.exitCode == 0);
    CHECK(r.out.find("Warnings:\n  -Werror ") != std::string::npos);
    CHECK(r.out.find("\n  -Wno-<id> ") != std::string::npos);
    CHECK(r.out.find("--Werror") == std::string::npos);
    CHECK(r.out.find("--Wno") == std::string::npos);
    CHECK(r.out.find("Exit codes:") != std::string::npos);
  }
  for (const char* sub : {"run", "layout"}) {
    auto r = tyloc({sub, "--help"});
    CHECK(r.out.find("Werror") == std::string::npos);
    CHECK(r.out.find("Exit codes:") != std::string::npos);
  }
}

TEST_CASE("tyloc layout shows warnings about the expression and still succeeds") {
  auto r = tyloc({"layout", "ComposeLayout(4, 3, 3, S[(8, 32) : (32, 1)])", "--apply", "1,0"});
  CHECK(r.exitCode == 0);
  CHECK(r.err.find("<layout>:1:15: warning: ComposeLayout reads (4, 3) as per_element = 4, swizzle_len = 3") !=
        std::string::npos);
  // The canonical text names the fields, so that it reads the same to anyone.
  CHECK(r.out.find("ComposeLayout(per_element = 4, swizzle_len = 3, atom_len = 3, tile_layout = S[(8, 32) : (32, 1)])") !=
        std::string::npos);
  CHECK(tyloc({"layout", "ComposeLayout(3, 3, 3, S[(8, 64) : (64, 1)])"}).err.empty());
}

TEST_CASE("misused output paths leave the input and existing outputs untouched") {
  TempDir dir;
  const std::string ok = dir.write("ok.tyl", readFile(kAddOne));
  const std::string cu = dir.write("x.cu", "old");
  CHECK(tyloc({ok, "-o", ok}).exitCode == 2);
  CHECK(tyloc({ok, "-o", cu, "--header", cu}).exitCode == 2);
  CHECK(readFile(ok) == readFile(kAddOne));
  CHECK(readFile(cu) == "old");
  // A device may be named for several outputs.
  CHECK(tyloc({ok, "-o", "/dev/null", "--header", "/dev/null"}).exitCode == 0);
}

TEST_CASE("output that cannot be written to standard output exits 2") {
  if (!fs::exists("/dev/full")) {
    WARN("no /dev/full: not checked");
    return;
  }
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{kAddOne}, {"layout", "S[4]"}, {"--list-diagnostics"}}) {
    std::string cmd = TYLOC_PATH;
    for (const std::string& a : args) cmd += " '" + a + "'";
    INFO(cmd);
    const int status = std::system((cmd + " >/dev/full 2>/dev/null").c_str());
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
  }
}

TEST_CASE("an input without read permission exits 2 unless running as root") {
  TempDir dir;
  const std::string path = dir.write("secret.tyl", readFile(kAddOne));
  fs::permissions(path, fs::perms::none);
  if (::access(path.c_str(), R_OK) == 0) {
    WARN("running as root: file permissions are not enforced, so this case cannot be tested here");
    return;
  }
  for (std::vector<std::string> args : {std::vector<std::string>{path}, std::vector<std::string>{"check", path}}) {
    auto r = tyloc(args);
    INFO(r.err);
    CHECK(r.exitCode == 2);
    CHECK(r.err == "tyloc: error: cannot read '" + path + "': Permission denied\n");
  }
}

TEST_CASE("an output folder without write permission exits 2 unless running as root") {
  TempDir dir;
  fs::create_directory(dir.path / "locked");
  fs::permissions(dir.path / "locked", fs::perms::owner_read | fs::perms::owner_exec);
  if (::access((dir.path / "locked").c_str(), W_OK) == 0) {
    WARN("running as root: folder permissions are not enforced, so this case cannot be tested here");
    return;
  }
  auto r = tyloc({kAddOne, "-o", dir.file("locked/out.cu")});
  INFO(r.err);
  CHECK(r.exitCode == 2);
  CHECK(r.err == "tyloc: error: cannot write '" + dir.file("locked/out.cu") + "': Permission denied\n");
  CHECK(fs::is_empty(dir.path / "locked"));
}

// ---- Outputs are written whole or not at all -------------------------------------------

TEST_CASE("a failed compilation leaves existing outputs intact and no temporary files") {
  TempDir dir;
  const std::string broken = dir.write("broken.tyl", kBroken);
  const std::string cu = dir.write("out.cu", "previous output\n");
  const std::string cuh = dir.write("out.cuh", "previous header\n");
  const std::string dep = dir.write("out.d", "previous depfile\n");
  const std::set<std::string> before = dir.entries();
  for (std::vector<std::string> extra : {std::vector<std::string>{}, std::vector<std::string>{"-Werror"}}) {
    std::vector<std::string> args{broken, "-o", cu, "--header", cuh, "--depfile", dep};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = tyloc(args);
    INFO(r.err);
    CHECK(r.exitCode == 1);
    CHECK(r.err.find("[unknown-axis]") != std::string::npos);
    CHECK(readFile(cu) == "previous output\n");
    CHECK(readFile(cuh) == "previous header\n");
    CHECK(readFile(dep) == "previous depfile\n");
    CHECK(dir.entries() == before);
  }
  // A warning made an error by -Werror also writes nothing.
  const std::string warned = dir.write("warned.tyl", kWarning);
  auto r = tyloc({warned, "-o", cu, "--header", cuh, "-Werror"});
  CHECK(r.exitCode == 1);
  CHECK(readFile(cu) == "previous output\n");
  CHECK(readFile(cuh) == "previous header\n");
}

TEST_CASE("an output that cannot be written leaves nothing behind") {
  TempDir dir;
  const std::string ok = dir.write("ok.tyl", readFile(kAddOne));
  fs::create_directory(dir.path / "sub");
  const std::set<std::string> before = dir.entries();
  for (const std::string& out : {dir.file("missing/out.cu"), dir.file("sub"), dir.file("ok.tyl/out.cu")}) {
    auto r = tyloc({ok, "-o", out});
    INFO(out << "\n" << r.err);
    CHECK(r.exitCode == 2);
    CHECK(r.err.rfind("tyloc: error: cannot write '" + out + "': ", 0) == 0);
    CHECK(lineCount(r.err) == 1);
    CHECK(dir.entries() == before);
    CHECK(fs::is_empty(dir.path / "sub"));
    CHECK(readFile(ok) == readFile(kAddOne));
  }
}

TEST_CASE("a successful compilation replaces outputs whole and leaves no temporary files") {
  TempDir dir;
  const std::string ok = dir.write("ok.tyl", readFile(kAddOne));
  const std::string cu = dir.write("out.cu", "previous output\n");
  auto r = tyloc({ok, "-o", cu, "--header", dir.file("out.cuh"), "--depfile", dir.file("out.d")});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  CHECK(readFile(cu).find("previous output") == std::string::npos);
  CHECK(readFile(cu).find("__global__") != std::string::npos);
  CHECK(dir.entries() == std::set<std::string>{"ok.tyl", "out.cu", "out.cuh", "out.d"});
  CHECK((fs::status(cu).permissions() & fs::perms::others_read) != fs::perms::none);
}

// When the .cu cannot be written, the header the user had stays as it was.
TEST_CASE("a failed write keeps the existing header") {
  TempDir dir;
  const std::string ok = dir.write("ok.tyl", readFile(kAddOne));
  const std::string cuh = dir.write("out.cuh", "previous header\n");
  auto r = tyloc({ok, "--header", cuh, "-o", dir.file("missing/out.cu")});
  INFO(r.err);
  CHECK(r.exitCode == 2);
  REQUIRE(fs::exists(cuh));
  const bool headerKept = readFile(cuh) == "previous header\n";
  CHECK(headerKept);
}

// A depfile that cannot be written fails the run (exit 2), so the outputs are as before.
TEST_CASE("a depfile that cannot be written leaves the outputs as they were") {
  TempDir dir;
  const std::string ok = dir.write("ok.tyl", readFile(kAddOne));
  const std::string cu = dir.write("out.cu", "previous output\n");
  auto r = tyloc({ok, "-o", cu, "--header", dir.file("out.cuh"), "--depfile", dir.file("missing/out.d")});
  INFO(r.err);
  CHECK(r.exitCode == 2);
  const bool outputKept = readFile(cu) == "previous output\n";
  CHECK(outputKept);
  CHECK(!fs::exists(dir.file("out.cuh")));
}

// A path the dependency file cannot name (a line break in it) fails the run before anything is
// written; one with blanks, '#' or '$' is escaped as Make and Ninja read it.
TEST_CASE("a depfile naming a path with a line break is refused, and nothing is written") {
  TempDir dir;
  const std::string ok = dir.write("ok.tyl", readFile(kAddOne));
  const std::string cu = dir.file("out\nx.cu");
  auto r = tyloc({ok, "-o", cu, "--depfile", dir.file("out.d")});
  INFO(r.err);
  CHECK(r.exitCode == 2);
  CHECK(r.err.find("tyloc: error: --depfile: the path '" + cu + "' holds a line break, which a dependency file "
                   "cannot name") != std::string::npos);
  CHECK(dir.entries() == std::set<std::string>{"ok.tyl"});
  const std::string spaced = dir.file("a b#$.cu");
  auto escaped = tyloc({ok, "-o", spaced, "--depfile", dir.file("out.d")});
  INFO(escaped.err);
  REQUIRE(escaped.exitCode == 0);
  CHECK(readFile(dir.file("out.d")).starts_with(dir.file("a\\ b\\#$$.cu") + ": "));
}

TEST_CASE("a header whose name an #include cannot hold is refused, and nothing is written") {
  TempDir dir;
  const std::string ok = dir.write("ok.tyl", readFile(kAddOne));
  auto r = tyloc({ok, "-o", dir.file("x.cu"), "--header", dir.file("a\"b.cuh")});
  INFO(r.err);
  CHECK(r.exitCode == 2);
  CHECK(r.err.find("tyloc: error: --header: the path 'a\"b.cuh' cannot be written in an #include") !=
        std::string::npos);
  CHECK(dir.entries() == std::set<std::string>{"ok.tyl"});
}

// `-o /dev/null` must not replace the device with a regular file (as root the rename
// would succeed). Tested on a null device node made in a scratch folder, which needs root;
// a named pipe, which does not, is checked the same way.
TEST_CASE("an output that is a device is written to and not replaced") {
  TempDir dir;
  const std::string ok = dir.write("ok.tyl", readFile(kAddOne));
  const std::string null = dir.file("null");
  if (::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    WARN("cannot make a device node (not root): only the named pipe is checked");
  } else {
    auto r = tyloc({ok, "-o", null, "--header", dir.file("out.cuh")});
    INFO(r.err);
    CHECK(r.exitCode == 0);
    CHECK(fs::is_character_file(null));
    CHECK(fs::is_regular_file(dir.file("out.cuh")));
  }
  const std::string fifo = dir.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Read the pipe in the background so that tyloc's write completes.
  std::string got;
  std::thread reader([&] { got = readFile(fifo); });
  auto r = tyloc({ok, "-o", fifo});
  reader.join();
  INFO(r.err);
  CHECK(r.exitCode == 0);
  CHECK(fs::is_fifo(fifo));
  CHECK(got.find("tylo_kernel_add_one") != std::string::npos);
}

// /dev/stdout on a pipe is a link to a name that is no path (/proc/self/fd/1 reads
// "pipe:[...]"): the output still goes to the pipe.
TEST_CASE("an output of -o /dev/stdout into a pipe is written in place") {
  if (!fs::exists("/dev/stdout")) {
    WARN("no /dev/stdout: not checked");
    return;
  }
  TempDir dir;
  const std::string ok = dir.write("ok.tyl", readFile(kAddOne));
  using tyl::test::shellQuote;
  const std::string cmd = "(" + shellQuote(TYLOC_PATH) + " " + shellQuote(ok) +
                          " -o /dev/stdout --header /dev/stderr 2>/dev/null; echo $? >" + shellQuote(dir.file("rc")) +
                          ") | cat >" + shellQuote(dir.file("out"));
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK(readFile(dir.file("rc")) == "0\n");
  CHECK(readFile(dir.file("out")).find("tylo_kernel_add_one") != std::string::npos);
}

// An output that is a symbolic link stays a link; the file it names gets the new contents.
TEST_CASE("an output that is a symbolic link is followed") {
  TempDir dir;
  const std::string ok = dir.write("ok.tyl", readFile(kAddOne));
  const std::string real = dir.write("real.cu", "previous output\n");
  fs::create_symlink("real.cu", dir.path / "link.cu");
  auto r = tyloc({ok, "-o", dir.file("link.cu")});
  INFO(r.err);
  CHECK(r.exitCode == 0);
  CHECK(fs::is_symlink(dir.path / "link.cu"));
  CHECK(readFile(real).find("tylo_kernel_add_one") != std::string::npos);
  CHECK(dir.entries() == std::set<std::string>{"ok.tyl", "real.cu", "link.cu"});
}

// ---- Determinism ------------------------------------------------------------------------

TEST_CASE("compiling twice gives byte-identical outputs and diagnostics") {
  TempDir dir;
  for (const std::string& input : {kAddOne, kGemm}) {
    std::string outputs[2], headers[2], deps[2], remarks[2], ir[2];
    for (int i = 0; i < 2; ++i) {
      // The same names both times: the .cu mentions its header's name.
      const std::string run = "run" + std::to_string(i);
      fs::create_directory(dir.path / run);
      auto r = tyloc({input, "-o", dir.file(run + "/k.cu"), "--header", dir.file(run + "/k.cuh"), "--depfile",
                      dir.file(run + "/k.d"), "--remarks"});
      INFO(input << "\n" << r.err);
      REQUIRE(r.exitCode == 0);
      outputs[i] = readFile(dir.file(run + "/k.cu"));
      headers[i] = readFile(dir.file(run + "/k.cuh"));
      deps[i] = readFile(dir.file(run + "/k.d"));
      remarks[i] = r.err;
      auto t = tyloc({input, "--emit", "thread-ir"});
      REQUIRE(t.exitCode == 0);
      ir[i] = t.out;
    }
    INFO(input);
    CHECK(!outputs[0].empty());
    CHECK(outputs[0] == outputs[1]);
    CHECK(headers[0] == headers[1]);
    CHECK(deps[0].substr(deps[0].find(':')) == deps[1].substr(deps[1].find(':')));
    CHECK(!remarks[0].empty());
    CHECK(remarks[0] == remarks[1]);
    CHECK(ir[0] == ir[1]);
  }
}

// ---- JSON diagnostics -------------------------------------------------------------------

namespace {

void checkLocation(const json& loc, const std::string& file) {
  REQUIRE(loc.is_object());
  CHECK(loc.size() == 5);
  CHECK(loc["file"] == file);
  for (const char* key : {"line", "column", "end_line", "end_column"}) {
    INFO(key);
    REQUIRE(loc.contains(key));
    CHECK(loc[key].is_number_integer());
    CHECK(loc[key].get<int>() >= 1);
  }
}

// The documented shape of one diagnostic object.
void checkDiagnostic(const json& d, const std::string& file) {
  INFO(d.dump());
  REQUIRE(d.is_object());
  CHECK(d.size() == 5);
  for (const char* key : {"severity", "id", "message"}) {
    REQUIRE(d.contains(key));
    CHECK(d[key].is_string());
  }
  const std::set<std::string> severities{"error", "warning", "remark"};
  CHECK(severities.count(d["severity"].get<std::string>()) == 1);
  REQUIRE(d.contains("location"));
  if (!d["location"].is_null()) checkLocation(d["location"], file);
  REQUIRE(d.contains("notes"));
  REQUIRE(d["notes"].is_array());
  for (const json& n : d["notes"]) {
    REQUIRE(n.is_object());
    CHECK(n.size() == 2);
    CHECK(n["message"].is_string());
    if (!n["location"].is_null()) checkLocation(n["location"], file);
  }
}

}  // namespace

TEST_CASE("json diagnostics are one document with the documented keys") {
  TempDir dir;
  const std::string broken = dir.write("broken.tyl",
                                       "const N = 4;\n"
                                       "const N = 5;\n"
                                       "layout L = S[(32, 4) : (1@lane, 1)];\n");
  for (std::vector<std::string> args : {std::vector<std::string>{"check", broken}, std::vector<std::string>{broken}}) {
    args.insert(args.end(), {"--diagnostics-format", "json"});
    auto r = tyloc(args);
    INFO(r.err);
    CHECK(r.exitCode == 1);
    CHECK(r.out.empty());
    json doc = json::parse(r.err);  // the whole of stderr is one document
    REQUIRE(doc.is_object());
    CHECK(doc.size() == 3);
    REQUIRE(doc["diagnostics"].is_array());
    CHECK(doc["errors"] == 2);
    CHECK(doc["warnings"] == 0);
    REQUIRE(doc["diagnostics"].size() == 2);
    for (const json& d : doc["diagnostics"]) checkDiagnostic(d, broken);
    const json& dup = doc["diagnostics"][0];
    CHECK(dup["severity"] == "error");
    CHECK(dup["id"] == "duplicate-name");
    CHECK(dup["message"] == "'N' is declared twice");
    CHECK(dup["location"] == json({{"file", broken}, {"line", 2}, {"column", 7}, {"end_line", 2}, {"end_column", 8}}));
    REQUIRE(dup["notes"].size() == 1);
    CHECK(dup["notes"][0]["message"] == "the first declaration is here");
    CHECK(dup["notes"][0]["location"]["line"] == 1);
    const json& axis = doc["diagnostics"][1];
    CHECK(axis["id"] == "unknown-axis");
    CHECK(axis["location"]["line"] == 3);
    CHECK(axis["location"]["column"] == 27);
    CHECK(axis["location"]["end_column"] == 31);
  }
}

TEST_CASE("the same check failing at one place many times is shown three times and counted") {
  // An unrolled loop whose iterations 4 .. 99 index outside the tensor: 96 errors, 3 shown.
  TempDir dir;
  const std::string file = dir.write("unrolled.tyl",
                                     "kernel k(A: global f32[4]) launch(grid = 1, block = 32) {\n"
                                     "    let s = alloc_shared(f32[4, 32]);\n"
                                     "    for j in unroll(100) {\n"
                                     "        s[j, lane_id()] = 1.0;\n"
                                     "    }\n"
                                     "    let t = alloc_shared(f32[4]);\n"
                                     "    t[7] = 1.0;\n"
                                     "}\n");
  auto r = tyloc({"check", file, "--diagnostics-format", "json"});
  CHECK(r.exitCode == 1);
  json doc = json::parse(r.err);
  CHECK(doc["errors"] == 97);
  REQUIRE(doc["diagnostics"].size() == 4);  // the error after them is not lost to the limit
  for (const json& d : doc["diagnostics"]) checkDiagnostic(d, file);
  CHECK(doc["diagnostics"][0]["message"] == "index 4 is outside dimension 0 of extent 4");
  CHECK(doc["diagnostics"][1]["notes"].empty());
  REQUIRE(doc["diagnostics"][2]["notes"].size() == 1);
  CHECK(doc["diagnostics"][2]["notes"][0]["message"] ==
        "93 more like this here, not shown (from unrolled iterations, pipeline stages, instantiations or, in a run, "
        "other threads)");
  CHECK(doc["diagnostics"][2]["notes"][0]["location"]["line"] == 4);
  CHECK(doc["diagnostics"][3]["message"] == "index 7 is outside dimension 0 of extent 4");

  r = tyloc({"check", file});
  CHECK(r.err.find("unrolled.tyl:4:11: note: 93 more like this here, not shown") != std::string::npos);
}

TEST_CASE("json diagnostics count warnings and remarks and print an empty list when clean") {
  TempDir dir;
  const std::string warned = dir.write("warned.tyl", kWarning);
  auto r = tyloc({"check", warned, "--diagnostics-format", "json"});
  CHECK(r.exitCode == 0);
  json doc = json::parse(r.err);
  CHECK(doc["errors"] == 0);
  CHECK(doc["warnings"] == 1);
  REQUIRE(doc["diagnostics"].size() == 1);
  checkDiagnostic(doc["diagnostics"][0], warned);
  CHECK(doc["diagnostics"][0]["severity"] == "warning");
  CHECK(doc["diagnostics"][0]["id"] == "unused-value");

  r = tyloc({"check", warned, "--diagnostics-format", "json", "-Werror"});
  CHECK(r.exitCode == 1);
  doc = json::parse(r.err);
  CHECK(doc["errors"] == 1);
  CHECK(doc["warnings"] == 0);
  CHECK(doc["diagnostics"][0]["severity"] == "error");

  r = tyloc({kAddOne, "--diagnostics-format", "json", "--remarks", "-o", dir.file("add_one.cu")});
  CHECK(r.exitCode == 0);
  doc = json::parse(r.err);
  CHECK(doc["errors"] == 0);
  CHECK(doc["warnings"] == 0);
  REQUIRE(!doc["diagnostics"].empty());
  for (const json& d : doc["diagnostics"]) {
    checkDiagnostic(d, kAddOne);
    CHECK(d["severity"] == "remark");
  }

  r = tyloc({"check", kAddOne, "--diagnostics-format", "json"});
  CHECK(r.exitCode == 0);
  CHECK(json::parse(r.err) == json({{"diagnostics", json::array()}, {"errors", 0}, {"warnings", 0}}));
}

TEST_CASE("an --instantiate that names nothing is command-line misuse, also with json diagnostics") {
  TempDir dir;
  for (std::string spec : {"gemm:f32", "gemm", "no_such:f16", "gemm:f16,f16"}) {
    auto r = tyloc({kGemm, "--instantiate", spec, "--diagnostics-format", "json", "-o", dir.file("g.cu")});
    INFO(r.err);
    CHECK(r.exitCode == 2);
    CHECK(r.err.starts_with("tyloc: error: --instantiate: '" + spec + "' names no instantiation of a generic kernel "
                            "of '" + kGemm + "' (it has gemm:f16, gemm:bf16, gemm_beta:f16, gemm_beta:bf16, "
                            "gemm_any:f16, gemm_any:bf16, gemm_bt:f16, gemm_bt:bf16, gemm_at:f16, gemm_at:bf16)\n"));
    CHECK(!fs::exists(dir.file("g.cu")));
  }
  // A kernel that is not generic has no instantiations to name.
  auto r = tyloc({kAddOne, "--instantiate", "add_one:", "-o", dir.file("a.cu")});
  CHECK(r.exitCode == 2);
  CHECK(r.err.find("(the file has no generic kernels)") != std::string::npos);
  CHECK(!fs::exists(dir.file("a.cu")));
}

// ---- The text format --------------------------------------------------------------------

TEST_CASE("text diagnostics are gcc style with the source line and a caret under the range") {
  TempDir dir;
  const std::string broken = dir.write("broken.tyl",
                                       "const N = 4;\n"
                                       "const N = 5;\n"
                                       "layout L = S[(32, 4) : (1@lane, 1)];\n");
  auto r = tyloc({"check", broken});
  CHECK(r.exitCode == 1);
  CHECK(r.out.empty());
  CHECK(r.err == broken + ":2:7: error: 'N' is declared twice [duplicate-name]\n"
                          "    2 | const N = 5;\n"
                          "      |       ^\n" +
                     broken + ":1:7: note: the first declaration is here\n"
                              "    1 | const N = 4;\n"
                              "      |       ^\n" +
                     broken +
                     ":3:27: error: unknown axis 'lane' (known axes: laneid, warpid, tx, wgid, tid_in_wg, wid_in_wg, "
                     "bx, by, bz, m, TLane, TCol) [unknown-axis]\n"
                     "    3 | layout L = S[(32, 4) : (1@lane, 1)];\n"
                     "      |                           ^~~~\n");
}

TEST_CASE("the caret stays under the range after multi-byte characters and control bytes are shown as such") {
  TempDir dir;
  // "é" and "€" are 2 and 3 bytes: the column counts bytes, the marker one cell per character.
  const std::string utf8 = dir.write("utf8.tyl", "const X = 1; /* \xc3\xa9\xe2\x82\xac */ const Y = 2 +;\n");
  auto r = tyloc({"check", utf8});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find(":1:39: error: ") != std::string::npos);
  CHECK(r.err.find("    1 | const X = 1; /* \xc3\xa9\xe2\x82\xac */ const Y = 2 +;\n"
                   "      |                                    ^\n") != std::string::npos);
  // An escape sequence in the input neither reaches the terminal from the message nor from the line.
  const std::string ctrl = dir.write("ctrl.tyl", std::string("const A = 1;\x1b[31m const B = 2;\n"));
  r = tyloc({"check", ctrl});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.find("\\x1b") != std::string::npos);
  CHECK(r.err.find("    1 | const A = 1;?[31m const B = 2;\n") != std::string::npos);
}

TEST_CASE("an endless input is read only up to the size limit") {
  if (!fs::exists("/dev/zero")) {
    WARN("no /dev/zero: not checked");
    return;
  }
  auto r = tyloc({"check", "/dev/zero"});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find("input is larger than the limit of 8388608 bytes [input-limit]") != std::string::npos);
  CHECK(r.err.size() < 1000);
}

TEST_CASE("more than 50 errors are cut off with a count") {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 53; ++i) text += "const C" + std::to_string(i) + " = X;\n";
  const std::string many = dir.write("many.tyl", text);
  auto r = tyloc({"check", many});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find(many + ":50:") != std::string::npos);
  CHECK(r.err.find(many + ":51:") == std::string::npos);
  const std::string last = "\ntyloc: note: 3 more errors not shown\n";
  REQUIRE(r.err.size() > last.size());
  CHECK(r.err.substr(r.err.size() - last.size()) == last);
  auto j = tyloc({"check", many, "--diagnostics-format", "json"});
  json doc = json::parse(j.err);
  CHECK(doc["diagnostics"].size() == 50);
  CHECK(doc["errors"] == 53);
}

// ---- Diagnostics only `tyloc layout` reports --------------------------------------------
// The coverage test (tests/file/coverage-allowlist.txt) points here for these IDs.

TEST_CASE("tyloc layout reports shape-mismatch coord-out-of-range negative-offset not-memory-layout and bad-highlight") {
  TempDir dir;
  struct Case {
    std::vector<std::string> args;
    std::string first;  // the whole first line of stderr
  };
  const std::vector<Case> cases{
      {{"S[(32, 4)]", "--shape", "8,8"},
       "<layout>:1:1: error: the layout has 128 elements but --shape (8, 8) has 64 [shape-mismatch]"},
      {{"S[(32, 4)]", "--apply", "32,0"}, "[coord-out-of-range]"},
      {{"S[(32, 4)]", "--apply", "1,2,3"}, "[coord-out-of-range]"},
      // A swizzle of offsets below 0, printed or drawn.
      {{"ComposeLayout(per_element = 0, swizzle_len = 1, atom_len = 1, tile_layout = S[4 : -1])", "--apply", "1"},
       "<layout>:1:1: error: the swizzled layout places an element at offset -3; a swizzle permutes offsets from 0 "
       "up [negative-offset]"},
      {{"Swizzle(0, 0, 0)(S[2 : -1])", "--svg", dir.file("n.svg")}, "[negative-offset]"},
      {{"S[(32, 4) : (1@laneid, 1)]", "--svg", dir.file("a.svg"), "--dtype", "f16"}, "[not-memory-layout]"},
      {{"S[(8, 64)]", "--svg", dir.file("b.svg"), "--dtype", "f16", "--highlight", "row:8"}, "[bad-highlight]"},
      {{"S[(8, 64) : (1, 8)]", "--svg", dir.file("c.svg"), "--dtype", "f16", "--highlight", "ldmatrix:0,0"},
       "[bad-highlight]"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{"layout"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = tyloc(args);
    INFO(c.args[0] << " " << c.args[1] << " " << c.args[2] << "\n" << r.err);
    CHECK(r.exitCode == 1);
    CHECK(r.out.empty());
    const std::string first = r.err.substr(0, r.err.find('\n'));
    CHECK(first.rfind("<layout>:1:", 0) == 0);
    CHECK(first.find(": error: ") != std::string::npos);
    if (c.first[0] == '[')
      CHECK(first.substr(first.size() - c.first.size()) == c.first);
    else
      CHECK(first == c.first);
  }
  CHECK(dir.entries().empty());
}

TEST_CASE("imports: too deep a chain, a file importing itself, a device, one file by two spellings, an output") {
  TempDir dir;
  SECTION("a chain of 40 files stops at 32 levels") {
    for (int i = 0; i < 40; ++i)
      dir.write("f" + std::to_string(i) + ".tyl", "import \"f" + std::to_string(i + 1) + ".tyl\";\n");
    dir.write("f40.tyl", "const X = 1;\n");
    auto r = tyloc({"check", dir.file("f0.tyl")});
    INFO(r.err);
    CHECK(r.exitCode == 1);
    CHECK(r.err.find("imports nest deeper than 32 or read more than 256 files [input-limit]") != std::string::npos);
  }
  SECTION("a file that imports itself") {
    dir.write("self.tyl", "import \"self.tyl\";\nconst X = 1;\n");
    auto r = tyloc({"check", dir.file("self.tyl")});
    INFO(r.err);
    CHECK(r.exitCode == 1);
    CHECK(r.err.find("imports itself") != std::string::npos);
  }
  SECTION("a device is refused without reading it") {
    dir.write("dev.tyl", "import \"/dev/zero\";\n");
    auto r = tyloc({"check", dir.file("dev.tyl")});
    INFO(r.err);
    CHECK(r.exitCode == 1);
    CHECK(r.err.find("'/dev/zero' is not a regular file [import]") != std::string::npos);
  }
  SECTION("a loop of symbolic links is named as such, not as a missing file") {
    fs::create_symlink("loop2.tyl", dir.path / "loop1.tyl");
    fs::create_symlink("loop1.tyl", dir.path / "loop2.tyl");
    dir.write("loop.tyl", "import \"loop1.tyl\";\n");
    auto r = tyloc({"check", dir.file("loop.tyl")});
    INFO(r.err);
    CHECK(r.exitCode == 1);
    CHECK(r.err.find("cannot import 'loop1.tyl': cannot read '" + dir.file("loop1.tyl") +
                     "': Too many levels of symbolic links [import]") != std::string::npos);
  }
  SECTION("one file imported by two spellings is read once") {
    fs::create_directories(dir.path / "sub");
    dir.write("sub/c.tyl", "const C = 3;\n");
    dir.write("two.tyl", "import \"sub/c.tyl\";\nimport \"./sub/../sub/c.tyl\";\nconst D = C;\n");
    auto r = tyloc({"check", dir.file("two.tyl")});
    INFO(r.err);
    CHECK(r.exitCode == 0);
  }
  SECTION("an output that is an imported file is refused and the import kept") {
    fs::create_directories(dir.path / "sub");
    dir.write("sub/c.tyl", "const C = 3;\n");
    dir.write("use.tyl", "import \"sub/c.tyl\";\nconst D = C;\n");
    for (const char* flag : {"-o", "--header", "--depfile"}) {
      std::vector<std::string> args{dir.file("use.tyl"), flag, dir.file("sub/./c.tyl")};
      if (std::string(flag) != "-o") args.insert(args.end(), {"-o", dir.file("use.cu")});
      auto r = tyloc(args);
      INFO(flag << "\n" << r.err);
      CHECK(r.exitCode == 2);
      CHECK(r.err.find("is also the imported file") != std::string::npos);
      CHECK(readFile(dir.file("sub/c.tyl")) == "const C = 3;\n");
      CHECK(!fs::exists(dir.path / "use.cu"));
    }
  }
}
