// `import "path";` at the top of a .tyl file makes the constants and layouts of another file
// visible in it, as if declared before its own declarations. An imported file holds constants,
// layouts and imports only; each file is read once however often it is imported, and a file
// that imports itself, directly or not, is an error.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/Diagnostics.h"
#include "frontend/Ast.h"

namespace tyl {

// Reads the file an import names, relative to the file holding the import: its FileId in the
// diagnostics' SourceManager (named by the path it was found at, the key for "read once"), or
// nullopt with `error` saying why.
using ImportLoader =
    std::function<std::optional<FileId>(const ast::Import& import, FileId from, std::string& error)>;

// Imports nest at most this deep, and a compilation reads at most this many files.
inline constexpr int kMaxImportDepth = 32;
inline constexpr size_t kMaxImportedFiles = 256;

// Moves the declarations of every file `m` imports (and they import) to the front of
// `m.decls`, in import order, and empties `m.imports`. Reports files that cannot be read,
// import cycles and kernels in imported files; false when any was reported. `files` gets the
// name of each file read, for dependency lists.
bool resolveImports(ast::Module& m, DiagnosticEngine& diags, const ImportLoader& load,
                    std::vector<std::string>* files = nullptr);

// The loader of tyloc: paths relative to the importing file's folder, read from the file system.
ImportLoader fileImportLoader(SourceManager& sources);


}  // namespace tyl
