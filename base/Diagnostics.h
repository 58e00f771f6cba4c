// The one path every user-facing message takes.
//
// Each kind of diagnostic has a stable ID and a default severity, declared next to the
// code that reports it:
//
//   TYL_DIAG(kSwizzleOverlap, Error, "swizzle-overlap", "swizzle fields overlap");
//
// The registry of all kinds (for -Wno-<id>, --list-diagnostics and the coverage test)
// is filled by those declarations. Messages are collected by a DiagnosticEngine and
// rendered GCC-style (file:line:col: severity: message [id], the source line, a caret
// and range) or as one JSON document.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/Source.h"

namespace tyl {

enum class Severity : uint8_t { Note, Remark, Warning, Error };
std::string_view severityName(Severity s);

struct DiagKind {
  std::string_view id;
  Severity severity;
  std::string_view summary;
};

// All registered kinds, sorted by ID.
std::vector<const DiagKind*> registeredDiagKinds();
const DiagKind* findDiagKind(std::string_view id);

struct DiagRegistrar {
  explicit DiagRegistrar(const DiagKind& kind);
};

#define TYL_DIAG(Var, Sev, Id, Summary)                                 \
  inline const ::tyl::DiagKind Var{Id, ::tyl::Severity::Sev, Summary}; \
  inline const ::tyl::DiagRegistrar Var##Registrar_ { Var }

struct DiagNote {
  SourceRange range;
  std::string message;
};

struct Diagnostic {
  const DiagKind* kind = nullptr;
  Severity severity = Severity::Error;
  SourceRange range;
  std::string message;
  std::vector<DiagNote> notes;
  // Where it was found, when the engine had a context (the instantiation of a generic kernel
  // being analysed): shown after the notes.
  std::optional<DiagNote> context;
  // Later diagnostics of the same kind at the same place, past the few shown (the same check
  // in other unrolled iterations, pipeline stages or instantiations): counted, not kept.
  size_t repeats = 0;
};

struct DiagnosticOptions {
  bool warningsAsErrors = false;
  bool remarks = false;
  std::set<std::string, std::less<>> disabledWarnings;
  // Stop recording after this many errors, or warnings and remarks (the rest are
  // counted, not kept), so output stays bounded whatever the input.
  size_t errorLimit = 50;
  size_t otherLimit = 100;
};

class DiagnosticEngine;

// Attaches notes to the diagnostic just reported; does nothing when it was suppressed.
class DiagBuilder {
 public:
  DiagBuilder(DiagnosticEngine* engine, size_t index) : engine_(engine), index_(index) {}
  DiagBuilder& note(SourceRange range, std::string message);

 private:
  DiagnosticEngine* engine_;
  size_t index_;
};

class DiagnosticEngine {
 public:
  explicit DiagnosticEngine(const SourceManager& sources, DiagnosticOptions options = {})
      : sources_(sources), options_(std::move(options)) {}

  DiagBuilder report(const DiagKind& kind, SourceRange range, std::string message);

  // While set, each diagnostic reported is marked with this note ("in the instantiation
  // 'attention_f16_128'"). A diagnostic found again in a later context is not repeated, so the
  // note names the first context that found it.
  void setContext(SourceRange range, std::string message) { context_ = DiagNote{range, std::move(message)}; }
  void clearContext() { context_.reset(); }
  bool hasErrors() const { return errorCount_ > 0; }
  size_t errorCount() const { return errorCount_; }
  size_t warningCount() const { return warningCount_; }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  const SourceManager& sources() const { return sources_; }
  const DiagnosticOptions& options() const { return options_; }

  void renderText(std::ostream& os) const;
  void renderJson(std::ostream& os) const;

 private:
  friend class DiagBuilder;
  const SourceManager& sources_;
  DiagnosticOptions options_;
  std::vector<Diagnostic> diags_;
  std::optional<DiagNote> context_;
  size_t errorCount_ = 0;
  size_t warningCount_ = 0;
  size_t shownErrors_ = 0;  // errors not counted on another at the same place
  size_t dropped_ = 0;
  size_t droppedOther_ = 0;
  size_t others_ = 0;
  std::set<std::string> seen_;
  // Per kind and place: how many different diagnostics were reported there, and the index in
  // diags_ of the last one kept (~0 for none).
  struct Place {
    size_t count = 0;
    size_t last = ~size_t{0};
  };
  std::map<std::string, Place> places_;
};

}  // namespace tyl
