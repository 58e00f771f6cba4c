// The layout notation as text: every accepted spelling, and every malformed expression
// giving the right diagnostic ID at the right column.
#include <catch2/catch.hpp>

#include <sstream>

#include "frontend/ConstEval.h"
#include "frontend/Parse.h"
#include "ir/layout/Transforms.h"

using namespace tyl;
using layout::Axis;

namespace {

struct Evaluated {
  std::optional<layout::Layout> layout;
  std::string firstId;
  uint32_t firstColumn = 0;
  std::string text;  // all diagnostics, rendered
};

Evaluated evalText(const std::string& text) {
  SourceManager sources;
  FileId file = sources.add("<layout>", text);
  DiagnosticEngine diags(sources);
  Evaluated r;
  if (ast::ExprPtr e = parseLayoutExpr(file, diags)) {
    ConstEvaluator eval(diags, nullptr);
    r.layout = eval.evalLayout(*e);
  }
  if (!diags.diagnostics().empty()) {
    const Diagnostic& d = diags.diagnostics().front();
    r.firstId = std::string(d.kind->id);
    r.firstColumn = sources.lineCol(d.range.begin).column;
    std::ostringstream os;
    diags.renderText(os);
    r.text = os.str();
  }
  return r;
}

layout::Layout ok(const std::string& text) {
  Evaluated r = evalText(text);
  INFO(text << "\n" << r.text);
  REQUIRE(r.layout.has_value());
  return *r.layout;
}

void fails(const std::string& text, const std::string& id, uint32_t column) {
  Evaluated r = evalText(text);
  INFO(text << "\n" << r.text);
  CHECK_FALSE(r.layout.has_value());
  CHECK(r.firstId == id);
  CHECK(r.firstColumn == column);
}

layout::TileLayout tile(std::vector<layout::Iter> shard, std::vector<layout::Iter> replica = {}) {
  layout::TileLayout t;
  t.shard = std::move(shard);
  t.replica = std::move(replica);
  return t;
}

}  // namespace

TEST_CASE("shard and replica and offset terms parse into the documented iters") {
  layout::Layout l = ok("S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4");
  CHECK(l.tile.shard == std::vector<layout::Iter>{{32, 1, Axis::laneid}, {4, 1, Axis::m}});
  CHECK(l.tile.replica == std::vector<layout::Iter>{{2, 1, Axis::warpid}});
  CHECK(l.tile.offset[Axis::m] == 4);
  CHECK_FALSE(l.swizzle);

  // Offsets are summed per axis, in any order and on either side of S.
  layout::Layout o = ok("1@laneid + S[8 : 4@laneid] + 2@warpid + 64 + 3@laneid - 1");
  CHECK(o.tile.offset[Axis::laneid] == 4);
  CHECK(o.tile.offset[Axis::warpid] == 2);
  CHECK(o.tile.offset[Axis::m] == 63);
}

TEST_CASE("stride spellings: n and n@axis and @axis and a bare axis name") {
  layout::Layout a = ok("S[(4, 8, 2) : (2@warpid, @laneid, laneid)]");
  CHECK(a.tile.shard == std::vector<layout::Iter>{{4, 2, Axis::warpid}, {8, 1, Axis::laneid}, {2, 1, Axis::laneid}});
  layout::Layout b = ok("S[(2 * 4, 64 / 2) : (32 + 0, 1)]");
  CHECK(b.tile.shard == std::vector<layout::Iter>{{8, 32, Axis::m}, {32, 1, Axis::m}});
  layout::Layout c = ok("S[(4, 2) : (2 * 4@laneid, 1)]");
  CHECK(c.tile.shard[0] == layout::Iter{4, 8, Axis::laneid});
}

TEST_CASE("tuples: one-element and nested and bare scalars and shape-only forms") {
  CHECK(ok("S[(3,)]").tile.shard == std::vector<layout::Iter>{{3, 1, Axis::m}});
  CHECK(ok("S[3]").tile.shard == std::vector<layout::Iter>{{3, 1, Axis::m}});
  CHECK(ok("S[(8, 64)]").tile == layout::TileLayout::rowMajor(std::vector<int64_t>{8, 64}));
  CHECK(ok("S[8, 64]").tile == layout::TileLayout::rowMajor(std::vector<int64_t>{8, 64}));
  CHECK(ok("S[((8, 4), 2) : ((4@laneid, 1@laneid), 1)]").tile ==
        ok("S[(8, 4, 2) : (4@laneid, 1@laneid, 1)]").tile);
  CHECK(ok("S[2 : 1] + R[2 : 1@warpid]").tile.replica == std::vector<layout::Iter>{{2, 1, Axis::warpid}});
}

TEST_CASE("ComposeLayout positional and with keywords and and Swizzle composed with a layout") {
  layout::Layout expect = layout::Layout::compose(layout::Swizzle::make(3, 3, 3), tile({{8, 64, Axis::m}, {64, 1, Axis::m}}));
  CHECK(ok("ComposeLayout(3, 3, 3, S[(8, 64) : (64, 1)])") == expect);
  CHECK(ok("ComposeLayout(per_element=3, swizzle_len=3, atom_len=3, tile_layout=S[(8, 64) : (64, 1)])") == expect);
  CHECK(ok("ComposeLayout(3, 3, 3, tile_layout=TileLayout(S[(8, 64) : (64, 1)]))") == expect);
  layout::Layout outer = ok("ComposeLayout(0, 3, 3, S[64], swizzle_inner=False)");
  REQUIRE(outer.swizzle);
  CHECK_FALSE(outer.swizzle->inner);

  // Swizzle(B, M, S): B = swizzle_len, M = per_element, S = atom_len.
  layout::Layout sw = ok("Swizzle(2, 3, 2)(S[(32, 32) : (32, 1)])");
  REQUIRE(sw.swizzle);
  CHECK(*sw.swizzle == layout::Swizzle::make(3, 2, 2));
  CHECK(ok("compose(Swizzle(2, 3, 2), S[(32, 32) : (32, 1)])") == sw);
  CHECK(ok("Swizzle(bits = 2, base = 3, shift = 2)(S[(32, 32) : (32, 1)])") == sw);
  CHECK(ok("ComposeLayout(per_element = 3, swizzle_len = 2, atom_len = 2, tile_layout = S[(32, 32) : (32, 1)])") == sw);
  // Printed with names, since ComposeLayout and Swizzle read two different positional fields
  // in opposite orders; equal ones stay positional.
  CHECK(layout::toString(sw) ==
        "ComposeLayout(per_element = 3, swizzle_len = 2, atom_len = 2, tile_layout = S[(32, 32) : (32, 1)])");
  CHECK(layout::toString(ok("ComposeLayout(3, 3, 3, S[(8, 64) : (64, 1)])")) == "ComposeLayout(3, 3, 3, S[(8, 64) : (64, 1)])");
  std::vector<int64_t> c{1, 0}, s{32, 32};
  CHECK(layout::apply(sw, c, s)[Axis::m] == 40);
}

TEST_CASE("malformed expressions give the right diagnostic and column") {
  fails("S[(32, 4) : (1@lane, 1)]", "unknown-axis", 16);
  fails("S[(32, 4) : (1@laneid, 1)", "syntax", 26);
  fails("S[(32, 4) : (1@laneid, 1)]]", "syntax", 27);
  fails("S[(32 4) : (1, 1)]", "syntax", 7);
  fails("S[(32, 4) : (1@laneid, 1)] + $", "syntax", 30);
  fails("", "syntax", 1);
  fails("S[(32, 4) : (1, 1, 1)]", "layout-arity", 1);
  fails("S[(32, 0) : (1, 1)]", "layout-extent", 8);
  fails("S[(32, -2)]", "layout-extent", 8);
  fails("S[4] + R[2 : 1@warpid] + S[4]", "layout-shards", 26);
  fails("R[2 : 1@warpid] + 4", "layout-shards", 1);
  fails("ComposeLayout(3, 3, 2, S[8])", "swizzle-overlap", 1);
  fails("ComposeLayout(3, -1, 2, S[8])", "swizzle-invalid", 18);
  fails("ComposeLayout(3, 3, 3, S[(8, 64) : (64@laneid, 1)])", "swizzle-axis", 24);
  fails("ComposeLayout(3, 3, 3)", "bad-argument", 1);
  fails("ComposeLayout(3, 3, 3, S[8], swizle_inner=1)", "bad-argument", 30);
  fails("S[(N, 4)]", "unknown-name", 4);
  fails("S[(4611686018427387904, 4)] + 4611686018427387904 * 2", "integer-overflow", 31);
  fails("S[(8 / 0, 4)]", "division-by-zero", 8);
  fails("S[(1.5, 4)]", "type-mismatch", 4);
  fails("S[(32, 4) : (1@laneid, 1)] * 2", "type-mismatch", 1);
  fails("4", "type-mismatch", 1);
  fails("S[4] - S[4]", "layout-term", 8);
  fails("S[4] + ComposeLayout(3, 3, 3, S[8])", "layout-term", 1);
  fails("99999999999999999999", "bad-literal", 1);
}

TEST_CASE("a syntax error shows the source line and a caret under the column") {
  Evaluated r = evalText("S[(32, 4) : (1@lane, 1)]");
  CHECK(r.text.find("<layout>:1:16: error: unknown axis 'lane'") == 0);
  CHECK(r.text.find("    1 | S[(32, 4) : (1@lane, 1)]\n      |                ^~~~\n") != std::string::npos);
}

TEST_CASE("deeply nested input is rejected before it can exhaust the parser's stack") {
  std::string deep(100000, '(');
  Evaluated r = evalText(deep);
  CHECK(r.firstId == "input-limit");
  std::string negs(100000, '-');
  CHECK(evalText(negs + "1").firstId == "input-limit");
}

TEST_CASE("invalid UTF-8 is a diagnostic and not a crash") {
  CHECK(evalText(std::string("S[4] + \xff")).firstId == "syntax");
  CHECK(evalText("S[4] + \xc3\xa9").firstId == "syntax");
}
