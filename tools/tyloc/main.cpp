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

// Parses "32,4", "(32, 4)" or "[32,4]" into integers.
std::vector<int64_t> parseIntList(const std::string& flag, const std::string& text) {
  std::vector<int64_t> values;
  std::string body;
  for (char c : text)
    if (c != '(' && c != ')' && c != '[' && c != ']' && c != ' ') body += c;
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t comma = body.find(',', pos);
    std::string item = body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty() && comma == std::string::npos && !values.empty()) break;  // trailing comma
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = std::string::npos;
    }
    if (item.empty() || used != item.size())
      throw CLI::ValidationError(flag, fmt::format("'{}' is not a comma-separated list of integers", text));
    values.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return values;
}

int run(int argc, char** argv) {
  CLI::App app{"tyloc: compiles .tyl kernels with first-class data layouts to CUDA C++"};
  app.set_version_flag("--version", "tyloc 0.1.0");
  app.require_subcommand(1);

  tyl::driver::LayoutOptions layout;
  std::string shapeText, applyText;
  CLI::App* layoutCmd = app.add_subcommand(
      "layout", "Show where every element of a layout lives (lane, warp, register slot or memory offset)");
  layoutCmd->add_option("expr", layout.expr, "Layout expression, e.g. 'S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid]'")
      ->required();
  layoutCmd->add_option("--shape", shapeText,
                        "Logical tensor shape, e.g. 32,4 (default: the shard extents); its size must equal the "
                        "layout's size");
  layoutCmd->add_option("--apply", applyText, "Show only the element at this coordinate, e.g. 3,2");
  layoutCmd->add_flag("--json", layout.json,
                      "Print one JSON document: layout, shape, size, injective, and elements with base and replicas");
  std::string diagFormat = "text";
  layoutCmd->add_option("--diagnostics-format", diagFormat, "How errors are printed: text or json")
      ->check(CLI::IsMember({"text", "json"}));

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

  if (layoutCmd->parsed()) {
    try {
      if (!shapeText.empty()) layout.shape = parseIntList("--shape", shapeText);
      if (!applyText.empty()) layout.apply = parseIntList("--apply", applyText);
      if (layout.shape)
        for (int64_t e : *layout.shape)
          if (e <= 0) throw CLI::ValidationError("--shape", fmt::format("extent {} must be positive", e));
    } catch (const CLI::ParseError& e) {
      std::cerr << "tyloc: error: " << e.what() << "\n";
      return kExitMisuse;
    }
    layout.diagnosticsJson = diagFormat == "json";
    return tyl::driver::runLayoutCommand(layout);
  }
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
