#include "tools/tyloc/Pipeline.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "frontend/AstPrint.h"
#include "frontend/Imports.h"
#include "frontend/Parse.h"
#include "frontend/Sema.h"
#include "ir/lower/Lower.h"
#include "ir/thread/Passes.h"
#include "ir/thread/Print.h"
#include "ir/tile/Print.h"
#include "tools/tyloc/Depfile.h"

namespace tyl::driver {

TYL_DIAG(kLauncherName, Error, "launcher-name", "two kernels whose host launchers would have the same C++ name");

std::optional<FileId> loadInput(SourceManager& sources, const std::string& path) {
  std::string readError;
  std::optional<std::string> text = readSourceText(path, readError);
  if (!text) {
    std::cerr << fmt::format("tyloc: error: cannot read '{}': {}\n", path, readError);
    return std::nullopt;
  }
  return sources.add(path, std::move(*text));
}

std::optional<tir::Module> compileToThreadIR(SourceManager& sources, FileId file, DiagnosticEngine& diags) {
  std::optional<ast::Module> ast = parseModule(file, diags);
  if (!ast || !resolveImports(*ast, diags, fileImportLoader(sources))) return std::nullopt;
  std::optional<tile::Module> tileIR = analyze(*ast, diags);
  if (!tileIR) return std::nullopt;
  std::optional<tir::Module> threadIR = lower::lower(*tileIR, diags);
  if (threadIR) tir::optimize(*threadIR);
  return threadIR;
}

namespace {

void render(const DiagnosticEngine& diags, const CompileOptions& o) {
  if (o.diagnosticsJson)
    diags.renderJson(std::cerr);
  else
    diags.renderText(std::cerr);
}

// Prints to the output file, or to stdout without -o.
int deliver(const CompileOptions& o, const std::string& text) {
  if (o.output.empty()) {
    std::cout << text;
    return kExitOk;
  }
  std::string err = writeFileAtomically(o.output, text);
  if (!err.empty()) {
    std::cerr << "tyloc: error: " << err << "\n";
    return kExitMisuse;
  }
  return kExitOk;
}

}  // namespace

int compile(const CompileOptions& o) {
  SourceManager sources;
  std::optional<FileId> input = loadInput(sources, o.input);
  if (!input) return kExitMisuse;
  FileId file = *input;
  DiagnosticEngine diags(sources, o.diag);
  // Diagnostics are printed however the run ends; errors make the exit code 1.
  auto finish = [&](int code) {
    render(diags, o);
    if (code == kExitOk && diags.hasErrors()) return kExitUserError;
    return code;
  };

  if (o.emit == Stage::Tokens) {
    std::string tokens = dumpTokens(file, diags);
    if (diags.hasErrors()) return finish(kExitUserError);
    return finish(deliver(o, tokens));
  }
  std::optional<ast::Module> ast = parseModule(file, diags);
  if (!ast) return finish(kExitUserError);
  if (o.emit == Stage::Ast) return finish(deliver(o, printAst(*ast, sources)));
  std::vector<std::string> imported;
  if (!resolveImports(*ast, diags, fileImportLoader(sources), &imported)) return finish(kExitUserError);
  // The command line checked the outputs against the input; the imports are known only now.
  for (const auto& [flag, path] : {std::pair{"--output", &o.output}, {"--header", &o.header}, {"--depfile", &o.depfile}})
    for (const std::string& f : imported)
      if (!path->empty() && sameFile(*path, f)) {
        std::cerr << fmt::format("tyloc: error: {}: '{}' is also the imported file '{}'\n", flag, *path, f);
        return finish(kExitMisuse);
      }

  if (!o.instantiate.empty()) {
    const std::vector<std::string> known = instantiationNames(*ast);
    for (const std::string& spec : o.instantiate)
      if (std::find(known.begin(), known.end(), spec) == known.end()) {
        const std::string choices =
            known.empty() ? "the file has no generic kernels" : fmt::format("it has {}", fmt::join(known, ", "));
        std::cerr << fmt::format(
            "tyloc: error: --instantiate: '{}' names no instantiation of a generic kernel of '{}' ({})\n", spec,
            o.input, choices);
        return finish(kExitMisuse);
      }
  }
  std::optional<tile::Module> tileIR = analyze(*ast, diags, SemaOptions{o.instantiate});
  if (!tileIR) return finish(kExitUserError);
  if (o.emit == Stage::TileIR) return finish(deliver(o, tile::print(*tileIR)));

  std::optional<tir::Module> threadIR = lower::lower(*tileIR, diags);
  if (!threadIR) return finish(kExitUserError);
  for (const cuda::LauncherClash& c : cuda::launcherClashes(*threadIR)) {
    const tir::Kernel& escaped = c.kernel->name != cuda::launcherName(*c.kernel) ? *c.kernel : *c.earlier;
    diags
        .report(kLauncherName, c.kernel->loc,
                fmt::format("the launchers of '{}' and '{}' would both be named '{}': C++ or the CUDA headers "
                            "reserve the name '{}', so its launcher gets a trailing '_'",
                            c.earlier->name, c.kernel->name, cuda::launcherName(*c.kernel), escaped.name))
        .note(c.earlier->loc, fmt::format("'{}' is declared here", c.earlier->name));
  }
  if (diags.hasErrors()) return finish(kExitUserError);
  tir::optimize(*threadIR);
  if (o.emit == Stage::ThreadIR) return finish(deliver(o, tir::print(*threadIR)));
  if (o.checkOnly) return finish(diags.hasErrors() ? kExitUserError : kExitOk);

  cuda::EmitOptions eo;
  eo.arch = o.arch;
  eo.lineDirectives = o.lineDirectives;
  eo.sourcePath = o.input;
  eo.outputName = o.output.empty() ? "<stdout>" : std::filesystem::path(o.output).filename().string();
  eo.headerName = o.header.empty() ? "" : headerInclude(o.output, o.header);
  eo.lineOf = [&](SourceRange r) { return r.valid() ? sources.lineCol(r.begin).line : 0u; };
  cuda::EmitResult out = cuda::emit(*threadIR, eo);
  if (diags.hasErrors()) return finish(kExitUserError);

  // Outputs are written only when everything succeeded, and together: all or none.
  OutputFiles files;
  if (!o.output.empty()) files.add(o.output, out.source);
  if (!o.header.empty()) files.add(o.header, out.header);
  if (!o.depfile.empty()) {
    std::vector<std::string> targets{o.output.empty() ? "-" : o.output};
    if (!o.header.empty()) targets.push_back(o.header);
    std::vector<std::string> prerequisites{o.input};
    prerequisites.insert(prerequisites.end(), imported.begin(), imported.end());
    std::string problem;
    std::string dep = dependencyLine(targets, prerequisites, &problem);
    if (!problem.empty()) {
      std::cerr << fmt::format("tyloc: error: --depfile: {}, which a dependency file cannot name\n", problem);
      return finish(kExitMisuse);
    }
    files.add(o.depfile, dep);
  }
  if (std::string err = files.commit(); !err.empty()) {
    std::cerr << "tyloc: error: " << err << "\n";
    return finish(kExitMisuse);
  }
  if (o.output.empty()) std::cout << out.source;
  return finish(kExitOk);
}

}  // namespace tyl::driver
