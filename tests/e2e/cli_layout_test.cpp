// `tyloc layout` as a process: the fixed interface of DESIGN.md section 3.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "tests/support/Process.h"

using nlohmann::json;
using tyl::test::run;

namespace {

tyl::test::ProcessResult tyloc(std::vector<std::string> args) {
  args.insert(args.begin(), TYLOC_PATH);
  return run(args);
}

}  // namespace

TEST_CASE("apply json prints the base coordinate and every replica") {
  auto r = tyloc({"layout", "S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4", "--shape", "32,4", "--apply", "3,2",
                  "--json"});
  REQUIRE(r.exitCode == 0);
  json doc = json::parse(r.out);
  json element = doc["elements"].at(0);
  CHECK(doc["elements"].size() == 1);
  CHECK(element["coord"] == json::array({3, 2}));
  CHECK(element["base"] == json({{"laneid", 3}, {"m", 6}}));
  CHECK(element["replicas"] == json::array({{{"laneid", 3}, {"m", 6}, {"warpid", 0}},
                                            {{"laneid", 3}, {"m", 6}, {"warpid", 1}}}));
  // The element is also the top level of the document.
  CHECK(doc["base"] == element["base"]);
  CHECK(doc["replicas"] == element["replicas"]);
  CHECK(doc["injective"] == true);
  CHECK(doc["size"] == 128);
}

TEST_CASE("json without apply lists every element in row-major order") {
  auto r = tyloc({"layout", "S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4", "--shape", "32,4", "--json"});
  REQUIRE(r.exitCode == 0);
  json doc = json::parse(r.out);
  CHECK(doc["injective"] == true);
  CHECK(doc["shape"] == json::array({32, 4}));
  REQUIRE(doc["elements"].size() == 128);
  for (int i = 0; i < 128; ++i) {
    const json& e = doc["elements"][i];
    CHECK(e["coord"] == json::array({i / 4, i % 4}));
    CHECK(e["base"] == json({{"laneid", i / 4}, {"m", 4 + i % 4}}));
    CHECK(e["replicas"].size() == 2);
  }
}

TEST_CASE("the worked example of the seeds") {
  auto r = tyloc({"layout", "S[(8,2,4,2):(4@laneid,1@warpid,1@laneid,1)] + R[2:4@warpid] + 5@warpid", "--shape",
                  "8,16", "--apply", "1,3", "--json"});
  REQUIRE(r.exitCode == 0);
  json doc = json::parse(r.out);
  CHECK(doc["base"] == json({{"laneid", 5}, {"warpid", 5}, {"m", 1}}));
  CHECK(doc["replicas"][1] == json({{"laneid", 5}, {"warpid", 9}, {"m", 1}}));
}

TEST_CASE("a layout without replicas has exactly one replica entry and non-injective layouts say so") {
  auto r = tyloc({"layout", "S[(4, 4) : (1, 1)]", "--json"});
  REQUIRE(r.exitCode == 0);
  json doc = json::parse(r.out);
  CHECK(doc["injective"] == false);
  for (const json& e : doc["elements"]) CHECK(e["replicas"].size() == 1);
}

TEST_CASE("the default output is a readable table") {
  auto r = tyloc({"layout", "S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4", "--apply", "3,2"});
  REQUIRE(r.exitCode == 0);
  CHECK(r.out.find("injective yes") != std::string::npos);
  CHECK(r.out.find("(3, 2)  laneid=3 m=6") != std::string::npos);
}

TEST_CASE("one element of a layout too large to list, when its strides decide injectivity") {
  // 2^26 elements, dense: decided from the strides, and the element is computed, not looked up.
  auto dense = tyloc({"layout", "ComposeLayout(3, 3, 3, S[(8192, 8192) : (8192, 1)])", "--apply", "1,72", "--json"});
  REQUIRE(dense.exitCode == 0);
  json doc = json::parse(dense.out);
  CHECK(doc["injective"] == true);
  CHECK(doc["size"] == 67108864);
  CHECK(doc["base"]["m"] == 8256);  // 8192 + 72 = 8264, bit 3 flipped by bits 6..8 (1)
  // Overlapping strides collide, and say so without enumerating.
  auto overlap = tyloc({"layout", "S[(8192, 8192) : (8191, 1)]", "--apply", "0,8191"});
  REQUIRE(overlap.exitCode == 0);
  CHECK(overlap.out.find("injective no") != std::string::npos);
  CHECK(overlap.out.find("m=8191") != std::string::npos);
  // Listing them all is still refused, pointing at --apply.
  auto listed = tyloc({"layout", "S[(8192, 8192) : (8192, 1)]"});
  CHECK(listed.exitCode == 1);
  CHECK(listed.err.find("(use --apply) [too-large]") != std::string::npos);
  // Neither decided by the strides nor small enough to enumerate.
  auto unknown = tyloc({"layout", "S[(8192, 8192) : (8192, 3)]", "--apply", "1,1"});
  CHECK(unknown.exitCode == 1);
  CHECK(unknown.err.find("its iters alone do not decide it [too-large]") != std::string::npos);
  CHECK(unknown.out.empty());
  // One element's replicas are listed too, so their number is bounded.
  auto replicas = tyloc({"layout", "S[4] + R[2097152 : 1@warpid]", "--apply", "1"});
  CHECK(replicas.exitCode == 1);
  CHECK(replicas.err.find("each element has 2097152 replicas") != std::string::npos);
}

TEST_CASE("bad expressions exit 1 with a located diagnostic") {
  auto r = tyloc({"layout", "S[(32, 4) : (1@lane, 1)]"});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find("<layout>:1:16: error:") == 0);
  CHECK(r.out.empty());
}

TEST_CASE("semantic misuse exits 1 and command-line misuse exits 2") {
  CHECK(tyloc({"layout", "S[(32, 4)]", "--shape", "8,8"}).exitCode == 1);
  CHECK(tyloc({"layout", "S[(32, 4)]", "--apply", "32,0"}).exitCode == 1);
  CHECK(tyloc({"layout", "S[(32, 4)]", "--apply", "1,2,3"}).exitCode == 1);
  CHECK(tyloc({"layout", "S[(32, 4)]", "--shape", "8,x"}).exitCode == 2);
  CHECK(tyloc({"layout", "S[(32, 4)]", "--shape", "0,128"}).exitCode == 2);
  CHECK(tyloc({"layout", "S[(32, 4)]", "--bogus"}).exitCode == 2);
  CHECK(tyloc({"layout"}).exitCode == 2);
  CHECK(tyloc({}).exitCode == 2);
  CHECK(tyloc({"--help"}).exitCode == 0);
  CHECK(tyloc({"layout", "--help"}).exitCode == 0);
}

TEST_CASE("help text names the program in its usage lines") {
  CHECK(tyloc({"--help"}).out.find("Usage: tyloc [OPTIONS]") != std::string::npos);
  CHECK(tyloc({"layout", "--help"}).out.find("Usage: tyloc layout [OPTIONS]") != std::string::npos);
  CHECK(tyloc({"run", "--help"}).out.find("Usage: tyloc run [OPTIONS]") != std::string::npos);
}

TEST_CASE("odd inputs never crash: every exit code is 0 and 1 or 2") {
  for (const char* expr : {"", " ", "S", "S[", "S[]", "S[()]", "S[(,)]", "R[4]", "@", "@laneid", "S[4] +",
                           "S[4] + + 4", "S[4 : @]", "S[(1,) : (1,)]", "S[4] + 1e308", "S[2147483648, 4]",
                           "S[(65536, 65536, 65536)]", "ComposeLayout()", "Swizzle(1, 2, 3)", "S[4](1)",
                           "S[4] @ laneid", "S[4].x", "S[4][0]", "\t\n", "S[4] // comment", "/* open", "S[\"x\"]"}) {
    auto r = tyloc({"layout", expr, "--json"});
    INFO(expr << "\n" << r.err);
    CHECK((r.exitCode >= 0 && r.exitCode <= 2));
  }
}

TEST_CASE("the canonical layout text parses back to itself, the smallest int64 included") {
  for (std::string expr : {"S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid] + 4",
                           "S[1 : 1] + (-9223372036854775807 - 1)",
                           "S[1 : 1@laneid] + (-9223372036854775807 - 1)@laneid",
                           "S[1 : (-9223372036854775807 - 1)]", "S[1 : (-9223372036854775807 - 1)@laneid] - 3",
                           "ComposeLayout(3, 3, 3, S[(8, 64) : (64, 1)] + 9223372036854775807 - 4096)"}) {
    INFO(expr);
    auto first = tyloc({"layout", expr, "--json"});
    INFO(first.err);
    REQUIRE(first.exitCode == 0);
    const std::string text = json::parse(first.out)["layout"];
    auto again = tyloc({"layout", text, "--json"});
    INFO(text << "\n" << again.err);
    REQUIRE(again.exitCode == 0);
    CHECK(json::parse(again.out)["layout"] == text);
  }
}
