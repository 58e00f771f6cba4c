// tyloc: the command-line driver. It parses options, runs the compiler's stages and
// maps the outcome to an exit code: 0 ok, 1 user error (diagnostics printed),
// 2 command-line misuse, 3 internal compiler error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "base/Diagnostics.h"
#include "tools/tyloc/CompileCommand.h"
#include "tools/tyloc/LayoutCommand.h"
#include "tools/tyloc/Pipeline.h"
#include "tools/tyloc/RunCommand.h"

namespace {

using tyl::driver::kExitInternal;
using tyl::driver::kExitMisuse;

// GCC-style warning flags (-Werror, -Wno-<id>) in the spelling CLI11 parses.
std::vector<std::string> normalizeArgs(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-Werror")
      a = "--Werror";
    else if (a.rfind("-Wno-", 0) == 0)
      a = "--Wno=" + a.substr(5);
    args.push_back(a);
  }
  // CLI11 takes the arguments in reverse.
  std::reverse(args.begin(), args.end());
  return args;
}

// Output to a full disk or a closed pipe is an error, not a success with nothing written.
bool flushStdout() {
  if (std::cout.flush()) return true;
  std::cerr << "tyloc: error: cannot write to standard output\n";
  return false;
}

int run(int argc, char** argv) {
  CLI::App app{"tyloc: compiles .tyl kernels with first-class data layouts to CUDA C++", "tyloc"};
  app.set_version_flag("--version", "tyloc 0.1.0");
  app.require_subcommand(0, 1);

  std::function<int()> action;
  bool listDiagnostics = false;
  app.add_flag("--list-diagnostics", listDiagnostics,
               "List every diagnostic ID with its default severity and what it reports, then exit");
  tyl::driver::addCompileCommands(app, action);
  tyl::driver::addLayoutCommand(app, action);
  tyl::driver::addRunCommand(app, action);
  // After the options: the warning flags in their GCC spelling, where a command takes them, and
  // the exit codes.
  const std::string warnings =
      "Warnings:\n"
      "  -Werror                     Treat warnings as errors (remarks are left alone)\n"
      "  -Wno-<id>                   Silence the warning with this ID, e.g. -Wno-bank-conflict (repeatable;\n"
      "                              tyloc --list-diagnostics lists the IDs)\n\n";
  const std::string exitCodes =
      "Exit codes: 0 success, 1 errors in the input (diagnostics printed), 2 command-line misuse,\n"
      "3 internal compiler error (a bug in tyloc).";
  std::vector<CLI::App*> commands = app.get_subcommands({});
  commands.push_back(&app);
  for (CLI::App* cmd : commands) cmd->footer((cmd->get_option_no_throw("--Werror") ? warnings : "") + exitCodes);

  // The top-level options belong to compiling a file. Before a subcommand they would be ignored
  // (`tyloc -Werror check f.tyl` would not treat warnings as errors), so they are refused.
  auto optionBeforeSubcommand = [&app]() -> bool {
    if (app.get_subcommands().empty()) return false;
    const std::string sub = app.get_subcommands().front()->get_name();
    for (const CLI::Option* opt : app.get_options()) {
      if (opt->count() == 0) continue;
      const bool isInput = opt->get_positional() && opt->get_lnames().empty();
      std::string what = isInput ? "the input file '" + opt->as<std::string>() + "'" : opt->get_name(false, true);
      // The warning flags in the spelling the user wrote (normalizeArgs).
      if (opt->check_lname("Werror")) what = "-Werror";
      if (opt->check_lname("Wno")) what = "-Wno-" + opt->as<std::vector<std::string>>().front();
      std::cerr << fmt::format(
          "tyloc: error: {} comes before '{}'; give '{}' its options after it (see tyloc {} --help)\n", what, sub,
          sub, sub);
      return true;
    }
    return false;
  };

  try {
    std::vector<std::string> args = normalizeArgs(argc, argv);
    app.parse(args);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // `tyloc f.tyl check`: the subcommand misses its file because it came first; say that.
    if (dynamic_cast<const CLI::RequiredError*>(&e) && optionBeforeSubcommand()) return kExitMisuse;
    // `tyloc f.tyl --kernel k`: an option of a subcommand given without it.
    if (dynamic_cast<const CLI::ExtrasError*>(&e) && app.get_subcommands().empty())
      for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const std::string name = a.substr(0, a.find('='));
        if (name.rfind("--", 0) != 0 || app.get_option_no_throw(name)) continue;
        for (const CLI::App* sub : app.get_subcommands({}))
          if (sub->get_option_no_throw(name)) {
            std::cerr << fmt::format("tyloc: error: {} is an option of 'tyloc {}': write tyloc {} FILE {} ... (see "
                                     "tyloc {} --help)\n",
                                     name, sub->get_name(), sub->get_name(), name, sub->get_name());
            return kExitMisuse;
          }
      }
    const std::string help =
        app.get_subcommands().empty() ? "tyloc --help" : "tyloc " + app.get_subcommands().front()->get_name() + " --help";
    std::cerr << "tyloc: error: " << e.what() << " (see " << help << ")\n";
    return kExitMisuse;
  }
  if (optionBeforeSubcommand()) return kExitMisuse;

  if (listDiagnostics) {
    for (const tyl::DiagKind* kind : tyl::registeredDiagKinds())
      std::cout << kind->id << "\t" << tyl::severityName(kind->severity) << "\t" << kind->summary << "\n";
    return flushStdout() ? 0 : kExitMisuse;
  }
  if (action) {
    const int code = action();
    return flushStdout() ? code : std::max(code, kExitMisuse);
  }
  std::cerr << "tyloc: error: no input file (see tyloc --help)\n";
  return kExitMisuse;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "tyloc: internal compiler error: " << e.what() << "\n"
              << "This is a bug in tyloc; please report it with the input that caused it.\n";
    return kExitInternal;
  } catch (...) {
    std::cerr << "tyloc: internal compiler error: unknown exception\n";
    return kExitInternal;
  }
}
