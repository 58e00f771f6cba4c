#include "backend/svg/LayoutSvg.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>

#include "ir/layout/Analysis.h"

namespace tyl::svg {

using layout::Axis;
using layout::Layout;
using layout::PhysCoord;

namespace {

// ---- Text ------------------------------------------------------------------------

std::string escapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

// Characters, not bytes: labels may hold UTF-8 such as "×" or "…".
int64_t textLength(std::string_view text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

// Generic monospace glyphs are about 0.6 em wide; widths are estimates, so round up.
int64_t textWidth(std::string_view text, int fontSize) {
  return static_cast<int64_t>(std::ceil(static_cast<double>(textLength(text)) * fontSize * 0.62));
}

// "laneid=3 m=2": every axis of one placement, as the text output of `tyloc layout` writes it.
std::string placementText(const PhysCoord& where) {
  std::string s;
  where.forEach(
      [&](Axis a, int64_t v) { s += fmt::format("{}{}={}", s.empty() ? "" : " ", layout::axisName(a), v); });
  return s;
}

std::string joinCoord(std::span<const int64_t> coord) { return fmt::format("{}", fmt::join(coord, ",")); }

// ---- Owners and labels --------------------------------------------------------------

struct AxisLetter {
  Axis axis;
  const char* letter;
  const char* meaning;
};

// The owning axes from the outermost to the innermost, as labels print them.
constexpr AxisLetter kOwnerAxes[] = {
    {Axis::bz, "bz", "block z"},
    {Axis::by, "by", "block y"},
    {Axis::bx, "bx", "block x"},
    {Axis::wgid, "G", "warpgroup"},
    {Axis::wid_in_wg, "w", "warp in warpgroup"},
    {Axis::warpid, "W", "warp"},
    {Axis::tid_in_wg, "t", "thread in warpgroup"},
    {Axis::tx, "T", "thread"},
    {Axis::laneid, "L", "lane"},
};

uint32_t ownerAxesMask() {
  uint32_t mask = 0;
  for (const AxisLetter& a : kOwnerAxes) mask |= layout::axisBit(a.axis);
  return mask;
}

// A lone lane or thread axis is the common case and reads best as plain "T3".
bool isLoneThreadAxis(uint32_t ownerMask) {
  return ownerMask == layout::axisBit(Axis::laneid) || ownerMask == layout::axisBit(Axis::tx);
}

std::string storageLabel(const PhysCoord& where, bool owned) {
  std::string s;
  auto add = [&](std::string part) { s += (s.empty() ? "" : " ") + part; };
  if (where.has(Axis::m)) add(fmt::format("{}{}", owned ? "r" : "", where[Axis::m]));
  if (where.has(Axis::TLane)) add(fmt::format("TL{}", where[Axis::TLane]));
  if (where.has(Axis::TCol)) add(fmt::format("TC{}", where[Axis::TCol]));
  return s;
}

// A deterministic number per owning thread; only the colour depends on it, so weights
// that merely keep nearby threads apart are enough. Unsigned, so huge strides wrap
// instead of overflowing.
uint64_t ownerKey(const PhysCoord& where) {
  auto v = [&](Axis a) { return static_cast<uint64_t>(where[a]); };
  return v(Axis::laneid) + v(Axis::tx) + v(Axis::tid_in_wg) + 32 * v(Axis::warpid) + 32 * v(Axis::wid_in_wg) +
         128 * v(Axis::wgid) + 1024 * (v(Axis::bx) + v(Axis::by) + v(Axis::bz));
}

// ---- Colours ---------------------------------------------------------------------

std::string hslHex(double hue, double sat, double light) {
  double c = (1 - std::fabs(2 * light - 1)) * sat;
  double hp = std::fmod(hue, 360.0) / 60.0;
  double x = c * (1 - std::fabs(std::fmod(hp, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (hp < 1) {
    r = c, g = x;
  } else if (hp < 2) {
    r = x, g = c;
  } else if (hp < 3) {
    g = c, b = x;
  } else if (hp < 4) {
    g = x, b = c;
  } else if (hp < 5) {
    r = x, b = c;
  } else {
    r = c, b = x;
  }
  double m = light - c / 2;
  auto byte = [&](double v) { return static_cast<int>(std::lround(std::clamp(v + m, 0.0, 1.0) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", byte(r), byte(g), byte(b));
}

// Lighter for lower offsets, so a permutation shows.
std::string offsetShade(int64_t m, int64_t lo, int64_t hi) {
  // In doubles: the span of a layout's offsets may not fit in 64 bits.
  double t = hi > lo ? (static_cast<double>(m) - static_cast<double>(lo)) /
                           (static_cast<double>(hi) - static_cast<double>(lo))
                     : 0.0;
  return hslHex(210, 0.45, 0.93 - 0.30 * t);
}

// ---- Cells -----------------------------------------------------------------------

struct Cell {
  layout::Shape coord;
  std::vector<PhysCoord> placements;  // applyAll: the first is the base (replica 0)
  std::vector<std::string> lines;     // drawn text, first line large
  std::string fill;
  std::optional<int> bank;
  std::vector<int> lanes;  // highlighted access: the lanes that read this element
};

// "+W1 L3": the other placements, by owner when only the owner differs.
std::string replicaLine(const std::vector<PhysCoord>& placements) {
  const uint32_t storage = layout::memoryAxesMask();
  std::vector<std::string> parts;
  for (size_t k = 1; k < placements.size(); ++k) {
    bool sameStorage = placements[k].project(storage) == placements[0].project(storage);
    std::string owner = ownerLabel(placements[k]);
    parts.push_back(sameStorage && !owner.empty() ? owner : cellLabel(placements[k]));
  }
  constexpr size_t kShown = 3;
  if (parts.size() <= kShown) return fmt::format("+{}", fmt::join(parts, ","));
  return fmt::format("+{},{} …+{}", parts[0], parts[1], parts.size() - 2);
}

std::string ownersText(const std::vector<PhysCoord>& placements) {
  std::vector<std::string> labels;
  for (const PhysCoord& p : placements) labels.push_back(cellLabel(p));
  return fmt::format("{}", fmt::join(labels, "; "));
}

std::string tooltip(const Cell& cell) {
  std::vector<std::string> parts;
  for (const PhysCoord& p : cell.placements) parts.push_back(placementText(p));
  std::string text = fmt::format("{}: {}", layout::shapeToString(cell.coord), fmt::join(parts, " | "));
  if (cell.bank) text += fmt::format(" | bank {}", *cell.bank);
  if (!cell.lanes.empty()) text += fmt::format(" | lane {}", fmt::join(cell.lanes, ","));
  return text;
}

// ---- Geometry --------------------------------------------------------------------

constexpr int64_t kMargin = 16;
constexpr int kLabelFont = 11;
constexpr int kSmallFont = 9;
constexpr int kIndexFont = 9;
constexpr int64_t kLineHeight = 12;
constexpr int64_t kTinyCell = 10;  // the side of an unlabelled cell

struct TextLine {
  std::string text;
  int fontSize = 12;
  bool bold = false;
};

int64_t lineHeight(const TextLine& line) { return line.fontSize + 6; }

int64_t blockHeight(const std::vector<TextLine>& lines) {
  int64_t h = 0;
  for (const TextLine& l : lines) h += lineHeight(l);
  return h;
}

int64_t blockWidth(const std::vector<TextLine>& lines) {
  int64_t w = 0;
  for (const TextLine& l : lines) w = std::max(w, textWidth(l.text, l.fontSize));
  return w;
}

void emitLines(std::string& out, const std::vector<TextLine>& lines, int64_t x, int64_t y, const char* cls) {
  fmt::format_to(std::back_inserter(out), "<g class=\"{}\">\n", cls);
  for (const TextLine& l : lines) {
    y += lineHeight(l);
    fmt::format_to(std::back_inserter(out), "<text x=\"{}\" y=\"{}\" font-size=\"{}\"{}>{}</text>\n", x,
                   y - 5, l.fontSize, l.bold ? " font-weight=\"bold\"" : "", escapeXml(l.text));
  }
  out += "</g>\n";
}

// ---- Descriptions ----------------------------------------------------------------

std::string shapeLine(std::span<const int64_t> shape, const Grid& grid, int64_t size) {
  std::string s = layout::shapeToString(shape);
  if (shape.size() <= 2)
    return fmt::format("shape {}: {} row{} × {} column{}, {} elements", s, grid.rows,
                       grid.rows == 1 ? "" : "s", grid.cols, grid.cols == 1 ? "" : "s", size);
  std::vector<std::string> lead;
  for (size_t d = 0; d + 1 < shape.size(); ++d) lead.push_back(fmt::format("d{}", d));
  return fmt::format(
      "shape {} folded to {} rows × {} columns: rows are ({}) flattened row-major, columns are d{}", s,
      grid.rows, grid.cols, fmt::join(lead, ", "), shape.size() - 1);
}

std::string replicaDescription(const layout::TileLayout& tile) {
  if (tile.replica.empty()) return "one placement per element (no replicas)";
  std::vector<std::string> axes;
  for (const layout::Iter& it : tile.replica) {
    std::string name(layout::axisName(it.axis));
    if (std::find(axes.begin(), axes.end(), name) == axes.end()) axes.push_back(name);
  }
  return fmt::format("every element has {} placements (replicas over {}), all listed", tile.replicaCount(),
                     fmt::join(axes, ", "));
}

std::string ownerLegend(uint32_t ownerMask) {
  if (isLoneThreadAxis(ownerMask))
    return ownerMask == layout::axisBit(Axis::laneid) ? "T = lane (laneid)" : "T = thread (tx)";
  std::vector<std::string> parts;
  for (const AxisLetter& a : kOwnerAxes)
    if (ownerMask & layout::axisBit(a.axis))
      parts.push_back(fmt::format("{} = {} ({})", a.letter, a.meaning, layout::axisName(a.axis)));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string degreeText(int degree) {
  return degree <= 1 ? "conflict-free" : fmt::format("{}-way bank conflict", degree);
}

std::string highlightLine(const Highlight& h, const WarpAccess& access) {
  const size_t perLane = access.lanes.front().elements.size();
  std::string what =
      h.kind == Highlight::Kind::Ldmatrix
          ? fmt::format("{} lanes × 16-byte rows (one 8×8 ldmatrix matrix)", access.lanes.size())
      : perLane > 1 ? fmt::format("{} lanes × one {}-byte vector ({} elements)", access.lanes.size(),
                                  access.accessBytes, perLane)
                    : fmt::format("{} lanes × one {}-byte element", access.lanes.size(), access.accessBytes);
  return fmt::format("highlight {}: {}: conflict degree {} ({})", h.text, what, access.conflictDegree,
                     degreeText(access.conflictDegree));
}

// ---- Highlight parsing ------------------------------------------------------------

std::optional<int64_t> parseInt(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

std::optional<std::array<int64_t, 2>> parsePair(std::string_view s) {
  size_t comma = s.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  auto r = parseInt(s.substr(0, comma));
  auto c = parseInt(s.substr(comma + 1));
  if (!r || !c) return std::nullopt;
  return std::array<int64_t, 2>{*r, *c};
}

void checkMemoryLayout(const Layout& l, std::string_view what) {
  uint32_t others = l.tile.axesMask() & ~layout::axisBit(Axis::m);
  if (!others) return;
  std::vector<std::string> names;
  for (Axis a : layout::allAxes())
    if (others & layout::axisBit(a)) names.emplace_back(layout::axisName(a));
  throw SvgError(
      SvgError::Kind::NotMemoryLayout,
      fmt::format("{} needs a shared-memory layout that maps only onto 'm'; this one also maps onto {}", what,
                  fmt::join(names, ", ")));
}

}  // namespace

// ---- Public vocabulary -------------------------------------------------------------

Grid gridOf(std::span<const int64_t> shape) {
  if (shape.empty()) return {1, 1};
  Grid g;
  g.cols = shape.back();
  g.rows = layout::shapeSize(shape.first(shape.size() - 1));
  return g;
}

std::string ownerLabel(const PhysCoord& where) {
  uint32_t mask = where.axesMask() & ownerAxesMask();
  if (isLoneThreadAxis(mask))
    return fmt::format("T{}", where[mask & layout::axisBit(Axis::tx) ? Axis::tx : Axis::laneid]);
  std::string s;
  for (const AxisLetter& a : kOwnerAxes)
    if (mask & layout::axisBit(a.axis))
      s += fmt::format("{}{}{}", s.empty() ? "" : " ", a.letter, where[a.axis]);
  return s;
}

std::string cellLabel(const PhysCoord& where) {
  std::string owner = ownerLabel(where);
  std::string storage = storageLabel(where, !owner.empty());
  if (owner.empty()) return storage;
  return storage.empty() ? owner : owner + " " + storage;
}

std::string ownerColor(const PhysCoord& where) {
  if (!(where.axesMask() & ownerAxesMask())) return "#e6e6e6";
  // Golden-ratio steps around the hue circle keep consecutive threads far apart.
  constexpr double kGolden = 0.6180339887498949;
  double turns = static_cast<double>(ownerKey(where)) * kGolden;
  return hslHex((turns - std::floor(turns)) * 360.0, 0.62, 0.78);
}

std::string bankColor(int bank) {
  int b = ((bank % layout::kBankCount) + layout::kBankCount) % layout::kBankCount;
  // Hue order keeps a conflict-free row a rainbow; alternating lightness separates neighbours.
  return hslHex(b * 360.0 / layout::kBankCount, 0.70, b % 2 ? 0.84 : 0.72);
}

std::optional<Highlight> parseHighlight(std::string_view text, std::string& why) {
  Highlight h;
  h.text = std::string(text);
  // A vector suffix, /BYTES.
  if (size_t slash = text.rfind('/'); slash != std::string_view::npos) {
    std::optional<int64_t> bytes = parseInt(text.substr(slash + 1));
    if (!bytes || (*bytes != 2 && *bytes != 4 && *bytes != 8 && *bytes != 16)) {
      why = fmt::format("'{}': a vector is /2, /4, /8 or /16 bytes", text);
      return std::nullopt;
    }
    if (text.rfind("ldmatrix:", 0) == 0) {
      why = fmt::format("'{}': ldmatrix rows are always 16 bytes; drop the /{}", text, *bytes);
      return std::nullopt;
    }
    h.vectorBytes = static_cast<int>(*bytes);
    text = text.substr(0, slash);
  }
  size_t colon = text.find(':');
  std::string_view kind = text.substr(0, colon),
                   body = colon == std::string_view::npos ? "" : text.substr(colon + 1);
  auto fail = [&](std::string message) -> std::optional<Highlight> {
    why = std::move(message);
    return std::nullopt;
  };
  if (kind == "row" || kind == "col") {
    auto v = parseInt(body);
    if (!v) return fail(fmt::format("'{}' needs one non-negative index, e.g. {}:0", text, kind));
    h.kind = kind == "row" ? Highlight::Kind::Row : Highlight::Kind::Column;
    (kind == "row" ? h.row : h.col) = *v;
    return h;
  }
  if (kind == "ldmatrix") {
    auto p = parsePair(body);
    if (!p) return fail(fmt::format("'{}' needs the first row's cell, e.g. ldmatrix:0,8", text));
    h.kind = Highlight::Kind::Ldmatrix;
    h.row = (*p)[0];
    h.col = (*p)[1];
    return h;
  }
  if (kind == "cells") {
    h.kind = Highlight::Kind::Cells;
    size_t pos = 0;
    while (pos <= body.size()) {
      size_t semi = body.find(';', pos);
      std::string_view item =
          body.substr(pos, semi == std::string_view::npos ? std::string_view::npos : semi - pos);
      if (auto p = parsePair(item))
        h.cells.push_back(*p);
      else
        return fail(fmt::format("'{}' is not a list of cells ROW,COL;ROW,COL;...", text));
      if (semi == std::string_view::npos) break;
      pos = semi + 1;
    }
    if (h.cells.size() > 32)
      return fail(fmt::format("'{}' lists {} cells; a warp has 32 lanes", text, h.cells.size()));
    return h;
  }
  return fail(fmt::format("'{}' is not row:R, col:C, ldmatrix:R,C or cells:R,C;R,C;...", text));
}

WarpAccess resolveHighlight(const Layout& l, std::span<const int64_t> shape, const Highlight& h,
                            int elementBytes) {
  checkMemoryLayout(l, "a highlighted access");
  auto bad = [&](std::string message) { return SvgError(SvgError::Kind::BadHighlight, std::move(message)); };
  if (elementBytes <= 0 || elementBytes > 16)
    throw bad(fmt::format("element size {} bytes is not a shared-memory access width", elementBytes));
  const Grid grid = gridOf(shape);

  // The first cell each lane reads, and how many consecutive elements of its row it reads.
  std::vector<std::array<int64_t, 2>> starts;
  int64_t perLane = 1;
  WarpAccess access;
  access.accessBytes = elementBytes;
  // The spec's own row and column first, so that the arithmetic below cannot overflow.
  bool rowInside = h.row < grid.rows, colInside = h.col < grid.cols;
  if ((h.kind == Highlight::Kind::Row && !rowInside) || (h.kind == Highlight::Kind::Column && !colInside) ||
      (h.kind == Highlight::Kind::Ldmatrix && !(rowInside && colInside)))
    throw bad(fmt::format("highlight {} is outside the {} × {} grid", h.text, grid.rows, grid.cols));
  if (h.vectorBytes) {
    if (h.vectorBytes < elementBytes || h.vectorBytes % elementBytes != 0)
      throw bad(fmt::format("highlight {}: a {}-byte vector is not a whole number of {}-byte elements", h.text,
                            h.vectorBytes, elementBytes));
    perLane = h.vectorBytes / elementBytes;
    access.accessBytes = h.vectorBytes;
  }
  switch (h.kind) {
    case Highlight::Kind::Row:
      for (int64_t i = 0; i < std::min<int64_t>(32, grid.cols / perLane); ++i) starts.push_back({h.row, i * perLane});
      break;
    case Highlight::Kind::Column:
      for (int64_t i = 0; i < std::min<int64_t>(32, grid.rows); ++i) starts.push_back({i, h.col});
      break;
    case Highlight::Kind::Ldmatrix:
      if (16 % elementBytes != 0)
        throw bad(
            fmt::format("ldmatrix rows are 16 bytes, not a whole number of {}-byte elements", elementBytes));
      perLane = 16 / elementBytes;
      access.accessBytes = 16;
      for (int64_t i = 0; i < 8; ++i) starts.push_back({h.row + i, h.col});
      break;
    case Highlight::Kind::Cells: starts = h.cells; break;
  }
  if (starts.empty()) throw bad(fmt::format("highlight {} selects no element", h.text));

  for (size_t lane = 0; lane < starts.size(); ++lane) {
    auto [row, col] = starts[lane];
    if (row >= grid.rows || col >= grid.cols || perLane > grid.cols - col)
      throw bad(fmt::format(
          "highlight {}: lane {} reads cell ({}, {}){}, outside the {} × {} grid", h.text, lane, row, col,
          perLane > 1 ? fmt::format(" and the {} after it", perLane - 1) : "", grid.rows, grid.cols));
    LaneAccess la;
    int64_t first = layout::apply(l, row * grid.cols + col)[Axis::m];
    for (int64_t j = 0; j < perLane; ++j) {
      int64_t index = row * grid.cols + col + j;
      int64_t m = layout::apply(l, index)[Axis::m], step = 0;
      if (__builtin_sub_overflow(m, first, &step) || step != j)
        throw bad(fmt::format(
            "highlight {}: the {}-byte {} of lane {} is not contiguous: cell ({}, {}) is at m={}, but it "
            "starts at m={}",
            h.text, access.accessBytes, h.kind == Highlight::Kind::Ldmatrix ? "row" : "vector", lane, row, col + j,
            m, first));
      la.elements.push_back(index);
    }
    if (__builtin_mul_overflow(first, int64_t{elementBytes}, &la.byteAddress))
      throw bad(fmt::format("highlight {}: lane {} reads offset m={}, beyond any shared memory", h.text, lane,
                            first));
    if (la.byteAddress < 0)
      throw bad(fmt::format("highlight {}: lane {} reads a negative offset m={}", h.text, lane, first));
    if (la.byteAddress % access.accessBytes != 0)
      throw bad(fmt::format("highlight {}: the {} of lane {} starts at byte {}, not {}-byte aligned", h.text,
                            h.kind == Highlight::Kind::Ldmatrix ? "row" : "vector", lane, la.byteAddress,
                            access.accessBytes));
    access.lanes.push_back(std::move(la));
  }
  std::vector<std::optional<int64_t>> addresses;
  for (const LaneAccess& la : access.lanes) addresses.emplace_back(la.byteAddress);
  access.conflictDegree = layout::bankConflictDegree(addresses, access.accessBytes);
  return access;
}

// ---- Rendering ---------------------------------------------------------------------

namespace {

struct Picture {
  const Layout& layout;
  std::span<const int64_t> shape;
  const SvgOptions& options;
  Grid grid;
  bool labelled = true;
  uint32_t ownerMask = 0;
  std::vector<Cell> cells{};
  std::optional<WarpAccess> access{};
};

void checkLimits(const Layout& l, const Grid& grid) {
  int64_t cells = grid.rows * grid.cols;  // equals the layout size, which does not overflow
  if (cells > kMaxCells)
    throw SvgError(SvgError::Kind::TooLarge,
                   fmt::format("the picture would have {} × {} = {} cells; pictures are limited to {} cells "
                               "(256 × 256)",
                               grid.rows, grid.cols, cells, kMaxCells));
  int64_t placements = 0;
  if (__builtin_mul_overflow(cells, l.tile.replicaCount(), &placements) || placements > kMaxPlacements)
    throw SvgError(SvgError::Kind::TooLarge,
                   fmt::format("the picture would list {} elements × {} replicas; pictures are limited to {} "
                               "placements",
                               cells, l.tile.replicaCount(), kMaxPlacements));
}

// Memory cells without a bank map are shaded by where they are stored: the offset, or the
// tensor-memory lane and then column for a layout without one.
int64_t shadeKey(const PhysCoord& where) {
  if (where.has(Axis::m)) return where[Axis::m];
  return where.has(Axis::TLane) ? where[Axis::TLane] : where[Axis::TCol];
}

// What the storage part of a label means, for the axes the layout uses.
std::string storageLegend(uint32_t axes, bool owned) {
  std::vector<std::string> parts;
  if (axes & layout::axisBit(Axis::m))
    parts.emplace_back(owned ? "r = register slot (m)" : "element offset m");
  if (axes & layout::axisBit(Axis::TLane)) parts.emplace_back("TL = tensor-memory lane");
  if (axes & layout::axisBit(Axis::TCol)) parts.emplace_back("TC = tensor-memory column");
  return fmt::format("{}", fmt::join(parts, ", "));
}

void buildCells(Picture& p) {
  const int64_t size = p.grid.rows * p.grid.cols;
  std::vector<int> banks;
  if (p.options.elementBytes) banks = layout::bankMap(p.layout, p.shape, *p.options.elementBytes);
  const bool memory = p.ownerMask == 0;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  p.cells.resize(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    Cell& c = p.cells[static_cast<size_t>(i)];
    c.coord = layout::unflatten(i, p.shape);
    c.placements = layout::applyAll(p.layout, c.coord, p.shape);
    const PhysCoord& base = c.placements.front();
    c.lines.push_back(cellLabel(base));
    if (c.placements.size() > 1) c.lines.push_back(replicaLine(c.placements));
    if (!banks.empty()) {
      c.bank = banks[static_cast<size_t>(i)];
      c.lines.push_back(fmt::format("b{}", *c.bank));
      c.fill = bankColor(*c.bank);
    } else if (!memory) {
      c.fill = ownerColor(base);
    }
    lo = std::min(lo, shadeKey(base));
    hi = std::max(hi, shadeKey(base));
  }
  if (memory && banks.empty())
    for (Cell& c : p.cells) c.fill = offsetShade(shadeKey(c.placements.front()), lo, hi);
  if (p.access)
    for (size_t lane = 0; lane < p.access->lanes.size(); ++lane)
      for (int64_t e : p.access->lanes[lane].elements)
        p.cells[static_cast<size_t>(e)].lanes.push_back(static_cast<int>(lane));
}

std::vector<TextLine> headerLines(const Picture& p) {
  std::vector<TextLine> lines;
  lines.push_back({shapeLine(p.shape, p.grid, p.layout.size()), 14, true});
  auto add = [&](std::string text) { lines.push_back({std::move(text), kLabelFont, false}); };
  const uint32_t axes = p.layout.tile.axesMask();
  if (p.ownerMask) {
    std::string storage = storageLegend(axes, true);
    add(fmt::format("cell label: {}{}{}", ownerLegend(p.ownerMask), storage.empty() ? "" : ", ", storage));
    add(fmt::format("colour: owning thread{}",
                    p.layout.tile.replicaCount() > 1 ? "; second line: the other replicas' owners" : ""));
  } else if (p.options.elementBytes) {
    add("cell label: element offset m, then its shared-memory bank b");
    add(fmt::format("colour: bank for {}: {}-byte elements, 32 banks of 4 bytes",
                    p.options.dtype.empty() ? "the element type" : p.options.dtype, *p.options.elementBytes));
  } else {
    add(fmt::format("cell label: {}", storageLegend(axes, false)));
    add("colour: where it is stored, lighter = lower (--dtype colours by shared-memory bank)");
  }
  add(replicaDescription(p.layout.tile));
  return lines;
}

std::vector<TextLine> captionLines(const Picture& p) {
  std::vector<TextLine> lines;
  lines.push_back({layout::toString(p.layout), 13, true});
  if (p.access) lines.push_back({highlightLine(*p.options.highlight, *p.access), 12, false});
  if (!p.labelled)
    lines.push_back(
        {fmt::format("labels omitted: {} cells is more than {} (64 × 64); each cell's tooltip still "
                     "names every placement",
                     p.grid.rows * p.grid.cols, kMaxLabelledCells),
         kLabelFont, false});
  return lines;
}

// The row header: the row index, or the folded leading coordinates for rank > 2.
std::string rowName(std::span<const int64_t> shape, int64_t row) {
  if (shape.size() <= 2) return fmt::format("{}", row);
  return joinCoord(layout::unflatten(row, shape.first(shape.size() - 1)));
}

// A cell: its data attributes, its rectangle, and its text or its tooltip. The tooltip, which
// spells out every placement axis by axis, is left out where the text already says it all (a
// labelled cell with one placement and no highlighted lane): a 64 x 64 picture stays well under
// a megabyte.
void emitCell(std::string& out, const Picture& p, const Cell& c, int64_t x, int64_t y, int64_t w, int64_t h) {
  auto o = std::back_inserter(out);
  fmt::format_to(o, "<g class=\"cell\" data-coord=\"{}\" data-owners=\"{}\"", joinCoord(c.coord),
                 escapeXml(ownersText(c.placements)));
  if (c.bank) fmt::format_to(o, " data-bank=\"{}\"", *c.bank);
  if (!c.lanes.empty()) fmt::format_to(o, " data-lanes=\"{}\"", fmt::join(c.lanes, ","));
  out += ">";
  if (!p.labelled || c.placements.size() > 1 || !c.lanes.empty())
    fmt::format_to(o, "<title>{}</title>", escapeXml(tooltip(c)));
  fmt::format_to(o, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{}/>", x, y, w, h, c.fill,
                 p.access && c.lanes.empty() ? " fill-opacity=\"0.3\"" : "");
  if (p.labelled) {
    int64_t top = y + (h - static_cast<int64_t>(c.lines.size()) * kLineHeight) / 2;
    for (size_t i = 0; i < c.lines.size(); ++i) {
      int64_t baseline = top + static_cast<int64_t>(i + 1) * kLineHeight - 3;
      fmt::format_to(o, "<text x=\"{}\" y=\"{}\"{}>{}</text>", x + w / 2, baseline,
                     i ? fmt::format(" font-size=\"{}\"", kSmallFont) : "", escapeXml(c.lines[i]));
    }
  }
  out += "</g>\n";
}

void emitBankLegend(std::string& out, int64_t x, int64_t y) {
  out += "<g class=\"bank-legend\" font-size=\"8\" text-anchor=\"middle\">\n";
  for (int b = 0; b < layout::kBankCount; ++b)
    fmt::format_to(
        std::back_inserter(out),
        "<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
        x + 18 * b, y, bankColor(b), x + 18 * b + 8, y + 22, b);
  out += "</g>\n";
}

std::string emit(const Picture& p) {
  const std::vector<TextLine> header = headerLines(p);
  const std::vector<TextLine> caption = captionLines(p);
  const std::string layoutText = layout::toString(p.layout);

  // Cell size: wide and tall enough for the longest label; tiny squares without labels.
  int64_t cellW = kTinyCell, cellH = kTinyCell;
  if (p.labelled) {
    size_t maxLines = 1;
    cellW = 24;
    for (const Cell& c : p.cells) {
      maxLines = std::max(maxLines, c.lines.size());
      for (size_t i = 0; i < c.lines.size(); ++i)
        cellW = std::max(cellW, textWidth(c.lines[i], i ? kSmallFont : kLabelFont) + 8);
    }
    cellH = static_cast<int64_t>(maxLines) * kLineHeight + 6;
  }
  // Index headers: every row and column when labelled, every 16th otherwise.
  const int64_t every = p.labelled ? 1 : 16;
  int64_t rowHeaderW = 0;
  for (int64_t r = 0; r < p.grid.rows; r += every)
    rowHeaderW = std::max(rowHeaderW, textWidth(rowName(p.shape, r), kIndexFont));
  rowHeaderW += 6;

  const int64_t gridX = kMargin + rowHeaderW;
  const int64_t gridY = kMargin + blockHeight(header) + 14;
  const int64_t gridW = p.grid.cols * cellW, gridH = p.grid.rows * cellH;
  const int64_t captionY = gridY + gridH + 8;
  const bool legend = p.options.elementBytes.has_value();
  const int64_t legendY = captionY + blockHeight(caption) + 8;
  const int64_t width = std::max({gridX + gridW, kMargin + blockWidth(header), kMargin + blockWidth(caption),
                                  legend ? kMargin + 18 * layout::kBankCount : int64_t{0}}) +
                        kMargin;
  const int64_t height = (legend ? legendY + 26 : captionY + blockHeight(caption)) + kMargin;

  std::string out;
  auto o = std::back_inserter(out);
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  fmt::format_to(o,
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
                 "viewBox=\"0 0 {0} {1}\" font-family=\"monospace\" data-shape=\"{2}\" data-rows=\"{3}\" "
                 "data-cols=\"{4}\" data-labels=\"{5}\"",
                 width, height, joinCoord(p.shape), p.grid.rows, p.grid.cols,
                 p.labelled ? "shown" : "omitted");
  if (p.access) fmt::format_to(o, " data-conflict-degree=\"{}\"", p.access->conflictDegree);
  fmt::format_to(o, ">\n<title>{}</title>\n",
                 escapeXml(fmt::format("{} over {}", layoutText, layout::shapeToString(p.shape))));
  fmt::format_to(o, "<rect class=\"background\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", width,
                 height);
  emitLines(out, header, kMargin, kMargin, "title");

  // Index headers.
  fmt::format_to(o, "<g class=\"index\" font-size=\"{}\" fill=\"#555555\">\n", kIndexFont);
  for (int64_t c = 0; c < p.grid.cols; c += every)
    fmt::format_to(o, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                   gridX + c * cellW + cellW / 2, gridY - 4, c);
  for (int64_t r = 0; r < p.grid.rows; r += every)
    fmt::format_to(o, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", gridX - 4,
                   gridY + r * cellH + cellH / 2 + 3, rowName(p.shape, r));
  out += "</g>\n";

  fmt::format_to(o, "<g class=\"cells\" font-size=\"{}\" text-anchor=\"middle\" stroke-width=\"0\">\n",
                 kLabelFont);
  for (int64_t r = 0; r < p.grid.rows; ++r)
    for (int64_t c = 0; c < p.grid.cols; ++c)
      emitCell(out, p, p.cells[static_cast<size_t>(r * p.grid.cols + c)], gridX + c * cellW,
               gridY + r * cellH, cellW, cellH);
  out += "</g>\n";

  // Grid lines in one path: cheaper than a stroke on every cell.
  std::string path;
  for (int64_t r = 0; r <= p.grid.rows; ++r)
    path += fmt::format("M{} {}h{}", gridX, gridY + r * cellH, gridW);
  for (int64_t c = 0; c <= p.grid.cols; ++c)
    path += fmt::format("M{} {}v{}", gridX + c * cellW, gridY, gridH);
  fmt::format_to(o, "<path class=\"grid\" d=\"{}\" stroke=\"#ffffff\" stroke-width=\"{}\" fill=\"none\"/>\n",
                 path, p.labelled ? 1 : 0.5);
  // Folded dimensions: a dark rule wherever the next-to-last dimension starts over.
  if (p.shape.size() > 2) {
    int64_t group = p.shape[p.shape.size() - 2];
    std::string rules;
    for (int64_t r = group; r < p.grid.rows; r += group)
      rules += fmt::format("M{} {}h{}", gridX, gridY + r * cellH, gridW);
    if (!rules.empty())
      fmt::format_to(
          o, "<path class=\"fold\" d=\"{}\" stroke=\"#333333\" stroke-width=\"2\" fill=\"none\"/>\n", rules);
  }

  if (p.access) {
    // A thinner frame on unlabelled cells, which are only a few pixels wide.
    const int64_t inset = p.labelled ? 1 : 0;
    fmt::format_to(o, "<g class=\"highlight\" fill=\"none\" stroke=\"#000000\" stroke-width=\"{}\">\n",
                   p.labelled ? 2 : 1);
    for (size_t lane = 0; lane < p.access->lanes.size(); ++lane)
      for (int64_t e : p.access->lanes[lane].elements)
        fmt::format_to(o, "<rect data-lane=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", lane,
                       gridX + (e % p.grid.cols) * cellW + inset, gridY + (e / p.grid.cols) * cellH + inset,
                       cellW - 2 * inset, cellH - 2 * inset);
    out += "</g>\n";
  }

  emitLines(out, caption, kMargin, captionY, "caption");
  if (legend) emitBankLegend(out, kMargin, legendY);
  out += "</svg>\n";
  return out;
}

}  // namespace

std::string renderLayoutSvg(const Layout& l, std::span<const int64_t> shape, const SvgOptions& options) {
  if (layout::shapeSize(shape) != l.size())
    throw layout::Error(fmt::format("the shape {} has {} elements but the layout has {}",
                                    layout::shapeToString(shape), layout::shapeSize(shape), l.size()));
  Picture p{.layout = l, .shape = shape, .options = options, .grid = gridOf(shape)};
  checkLimits(l, p.grid);
  if (options.elementBytes) checkMemoryLayout(l, "a bank map");
  if (options.highlight) {
    if (!options.elementBytes)
      throw SvgError(SvgError::Kind::BadHighlight, "a highlighted access needs the element size (--dtype)");
    p.access = resolveHighlight(l, shape, *options.highlight, *options.elementBytes);
  }
  p.labelled = p.grid.rows * p.grid.cols <= kMaxLabelledCells;
  p.ownerMask = l.tile.axesMask() & ownerAxesMask();
  buildCells(p);
  return emit(p);
}

}  // namespace tyl::svg
