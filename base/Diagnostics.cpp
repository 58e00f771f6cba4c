#include "base/Diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

namespace tyl {
namespace {

// Filled during static initialization by TYL_DIAG declarations, read-only afterwards.
// A multimap, so that an ID declared twice is visible (and a test can reject it).
std::multimap<std::string_view, const DiagKind*>& registry() {
  static std::multimap<std::string_view, const DiagKind*> kinds;
  return kinds;
}

constexpr size_t kNoIndex = ~size_t{0};
// Diagnostics of one kind at one place shown before the rest are only counted.
constexpr size_t kShownPerPlace = 3;

}  // namespace

std::string_view severityName(Severity s) {
  switch (s) {
    case Severity::Note: return "note";
    case Severity::Remark: return "remark";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "error";
}

DiagRegistrar::DiagRegistrar(const DiagKind& kind) {
  // The same declaration seen from several translation units registers once.
  auto [first, last] = registry().equal_range(kind.id);
  for (auto it = first; it != last; ++it)
    if (it->second == &kind) return;
  registry().emplace(kind.id, &kind);
}

std::vector<const DiagKind*> registeredDiagKinds() {
  std::vector<const DiagKind*> kinds;
  for (const auto& [id, kind] : registry()) kinds.push_back(kind);
  return kinds;
}

const DiagKind* findDiagKind(std::string_view id) {
  auto it = registry().find(id);
  return it == registry().end() ? nullptr : it->second;
}

DiagBuilder& DiagBuilder::note(SourceRange range, std::string message) {
  if (engine_ && index_ != kNoIndex) engine_->diags_[index_].notes.push_back({range, std::move(message)});
  return *this;
}

DiagBuilder DiagnosticEngine::report(const DiagKind& kind, SourceRange range, std::string message) {
  // The same diagnostic at the same place (from an unrolled loop, a pipeline stage or
  // another instantiation) is reported once.
  std::string place = fmt::format("{}|{}|{}|{}", kind.id, range.begin.file, range.begin.offset, range.end.offset);
  if (!seen_.insert(place + "|" + message).second) return DiagBuilder(this, kNoIndex);
  Severity severity = kind.severity;
  if (severity == Severity::Warning) {
    if (options_.disabledWarnings.count(kind.id)) return DiagBuilder(this, kNoIndex);
    if (options_.warningsAsErrors) severity = Severity::Error;
  }
  if (severity == Severity::Remark && !options_.remarks) return DiagBuilder(this, kNoIndex);
  if (severity == Severity::Error) ++errorCount_;
  if (severity == Severity::Warning) ++warningCount_;
  // Past a few different messages of one kind at one place, the rest are counted on the
  // last one shown.
  Place& at = places_[std::move(place)];
  if (++at.count > kShownPerPlace) {
    if (at.last != kNoIndex) ++diags_[at.last].repeats;
    return DiagBuilder(this, kNoIndex);
  }
  if (severity == Severity::Error && ++shownErrors_ > options_.errorLimit) {
    ++dropped_;
    return DiagBuilder(this, kNoIndex);
  }
  if (severity != Severity::Error && ++others_ > options_.otherLimit) {
    ++droppedOther_;
    return DiagBuilder(this, kNoIndex);
  }
  diags_.push_back(Diagnostic{&kind, severity, range, std::move(message), {}, context_, 0});
  at.last = diags_.size() - 1;
  return DiagBuilder(this, diags_.size() - 1);
}

namespace {

// A diagnostic's notes as shown: its own, where it was found, and how often it repeats (at
// the diagnostic's place, so without the source line again).
struct ShownNote {
  DiagNote note;
  bool snippet = true;
};

std::vector<ShownNote> shownNotes(const Diagnostic& d) {
  std::vector<ShownNote> notes;
  for (const DiagNote& n : d.notes) notes.push_back({n});
  if (d.context) notes.push_back({*d.context});
  if (d.repeats > 0)
    notes.push_back({{d.range, fmt::format("{} more like this here, not shown (from unrolled iterations, pipeline "
                                           "stages, instantiations or, in a run, other threads)",
                                           d.repeats)},
                     false});
  return notes;
}

// `file:line:col: ` for a location, or the bare name when the range is unknown.
std::string locationPrefix(const SourceManager& sm, SourceRange range) {
  if (!range.valid()) return "tyloc: ";
  LineCol lc = sm.lineCol(range.begin);
  return fmt::format("{}:{}:{}: ", sm.file(range.begin.file).name, lc.line, lc.column);
}

// The source line with a caret under the start of the range and tildes under the rest.
// Long lines are cut to a window around the caret, so that a diagnostic stays readable
// (and its size bounded) whatever the line. Columns count bytes (as in the location); the
// marker line takes one cell per character, so it stays under the range when the line
// holds multi-byte UTF-8, and control characters other than tabs are shown as '?'.
void renderSnippet(std::ostream& os, const SourceManager& sm, SourceRange range) {
  if (!range.valid()) return;
  constexpr size_t kBefore = 60, kWidth = 160;
  auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  LineCol begin = sm.lineCol(range.begin);
  std::string_view line = sm.lineText(range.begin.file, begin.line);
  size_t col = begin.column - 1;
  LineCol end = sm.lineCol(range.end);
  size_t endCol = end.line == begin.line ? end.column - 1 : line.size();
  size_t first = 0;
  std::string prefix, suffix;
  if (line.size() > kWidth) {
    first = col > kBefore ? col - kBefore : 0;
    while (first > 0 && continuation(line[first])) --first;  // never cut a character in two
    size_t last = std::min(first + kWidth, line.size());
    while (last < line.size() && continuation(line[last])) ++last;
    if (first > 0) prefix = "...";
    if (last < line.size()) suffix = "...";
    line = line.substr(first, last - first);
    col = col - first + prefix.size();
    endCol = std::min(endCol - first, line.size()) + prefix.size();
  }
  std::string shown = prefix + std::string(line);
  for (char& c : shown)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7F) c = '?';
  std::string gutter = fmt::format("{:>5}", begin.line);
  os << gutter << " | " << shown << suffix << "\n";
  std::string marker;
  for (size_t i = 0; i < col && i < shown.size(); ++i)
    if (!continuation(shown[i])) marker += shown[i] == '\t' ? '\t' : ' ';
  if (col > shown.size()) marker.append(col - shown.size(), ' ');
  marker += '^';
  for (size_t i = col + 1; i < endCol; ++i)
    if (i >= shown.size() || !continuation(shown[i])) marker += '~';
  os << std::string(gutter.size(), ' ') << " | " << marker << "\n";
}

// A message for a terminal: control characters (from quoted input) written as \xNN.
std::string printable(const std::string& message) {
  std::string out;
  for (char c : message) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out;
}

}  // namespace

void DiagnosticEngine::renderText(std::ostream& os) const {
  for (const Diagnostic& d : diags_) {
    os << locationPrefix(sources_, d.range) << severityName(d.severity) << ": " << printable(d.message) << " ["
       << d.kind->id << "]\n";
    renderSnippet(os, sources_, d.range);
    for (const auto& [n, snippet] : shownNotes(d)) {
      os << locationPrefix(sources_, n.range) << "note: " << printable(n.message) << "\n";
      if (snippet) renderSnippet(os, sources_, n.range);
    }
  }
  if (dropped_ > 0) os << fmt::format("tyloc: note: {} more errors not shown\n", dropped_);
  if (droppedOther_ > 0) os << fmt::format("tyloc: note: {} more warnings and remarks not shown\n", droppedOther_);
}

namespace {

nlohmann::ordered_json locationJson(const SourceManager& sm, SourceRange range) {
  nlohmann::ordered_json j;
  if (!range.valid()) return j;
  LineCol b = sm.lineCol(range.begin), e = sm.lineCol(range.end);
  j["file"] = sm.file(range.begin.file).name;
  j["line"] = b.line;
  j["column"] = b.column;
  j["end_line"] = e.line;
  j["end_column"] = e.column;
  return j;
}

}  // namespace

void DiagnosticEngine::renderJson(std::ostream& os) const {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Diagnostic& d : diags_) {
    nlohmann::ordered_json j;
    j["severity"] = severityName(d.severity);
    j["id"] = d.kind->id;
    j["message"] = d.message;
    j["location"] = locationJson(sources_, d.range);
    nlohmann::ordered_json notes = nlohmann::ordered_json::array();
    for (const auto& [n, snippet] : shownNotes(d)) {
      nlohmann::ordered_json nj;
      nj["message"] = n.message;
      nj["location"] = locationJson(sources_, n.range);
      notes.push_back(nj);
    }
    j["notes"] = notes;
    list.push_back(j);
  }
  nlohmann::ordered_json doc;
  doc["diagnostics"] = list;
  doc["errors"] = errorCount_;
  doc["warnings"] = warningCount_;
  // Messages may quote arbitrary source bytes: replace invalid UTF-8 rather than fail.
  os << doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

}  // namespace tyl
