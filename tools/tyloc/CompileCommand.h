// `tyloc FILE.tyl -o OUT.cu ...` and `tyloc check FILE.tyl`: option parsing for the
// compiler pipeline.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace tyl::driver {

// Registers the compile options on the top-level app and the `check` subcommand.
void addCompileCommands(CLI::App& app, std::function<int()>& run);

}  // namespace tyl::driver
