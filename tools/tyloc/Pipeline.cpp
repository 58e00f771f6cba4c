#include "tools/tyloc/Pipeline.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "base/InternalError.h"
#include "frontend/AstPrint.h"
#include "frontend/Parse.h"
#include "frontend/Sema.h"
#include "ir/lower/Lower.h"
#include "ir/thread/Passes.h"
#include "ir/thread/Print.h"
#include "ir/thread/Verify.h"
#include "ir/tile/Print.h"
#include "ir/tile/Verify.h"
#include "tools/tyloc/Depfile.h"

namespace tyl::driver {

std::optional<FileId> loadInput(SourceManager& sources, const std::string& path) {
  std::string readError;
  std::optional<std::string> text = readSourceText(path, readError);
  if (!text) {
    std::cerr << fmt::format("tyloc: error: cannot read '{}': {}\n", path, readError);
    return std::nullopt;
  }
  return sources.add(path, std::move(*text));
}

namespace {

// An --instantiate name that is no instantiation of a generic kernel of the file.
std::optional<std::string> unknownInstantiation(const ast::Module& ast, const std::vector<std::string>& wanted,
                                                const std::string& fileName) {
  if (wanted.empty()) return std::nullopt;
  const std::vector<std::string> known = instantiationNames(ast);
  for (const std::string& spec : wanted)
    if (std::find(known.begin(), known.end(), spec) == known.end()) {
      const std::string choices =
          known.empty() ? "the file has no generic kernels" : fmt::format("it has {}", fmt::join(known, ", "));
      return fmt::format("--instantiate: '{}' names no instantiation of a generic kernel of '{}' ({})", spec, fileName,
                         choices);
    }
  return std::nullopt;
}

// An output the caller will write that is also a file the imports read.
std::optional<std::string> outputIsImported(const std::vector<std::pair<std::string, std::string>>& outputs,
                                            const std::vector<std::string>& imported) {
  for (const auto& [flag, path] : outputs)
    for (const std::string& f : imported)
      if (!path.empty() && sameFile(path, f)) return fmt::format("{}: '{}' is also the imported file '{}'", flag, path, f);
  return std::nullopt;
}

}  // namespace

PipelineResult runPipeline(SourceManager& sources, FileId file, DiagnosticEngine& diags,
                           const PipelineOptions& options) {
  PipelineResult r;
  const Stage last = options.stopAfter;
  const std::string& fileName = sources.file(file).name;

  if (last == Stage::Tokens) {
    r.tokens = dumpTokens(file, diags);
    r.ok = !diags.hasErrors();
    return r;
  }

  r.ast = parseModule(file, diags);
  if (!r.ast) return r;
  if (last == Stage::Ast) {
    r.ok = !diags.hasErrors();
    return r;
  }

  const ImportLoader imports = options.imports ? options.imports : fileImportLoader(sources);
  if (!resolveImports(*r.ast, diags, imports, &r.imported)) return r;
  if ((r.misuse = outputIsImported(options.outputs, r.imported))) return r;
  if ((r.misuse = unknownInstantiation(*r.ast, options.instantiate, fileName))) return r;

  r.tileIR = analyze(*r.ast, diags, SemaOptions{options.instantiate, options.only});
  if (!r.tileIR) return r;
  tile::verify(*r.tileIR, "after analysis");
  if (last == Stage::TileIR) {
    r.ok = !diags.hasErrors();
    return r;
  }

  r.threadIR = lower::lower(*r.tileIR, diags, lower::Options{options.emit.arch != cuda::Arch::Sm80});
  if (!r.threadIR) return r;
  if (options.changeThreadIR) options.changeThreadIR(*r.threadIR);
  tir::verify(*r.threadIR, "after lowering");
  tir::optimize(*r.threadIR);  // verifies after each of its passes
  if (last == Stage::ThreadIR) {
    r.ok = !diags.hasErrors();
    return r;
  }

  if (!cuda::checkLauncherNames(*r.threadIR, diags)) return r;
  if (!cuda::checkArchFeatures(*r.threadIR, options.emit.arch, diags)) return r;
  cuda::EmitOptions eo = options.emit;
  if (!eo.lineOf) eo.lineOf = [&sources](SourceRange at) { return at.valid() ? sources.lineCol(at.begin).line : 0u; };
  if (eo.sourcePath.empty()) eo.sourcePath = fileName;
  r.cuda = cuda::emit(*r.threadIR, eo);
  r.ok = !diags.hasErrors();
  return r;
}

std::optional<tir::Module> compileToThreadIR(SourceManager& sources, FileId file, DiagnosticEngine& diags,
                                             cuda::Arch arch, const std::string& only) {
  PipelineOptions options;
  options.stopAfter = Stage::ThreadIR;
  options.emit.arch = arch;
  options.only = only;
  PipelineResult r = runPipeline(sources, file, diags, options);
  if (!r.ok) return std::nullopt;
  return std::move(r.threadIR);
}

cuda::Arch archOf(const std::string& name) {
  return name == "sm_90" ? cuda::Arch::Sm90 : name == "sm_90a" ? cuda::Arch::Sm90a : cuda::Arch::Sm80;
}

int reportInternalError(const std::exception& error) {
  std::cerr << "tyloc: internal compiler error: " << error.what() << "\n"
            << "This is a bug in tyloc; please report it with the input that caused it.\n";
  return kExitInternal;
}

namespace {

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

// Writes the .cu, the header and the dependency file: all of them or none.
int writeOutputs(const CompileOptions& o, const PipelineResult& r) {
  OutputFiles files;
  if (!o.output.empty()) files.add(o.output, r.cuda->source);
  if (!o.header.empty()) files.add(o.header, r.cuda->header);
  if (!o.depfile.empty()) {
    std::vector<std::string> targets{o.output.empty() ? "-" : o.output};
    if (!o.header.empty()) targets.push_back(o.header);
    std::vector<std::string> prerequisites{o.input};
    prerequisites.insert(prerequisites.end(), r.imported.begin(), r.imported.end());
    std::string problem;
    std::string dep = dependencyLine(targets, prerequisites, &problem);
    if (!problem.empty()) {
      std::cerr << fmt::format("tyloc: error: --depfile: {}, which a dependency file cannot name\n", problem);
      return kExitMisuse;
    }
    files.add(o.depfile, dep);
  }
  if (std::string err = files.commit(); !err.empty()) {
    std::cerr << "tyloc: error: " << err << "\n";
    return kExitMisuse;
  }
  if (o.output.empty()) std::cout << r.cuda->source;
  return kExitOk;
}

}  // namespace

int compile(const CompileOptions& o) {
  SourceManager sources;
  std::optional<FileId> input = loadInput(sources, o.input);
  if (!input) return kExitMisuse;
  DiagnosticEngine diags(sources, o.diag);
  // Diagnostics are printed however the run ends, an internal error included.
  auto render = [&] {
    if (o.diagnosticsJson)
      diags.renderJson(std::cerr);
    else
      diags.renderText(std::cerr);
  };

  PipelineOptions po;
  po.stopAfter = o.checkOnly ? Stage::Cuda : o.emit;
  po.instantiate = o.instantiate;
  po.changeThreadIR = o.changeThreadIR;
  po.outputs = {{"--output", o.output}, {"--header", o.header}, {"--depfile", o.depfile}};
  po.emit.arch = o.arch;
  po.emit.lineDirectives = o.lineDirectives;
  po.emit.sourcePath = o.input;
  po.emit.outputName = o.output.empty() ? "<stdout>" : std::filesystem::path(o.output).filename().string();
  po.emit.headerName = o.header.empty() ? "" : headerInclude(o.output, o.header);
  PipelineResult r;
  try {
    r = runPipeline(sources, *input, diags, po);
  } catch (const std::exception& e) {  // an InternalError, or another bug
    render();
    return reportInternalError(e);
  }

  int code = kExitOk;
  if (r.misuse) {
    std::cerr << "tyloc: error: " << *r.misuse << "\n";
    code = kExitMisuse;
  } else if (!r.ok) {
    code = kExitUserError;
  } else if (o.checkOnly) {
    code = kExitOk;
  } else {
    switch (o.emit) {
      case Stage::Tokens: code = deliver(o, r.tokens); break;
      case Stage::Ast: code = deliver(o, printAst(*r.ast, sources)); break;
      case Stage::TileIR: code = deliver(o, tile::print(*r.tileIR)); break;
      case Stage::ThreadIR: code = deliver(o, tir::print(*r.threadIR)); break;
      case Stage::Cuda: code = writeOutputs(o, r); break;
    }
  }
  render();
  if (code == kExitOk && diags.hasErrors()) return kExitUserError;
  return code;
}

}  // namespace tyl::driver
