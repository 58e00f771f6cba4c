#include "tools/tyloc/CompileCommand.h"

#include <fmt/format.h>

#include <filesystem>

#include "tools/tyloc/Pipeline.h"

namespace tyl::driver {

namespace {

// Flags shared by compiling and checking.
struct CommonFlags {
  std::string diagFormat = "text";
  bool werror = false;
  bool remarks = false;
  std::vector<std::string> noWarnings;
};

void addCommonFlags(CLI::App* cmd, CommonFlags& f) {
  cmd->add_option("--diagnostics-format", f.diagFormat, "How diagnostics are printed: text (GCC style) or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--remarks", f.remarks,
                "Report, for each tile operation, which instructions it became and why a faster one was not used");
  // Spelled -Werror and -Wno-<id> on the command line; main() maps them to these names, which
  // --help does not show: main() lists the flags in their own spelling after the options.
  cmd->add_flag("--Werror", f.werror)->group("");
  cmd->add_option("--Wno", f.noWarnings)->group("");
}

void applyCommon(const CommonFlags& f, CompileOptions& o) {
  o.diagnosticsJson = f.diagFormat == "json";
  o.diag.warningsAsErrors = f.werror;
  o.diag.remarks = f.remarks;
  for (const std::string& id : f.noWarnings) {
    const DiagKind* kind = findDiagKind(id);
    if (!kind) throw CLI::ValidationError("-Wno-" + id, fmt::format("unknown diagnostic ID '{}'", id));
    if (kind->severity != Severity::Warning)
      throw CLI::ValidationError("-Wno-" + id, fmt::format("'{}' is not a warning and cannot be silenced", id));
    o.diag.disabledWarnings.insert(id);
  }
}

// Refuses output paths that are empty, that name the input, or that name each other: writing
// one would destroy the input or another output. Devices (e.g. /dev/null) may be named twice.
void checkOutputPaths(const CLI::App& app, const CompileOptions& o) {
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--output", &o.output}, {"--header", &o.header}, {"--depfile", &o.depfile}};
  for (const auto& [flag, path] : outputs)
    if (app.count(flag) > 0 && path->empty()) throw CLI::ValidationError(flag, "the path is empty");
  std::vector<std::pair<const char*, const std::string*>> named = {{"the input file", &o.input}};
  for (const auto& [flag, path] : outputs) {
    if (path->empty()) continue;
    for (const auto& [other, otherPath] : named)
      if (sameFile(*path, *otherPath))
        throw CLI::ValidationError(flag, fmt::format("'{}' is also {}", *path, other));
    named.push_back({flag, path});
  }
  // The .cu includes the header by its path from the .cu's folder, which an #include "..."
  // cannot escape.
  const std::string headerName = o.header.empty() ? "" : headerInclude(o.output, o.header);
  if (headerName.find_first_of("\"\n\r") != std::string::npos)
    throw CLI::ValidationError("--header", fmt::format("the path '{}' cannot be written in an #include", headerName));
}

}  // namespace

void addCompileCommands(CLI::App& app, std::function<int()>& run) {
  struct State {
    CompileOptions options;
    CommonFlags common, checkCommon;
    std::string arch = "sm_80", emit = "cuda", checkArch = "sm_80";
    bool noLine = false;
    std::string checkInput;
  };
  auto st = std::make_shared<State>();
  app.add_option("input", st->options.input, "The .tyl file to compile");
  app.add_option("-o,--output", st->options.output, "Where to write the generated .cu (default: stdout)");
  app.add_option("--header", st->options.header, "Also write the host launchers' declarations to this .cuh");
  app.add_option("--arch", st->arch, "Target architecture: sm_80, sm_90 or sm_90a")
      ->check(CLI::IsMember({"sm_80", "sm_90", "sm_90a"}));
  app.add_option("--emit", st->emit,
                 "Stop after a stage and print its output: tokens, ast, tile-ir, thread-ir or cuda (the default)")
      ->check(CLI::IsMember({"tokens", "ast", "tile-ir", "thread-ir", "cuda"}));
  app.add_option("--depfile", st->options.depfile, "Write a Makefile-style dependency file for build systems");
  app.add_flag("--no-line", st->noLine, "Do not emit #line directives pointing back at the .tyl source");
  app.add_option("--instantiate", st->options.instantiate,
                 "Generate only this instantiation of a generic kernel, e.g. gemm:f16 or attention:bf16,128 (repeatable; default: all)");
  addCommonFlags(&app, st->common);

  CLI::App* check = app.add_subcommand("check", "Parse, analyse and check a .tyl file without generating code");
  check->add_option("input", st->checkInput, "The .tyl file to check")->required();
  check->add_option("--arch", st->checkArch,
                    "The architecture to check for, as tyloc --arch (instructions it lacks are errors): sm_80, "
                    "sm_90 or sm_90a")
      ->check(CLI::IsMember({"sm_80", "sm_90", "sm_90a"}));
  addCommonFlags(check, st->checkCommon);

  app.callback([st, &app, check, &run] {
    if (check->parsed()) {
      CompileOptions o;
      o.input = st->checkInput;
      o.checkOnly = true;
      o.arch = archOf(st->checkArch);
      applyCommon(st->checkCommon, o);
      run = [o] { return compile(o); };
      return;
    }
    if (app.get_subcommands().size() > 0) return;  // another subcommand runs
    if (st->options.input.empty()) return;  // nothing to compile (e.g. --list-diagnostics)
    CompileOptions o = st->options;
    o.arch = archOf(st->arch);
    o.lineDirectives = !st->noLine;
    const std::pair<const char*, Stage> stages[] = {{"tokens", Stage::Tokens},
                                                    {"ast", Stage::Ast},
                                                    {"tile-ir", Stage::TileIR},
                                                    {"thread-ir", Stage::ThreadIR},
                                                    {"cuda", Stage::Cuda}};
    for (const auto& [name, stage] : stages)
      if (st->emit == name) o.emit = stage;
    if (o.emit != Stage::Cuda && (!o.header.empty() || !o.depfile.empty()))
      throw CLI::ValidationError("--emit", "--header and --depfile go with --emit cuda");
    checkOutputPaths(app, o);
    applyCommon(st->common, o);
    run = [o] { return compile(o); };
  });
}

}  // namespace tyl::driver
