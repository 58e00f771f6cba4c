#include "tools/tyloc/LayoutCommand.h"
#include "tools/tyloc/OutputFiles.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/CommonDiags.h"
#include "base/Diagnostics.h"
#include "frontend/ConstEval.h"
#include "frontend/Parse.h"
#include "ir/layout/Analysis.h"
#include "ir/layout/Transforms.h"

namespace tyl::driver {

TYL_DIAG(kShapeMismatch, Error, "shape-mismatch", "a shape whose size differs from the layout's size");
TYL_DIAG(kCoordOutOfRange, Error, "coord-out-of-range", "a coordinate outside the tensor shape");
TYL_DIAG(kNotMemoryLayout, Error, "not-memory-layout",
         "bank colours (--dtype) or an access (--highlight) asked of a layout that maps onto more than 'm'");
TYL_DIAG(kBadHighlight, Error, "bad-highlight",
         "a --highlight access outside the tensor, or an ldmatrix row that is not 16 contiguous aligned "
         "bytes");

namespace {

// Listing every element of a huge layout would run for hours; --apply works at any size whose
// injectivity the iters decide.
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

// Element types --dtype knows, by size: only the size matters to a bank map.
struct DType {
  const char* name;
  int bytes;
};
constexpr DType kDTypes[] = {
    {"i8", 1},  {"u8", 1},   {"f8e4m3", 1}, {"f8e5m2", 1}, {"f16", 2}, {"bf16", 2}, {"i16", 2}, {"u16", 2},
    {"f32", 4}, {"tf32", 4}, {"i32", 4},    {"u32", 4},    {"f64", 8}, {"i64", 8},  {"u64", 8},
};

// The text table or the JSON document. Returns false when it reported a diagnostic instead.
bool printListing(std::ostream& os, const layout::Layout& l, const layout::Shape& shape,
                  const LayoutOptions& options, DiagnosticEngine& diags, SourceRange whole) {
  int64_t size = l.size();
  std::vector<layout::Shape> coords;
  if (options.apply) {
    const layout::Shape& c = *options.apply;
    bool inside = c.size() == shape.size();
    for (size_t i = 0; inside && i < c.size(); ++i) inside = c[i] >= 0 && c[i] < shape[i];
    if (!inside) {
      diags.report(kCoordOutOfRange, whole,
                   fmt::format("--apply {} is not a coordinate of the shape {}", layout::shapeToString(c),
                               layout::shapeToString(shape)));
      return false;
    }
    coords.push_back(c);
  } else {
    if (saturatingMul(size, l.tile.replicaCount()) > kMaxListed) {
      diags.report(kTooLarge, whole,
                   fmt::format("the layout has {} elements with {} replicas each; listing stops at {} "
                               "(use --apply)",
                               size, l.tile.replicaCount(), kMaxListed));
      return false;
    }
    for (int64_t i = 0; i < size; ++i) coords.push_back(layout::unflatten(i, shape));
  }
  // One element lists each of its replicas; even --apply stops at the listing limit.
  if (l.tile.replicaCount() > kMaxListed) {
    diags.report(kTooLarge, whole,
                 fmt::format("each element has {} replicas; listing stops at {}", l.tile.replicaCount(), kMaxListed));
    return false;
  }
  // Most layouts are decided from their iters whatever their size; the rest are
  // enumerated, which is bounded.
  bool injective = false;
  try {
    injective = layout::isInjective(l, shape);
  } catch (const layout::OverflowError&) {
    throw;
  } catch (const layout::Error&) {
    diags.report(kTooLarge, whole,
                 fmt::format("the layout has {} elements with {} replicas each, too many to check injectivity "
                             "by enumeration, and its iters alone do not decide it",
                             size, l.tile.replicaCount()));
    return false;
  }
  layout::Layout canonical = layout::canonicalize(l);

  if (options.json) {
    Json doc;
    doc["layout"] = layout::toString(canonical);
    doc["shape"] = shape;
    doc["size"] = size;
    doc["injective"] = injective;
    Json elements = Json::array();
    if (options.apply) {
      // The one element, both at the top level and as the only entry of `elements`.
      Json element = elementJson(l, coords[0], shape);
      for (const auto& [key, value] : element.items()) doc[key] = value;
    }
    for (const layout::Shape& c : coords) elements.push_back(elementJson(l, c, shape));
    doc["elements"] = elements;
    os << doc.dump(2) << "\n";
  } else {
    printTable(os, l, shape, injective, coords);
  }
  return true;
}

svg::SvgOptions svgOptions(const LayoutOptions& options) {
  svg::SvgOptions o;
  if (options.elementBytes > 0) o.elementBytes = options.elementBytes;
  o.dtype = options.dtype;
  o.highlight = options.highlight;
  return o;
}

const DiagKind& svgDiagKind(svg::SvgError::Kind kind) {
  switch (kind) {
    case svg::SvgError::Kind::NotMemoryLayout: return kNotMemoryLayout;
    case svg::SvgError::Kind::BadHighlight: return kBadHighlight;
    case svg::SvgError::Kind::TooLarge: break;
  }
  return kTooLarge;
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
  auto render = [&]() {
    if (options.diagnosticsJson)
      diags.renderJson(std::cerr);
    else
      diags.renderText(std::cerr);
  };
  auto fail = [&]() {
    render();
    return 1;
  };

  ast::ExprPtr expr = parseLayoutExpr(file, diags);
  if (!expr) return fail();
  ConstEvaluator eval(diags, nullptr);
  std::optional<layout::Layout> l = eval.evalLayout(*expr);
  if (!l) return fail();

  try {
    // A swizzle permutes the bits of offsets from 0 up: it has no meaning below 0.
    if (int64_t lo = l->swizzle ? layout::minValue(l->tile, layout::Axis::m) : 0; lo < 0) {
      diags.report(kNegativeOffset, whole,
                   fmt::format("the swizzled layout places an element at offset {}; a swizzle permutes offsets "
                               "from 0 up",
                               lo));
      return fail();
    }
    int64_t size = l->size();
    layout::Shape shape = options.shape ? *options.shape : l->tile.shardExtents();
    if (shape.empty()) shape = {1};
    if (layout::shapeSize(shape) != size) {
      diags.report(kShapeMismatch, whole,
                   fmt::format("the layout has {} elements but --shape {} has {}", size, layout::shapeToString(shape),
                               layout::shapeSize(shape)));
      return fail();
    }
    // The picture is rendered before anything is printed or written, so a refused
    // request leaves no file and no partial output behind.
    std::optional<std::string> picture;
    if (options.svgPath) picture = svg::renderLayoutSvg(*l, shape, svgOptions(options));
    std::ostringstream text;
    if ((!picture || options.json) && !printListing(text, *l, shape, options, diags, whole)) return fail();
    if (picture) {
      if (std::string err = driver::writeFileAtomically(*options.svgPath, *picture); !err.empty()) {
        std::cerr << "tyloc: error: " << err << "\n";
        return 2;  // like a misspelt option: the command line asked for something impossible
      }
    }
    if (!diags.diagnostics().empty()) render();  // warnings, such as swizzle-order
    std::cout << text.str();
  } catch (const svg::SvgError& err) {
    diags.report(svgDiagKind(err.kind()), whole, err.what());
    return fail();
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
    std::string shape, apply, svg, highlight, diagFormat = "text";
  };
  auto state = std::make_shared<State>();
  CLI::App* cmd = app.add_subcommand(
      "layout", "Show where every element of a layout lives (lane, warp, register slot or memory offset)");
  cmd->add_option("expr", state->options.expr,
                  "Layout expression, e.g. 'S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid]'")
      ->required();
  CLI::Option* shape = cmd->add_option("--shape", state->shape,
                  "Logical tensor shape, e.g. 32,4 (default: the shard extents); its size must equal the "
                  "layout's size");
  CLI::Option* apply =
      cmd->add_option("--apply", state->apply, "Show only the element at this coordinate, e.g. 3,2");
  cmd->add_flag("--json", state->options.json,
                "Print one JSON document: layout, shape, size, injective, and elements with base and replicas");
  CLI::Option* svg =
      cmd->add_option("--svg", state->svg,
                      "Write a picture of the layout to FILE (self-contained SVG): one cell per element, "
                      "labelled with where it lives (T3 r2 = lane 3, slot 2; or the memory offset) and "
                      "coloured by owning thread; rank > 2 is folded into rows; at most 256x256 cells. "
                      "Prints nothing else unless --json is given")
          ->type_name("FILE");
  apply->excludes(svg);
  std::vector<std::string> dtypeNames;
  for (const DType& d : kDTypes) dtypeNames.emplace_back(d.name);
  CLI::Option* dtype = cmd->add_option("--dtype", state->options.dtype,
                                       "With --svg, for a memory layout (only on m): colour cells by "
                                       "shared-memory bank (32 banks of 4 bytes) for elements of this type")
                           ->check(CLI::IsMember(dtypeNames))
                           ->needs(svg);
  CLI::Option* highlight = cmd->add_option("--highlight", state->highlight,
                  "With --dtype, mark one warp's access and state its bank-conflict degree. Cells are "
                  "(row, column) of the picture: row:R (lane i reads (R, i)), col:C (lane i reads (i, C)), "
                  "ldmatrix:R,C (lane i < 8 reads the 16 bytes from (R + i, C)), cells:R,C;R,C;... "
                  "(lane i reads the i-th cell, up to 32). A suffix /2, /4, /8 or /16 makes each lane of row, col "
                  "or cells read a vector of that many bytes: row:0/16 is lane i reading 16 bytes from "
                  "(0, i x 16 / element size)")
      ->type_name("SPEC")
      ->needs(dtype);
  cmd->add_option("--diagnostics-format", state->diagFormat, "How errors are printed: text or json")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->callback([state, shape, apply, svg, highlight, &run] {
    // Flag values are checked here so that malformed ones are command-line misuse (exit 2);
    // an empty value is one of them.
    if (shape->count() > 0) state->options.shape = parseIntList("--shape", state->shape);
    if (apply->count() > 0) state->options.apply = parseIntList("--apply", state->apply);
    if (svg->count() > 0) {
      if (state->svg.empty()) throw CLI::ValidationError("--svg", "needs a file name");
      state->options.svgPath = state->svg;
    }
    for (const DType& d : kDTypes)
      if (state->options.dtype == d.name) state->options.elementBytes = d.bytes;
    if (highlight->count() > 0) {
      std::string why;
      state->options.highlight = svg::parseHighlight(state->highlight, why);
      if (!state->options.highlight) throw CLI::ValidationError("--highlight", why);
    }
    if (state->options.shape) {
      int64_t size = 1;
      for (int64_t e : *state->options.shape) {
        if (e <= 0) throw CLI::ValidationError("--shape", fmt::format("extent {} must be positive", e));
        if (__builtin_mul_overflow(size, e, &size))
          throw CLI::ValidationError("--shape", "the extents multiply past 2^63-1");
      }
    }
    state->options.diagnosticsJson = state->diagFormat == "json";
    run = [state] { return runLayoutCommand(state->options); };
  });
}

}  // namespace tyl::driver
