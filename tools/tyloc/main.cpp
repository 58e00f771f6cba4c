// tyloc: the command-line driver. It parses options, runs the compiler's stages and
// maps the outcome to an exit code: 0 ok, 1 user error (diagnostics printed),
// 2 command-line misuse, 3 internal compiler error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <exception>
#include <iostream>

#include "tools/tyloc/LayoutCommand.h"

namespace {

constexpr int kExitMisuse = 2;
constexpr int kExitInternal = 3;

int run(int argc, char** argv) {
  CLI::App app{"tyloc: compiles .tyl kernels with first-class data layouts to CUDA C++"};
  app.set_version_flag("--version", "tyloc 0.1.0");
  app.require_subcommand(1);

  std::function<int()> action;
  tyl::driver::addLayoutCommand(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "tyloc: error: " << e.what() << "\n";
    std::cerr << "Run 'tyloc --help' for usage.\n";
    return kExitMisuse;
  }

  if (action) return action();
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
