// Tests of backend/svg: pictures of the seed layouts, parsed as XML and held to the layout
// algebra. Expected labels are written from the layouts' definitions (and, for the MMA C
// fragment and the swizzle, from the PTX and TIRx formulas), not from the renderer.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <pugixml.hpp>
#include <set>
#include <string>
#include <vector>

#include "backend/svg/LayoutSvg.h"
#include "ir/layout/Analysis.h"

using namespace tyl::layout;
using namespace tyl::svg;

namespace {

// ---- The seed layouts ----------------------------------------------------------------

// S[(32, 4) : (1@laneid, 1)]: lane i owns row i, slot j holds column j.
TileLayout laneFragment() {
  TileLayout t;
  t.shard = {{32, 1, Axis::laneid}, {4, 1, Axis::m}};
  return t;
}

// S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4
TileLayout replicatedFragment() {
  TileLayout t = laneFragment();
  t.replica = {{2, 1, Axis::warpid}};
  t.offset.add(Axis::m, 4);
  return t;
}

// S[(32, 4) : (1@laneid, 1)] + 4
TileLayout offsetFragment() {
  TileLayout t = laneFragment();
  t.offset.add(Axis::m, 4);
  return t;
}

// The mma.sync m16n8k16 C fragment over (16, 8): S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)].
TileLayout mmaCFragment() {
  TileLayout t;
  t.shard = {{2, 2, Axis::m}, {8, 4, Axis::laneid}, {4, 1, Axis::laneid}, {2, 1, Axis::m}};
  return t;
}

// ComposeLayout(3, 3, 3, S[(8, 64) : (64, 1)]): the 128-byte swizzle of an (8, 64) f16 tile.
Layout swizzled128() { return Layout::compose(Swizzle::make(3, 3, 3), TileLayout::rowMajor(Shape{8, 64})); }
Layout rowMajor(Shape shape) { return TileLayout::rowMajor(shape); }

// ---- Reading a picture -----------------------------------------------------------------

struct Picture {
  pugi::xml_document doc;
  std::string text;

  explicit Picture(std::string svg) : text(std::move(svg)) {
    pugi::xml_parse_result r = doc.load_buffer(text.data(), text.size());
    INFO(r.description());
    REQUIRE(r);
    REQUIRE(std::string(root().name()) == "svg");
  }
  pugi::xml_node root() const { return doc.document_element(); }
  std::vector<pugi::xml_node> cells() const {
    std::vector<pugi::xml_node> out;
    for (const pugi::xpath_node& n : doc.select_nodes("//g[@class='cell']")) out.push_back(n.node());
    return out;
  }
  // Every <text> of a group (the title above the grid, the caption below), one line each.
  std::vector<std::string> lines(const char* cls) const {
    std::vector<std::string> out;
    for (const pugi::xpath_node& n : doc.select_nodes(fmt::format("//g[@class='{}']/text", cls).c_str()))
      out.emplace_back(n.node().child_value());
    return out;
  }
  bool anyLineHas(const char* cls, const std::string& part) const {
    for (const std::string& l : lines(cls))
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
};

std::vector<std::string> cellTexts(pugi::xml_node cell) {
  std::vector<std::string> out;
  for (pugi::xml_node t : cell.children("text")) out.emplace_back(t.child_value());
  return out;
}

std::string attr(pugi::xml_node n, const char* name) { return n.attribute(name).value(); }

// A cell's label: its first placement, the first entry of data-owners.
std::string label(pugi::xml_node cell) {
  std::string owners = attr(cell, "data-owners");
  return owners.substr(0, owners.find("; "));
}

Picture render(const Layout& l, Shape shape, const SvgOptions& options = {}) {
  return Picture(renderLayoutSvg(l, shape, options));
}

SvgOptions bankOptions(int bytes, std::string dtype, std::optional<std::string> highlight = std::nullopt) {
  SvgOptions o;
  o.elementBytes = bytes;
  o.dtype = std::move(dtype);
  if (highlight) {
    std::string why;
    o.highlight = parseHighlight(*highlight, why);
    INFO(why);
    REQUIRE(o.highlight);
  }
  return o;
}

}  // namespace

TEST_CASE("svg: the lane fragment has one cell per element labelled with its lane and slot") {
  Picture p = render(laneFragment(), {32, 4});
  auto cells = p.cells();
  REQUIRE(cells.size() == 128);
  CHECK(attr(p.root(), "data-rows") == "32");
  CHECK(attr(p.root(), "data-cols") == "4");
  std::set<std::string> colours;
  for (int i = 0; i < 32; ++i) {
    for (int j = 0; j < 4; ++j) {
      pugi::xml_node c = cells[static_cast<size_t>(i * 4 + j)];
      std::string text = fmt::format("T{} r{}", i, j);
      CHECK(attr(c, "data-coord") == fmt::format("{},{}", i, j));
      CHECK(attr(c, "data-owners") == text);
      CHECK(cellTexts(c) == std::vector<std::string>{text});
      // The text says everything: no tooltip repeats it.
      CHECK(c.child("title").empty());
      // Coloured by owner: one colour per lane, the same across its row.
      PhysCoord owner;
      owner.set(Axis::laneid, i);
      CHECK(attr(c.child("rect"), "fill") == ownerColor(owner));
      colours.insert(attr(c.child("rect"), "fill"));
    }
  }
  CHECK(colours.size() == 32);
  CHECK(p.lines("caption").at(0) == "S[(32, 4) : (1@laneid, 1)]");
  CHECK(p.anyLineHas("title", "shape (32, 4): 32 rows × 4 columns, 128 elements"));
  CHECK(p.anyLineHas("title", "T = lane (laneid)"));
  CHECK(p.anyLineHas("title", "no replicas"));
}

TEST_CASE("svg: the replicated fragment lists every replica owner") {
  Picture p = render(replicatedFragment(), {32, 4});
  auto cells = p.cells();
  REQUIRE(cells.size() == 128);
  for (int i = 0; i < 32; ++i) {
    for (int j = 0; j < 4; ++j) {
      pugi::xml_node c = cells[static_cast<size_t>(i * 4 + j)];
      // Warps 0 and 1 both hold the element, in lane i at slot j + 4.
      CHECK(label(c) == fmt::format("W0 L{} r{}", i, j + 4));
      CHECK(attr(c, "data-owners") == fmt::format("W0 L{0} r{1}; W1 L{0} r{1}", i, j + 4));
      CHECK(cellTexts(c) ==
            std::vector<std::string>{fmt::format("W0 L{} r{}", i, j + 4), fmt::format("+W1 L{}", i)});
      CHECK(std::string(c.child("title").child_value()) ==
            fmt::format("({0}, {1}): laneid={0} warpid=0 m={2} | laneid={0} warpid=1 m={2}", i, j, j + 4));
    }
  }
  CHECK(p.anyLineHas("title", "every element has 2 placements (replicas over warpid)"));
  CHECK(p.anyLineHas("title", "W = warp (warpid), L = lane (laneid)"));
  CHECK(p.lines("caption").at(0) == "S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4");
}

TEST_CASE("svg: the offset fragment shifts the slots") {
  Picture p = render(offsetFragment(), {32, 4});
  auto cells = p.cells();
  REQUIRE(cells.size() == 128);
  CHECK(label(cells[3 * 4 + 2]) == "T3 r6");
  CHECK(label(cells[31 * 4 + 3]) == "T31 r7");
  CHECK(p.lines("caption").at(0) == "S[(32, 4) : (1@laneid, 1)] + 4");
}

TEST_CASE("svg: the mma.sync C fragment matches the PTX ownership table") {
  Picture p = render(mmaCFragment(), {16, 8});
  auto cells = p.cells();
  REQUIRE(cells.size() == 128);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 8; ++j) {
      // PTX m16n8k16 C/D: lane 4 * (i % 8) + j / 2 holds slot 2 * (i / 8) + j % 2.
      int lane = 4 * (i % 8) + j / 2, slot = 2 * (i / 8) + j % 2;
      pugi::xml_node c = cells[static_cast<size_t>(i * 8 + j)];
      CHECK(label(c) == fmt::format("T{} r{}", lane, slot));
      PhysCoord owner;
      owner.set(Axis::laneid, lane);
      CHECK(attr(c.child("rect"), "fill") == ownerColor(owner));
    }
  }
}

TEST_CASE("svg: the 128-byte swizzle is coloured by the bank map") {
  Layout l = swizzled128();
  Picture p = render(l, {8, 64}, bankOptions(2, "f16"));
  auto cells = p.cells();
  REQUIRE(cells.size() == 512);
  std::vector<int> banks = bankMap(l, Shape{8, 64}, 2);
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 64; ++j) {
      size_t k = static_cast<size_t>(i * 64 + j);
      // TIRx: m = 64 i + 8 (q xor i) + r for column j = 8 q + r; a bank is 2 halves of a word.
      int m = 64 * i + 8 * ((j / 8) ^ i) + j % 8;
      CHECK(banks[k] == (m * 2 / 4) % 32);
      CHECK(label(cells[k]) == fmt::format("{}", m));
      CHECK(attr(cells[k], "data-bank") == fmt::format("{}", banks[k]));
      CHECK(attr(cells[k].child("rect"), "fill") == bankColor(banks[k]));
      CHECK(cellTexts(cells[k]) ==
            std::vector<std::string>{fmt::format("{}", m), fmt::format("b{}", banks[k])});
    }
    // Column 0 walks the banks 0, 4, ..., 28: the swizzle spreads the rows.
    CHECK(banks[static_cast<size_t>(i * 64)] == 4 * i);
  }
  CHECK(p.lines("caption").at(0) == "ComposeLayout(3, 3, 3, S[(8, 64) : (64, 1)])");
  CHECK(p.anyLineHas("title", "colour: bank for f16: 2-byte elements, 32 banks of 4 bytes"));
  // The legend shows the 32 bank colours.
  auto legend = p.doc.select_nodes("//g[@class='bank-legend']/rect");
  REQUIRE(legend.size() == 32);
  for (size_t b = 0; b < 32; ++b) CHECK(attr(legend[b].node(), "fill") == bankColor(static_cast<int>(b)));
}

TEST_CASE("svg: an unswizzled tile puts a whole column in one bank") {
  Layout l = rowMajor({8, 64});
  Picture p = render(l, {8, 64}, bankOptions(2, "f16"));
  auto cells = p.cells();
  std::vector<int> banks = bankMap(l, Shape{8, 64}, 2);
  REQUIRE(cells.size() == banks.size());
  for (size_t k = 0; k < cells.size(); ++k) {
    CHECK(attr(cells[k], "data-bank") == fmt::format("{}", banks[k]));
    CHECK(attr(cells[k].child("rect"), "fill") == bankColor(banks[k]));
    CHECK(banks[k] == static_cast<int>((k % 64) / 2));
  }
}

TEST_CASE("svg: f32 banks follow the element size") {
  Layout l = rowMajor({4, 64});
  Picture p = render(l, {4, 64}, bankOptions(4, "f32"));
  auto cells = p.cells();
  std::vector<int> banks = bankMap(l, Shape{4, 64}, 4);
  for (size_t k = 0; k < cells.size(); ++k) {
    CHECK(banks[k] == static_cast<int>(k % 32));
    CHECK(attr(cells[k].child("rect"), "fill") == bankColor(banks[k]));
  }
}

TEST_CASE("svg: a highlighted ldmatrix shows the conflict degree of its eight rows") {
  SECTION("swizzled: conflict-free") {
    Picture p = render(swizzled128(), {8, 64}, bankOptions(2, "f16", "ldmatrix:0,8"));
    CHECK(attr(p.root(), "data-conflict-degree") == "1");
    CHECK(p.anyLineHas("caption", "highlight ldmatrix:0,8: 8 lanes × 16-byte rows"));
    CHECK(p.anyLineHas("caption", "conflict degree 1 (conflict-free)"));
    // Lane i reads the 8 halves of row i from column 8.
    for (pugi::xml_node c : p.cells()) {
      std::string coord = attr(c, "data-coord");
      int i = std::stoi(coord.substr(0, coord.find(','))), j = std::stoi(coord.substr(coord.find(',') + 1));
      bool touched = j >= 8 && j < 16;
      CHECK(attr(c, "data-lanes") == (touched ? fmt::format("{}", i) : ""));
      CHECK(std::string(c.child("rect").attribute("fill-opacity").value()) == (touched ? "" : "0.3"));
    }
    CHECK(p.doc.select_nodes("//g[@class='highlight']/rect").size() == 64);
  }
  SECTION("unswizzled: every row in the same four banks") {
    Picture p = render(rowMajor({8, 64}), {8, 64}, bankOptions(2, "f16", "ldmatrix:0,8"));
    CHECK(attr(p.root(), "data-conflict-degree") == "8");
    CHECK(p.anyLineHas("caption", "conflict degree 8 (8-way bank conflict)"));
  }
}

TEST_CASE("svg: a highlighted vector access reads BYTES per lane from its cell on") {
  SECTION("a row of f32 in 16-byte vectors: eight lanes, each four elements, conflict-free") {
    Picture p = render(rowMajor({32, 32}), {32, 32}, bankOptions(4, "f32", "row:0/16"));
    CHECK(attr(p.root(), "data-conflict-degree") == "1");
    CHECK(p.anyLineHas("caption", "highlight row:0/16: 8 lanes × one 16-byte vector (4 elements)"));
    for (pugi::xml_node c : p.cells()) {
      std::string coord = attr(c, "data-coord");
      int i = std::stoi(coord.substr(0, coord.find(','))), j = std::stoi(coord.substr(coord.find(',') + 1));
      CHECK(attr(c, "data-lanes") == (i == 0 ? fmt::format("{}", j / 4) : ""));
    }
  }
  SECTION("a column of 16-byte f32 vectors: rows 128 bytes apart share their four banks") {
    // 16-byte accesses are served eight lanes at a time; the eight of each phase all want banks
    // 0..3, one row after another.
    Picture p = render(rowMajor({32, 32}), {32, 32}, bankOptions(4, "f32", "col:0/16"));
    CHECK(attr(p.root(), "data-conflict-degree") == "8");
    CHECK(p.anyLineHas("caption", "32 lanes × one 16-byte vector (4 elements): conflict degree 8"));
  }
}

TEST_CASE("svg: a highlighted column reads one element per lane") {
  SECTION("swizzled f16 column: eight distinct banks") {
    Picture p = render(swizzled128(), {8, 64}, bankOptions(2, "f16", "col:0"));
    CHECK(attr(p.root(), "data-conflict-degree") == "1");
    CHECK(p.anyLineHas("caption", "highlight col:0: 8 lanes × one 2-byte element"));
  }
  SECTION("row-major f32 32x32 column: the classic 32-way conflict") {
    Picture p = render(rowMajor({32, 32}), {32, 32}, bankOptions(4, "f32", "col:5"));
    CHECK(attr(p.root(), "data-conflict-degree") == "32");
  }
  SECTION("a row is conflict-free") {
    Picture p = render(rowMajor({32, 32}), {32, 32}, bankOptions(4, "f32", "row:3"));
    CHECK(attr(p.root(), "data-conflict-degree") == "1");
    CHECK(p.doc.select_nodes("//g[@class='cell'][@data-lanes]").size() == 32);
  }
  SECTION("listed cells") {
    Picture p = render(rowMajor({32, 32}), {32, 32}, bankOptions(4, "f32", "cells:0,0;1,0;0,1"));
    CHECK(attr(p.root(), "data-conflict-degree") == "2");
    CHECK(p.doc.select_nodes("//g[@class='cell'][@data-lanes]").size() == 3);
  }
}

TEST_CASE("svg: rank 3 is folded into rows and the title says how") {
  Picture p = render(rowMajor({2, 8, 16}), {2, 8, 16});
  auto cells = p.cells();
  REQUIRE(cells.size() == 256);
  CHECK(attr(p.root(), "data-rows") == "16");
  CHECK(attr(p.root(), "data-cols") == "16");
  CHECK(p.anyLineHas("title",
                     "shape (2, 8, 16) folded to 16 rows × 16 columns: rows are (d0, d1) flattened "
                     "row-major, columns are d2"));
  // Element (1, 3, 5) is in row 8 + 3 = 11, column 5.
  pugi::xml_node c = cells[11 * 16 + 5];
  CHECK(attr(c, "data-coord") == "1,3,5");
  CHECK(label(c) == "181");
  CHECK(attr(c.child("rect"), "y") == attr(cells[11 * 16].child("rect"), "y"));
  CHECK(attr(c.child("rect"), "x") == attr(cells[5].child("rect"), "x"));
  // A rule separates d0 = 0 from d0 = 1.
  CHECK(p.doc.select_nodes("//path[@class='fold']").size() == 1);
}

TEST_CASE("svg: rank 1 is one row") {
  Picture p = render(rowMajor({8}), {8});
  CHECK(p.cells().size() == 8);
  CHECK(attr(p.root(), "data-rows") == "1");
}

TEST_CASE("svg: 256 by 256 cells render without labels and say so") {
  Picture p = render(rowMajor({256, 256}), {256, 256}, bankOptions(4, "f32"));
  auto cells = p.cells();
  REQUIRE(cells.size() == 65536);
  CHECK(attr(p.root(), "data-labels") == "omitted");
  CHECK(p.doc.select_nodes("//g[@class='cell']/text").empty());
  CHECK(label(cells[65535]) == "65535");
  // Without text, each cell's tooltip names its placement axis by axis.
  CHECK(std::string(cells[65535].child("title").child_value()) == "(255, 255): m=65535 | bank 31");
  CHECK(attr(cells[65535].child("rect"), "fill") == bankColor(31));
  CHECK(p.anyLineHas("caption", "labels omitted: 65536 cells is more than 4096"));
}

TEST_CASE("svg: 64 by 64 cells still have labels, and no tooltip repeats them") {
  const std::string svg = renderLayoutSvg(rowMajor({64, 64}), Shape{64, 64});
  Picture p(svg);
  CHECK(attr(p.root(), "data-labels") == "shown");
  CHECK(p.doc.select_nodes("//g[@class='cell']/text").size() == 4096);
  CHECK(p.doc.select_nodes("//g[@class='cell']/title").empty());
  // About 155 bytes a cell: its rectangle, its label and its data attributes (with a tooltip and
  // a data-label on every cell it was over 200).
  CHECK(svg.size() < 4096 * 170);
}

TEST_CASE("svg: requests it refuses are errors of their own kind") {
  auto kindOf = [](auto&& f) -> std::optional<SvgError::Kind> {
    try {
      f();
    } catch (const SvgError& e) {
      return e.kind();
    }
    return std::nullopt;
  };
  CHECK(kindOf([] { renderLayoutSvg(rowMajor({257, 256}), Shape{257, 256}); }) == SvgError::Kind::TooLarge);
  CHECK(kindOf([] { renderLayoutSvg(rowMajor({1 << 20}), Shape{1 << 20}); }) == SvgError::Kind::TooLarge);
  TileLayout manyReplicas = laneFragment();
  manyReplicas.replica = {{4096, 1, Axis::warpid}};
  CHECK(kindOf([&] { renderLayoutSvg(manyReplicas, Shape{32, 4}); }) == SvgError::Kind::TooLarge);
  CHECK(kindOf([] {
          renderLayoutSvg(laneFragment(), Shape{32, 4}, bankOptions(2, "f16"));
        }) == SvgError::Kind::NotMemoryLayout);
  CHECK(kindOf([] {
          renderLayoutSvg(rowMajor({8, 64}), Shape{8, 64}, bankOptions(2, "f16", "row:8"));
        }) == SvgError::Kind::BadHighlight);
  CHECK(kindOf([] {
          renderLayoutSvg(rowMajor({8, 64}), Shape{8, 64}, bankOptions(2, "f16", "ldmatrix:1,0"));
        }) == SvgError::Kind::BadHighlight);
  CHECK(kindOf([] {
          renderLayoutSvg(rowMajor({8, 64}), Shape{8, 64}, bankOptions(2, "f16", "ldmatrix:0,60"));
        }) == SvgError::Kind::BadHighlight);
  // Column-major storage: an ldmatrix row is not contiguous.
  TileLayout colMajor;
  colMajor.shard = {{8, 1, Axis::m}, {64, 8, Axis::m}};
  CHECK(kindOf([&] {
          renderLayoutSvg(colMajor, Shape{8, 64}, bankOptions(2, "f16", "ldmatrix:0,0"));
        }) == SvgError::Kind::BadHighlight);
  // A vector access along the same column-major rows, and a vector narrower than an element.
  CHECK(kindOf([&] {
          renderLayoutSvg(colMajor, Shape{8, 64}, bankOptions(2, "f16", "row:0/16"));
        }) == SvgError::Kind::BadHighlight);
  CHECK(kindOf([] { renderLayoutSvg(rowMajor({32, 32}), Shape{32, 32}, bankOptions(4, "f32", "row:0/2")); }) ==
        SvgError::Kind::BadHighlight);
  // Unaligned rows: offset 4 halves (8 bytes).
  TileLayout shifted = TileLayout::rowMajor(Shape{8, 64});
  shifted.offset.add(Axis::m, 4);
  CHECK(kindOf([&] {
          renderLayoutSvg(shifted, Shape{8, 64}, bankOptions(2, "f16", "ldmatrix:0,0"));
        }) == SvgError::Kind::BadHighlight);
  SvgOptions noSize;
  std::string why;
  noSize.highlight = parseHighlight("col:0", why);
  CHECK(kindOf([&] {
          renderLayoutSvg(rowMajor({8, 64}), Shape{8, 64}, noSize);
        }) == SvgError::Kind::BadHighlight);
}

TEST_CASE("svg: highlight specs parse or say why not") {
  std::string why;
  auto h = parseHighlight("ldmatrix:8,16", why);
  REQUIRE(h);
  CHECK(h->kind == Highlight::Kind::Ldmatrix);
  CHECK(h->row == 8);
  CHECK(h->col == 16);
  h = parseHighlight("cells:0,0;1,8", why);
  REQUIRE(h);
  CHECK(h->cells == std::vector<std::array<int64_t, 2>>{{0, 0}, {1, 8}});
  h = parseHighlight("col:3", why);
  REQUIRE(h);
  CHECK(h->kind == Highlight::Kind::Column);
  CHECK(h->col == 3);
  h = parseHighlight("row:2/16", why);
  REQUIRE(h);
  CHECK(h->kind == Highlight::Kind::Row);
  CHECK(h->row == 2);
  CHECK(h->vectorBytes == 16);
  CHECK(parseHighlight("col:3", why)->vectorBytes == 0);
  for (const char* bad : {"", "col", "col:", "col:-1", "col:x", "row:1,2", "ldmatrix:1", "diag:0",
                          "cells:", "cells:1", "cells:0,0;", "ldmatrix:1,2,3", "row:0/3", "row:0/32", "row:0/",
                          "ldmatrix:0,0/16"}) {
    why.clear();
    INFO(bad);
    CHECK_FALSE(parseHighlight(bad, why));
    CHECK_FALSE(why.empty());
  }
  std::string many = "cells:";
  for (int i = 0; i < 33; ++i) many += fmt::format("{}0,{}", i ? ";" : "", i);
  CHECK_FALSE(parseHighlight(many, why));
}

TEST_CASE("svg: text is escaped and the picture is self-contained and deterministic") {
  SvgOptions o = bankOptions(2, "<f16 & \"friends\">");
  std::string a = renderLayoutSvg(swizzled128(), Shape{8, 64}, o);
  Picture p(a);
  CHECK(p.anyLineHas("title", "colour: bank for <f16 & \"friends\">"));
  CHECK(a == renderLayoutSvg(swizzled128(), Shape{8, 64}, o));
  for (const char* external : {"href", "<script", "@import", "url(", "<style", "<image", "font-face"})
    CHECK(a.find(external) == std::string::npos);
}

TEST_CASE("svg: palettes are stable and distinct") {
  std::set<std::string> lanes, banks;
  for (int i = 0; i < 32; ++i) {
    PhysCoord c;
    c.set(Axis::laneid, i);
    lanes.insert(ownerColor(c));
    banks.insert(bankColor(i));
  }
  CHECK(lanes.size() == 32);
  CHECK(banks.size() == 32);
  CHECK(bankColor(0) == bankColor(32));
  PhysCoord t3;
  t3.set(Axis::laneid, 3);
  CHECK(ownerColor(t3) == ownerColor(t3));
  CHECK(bankColor(0).size() == 7);
}

TEST_CASE("svg: labels name every owning axis") {
  PhysCoord p;
  p.set(Axis::laneid, 3);
  p.set(Axis::m, 2);
  CHECK(cellLabel(p) == "T3 r2");
  CHECK(ownerLabel(p) == "T3");
  p.set(Axis::warpid, 1);
  CHECK(cellLabel(p) == "W1 L3 r2");
  PhysCoord tx;
  tx.set(Axis::tx, 17);
  CHECK(cellLabel(tx) == "T17");
  PhysCoord mem;
  mem.set(Axis::m, 72);
  CHECK(cellLabel(mem) == "72");
  CHECK(ownerLabel(mem).empty());
  PhysCoord tmem;
  tmem.set(Axis::TLane, 5);
  tmem.set(Axis::TCol, 9);
  CHECK(cellLabel(tmem) == "TL5 TC9");
}
