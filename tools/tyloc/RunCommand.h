// `tyloc run`: compiles a .tyl file and runs one kernel on the CPU emulator, with random
// (seeded) or .npy inputs; prints a digest of every tensor, writes them as .npy with
// --dump, and exits non-zero when the emulator's checks find a problem.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace tyl::driver {

void addRunCommand(CLI::App& app, std::function<int()>& run);

}  // namespace tyl::driver
