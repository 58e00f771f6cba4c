#include "frontend/Parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>
#include <sstream>

#include "TyloLexer.h"
#include "TyloParser.h"
#include "antlr4-runtime.h"
#include "base/CommonDiags.h"
#include "frontend/BuildAst.h"

namespace tyl {

using grammar::TyloLexer;
using grammar::TyloParser;

namespace {

// Reports lexer and parser errors as `syntax` diagnostics.
class ErrorListener : public antlr4::BaseErrorListener {
 public:
  ErrorListener(const OffsetMap& offsets, DiagnosticEngine& diags) : offsets_(offsets), diags_(diags) {}

  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* offending, size_t, size_t,
                   const std::string& msg, std::exception_ptr) override {
    if (++count_ > kMaxReported) return;
    if (auto* lexer = dynamic_cast<antlr4::Lexer*>(recognizer)) {
      size_t start = lexer->tokenStartCharIndex;
      std::string text = lexer->getInputStream()->getText(antlr4::misc::Interval(start, start));
      SourceRange range{offsets_.loc(start), offsets_.loc(start + 1)};
      if (text == "/")
        diags_.report(kSyntax, range, "unterminated block comment");
      else
        diags_.report(kSyntax, range, fmt::format("unexpected character '{}'", printable(text)));
      return;
    }
    std::string text = rewrite(msg);
    // Imports open the file: say so rather than list what could come instead.
    if (offending && offending->getType() == TyloLexer::IMPORT && text.rfind("unexpected 'import'", 0) == 0)
      text = "unexpected 'import': imports come before every other declaration of the file";
    // A keyword where a name could stand (`S` or `R` as a parameter's name): say it is reserved.
    else if (offending && offending->getType() != TyloLexer::IDENT && isWord(offending->getText()) &&
             msg.find("IDENT") != std::string::npos)
      text = fmt::format("'{}' is a reserved word and cannot be a name{}", offending->getText(),
                         offending->getText() == "S" || offending->getText() == "R"
                             ? " (S[...] and R[...] write layouts)"
                             : "");
    diags_.report(kSyntax, offsets_.range(offending), text);
  }

 private:
  static constexpr int kMaxReported = 20;

  static bool isWord(const std::string& text) {
    return !text.empty() && (std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_') &&
           std::all_of(text.begin(), text.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  }

  static std::string printable(const std::string& text) {
    if (text.size() == 1 && (static_cast<unsigned char>(text[0]) < 0x20 || text[0] == 0x7f))
      return fmt::format("\\x{:02x}", static_cast<unsigned char>(text[0]));
    return text;
  }

  // The grammar's token names in an expected set, in words.
  static std::string tokenNames(std::string expected) {
    static const std::pair<const char*, const char*> names[] = {
        {"IDENT", "a name"}, {"INT", "an integer"}, {"FLOAT", "a number"}, {"STRING", "a string"}};
    for (const auto& [token, words] : names) {
      for (size_t pos = 0; (pos = expected.find(token, pos)) != std::string::npos;) {
        const bool whole = (pos == 0 || !std::isalnum(static_cast<unsigned char>(expected[pos - 1]))) &&
                           (pos + std::strlen(token) == expected.size() ||
                            !std::isalnum(static_cast<unsigned char>(expected[pos + std::strlen(token)])));
        if (whole) expected.replace(pos, std::strlen(token), words);
        pos += whole ? std::strlen(words) : 1;
      }
    }
    return expected;
  }

  // ANTLR's wording made plainer: "unexpected X; expected Y", with the end of input named
  // as such.
  static std::string rewrite(std::string msg) {
    for (std::string from : {"'<EOF>'", "<EOF>"}) {
      for (size_t pos; (pos = msg.find(from)) != std::string::npos;) msg.replace(pos, from.size(), "end of input");
    }
    for (const char* prefix : {"extraneous input ", "mismatched input "}) {
      if (msg.rfind(prefix, 0) != 0) continue;
      std::string rest = msg.substr(std::string(prefix).size());
      size_t exp = rest.find(" expecting ");
      std::string what = exp == std::string::npos ? rest : rest.substr(0, exp);
      std::string expected = exp == std::string::npos ? "" : rest.substr(exp + 11);
      if (!expected.empty() && expected.front() == '{') expected = "one of " + expected.substr(1, expected.size() - 2);
      return "unexpected " + what + (expected.empty() ? "" : "; expected " + tokenNames(expected));
    }
    if (msg.rfind("no viable alternative at input ", 0) == 0)
      return "cannot parse " + msg.substr(std::string("no viable alternative at input ").size());
    if (msg.rfind("missing ", 0) == 0) {
      size_t at = msg.find(" at ");
      if (at != std::string::npos) {
        std::string expected = msg.substr(8, at - 8);
        if (!expected.empty() && expected.front() == '{') expected = "one of " + expected.substr(1, expected.size() - 2);
        return "expected " + tokenNames(expected) + " before " + msg.substr(at + 4);
      }
    }
    return msg;
  }

  const OffsetMap& offsets_;
  DiagnosticEngine& diags_;
  int count_ = 0;
};

// Well-formed UTF-8 only: no overlong encodings, surrogates or code points past U+10FFFF
// (the ANTLR input stream throws on those).
bool validUtf8(const std::string& s, size_t& bad) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    bad = i;
    if (n == 0 || i + n > s.size()) return false;
    uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < n; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    static const uint32_t minimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < minimum[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += n;
  }
  return true;
}

// Everything the parser needs, kept alive together.
struct ParseSession {
  ParseSession(FileId file, DiagnosticEngine& diags)
      : text(diags.sources().file(file).text),
        offsets(file, text),
        listener(offsets, diags),
        input(text),
        lexer(&input),
        tokens(&lexer),
        parser(&tokens) {
    lexer.removeErrorListeners();
    lexer.addErrorListener(&listener);
    parser.removeErrorListeners();
    parser.addErrorListener(&listener);
  }

  const std::string& text;
  OffsetMap offsets;
  ErrorListener listener;
  antlr4::ANTLRInputStream input;
  TyloLexer lexer;
  antlr4::CommonTokenStream tokens;
  TyloParser parser;
};

// Rejects input the parser could not handle safely: too large, not UTF-8, or nested
// so deeply that the recursive-descent parser would exhaust its stack.
bool checkLimits(FileId file, DiagnosticEngine& diags) {
  const std::string& text = diags.sources().file(file).text;
  if (text.size() > kMaxSourceBytes) {
    diags.report(kInputLimit, SourceRange::at(SourceLoc{file, 0}),
                 fmt::format("input is larger than the limit of {} bytes", kMaxSourceBytes));
    return false;
  }
  size_t bad = 0;
  if (!validUtf8(text, bad)) {
    SourceLoc at{file, static_cast<uint32_t>(bad)};
    diags.report(kSyntax, SourceRange{at, SourceLoc{file, static_cast<uint32_t>(bad + 1)}},
                 "input is not valid UTF-8");
    return false;
  }
  return true;
}

// False when the tokens of this file alone (errors past `errorsBefore`) have problems.
bool checkNesting(ParseSession& s, FileId file, DiagnosticEngine& diags, size_t errorsBefore) {
  s.tokens.fill();
  int depth = 0;
  int prefixRun = 0;
  for (antlr4::Token* t : s.tokens.getTokens()) {
    if (t->getType() == TyloLexer::UNTERMINATED_COMMENT) {
      diags.report(kSyntax, SourceRange{s.offsets.loc(t->getStartIndex()), s.offsets.loc(t->getStartIndex() + 2)},
                   "unterminated block comment: '/*' has no matching '*/'");
      return false;
    }
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL) continue;
    std::string text = t->getText();
    if (text == "(" || text == "[" || text == "{") ++depth;
    if (text == ")" || text == "]" || text == "}") depth = std::max(0, depth - 1);
    // Runs of prefix operators recurse in the parser just like brackets.
    prefixRun = (text == "-" || text == "!") ? prefixRun + 1 : 0;
    if (depth + prefixRun > kMaxNesting) {
      diags.report(kInputLimit, s.offsets.range(t),
                   fmt::format("nested more than {} levels deep (brackets, braces and runs of '-' or '!' count)",
                               kMaxNesting));
      return false;
    }
  }
  (void)file;
  return diags.errorCount() == errorsBefore;
}

}  // namespace

std::optional<ast::Module> parseModule(FileId file, DiagnosticEngine& diags) {
  // Other files (imports) may have reported errors already: only this file's count.
  const size_t errorsBefore = diags.errorCount();
  if (!checkLimits(file, diags)) return std::nullopt;
  ParseSession s(file, diags);
  if (!checkNesting(s, file, diags, errorsBefore)) return std::nullopt;
  TyloParser::FileContext* tree = s.parser.file();
  if (diags.errorCount() > errorsBefore) return std::nullopt;
  AstBuilder builder(s.offsets, diags);
  ast::Module module = builder.module(tree, file);
  if (diags.errorCount() > errorsBefore) return std::nullopt;
  return module;
}

ast::ExprPtr parseLayoutExpr(FileId file, DiagnosticEngine& diags) {
  const size_t errorsBefore = diags.errorCount();
  if (!checkLimits(file, diags)) return nullptr;
  ParseSession s(file, diags);
  if (!checkNesting(s, file, diags, errorsBefore)) return nullptr;
  TyloParser::LayoutOnlyContext* tree = s.parser.layoutOnly();
  if (diags.hasErrors()) return nullptr;
  AstBuilder builder(s.offsets, diags);
  ast::ExprPtr e = builder.expr(tree->expr());
  if (diags.hasErrors()) return nullptr;
  return e;
}

std::string dumpTokens(FileId file, DiagnosticEngine& diags) {
  if (!checkLimits(file, diags)) return {};
  ParseSession s(file, diags);
  s.tokens.fill();
  std::ostringstream os;
  const antlr4::dfa::Vocabulary& vocab = s.lexer.getVocabulary();
  for (antlr4::Token* t : s.tokens.getTokens()) {
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL) continue;
    LineCol lc = diags.sources().lineCol(s.offsets.loc(t->getStartIndex()));
    std::string kind = t->getType() == antlr4::Token::EOF ? "EOF" : vocab.getDisplayName(t->getType());
    os << fmt::format("{}:{} {} '{}'\n", lc.line, lc.column, kind,
                      t->getType() == antlr4::Token::EOF ? "" : t->getText());
  }
  return os.str();
}

}  // namespace tyl
