// `tyloc layout`: evaluates one layout expression and shows where every element lives.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend/svg/LayoutSvg.h"

namespace tyl::driver {

struct LayoutOptions {
  std::string expr;
  std::optional<std::vector<int64_t>> shape;
  std::optional<std::vector<int64_t>> apply;
  bool json = false;
  std::optional<std::string> svgPath;
  // With svgPath: colour memory cells by bank for this element type, and mark one access.
  std::string dtype;
  int elementBytes = 0;
  std::optional<svg::Highlight> highlight;
  bool diagnosticsJson = false;
};

// Returns the process exit code (0 ok, 1 diagnostics printed, 2 misuse, including a
// picture that cannot be written).
int runLayoutCommand(const LayoutOptions& options);

// Registers `tyloc layout` and its options; `run` is set to the action to take once the
// command line has been parsed.
void addLayoutCommand(CLI::App& app, std::function<int()>& run);

}  // namespace tyl::driver
