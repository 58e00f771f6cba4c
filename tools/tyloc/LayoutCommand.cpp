#include "tools/tyloc/LayoutCommand.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "frontend/CommonDiags.h"
#include "frontend/ConstEval.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parse.h"
#include "ir/layout/Analysis.h"
#include "ir/layout/Transforms.h"

namespace tyl::driver {

TYL_DIAG(kShapeMismatch, Error, "shape-mismatch", "a shape whose size differs from the layout's size");
TYL_DIAG(kCoordOutOfRange, Error, "coord-out-of-range", "a coordinate outside the tensor shape");
TYL_DIAG(kTooLarge, Error, "too-large", "a layout too large to enumerate");

namespace {

// Listing every element of a huge layout would run for hours; --apply still works.
constexpr int64_t kMaxListed = int64_t{1} << 20;

using layout::PhysCoord;

int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}
using Json = nlohmann::ordered_json;

Json coordJson(const PhysCoord& c) {
  Json j = Json::object();
  c.forEach([&](layout::Axis a, int64_t v) { j[std::string(layout::axisName(a))] = v; });
  return j;
}

Json elementJson(const layout::Layout& l, const layout::Shape& coord, const layout::Shape& shape) {
  Json e;
  e["coord"] = coord;
  e["base"] = coordJson(layout::apply(l, coord, shape));
  Json reps = Json::array();
  for (const PhysCoord& p : layout::applyAll(l, coord, shape)) reps.push_back(coordJson(p));
  e["replicas"] = reps;
  return e;
}

std::string physText(const PhysCoord& c, uint32_t mask) {
  std::string s;
  c.forEach([&](layout::Axis a, int64_t v) {
    if (mask & layout::axisBit(a)) s += fmt::format("{}{}={}", s.empty() ? "" : " ", layout::axisName(a), v);
  });
  return s;
}

void printTable(std::ostream& os, const layout::Layout& l, const layout::Shape& shape, bool injective,
                const std::vector<layout::Shape>& coords) {
  uint32_t replicaOnly = l.tile.axesMask() & ~l.tile.baseAxesMask();
  os << fmt::format("layout     {}\n", layout::toString(l));
  os << fmt::format("shape      {}   size {}   replicas {}   injective {}\n", layout::shapeToString(shape),
                    layout::shapeSize(shape), l.tile.replicaCount(), injective ? "yes" : "no");
  std::vector<std::array<std::string, 3>> rows;
  rows.push_back({"coord", "base", l.tile.replica.empty() ? "" : "replicas"});
  for (const layout::Shape& c : coords) {
    std::string reps;
    if (!l.tile.replica.empty()) {
      for (const PhysCoord& p : layout::applyAll(l, c, shape))
        reps += fmt::format("{}[{}]", reps.empty() ? "" : " ", physText(p, ~0u));
    }
    rows.push_back({layout::shapeToString(c), physText(layout::apply(l, c, shape), ~replicaOnly), reps});
  }
  size_t w0 = 0, w1 = 0;
  for (const auto& r : rows) {
    w0 = std::max(w0, r[0].size());
    w1 = std::max(w1, r[1].size());
  }
  for (const auto& r : rows) {
    std::string line = fmt::format("{:<{}}  {:<{}}  {}", r[0], w0, r[1], w1, r[2]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
}

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

}  // namespace

int runLayoutCommand(const LayoutOptions& options) {
  SourceManager sources;
  FileId file = sources.add("<layout>", options.expr);
  DiagnosticEngine diags(sources);
  SourceRange whole{SourceLoc{file, 0}, SourceLoc{file, static_cast<uint32_t>(options.expr.size())}};
  auto fail = [&]() {
    if (options.diagnosticsJson)
      diags.renderJson(std::cerr);
    else
      diags.renderText(std::cerr);
    return 1;
  };

  ast::ExprPtr expr = parseLayoutExpr(file, diags);
  if (!expr) return fail();
  ConstEvaluator eval(diags, nullptr);
  std::optional<layout::Layout> l = eval.evalLayout(*expr);
  if (!l) return fail();

  try {
    int64_t size = l->size();
    layout::Shape shape = options.shape ? *options.shape : l->tile.shardExtents();
    if (shape.empty()) shape = {1};
    if (layout::shapeSize(shape) != size) {
      diags.report(kShapeMismatch, whole,
                   fmt::format("the layout has {} elements but --shape {} has {}", size, layout::shapeToString(shape),
                               layout::shapeSize(shape)));
      return fail();
    }
    std::vector<layout::Shape> coords;
    if (options.apply) {
      const layout::Shape& c = *options.apply;
      bool inside = c.size() == shape.size();
      for (size_t i = 0; inside && i < c.size(); ++i) inside = c[i] >= 0 && c[i] < shape[i];
      if (!inside) {
        diags.report(kCoordOutOfRange, whole,
                     fmt::format("--apply {} is not a coordinate of the shape {}", layout::shapeToString(c),
                                 layout::shapeToString(shape)));
        return fail();
      }
      coords.push_back(c);
    } else {
      if (saturatingMul(size, l->tile.replicaCount()) > kMaxListed) {
        diags.report(kTooLarge, whole,
                     fmt::format("the layout has {} elements with {} replicas each; listing stops at {} (use --apply)",
                                 size, l->tile.replicaCount(), kMaxListed));
        return fail();
      }
      for (int64_t i = 0; i < size; ++i) coords.push_back(layout::unflatten(i, shape));
    }
    if (saturatingMul(size, l->tile.replicaCount()) > layout::kMaxEnumeration) {
      diags.report(kTooLarge, whole,
                   fmt::format("the layout has {} elements with {} replicas each, too many to check injectivity",
                               size, l->tile.replicaCount()));
      return fail();
    }
    bool injective = layout::isInjective(*l, shape);
    layout::Layout canonical = layout::canonicalize(*l);

    if (options.json) {
      Json doc;
      doc["layout"] = layout::toString(canonical);
      doc["shape"] = shape;
      doc["size"] = size;
      doc["injective"] = injective;
      Json elements = Json::array();
      if (options.apply) {
        // The one element, both at the top level and as the only entry of `elements`.
        Json element = elementJson(*l, coords[0], shape);
        for (const auto& [key, value] : element.items()) doc[key] = value;
      }
      for (const layout::Shape& c : coords) elements.push_back(elementJson(*l, c, shape));
      doc["elements"] = elements;
      std::cout << doc.dump(2) << "\n";
    } else {
      printTable(std::cout, *l, shape, injective, coords);
    }
  } catch (const layout::OverflowError& err) {
    diags.report(kIntegerOverflow, whole, fmt::format("{} while evaluating the layout", err.what()));
    return fail();
  } catch (const layout::Error& err) {
    diags.report(kTooLarge, whole, err.what());
    return fail();
  }
  return 0;
}

}  // namespace tyl::driver

namespace tyl::driver {

void addLayoutCommand(CLI::App& app, std::function<int()>& run) {
  struct State {
    LayoutOptions options;
    std::string shape, apply, diagFormat = "text";
  };
  auto state = std::make_shared<State>();
  CLI::App* cmd = app.add_subcommand(
      "layout", "Show where every element of a layout lives (lane, warp, register slot or memory offset)");
  cmd->add_option("expr", state->options.expr,
                  "Layout expression, e.g. 'S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid]'")
      ->required();
  cmd->add_option("--shape", state->shape,
                  "Logical tensor shape, e.g. 32,4 (default: the shard extents); its size must equal the "
                  "layout's size");
  cmd->add_option("--apply", state->apply, "Show only the element at this coordinate, e.g. 3,2");
  cmd->add_flag("--json", state->options.json,
                "Print one JSON document: layout, shape, size, injective, and elements with base and replicas");
  cmd->add_option("--diagnostics-format", state->diagFormat, "How errors are printed: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([state, &run] {
    // Flag values are checked here so that malformed ones are command-line misuse (exit 2).
    if (!state->shape.empty()) state->options.shape = parseIntList("--shape", state->shape);
    if (!state->apply.empty()) state->options.apply = parseIntList("--apply", state->apply);
    if (state->options.shape)
      for (int64_t e : *state->options.shape)
        if (e <= 0) throw CLI::ValidationError("--shape", fmt::format("extent {} must be positive", e));
    state->options.diagnosticsJson = state->diagFormat == "json";
    run = [state] { return runLayoutCommand(state->options); };
  });
}

}  // namespace tyl::driver
