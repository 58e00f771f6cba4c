#include "frontend/Imports.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/CommonDiags.h"
#include "frontend/Parse.h"

namespace tyl {

TYL_DIAG(kImport, Error, "import", "an import that cannot be read, a cycle of imports, or a kernel in an imported file");

namespace {

// One file reached by two spellings of its path is one file.
std::string fileKey(const std::string& name) {
  std::error_code ec;
  std::filesystem::path canonical = std::filesystem::weakly_canonical(name, ec);
  return ec ? name : canonical.string();
}

class Resolver {
 public:
  Resolver(DiagnosticEngine& diags, const ImportLoader& load, std::vector<std::string>* files)
      : diags_(diags), load_(load), files_(files) {}

  // The declarations of the files `m` imports, theirs first, in import order.
  void importsOf(const ast::Module& m, std::vector<ast::Decl>& out, int depth) {
    for (const ast::Import& imp : m.imports) {
      if (depth >= kMaxImportDepth || read_ >= kMaxImportedFiles) {
        diags_.report(kInputLimit, imp.range,
                      fmt::format("imports nest deeper than {} or read more than {} files", kMaxImportDepth,
                                  kMaxImportedFiles));
        ok_ = false;
        return;
      }
      std::string error;
      std::optional<FileId> file = load_(imp, m.file, error);
      if (!file) {
        diags_.report(kImport, imp.pathRange, fmt::format("cannot import '{}': {}", imp.path, error));
        ok_ = false;
        continue;
      }
      ++read_;
      const std::string name = diags_.sources().file(*file).name;
      const std::string key = fileKey(name);
      if (auto at = std::find(keys_.begin(), keys_.end(), key); at != keys_.end()) {
        // The cycle: from the file's first appearance back to it.
        std::vector<std::string> chain(names_.begin() + (at - keys_.begin()), names_.end());
        chain.push_back(name);
        diags_.report(kImport, imp.pathRange,
                      fmt::format("'{}' imports itself: {}", name, fmt::join(chain, " imports ")));
        ok_ = false;
        continue;
      }
      if (!done_.insert(key).second) continue;  // already imported: its names are visible
      if (files_) files_->push_back(name);
      std::optional<ast::Module> imported = parseModule(*file, diags_);
      if (!imported) {
        ok_ = false;
        continue;
      }
      enter(name);
      importsOf(*imported, out, depth + 1);
      names_.pop_back();
      keys_.pop_back();
      for (ast::Decl& d : imported->decls) {
        if (const auto* k = std::get_if<ast::KernelDecl>(&d)) {
          diags_.report(kImport, k->name.range,
                        fmt::format("'{}' is a kernel; an imported file holds constants, layouts and imports only",
                                    k->name.name))
              .note(imp.pathRange, "imported here");
          ok_ = false;
          continue;
        }
        out.push_back(std::move(d));
      }
    }
  }

  // `name` is being imported (or is the file compiled): importing it again is a cycle.
  void enter(const std::string& name) {
    names_.push_back(name);
    keys_.push_back(fileKey(name));
    done_.insert(keys_.back());
  }
  bool ok() const { return ok_; }

 private:
  DiagnosticEngine& diags_;
  const ImportLoader& load_;
  std::vector<std::string>* files_;
  std::vector<std::string> names_, keys_;  // the files being imported, outermost first
  std::set<std::string> done_;             // keys of the files read
  size_t read_ = 0;
  bool ok_ = true;
};

}  // namespace

bool resolveImports(ast::Module& m, DiagnosticEngine& diags, const ImportLoader& load,
                    std::vector<std::string>* files) {
  if (m.imports.empty()) return true;
  Resolver r(diags, load, files);
  if (m.file != kNoFile) r.enter(diags.sources().file(m.file).name);
  std::vector<ast::Decl> decls;
  r.importsOf(m, decls, 0);
  for (ast::Decl& d : m.decls) decls.push_back(std::move(d));
  m.decls = std::move(decls);
  m.imports.clear();
  return r.ok();
}

ImportLoader fileImportLoader(SourceManager& sources) {
  return [&sources](const ast::Import& imp, FileId from, std::string& error) -> std::optional<FileId> {
    namespace fs = std::filesystem;
    fs::path path = imp.path;
    if (path.empty()) {
      error = "the path is empty";
      return std::nullopt;
    }
    if (path.is_relative() && from != kNoFile) path = fs::path(sources.file(from).name).parent_path() / path;
    path = path.lexically_normal();
    std::error_code ec;
    fs::file_status status = fs::status(path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) {  // a loop of links, a folder without access
      error = fmt::format("cannot read '{}': {}", path.string(), ec.message());
      return std::nullopt;
    }
    if (ec || !fs::exists(status)) {
      error = fmt::format("no file '{}'", path.string());
      return std::nullopt;
    }
    if (!fs::is_regular_file(status)) {
      error = fmt::format("'{}' is not a regular file", path.string());
      return std::nullopt;
    }
    std::string why;
    std::optional<std::string> text = readSourceText(path.string(), why);
    if (!text) {
      error = fmt::format("cannot read '{}': {}", path.string(), why);
      return std::nullopt;
    }
    return sources.add(path.string(), std::move(*text));
  };
}
}  // namespace tyl
