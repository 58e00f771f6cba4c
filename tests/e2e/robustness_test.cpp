// No input breaks the compiler: every truncation of every example, every example with a
// token deleted or replaced, and odd `tyloc layout` requests are either accepted or
// rejected with an error diagnostic (exit 1), never an exception, a crash, a sanitizer
// report or a hang. The pipeline runs in process (tests/fuzz/FuzzHarness.h), in forked
// children (tests/fuzz/Isolated.h) so that a crash is reported for its input.
//
// Known-open bugs are listed in tests/fuzz/regressions/KNOWN_OPEN.txt; a failure whose
// description contains one of their signatures is reported but tolerated.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>

#include "tests/fuzz/FuzzHarness.h"
#include "tests/fuzz/Isolated.h"

using namespace tyl::fuzz;

namespace {

#ifndef TYLO_SOURCE_DIR
#error "TYLO_SOURCE_DIR must name the repository root"
#endif

// Per input: a normal build compiles the largest example in well under a second.
constexpr int kTimeoutSeconds = 60;

// Children running at once; TYLO_ROBUSTNESS_JOBS overrides (ctest also runs other tests).
int workers() {
  const char* env = std::getenv("TYLO_ROBUSTNESS_JOBS");
  int n = env ? std::atoi(env) : 2;
  return n > 0 ? n : 1;
}

std::string readAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::filesystem::path> examples() {
  std::vector<std::filesystem::path> files;
  for (const auto& dir : std::filesystem::directory_iterator(std::filesystem::path(TYLO_SOURCE_DIR) / "examples"))
    if (dir.is_directory())
      for (const auto& f : std::filesystem::directory_iterator(dir.path()))
        if (f.path().extension() == ".tyl") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  return files;
}

const std::vector<KnownOpen>& knownOpen() {
  static const std::vector<KnownOpen> list =
      readKnownOpen(std::string(TYLO_SOURCE_DIR) + "/tests/fuzz/regressions/KNOWN_OPEN.txt");
  return list;
}

// The known-open bug a failure belongs to, or nullptr.
const KnownOpen* knownBug(const std::string& what) {
  for (const KnownOpen& k : knownOpen())
    if (!k.signature.empty() && what.find(k.signature) != std::string::npos) return &k;
  return nullptr;
}

struct Mutant {
  std::string label;  // where it came from, for the failure message
  std::string text;
};

// Runs every mutant; fails with the first few unexpected failures, each with its input.
void requireHandled(const std::vector<Mutant>& mutants, const std::function<Result(const std::string&)>& run) {
  std::vector<Outcome> outcomes = runIsolated(
      mutants.size(), [&](size_t i) { return run(mutants[i].text); }, kTimeoutSeconds, workers());
  std::map<std::string, int> tolerated;
  std::map<Verdict, int> verdicts;
  std::vector<std::string> failures;
  for (size_t i = 0; i < mutants.size(); ++i) {
    const Outcome& o = outcomes[i];
    if (o.ok) {
      ++verdicts[o.verdict];
      continue;
    }
    // A signature may also name the mutation (a crash has no message of its own).
    if (const KnownOpen* k = knownBug(mutants[i].label + ": " + o.what)) {
      ++tolerated[k->name];
      continue;
    }
    if (failures.size() < 5)
      failures.push_back(mutants[i].label + ": " + o.what + "\n--- input ---\n" + mutants[i].text + "\n---");
    else
      failures.push_back(mutants[i].label + ": " + o.what);
  }
  std::string summary = std::to_string(mutants.size()) + " inputs: " + std::to_string(verdicts[Verdict::Accepted]) +
                        " accepted, " + std::to_string(verdicts[Verdict::Rejected]) + " rejected with a diagnostic, " +
                        std::to_string(verdicts[Verdict::Misuse]) + " refused as misuse";
  for (const auto& [name, count] : tolerated)
    summary += "\n  " + std::to_string(count) + " failed with known-open bug " + name;
  INFO(summary);
  WARN(summary);
  // The first 20 failures one by one (the first 5 with their input), then their number.
  for (size_t k = 0; k < failures.size() && k < 20; ++k) {
    INFO(failures[k]);
    CHECK(false);
  }
  INFO(failures.size() << " inputs broke the compiler's contract");
  CHECK(failures.empty());
}

// An example that needs Hopper says so on its first line, as the file tests do:
// `// RUN-FLAGS: --arch sm_90a`. It and its mutants are compiled for sm_90a.
bool needsSm90a(const std::string& text) { return text.rfind("// RUN-FLAGS: --arch sm_90a", 0) == 0; }

Result compileDefault(const std::string& text) {
  CompileKnobs knobs;
  knobs.sm90a = needsSm90a(text);
  return compileSource(text, knobs);
}

// A token: an identifier or number, a one- or two-character operator; comments and blanks
// are not tokens.
struct Token {
  size_t begin, end;
};

std::vector<Token> tokenize(const std::string& s) {
  static const char* const kTwo[] = {"<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*="};
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (std::isspace(c)) {
      ++i;
    } else if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t close = s.find("*/", i + 2);
      i = close == std::string::npos ? s.size() : close + 2;
    } else if (std::isalnum(c) || c == '_') {
      size_t b = i;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.'))
        ++i;
      if (std::isalpha(static_cast<unsigned char>(s[b])) || s[b] == '_') {
        // An identifier stops at '.', which is a member access there.
        size_t dot = s.find('.', b);
        if (dot != std::string::npos && dot < i) i = dot;
      }
      tokens.push_back({b, i});
    } else {
      size_t len = 1;
      for (const char* two : kTwo)
        if (s.compare(i, 2, two) == 0) len = 2;
      tokens.push_back({i, i + len});
      i += len;
    }
  }
  return tokens;
}

// What a token is replaced by: other tokens of the language, extreme numbers, and a few
// fragments that change a construct's shape.
const std::vector<std::string>& replacements() {
  static const std::vector<std::string> r = {
      "0", "1", "-1", "3", "1024", "65536", "2147483648", "9223372036854775807", "0x7fffffffffffffff", "1.5",
      "x", "T", "S", "R", "@", "@laneid", "1@warpid", "(", ")", "[", "]", "{", "}", ",", ";", ":", "=", "+", "-",
      "*", "/", "%", "<<", "==", "&&", "!", ".", "kernel", "layout", "const", "let", "for", "in", "if", "else",
      "pipeline", "unroll", "range", "stage", "f16", "bf16", "f32", "i32", "i64", "bool", "global", "shared",
      "copy", "copy_async", "barrier()", "S[4]", "S[(32, 4) : (1@laneid, 1)]", "(1, 2)", "()", "align",
      "launch", "lane_id()", "block_id.x", "mma", "acc", "A", "B", "C", "K", "/ 0", "* 0", "* 65536 * 65536",
  };
  return r;
}

}  // namespace

// Where text[0, n) ends inside a `//` comment (after its two slashes), the compiler sees
// the tokens of the truncation at the comment's start; such points are covered by that one.
static std::vector<bool> insideLineComment(const std::string& text) {
  std::vector<bool> inside(text.size() + 1, false);
  for (size_t i = 0; i + 1 < text.size();) {
    if (text.compare(i, 2, "/*") == 0) {
      size_t close = text.find("*/", i + 2);
      i = close == std::string::npos ? text.size() : close + 2;
    } else if (text.compare(i, 2, "//") == 0) {
      size_t end = text.find('\n', i);
      if (end == std::string::npos) end = text.size();
      for (size_t n = i + 3; n <= end; ++n) inside[n] = true;
      i = end;
    } else {
      ++i;
    }
  }
  return inside;
}

TEST_CASE("robustness: every truncation of every example is accepted or diagnosed") {
  for (const auto& path : examples()) {
    std::string text = readAll(path);
    std::vector<bool> inComment = insideLineComment(text);
    std::vector<Mutant> mutants;
    for (size_t n = 0; n <= text.size(); ++n)
      if (!inComment[n])
        mutants.push_back({path.filename().string() + " truncated to " + std::to_string(n) + " bytes", text.substr(0, n)});
    INFO(path.filename().string());
    requireHandled(mutants, compileDefault);
  }
}

TEST_CASE("robustness: the examples compile with and without every option of the harness") {
  // The baseline of the mutations: each example itself compiles, also with every stage
  // dumped, JSON diagnostics and --no-line for sm_90a (no -Werror: warnings are fine).
  for (const auto& path : examples()) {
    std::string text = readAll(path);
    std::vector<Outcome> o = runIsolated(
        2,
        [&](size_t i) { return i == 0 ? compileDefault(text) : compileSource(text, CompileKnobs{true, false, true, true, true}); },
        kTimeoutSeconds, workers());
    for (const Outcome& r : o) {
      INFO(path.filename().string() << ": " << verdictName(r.verdict) << " " << r.what);
      CHECK(r.ok);
      CHECK(r.verdict == Verdict::Accepted);
    }
  }
}

TEST_CASE("robustness: examples with a token deleted or replaced are accepted or diagnosed") {
  std::mt19937 rng(20261130);
  for (const auto& path : examples()) {
    std::string text = readAll(path);
    std::vector<Token> tokens = tokenize(text);
    std::vector<Mutant> mutants;
    std::string name = path.filename().string();
    for (size_t t = 0; t < tokens.size(); ++t) {
      const Token& tok = tokens[t];
      std::string orig = text.substr(tok.begin, tok.end - tok.begin);
      auto mutate = [&](const std::string& with) {
        mutants.push_back({name + " token " + std::to_string(t) + " '" + orig + "' -> '" + with + "'",
                           text.substr(0, tok.begin) + with + text.substr(tok.end)});
      };
      mutate("");
      // One replacement per token, drawn with a fixed seed: every token is mutated and,
      // over the examples, every replacement is used many times, while the run stays short.
      mutate(replacements()[rng() % replacements().size()]);
    }
    INFO(name);
    requireHandled(mutants, compileDefault);
  }
}

TEST_CASE("robustness: odd tyloc layout requests are accepted or diagnosed") {
  std::vector<Mutant> mutants;
  auto add = [&](std::string request) { mutants.push_back({request, request}); };
  // Broken and degenerate expressions.
  for (const char* e : {"", " ", "S", "S[", "S[]", "S[()]", "S[(0)]", "S[-1]", "S[(4,) : ()]", "S[4 : (1, 2)]",
                        "R[2]", "R[2 : 1@warpid]", "S[4] + S[4]", "S[4] + 1@nowhere", "S[4] @ m", "@m", "1@m",
                        "S[4] * 2", "S[4] + 1.5", "S[4](1)", "S[4].x", "S[4][0]", "(S[4])", "(S[4], S[4])",
                        "S[(2, 2) : (0, 0)]", "S[(3, 5) : (-1, 7)] + -2", "S[4 : 1@m@m]", "S[4] + R[1 : 0]",
                        "S[\xff]", "S[4]\x01", "S[4] // comment", "S[4] /* open", "S[0x7fff_ffff_ffff_ffff]",
                        "S[99999999999999999999]", "S[1e309]", "S[.5]", "S[4] - -1", "S[4] + (1 << 62) + (1 << 62)"})
    add(e);
  // Values at the edge of 64 bits.
  for (const char* e : {"S[(4611686018427387904, 4)]", "S[(1 << 31, 1 << 31) : (1 << 31, 1)]",
                        "S[(1 << 62, 1)] + R[2 : (1 << 62)@warpid]", "S[(2, 2) : (1 << 62, 1 << 62)] + (1 << 62)",
                        "S[(65536, 65536)]", "S[8] + R[(65536, 65536) : (1@laneid, 1@warpid)]",
                        "S[(1 << 20, 1 << 20) : (1@laneid, 1)] + R[(1 << 20, 1 << 20) : (1@warpid, 1@tx)]",
                        "S[(9223372036854775807)]", "S[4 : 9223372036854775807]", "S[4] + 9223372036854775807",
                        "S[(2, 4611686018427387904) : (4611686018427387904, 2)]"})
    add(e);
  // Swizzles.
  for (const char* e : {"ComposeLayout(3, 3, 3)", "ComposeLayout(62, 1, 1, S[8])", "ComposeLayout(0, 62, 62, S[8])",
                        "ComposeLayout(1, 30, 31, S[(1 << 20, 1 << 20)])", "ComposeLayout(0, 0, 0, S[8])",
                        "ComposeLayout(-1, 3, 3, S[8])", "ComposeLayout(3, 3, 3, S[8], S[8])",
                        "ComposeLayout(3, 3, 3, S[(8, 64) : (64, 1)] + 5)", "ComposeLayout(3, 3, 3, S[8] + R[2 : 64])",
                        "Swizzle(3, 3, 3)", "Swizzle(3, 3, 3)(Swizzle(3, 3, 3)(S[64]))", "Swizzle(3, 3, 3)(4)",
                        "compose(S[4], S[4])", "compose(Swizzle(1, 1, 1))", "TileLayout(TileLayout(S[4]))",
                        "TileLayout()", "log2(0)", "log2(-1)", "S[log2(1 << 62)]",
                        "ComposeLayout(per_element=3, per_element=3, swizzle_len=3, atom_len=3, tile_layout=S[8])"})
    add(e);
  // Nesting at and past the parser's limit.
  add(std::string(127, '(') + "S[4]" + std::string(127, ')'));
  add(std::string(200, '(') + "S[4]" + std::string(200, ')'));
  add("S[4] + " + std::string(300, '-') + "1");
  add(std::string(100, '[') + std::string(100, ']'));
  // Flags: --shape, --apply, --json and pictures.
  for (const char* r : {"S[(4, 4) : (1, 1)]\nshape 2,8\napply 1,7", "S[16]\nshape 16\napply -1",
                        "S[16]\napply 4611686018427387904", "S[16]\nshape 4,4\napply 4,0", "S[16]\nshape 4,4\napply 1",
                        "S[16]\nshape 4,4\napply 1,1,1", "S[16]\nshape 4611686018427387904,4",
                        "S[16]\nshape 4611686018427387904,4611686018427387904",
                        "S[16]\nshape 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,16",
                        "S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid]\njson\napply 31,3",
                        "S[(65536, 65536)]\napply 65535,65535\njson", "S[(65536, 65536)]\njson",
                        "S[(256, 257)]\nsvg", "S[(8, 8) : (1@laneid, 8)]\nsvg\ndtype f16",
                        "S[(8, 64) : (64, 1)]\nsvg\ndtype f16\nhighlight ldmatrix:7,0",
                        "S[(8, 64) : (64, 1)]\nsvg\ndtype f16\nhighlight ldmatrix:0,60",
                        "S[(8, 64) : (64, 1)]\nsvg\ndtype f16\nhighlight row:100",
                        "S[(8, 64) : (64, 1)]\nsvg\ndtype f16\nhighlight col:-1",
                        "S[(8, 64) : (64, 1)] + -64\nsvg\ndtype f16\nhighlight row:0",
                        "S[(8, 64) : (-64, 1)]\nsvg\ndtype f32\nhighlight ldmatrix:0,0",
                        "S[(8, 64) : (64, 1)]\nsvg\ndtype i8\nhighlight cells:0,0;0,0;7,63",
                        "S[64] + R[(64, 64) : (1@laneid, 1@warpid)]\nsvg",
                        "ComposeLayout(3, 3, 3, S[(8, 64) : (64, 1)])\nsvg\ndtype f64\nhighlight ldmatrix:0,8"})
    add(r);
  requireHandled(mutants, [](const std::string& request) { return layoutCommand(parseLayoutRequest(request)); });
}
